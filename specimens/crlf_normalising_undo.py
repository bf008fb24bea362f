"""An undo that normalises line endings in the text it restores."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer


@register(
    "crlf_normalising_undo",
    breaks={"R0"},  # the bytes come back at the right place, wrong: no rule's own clause but R0's
)
class CrlfNormalisingUndoBuffer(NaiveJournaledBuffer):
    """The removed text of every record goes through the same line-ending
    normalisation as the editor's input (``\\r\\n`` becomes ``\\n``), so undoing
    a splice that removed a Windows line break puts back a Unix one. The record
    is committed, depth and revision are right, and on any text without CRLF
    pairs every undo is exact; a rollback over a removed ``\\r\\n`` gives a
    buffer one byte short per pair, which never existed."""

    def _undo_one(self, record: InverseRecord) -> None:
        removed = record.removed.replace(b"\r\n", b"\n")  # the bug: normalised like typed input
        self._bytes[record.offset : record.offset + record.inserted_length] = removed
