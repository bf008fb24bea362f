"""The incident's own fix: find the edit again by its anchors, first match wins."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rollcert.model.errors import DivergenceError
from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer

#: Bytes kept on each side of an edit. The buffer of the incident used 16; the width does not
#: change the bug, only how long the repeated text must be before it shows.
ANCHOR = 4


@dataclass(frozen=True)
class AnchoredRecord(InverseRecord):
    """An inverse record that also carries the bytes around the edit (the incident's
    buffer kept their hashes; comparing the bytes is the same test, without a
    hash per position of every scan)."""

    anchor_before: bytes = b""
    anchor_after: bytes = b""


@register(
    "first_match_scan",
    breaks={"R2"},
)
class FirstMatchScanBuffer(NaiveJournaledBuffer):
    """Each record stores the ANCHOR bytes before and after the edit
    (4 here, 16 in the incident's buffer, which stored their hashes), and an undo ignores the recorded offset: it scans
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
            anchor_before=bytes(self._bytes[max(0, offset - ANCHOR) : offset]),
            anchor_after=bytes(self._bytes[after_start : after_start + ANCHOR]),
        )

    def _undo_one(self, record: InverseRecord) -> None:
        if not isinstance(record, AnchoredRecord):
            raise TypeError("first_match_scan only undoes its own anchored records")
        position = self._first_match(record)
        if position is None:
            raise DivergenceError("no position matches the record's anchors")
        self._bytes[position : position + record.inserted_length] = record.removed

    def _first_match(self, record: AnchoredRecord) -> int | None:
        """The lowest position whose ANCHOR bytes before (fewer at the buffer's start)
        and after are the record's: the bug, first match wins."""
        for position in self._positions_after(record.anchor_before):
            end = position + record.inserted_length
            if self._bytes[end : end + ANCHOR] == record.anchor_after:
                return position
        return None

    def _positions_after(self, anchor: bytes) -> Iterator[int]:
        """Every position, lowest first, whose bytes before (ANCHOR of them, or all
        of them near the start) are ``anchor``: found with ``find``, not a slice
        per position (a scan of a 64 KiB buffer per replayed step)."""
        if len(anchor) < ANCHOR:  # only a position that close to the start has so few bytes before it
            if self._bytes[: len(anchor)] == anchor:
                yield len(anchor)
            return
        found = self._bytes.find(anchor)
        while found != -1:
            yield found + ANCHOR
            found = self._bytes.find(anchor, found + 1)
