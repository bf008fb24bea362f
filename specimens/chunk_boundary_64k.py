"""A buffer kept in 64 KiB chunks it never declared, with an off-by-one at the seam."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer

#: The chunk size, nowhere declared (the target has no ``chunk_bytes``).
CHUNK = 1 << 16


#: Why the R6 machine also kills it (SPEC §6a: a finding is reported under the clause it breaks).
_BOUNDED = (
    "its machine splices on a full bounded journal, and R6's clause (model/properties.py) covers a splice there"
    " that leaves other bytes than the eviction and the edit the model says"
)


@register(
    "chunk_boundary_64k",
    breaks={"R0"},  # the splice leaves a byte it was asked to remove: no rule's own clause but R0's
    also_caught_by={"R6": _BOUNDED},
)
class ChunkBoundary64kBuffer(NaiveJournaledBuffer):
    """Its bytes live in 64 KiB chunks (a page per chunk, as a memory-mapped
    file or a rope with fixed leaves has), a size it never declares. A removal
    that starts in the first chunk and ends past it is done in two parts, and
    the first part is cut at ``[start, 65535)`` instead of ``[start, 65536)``:
    the last byte of the chunk stays. The record is right, so depth, revision
    and undo agree with the journal, but the buffer holds a byte the splice
    removed. Every edit of a buffer under 64 KiB, and every edit within one
    chunk, is right: a run whose largest buffer is 34 KiB (issue 42: "largest
    buffer 10053", and nothing said the sizes stopped there) passes it."""

    def _apply(self, record: InverseRecord, insert: bytes) -> None:
        start, end = record.offset, record.offset + len(record.removed)
        if start < CHUNK - 1 and end > CHUNK:  # the bug: the seam's byte is kept
            self._bytes[start:end] = insert + self._bytes[CHUNK - 1 : CHUNK]
            return
        super()._apply(record, insert)
