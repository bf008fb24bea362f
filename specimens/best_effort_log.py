"""The incident behind rollcert: mutate first, log afterwards, and shrug if the log says no."""

from __future__ import annotations

import contextlib

from rollcert.model.errors import JournalError
from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer


@register(
    "best_effort_log",
    breaks={"R1"},
    also_caught_by={
        "R6": "a full journal with policy reject refuses the record, and this buffer "
        "swallows that refusal too: the splice goes through where the model raises "
        "JournalError and changes nothing",
    },
)
class BestEffortLogBuffer(NaiveJournaledBuffer):
    """Splices the bytes first and then tries to append the inverse record,
    treating the append as best-effort telemetry: when it fails, the record is
    simply dropped and the splice still reports success. The buffer is now ahead
    of its log, and the next rollback undoes an older record at an offset the
    unlogged edit may have shifted, producing a buffer that never existed. This
    is the incident that started rollcert: under memory pressure a bounded log
    refused one append, the edit went through without its record, and a later
    rollback(2) undid an older record at the shifted offset, overwriting an
    unrelated sentence. The R6
    machine catches it as well, because a full journal with policy reject is
    just another failed append to this buffer, so the splice happens anyway."""

    def _commit_and_apply(self, record: InverseRecord, insert: bytes) -> None:
        self._apply(record, insert)
        # the bug: the bytes have already changed, and a refused record is just lost
        with contextlib.suppress(JournalError):
            self._append_record(record)
