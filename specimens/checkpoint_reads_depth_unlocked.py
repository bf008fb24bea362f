"""A checkpoint that reads the log's depth before it takes the lock."""

from __future__ import annotations

from dataclasses import dataclass

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter


@dataclass(frozen=True)
class PositionedToken:
    """A checkpoint as the bundled JournaledBuffer makes one: the buffer's id, the
    state's position (records since the buffer was made, so eviction does not
    shift it) and the state's serial (so a rolled-away state is never mistaken
    for the different state now at that position)."""

    owner: int
    position: int
    serial: int


@register(
    "checkpoint_reads_depth_unlocked",
    breaks={"R7"},
    capabilities=CONCURRENT_CAPABILITIES,
    adapter=concurrent_adapter,
)
class CheckpointReadsDepthUnlockedBuffer(LockedNaiveBuffer):
    """Every method is locked, and a checkpoint is a position and a serial,
    checked together on the way back, as in the bundled buffer. But
    checkpoint() asks the public depth property where the log stands (which
    takes the lock and lets it go again) and only then takes the lock to stamp
    the token with the serial of the current state — the code reuses the
    getter instead of reading the field under the one lock. When another
    thread's splice lands in between, the position names the state before the
    splice and the serial the state after it: the token names no state that
    ever existed. The caller's rollback_to(token), with both states still in
    the log, is refused as a dead checkpoint: no order of whole calls gives a
    checkpoint that is dead on arrival, and the safety net the caller took
    before its risky edits is gone. One thread at a time, the two reads agree
    and nothing is wrong."""

    def __init__(self, initial: bytes = b"", *, capacity: int | None = None, policy: str = "reject") -> None:
        super().__init__(initial, capacity=capacity, policy=policy)
        self._base_position = 0  # records that left the log from below (evicted or adopted away)

    def _append_to_full_journal(self, record: InverseRecord) -> None:
        super()._append_to_full_journal(record)
        self._base_position += 1

    def adopt_current(self) -> None:
        with self._lock:
            self._base_position += len(self._records)
            super().adopt_current()

    def checkpoint(self) -> object:
        position = self._base_position + self.depth  # the bug: read under a lock of its own, let go
        with self._lock:
            self._notice_out_of_log_writes()
            return PositionedToken(self._owner, position, self._live_serials()[-1])

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, PositionedToken):
            raise TypeError(f"not a checkpoint token: {type(token).__name__}")
        with self._lock:
            if token.owner != self._owner:
                raise UnreachableRollbackError("the checkpoint belongs to another buffer")
            depth = token.position - self._base_position
            live = self._live_serials()
            if not 0 <= depth < len(live) or live[depth] != token.serial:
                raise UnreachableRollbackError("the checkpoint names a state that is no longer reachable")
            self.rollback(len(self._records) - depth)
