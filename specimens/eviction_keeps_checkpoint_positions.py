"""Checkpoints that point into the record list, left pointing there when the oldest record is evicted."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer


@dataclass(frozen=True)
class HandleToken:
    """A checkpoint of this specimen: the buffer's id and a handle into its table
    of checkpoint positions (the position itself stays inside the buffer)."""

    owner: int
    handle: int


@register(
    "eviction_keeps_checkpoint_positions",
    breaks={"R6"},
    also_caught_by={
        "R4": "after an eviction the stale position can equal the depth, so rollback_to a checkpoint"
        " taken before it undoes zero records; with an out-of-log write since, the rollback the rules"
        " refuse with DivergenceError goes through without touching the log (R0's machine meets it:"
        " evict, write outside the log, rollback_to)",
    },
)
class EvictionKeepsCheckpointPositionsBuffer(NaiveJournaledBuffer):
    """Checkpoints are handles into a table that maps each one to an index
    into the record list: the number of records below the state it names.
    The table is kept honest on every path its author thought of — a rollback
    below a checkpoint drops it, so a new branch at the same depth cannot
    answer to it (no ABA); adopt_current drops them all. But a bounded log
    with policy evict_oldest also shifts every record down by one when it
    drops the oldest, and the table is not told: each position now points one
    record too high. rollback_to a checkpoint taken before the eviction undoes
    one record too few and lands on the state after the one it named; a
    checkpoint of the evicted horizon, which must be refused, is accepted and
    rolls back to the new horizon instead; and once a rollback goes below a
    stale position, a live checkpoint is refused as dead. A ring buffer that
    hands out slot numbers and a history that stores list indices in its
    bookmarks get this the same way: the eviction is the one mutation that
    moves records without going through the undo path."""

    def __init__(self, initial: bytes = b"", *, capacity: int | None = None, policy: str = "reject") -> None:
        super().__init__(initial, capacity=capacity, policy=policy)
        self._positions: dict[int, int] = {}
        self._handles = itertools.count()

    def checkpoint(self) -> object:
        self._notice_out_of_log_writes()
        handle = next(self._handles)
        self._positions[handle] = len(self._records)
        return HandleToken(owner=self._owner, handle=handle)

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, HandleToken):
            raise TypeError(f"not a checkpoint token: {type(token).__name__}")
        if token.owner != self._owner:
            raise UnreachableRollbackError("the checkpoint belongs to another buffer")
        position = self._positions.get(token.handle)
        if position is None or position > len(self._records):
            raise UnreachableRollbackError("the checkpoint names a state that is no longer reachable")
        self.rollback(len(self._records) - position)

    def _undo_newest(self, steps: int) -> None:
        super()._undo_newest(steps)
        depth = len(self._records)
        self._positions = {handle: at for handle, at in self._positions.items() if at <= depth}

    def _append_to_full_journal(self, record: InverseRecord) -> None:
        super()._append_to_full_journal(record)
        # the bug: the positions should move down one record with the records,
        # and the checkpoint at position 0 (the evicted horizon) should die

    def adopt_current(self) -> None:
        super().adopt_current()
        self._positions.clear()
