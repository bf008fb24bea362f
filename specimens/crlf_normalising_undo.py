"""An undo that normalises line endings in the text it restores."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer

#: Why the R6 machine also kills it (SPEC §6a: a finding is reported under the clause it breaks).
_BOUNDED = (
    "its machine rolls back in a bounded journal, and R6's clause (model/properties.py) covers a rollback there"
    " that restores other bytes than the state it names"
)


@register(
    "crlf_normalising_undo",
    breaks={"R0"},  # the bytes come back at the right place, wrong: no rule's own clause but R0's
    also_caught_by={"R6": _BOUNDED},
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
