"""Checkpoints that remember only how deep the log was."""

from __future__ import annotations

from dataclasses import dataclass

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._base import NaiveJournaledBuffer


@dataclass(frozen=True)
class DepthToken:
    """A checkpoint of this specimen: the buffer's id and a depth, nothing else."""

    owner: int
    depth: int


@register(
    "depth_checkpoints",
    breaks={"R3"},
    also_caught_by={
        "R6": "eviction moves the horizon and kills the checkpoints below it, but a token "
        "that is just a depth still rolls back: an evicted checkpoint stays alive, as if "
        "the horizon had never moved",
    },
)
class DepthCheckpointBuffer(NaiveJournaledBuffer):
    """A checkpoint token records the depth of the log (and which buffer it came
    from, so foreign tokens are still refused), and rollback_to(token) rolls
    back to that depth whenever the log is at least that deep. After a rollback
    below the checkpoint and new edits back up to the same depth, the token
    silently lands on a different state that merely has the same depth: the ABA
    bug, and a rollback that 'succeeds' into text the caller never saw. Any
    undo API that hands out indices into a stack instead of identities has it.
    The R6 machine catches it too, because evicting the oldest record shifts
    every depth by one while the tokens keep pointing at the old numbers."""

    def checkpoint(self) -> object:
        self._notice_out_of_log_writes()
        return DepthToken(owner=self._owner, depth=len(self._records))

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, DepthToken):
            raise TypeError(f"not a checkpoint token: {type(token).__name__}")
        if token.owner != self._owner:
            raise UnreachableRollbackError("the checkpoint belongs to another buffer")
        if token.depth > len(self._records):
            raise UnreachableRollbackError("the checkpoint is deeper than the log")
        # the bug: any state at that depth will do
        self.rollback(len(self._records) - token.depth)
