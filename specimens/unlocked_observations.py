"""Observations (length, depth, revision) read without the lock."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens._concurrent import MeasuredNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter


@register("unlocked_observations", breaks={"R7"}, capabilities=CONCURRENT_CAPABILITIES, adapter=concurrent_adapter)
class UnlockedObservationsBuffer(LockedNaiveBuffer):
    """Every mutation and read() takes the lock; len(), depth and revision do
    not ("reading an int is atomic"). It is — but a rollback changes the bytes
    one step at a time, and the counters as it goes: a reader looking during
    rollback(2) from b"abc123456" back to b"abc" sees length 5 at depth 1, a
    state that is neither before nor after. The bundled JournaledBuffer had
    exactly this bug until R7 was certified."""

    # the bug: the observations of the unlocked naive buffer, under no lock
    __len__ = MeasuredNaiveBuffer.__len__
    depth = MeasuredNaiveBuffer.depth
    revision = MeasuredNaiveBuffer.revision
