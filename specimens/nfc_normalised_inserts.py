"""A text buffer that normalises what it is sent to NFC."""

from __future__ import annotations

import contextlib
import unicodedata

from rollcert.specimens import register
from rollcert.specimens._base import NaiveJournaledBuffer

#: Why the R6 machine also kills it (SPEC §6a: a finding is reported under the clause it breaks).
_BOUNDED = (
    "its machine splices on a full bounded journal, and R6's clause (model/properties.py) covers a splice there"
    " that leaves other bytes than the eviction and the edit the model says"
)


@register(
    "nfc_normalised_inserts",
    breaks={"R0"},  # the splice stores other bytes than it was sent: no rule's own clause but R0's
    also_caught_by={"R6": _BOUNDED},
    declares={"text": True},
)
class NfcNormalisedInsertsBuffer(NaiveJournaledBuffer):
    """A text editor's buffer that brings every insert to Unicode normal form
    C before storing it, so that a search finds "é" however it was typed. The
    journal is right about what it stored: depth, revision and every undo
    agree with the bytes in the buffer. But a splice of "e" followed by a
    combining acute (U+0301) stores the precomposed "é", two bytes where three
    were sent, and the Angstrom sign U+212B comes back as U+00C5: the buffer
    holds text nobody wrote, and an agent that reads back what it inserted, or
    a diff that counts its bytes, finds something else. A run whose text is
    letters, line breaks and precomposed characters passes it: only text that
    NFC changes shows it (issue 42: "within UTF-8 text (any code point)" was
    claimed, and no combining mark was ever drawn)."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if isinstance(insert, (bytes, bytearray)):
            # the bug: what is stored is the normal form, not what was sent
            with contextlib.suppress(UnicodeDecodeError):
                insert = unicodedata.normalize("NFC", bytes(insert).decode("utf-8")).encode("utf-8")
        super().splice(offset, delete_length, insert)
