"""rollback_to that jumps to a stored copy of the buffer instead of replaying."""

from __future__ import annotations

from dataclasses import dataclass

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._base import CheckpointToken
from rollcert.specimens._base import NaiveJournaledBuffer


@dataclass(frozen=True)
class SnapshotToken(CheckpointToken):
    """A checkpoint that also carries a copy of the bytes it names."""

    snapshot: bytes = b""


@register("snapshot_jump", breaks={"R4"})
class SnapshotJumpBuffer(NaiveJournaledBuffer):
    """checkpoint() keeps a copy of the buffer, and rollback_to(token) simply
    puts that copy back and drops the newer records: one memcpy instead of n
    undo steps. The copy is right — it is what the buffer was — but the jump
    skips what the steps would have checked. If something wrote to the buffer
    behind the journal's back after the checkpoint, LIFO replay would meet that
    write and raise DivergenceError; the jump silently erases it, and whatever
    the other writer put there is gone without a trace. R3 forbids jumping to a
    stored snapshot when that skips a check; the check lost here is R4's."""

    def checkpoint(self) -> object:
        token = super().checkpoint()
        assert isinstance(token, CheckpointToken)
        return SnapshotToken(owner=token.owner, serial=token.serial, snapshot=bytes(self._bytes))

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, SnapshotToken):
            super().rollback_to(token)  # a foreign or bad token: refused as usual
            return
        if token.owner != self._owner:
            raise UnreachableRollbackError("the checkpoint belongs to another buffer")
        live = self._live_serials()
        if token.serial not in live:
            raise UnreachableRollbackError("the checkpoint names a state that is no longer reachable")
        keep = live.index(token.serial)
        steps = len(self._records) - keep
        self._bytes[:] = token.snapshot  # the bug: no step-by-step check on the way
        del self._records[keep:]
        self._barriers = {barrier for barrier in self._barriers if barrier <= keep}
        self._revision += steps
        self._seal()
