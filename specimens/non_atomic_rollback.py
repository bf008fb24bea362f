"""Multi-step rollback that discovers the horizon too late, halfway through."""

from __future__ import annotations

from rollcert.model.contract import check_integer
from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._base import NaiveJournaledBuffer


@register(
    "non_atomic_rollback",
    breaks={"R3"},
)
class NonAtomicRollbackBuffer(NaiveJournaledBuffer):
    """rollback(n) undoes one record at a time and only notices that it has
    run out of records when it gets there: asked for more steps than the log
    holds, it undoes every record down to the horizon and *then* raises
    UnreachableRollbackError. The caller sees the documented error, concludes
    that nothing happened, and carries on editing a buffer that was silently
    rolled back to the horizon — with its log emptied. A refusal must be
    decided before the first byte changes (all or nothing), which is why the
    correct code checks the whole range first."""

    def rollback(self, steps: int = 1) -> None:
        steps = check_integer("steps", steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        self._notice_out_of_log_writes()
        self._refuse_crossing_barriers(min(steps, len(self._records)))
        for _ in range(steps):
            if not self._records:  # the bug: found out after undoing the rest
                self._seal()
                raise UnreachableRollbackError(f"rollback({steps}) went past the horizon")
            self._undo_newest(1)
        self._seal()
