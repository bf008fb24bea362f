"""A buffer with no lock at all, declared safe for threads."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import MeasuredNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter


@register("unlocked_buffer", breaks={"R7"}, capabilities=CONCURRENT_CAPABILITIES, adapter=concurrent_adapter)
class UnlockedBuffer(MeasuredNaiveBuffer):
    """The naive buffer, correct one call at a time, handed to several threads
    with no lock: a splice reads the bytes it removes, appends its record and
    writes the bytes in separate steps, and a rollback undoes records one by
    one. Two threads interleave those steps — a record built from bytes another
    splice is about to change, an observer that sees half a rollback — and
    callers see states that no order of whole operations produces."""
