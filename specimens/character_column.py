"""An undo record that places itself by (line, column in characters) and undoes by bytes."""

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
    "character_column",
    breaks={"R2"},
    also_caught_by={"R6": _BOUNDED},
)
class CharacterColumnBuffer(NaiveJournaledBuffer):
    """Each record remembers where its splice was as (line, column), the way an
    editor's cursor does, with the column counted in characters of the decoded
    line; undo turns it back into a byte offset as line start + column, as if
    every character were one byte. On ASCII the two agree; after a multi-byte
    UTF-8 character earlier on the same line the undo lands one to three bytes
    too early per such character, cutting and restoring the wrong span."""

    def __init__(self, initial: bytes = b"", *, capacity: int | None = None, policy: str = "reject") -> None:
        super().__init__(initial, capacity=capacity, policy=policy)
        self._places: dict[int, tuple[int, int]] = {}

    def _make_record(self, offset: int, delete_length: int, insert: bytes) -> InverseRecord:
        record = super()._make_record(offset, delete_length, insert)
        line_start = self._bytes.rfind(b"\n", 0, offset) + 1
        line = self._bytes.count(b"\n", 0, line_start)
        column = len(bytes(self._bytes[line_start:offset]).decode("utf-8", "replace"))
        self._places[record.serial] = (line, column)
        return record

    def _undo_one(self, record: InverseRecord) -> None:
        line, column = self._places.get(record.serial, (0, record.offset))
        start = 0
        for _ in range(line):
            start = self._bytes.index(b"\n", start) + 1
        place = start + column  # the bug: a column of characters used as a count of bytes
        self._bytes[place : place + record.inserted_length] = record.removed
