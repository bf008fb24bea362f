"""The incident's own fix: find the edit again by its anchors, first match wins."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rollcert.model.errors import DivergenceError
from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer

#: Bytes hashed on each side of an edit. The buffer of the incident used 16; the width does not
#: change the bug, only how long the repeated text must be before it shows.
ANCHOR = 4


def _anchor_hash(data: bytes | bytearray) -> bytes:
    return hashlib.sha256(data).digest()


@dataclass(frozen=True)
class AnchoredRecord(InverseRecord):
    """An inverse record that also carries hashes of the bytes around the edit."""

    anchor_before: bytes = b""
    anchor_after: bytes = b""


@register(
    "first_match_scan",
    breaks={"R2"},
)
class FirstMatchScanBuffer(NaiveJournaledBuffer):
    """Each record stores hashes of the ANCHOR bytes before and after the edit
    (4 here, 16 in the incident's buffer), and an undo ignores the recorded offset: it scans
    the buffer from position 0 and restores the removed bytes at the first
    position whose anchors match (DivergenceError if none does). When the
    surrounding text is repeated, an earlier copy matches first and the undo
    rewrites that copy instead, leaving the real edit in place; both copies look
    alike, so the result reads as plausible. This is the rollback the incident's
    write-up proposed as the fix (anchors instead of offsets); it is also slow
    (a full scan per step). Every machine that rolls back over repeated text (R3's multi-step
    rollbacks, R4's undo above a barrier, R6's rollbacks in a bounded log) runs
    the same scan and can catch it."""

    def _make_record(self, offset: int, delete_length: int, insert: bytes) -> InverseRecord:
        plain = super()._make_record(offset, delete_length, insert)
        after_start = offset + delete_length
        return AnchoredRecord(
            offset=plain.offset,
            removed=plain.removed,
            inserted_length=plain.inserted_length,
            serial=plain.serial,
            anchor_before=_anchor_hash(self._bytes[max(0, offset - ANCHOR) : offset]),
            anchor_after=_anchor_hash(self._bytes[after_start : after_start + ANCHOR]),
        )

    def _undo_one(self, record: InverseRecord) -> None:
        if not isinstance(record, AnchoredRecord):
            raise TypeError("first_match_scan only undoes its own anchored records")
        position = self._first_match(record)
        if position is None:
            raise DivergenceError("no position matches the record's anchors")
        self._bytes[position : position + record.inserted_length] = record.removed

    def _first_match(self, record: AnchoredRecord) -> int | None:
        for position in range(len(self._bytes) + 1):  # the bug: first match wins
            before = self._bytes[max(0, position - ANCHOR) : position]
            if _anchor_hash(before) != record.anchor_before:
                continue
            end = position + record.inserted_length
            if _anchor_hash(self._bytes[end : end + ANCHOR]) == record.anchor_after:
                return position
        return None
