"""An undo log that keeps the removed bytes as decoded text."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer


@register(
    "text_decoded_log",
    breaks={"R0"},  # the bytes come back at the right place, wrong: no rule's own clause but R0's
)
class TextDecodedLogBuffer(NaiveJournaledBuffer):
    """The log stores what a splice removed as a ``str``, decoded from UTF-8
    with ``errors="replace"`` (the default of many text APIs), and encodes it
    back on undo. On ASCII, and on valid UTF-8, that is the identity; any byte
    that is not part of a valid character (0x80-0xFF on its own, a character cut
    in half, a stray continuation byte) comes back as U+FFFD, three bytes
    ``EF BF BD``. Nothing fails: the rollback succeeds with a buffer that never
    existed, longer than the one it should restore."""

    def _undo_one(self, record: InverseRecord) -> None:
        removed = record.removed.decode("utf-8", "replace").encode("utf-8")  # the bug: a str in between
        self._bytes[record.offset : record.offset + record.inserted_length] = removed
