"""Multi-step rollback that replays the undo records in the wrong order."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import NaiveJournaledBuffer


@register(
    "fifo_replay",
    breaks={"R3"},
)
class FifoReplayBuffer(NaiveJournaledBuffer):
    """rollback(1) is right, but rollback(n) for n >= 2 (and rollback_to across
    two or more records) takes the n newest records and replays them oldest
    first, each at its recorded absolute offset. Those offsets are only valid in
    LIFO order: the older record's offset and length describe the buffer before
    the newer edits, so undoing it first cuts the wrong span and the newer
    record then restores its bytes in a place that has moved. Nothing fails and
    the length often looks plausible; absolute offsets mixed
    with out-of-order replay. The R4 and R6 machines also issue
    multi-step rollbacks (over records above a barrier, down to an evicted
    horizon), so they see the same wrong bytes whenever the records overlap or
    shift each other."""

    def _undo_newest(self, steps: int) -> None:
        if steps < 2:
            super()._undo_newest(steps)
            return
        batch = self._records[-steps:]
        for record in batch:  # the bug: oldest first
            self._undo_one(record)
        del self._records[-steps:]
        self._revision += steps
