"""An undo record whose removed bytes live in a fixed 128-byte field."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer

#: The record layout's field for the removed bytes.
FIELD_BYTES = 128




@register(
    "record_cut_at_128",
    breaks={"R0"},  # the bytes come back at the right place, wrong: no rule's own clause but R0's
)
class RecordCutAt128Buffer(NaiveJournaledBuffer):
    """Each inverse record is laid out with a fixed 128-byte field for the bytes
    the splice removed, and a longer removal is cut to fit: the record commits,
    depth and revision count on, and rollback puts back the first 128 bytes and
    silently drops the rest. Every edit a short test makes removes a few bytes,
    so the bug hides behind any run whose buffers stay small; it shows on the
    first rollback of a splice that removed 129 bytes or more (a fixed-size slot
    in a ring buffer, a ``char removed[128]`` in a C struct)."""

    def _undo_one(self, record: InverseRecord) -> None:
        start = record.offset  # the bug: only what fit the field comes back
        self._bytes[start : start + record.inserted_length] = record.removed[:FIELD_BYTES]
