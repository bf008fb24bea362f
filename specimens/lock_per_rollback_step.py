"""A rollback that takes the lock once per step instead of once per call."""

from __future__ import annotations

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens import register
from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter


@register("lock_per_rollback_step", breaks={"R7"}, capabilities=CONCURRENT_CAPABILITIES, adapter=concurrent_adapter)
class LockPerRollbackStepBuffer(LockedNaiveBuffer):
    """Every method is locked, but rollback(n) checks its range under the lock
    and then takes the lock again for each of its n steps, so that a long
    rollback does not hold everyone up. Between two steps another thread gets
    in: a reader sees a state halfway back, a splice lands on top of a
    half-undone log and the rest of the rollback undoes the wrong records.
    Each step is atomic; the operation is not."""

    def rollback(self, steps: int = 1) -> None:
        if type(steps) is not int:
            raise TypeError(f"steps must be an int, got {type(steps).__name__}")
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        with self._lock:
            self._notice_out_of_log_writes()
            if steps > len(self._records):
                raise UnreachableRollbackError(f"rollback({steps}) goes past the horizon (depth {len(self._records)})")
            self._refuse_crossing_barriers(steps)
        for _ in range(steps):
            with self._lock:  # the bug: the lock is released between steps
                if self._records:
                    self._undo_newest(1)
                    self._seal()
