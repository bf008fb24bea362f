"""R5 specimen (batched mode only): a flush that skips the sync when the batch ends in a rollback."""

from __future__ import annotations

import time

from rollcert.impl.file_journal import FileJournal
from rollcert.impl.journal import InverseRecord
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register(
    "sync_skipped_after_rollback", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen
)
class SyncSkippedAfterRollback(FileJournal):
    """A batched journal that saves an fsync on the undo path. Its flush()
    looks at the last record written since the sync and, when it is a
    rollback, reasons that "a rollback only takes state away: if the machine
    dies, recovery from the longer log has merely more to undo, nothing new is
    lost" — so it marks the batch synced and returns without the fsync. An
    editor that undoes in bursts and flushes after each saves a sync per undo.
    But the rollback's record sits in the page cache with everything written
    before it since the last sync: a power failure after the flush takes them
    back, and recovery yields a state from before the rollback. The edit the
    caller undid, and was told was durably undone, comes back — outside the
    batched window, which starts at the flush. Any other flush syncs, so
    edits followed by a flush are safe; per-operation mode syncs every record
    as it is committed and is correct: only rollback, flush, crash in batched
    mode finds it."""

    #: Whether the newest record written is a rollback's (what flush() looks at).
    _rollback_last: bool = False

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        super().append(record, inserted)
        self._rollback_last = False

    def commit_rollback(self, steps: int) -> None:
        super().commit_rollback(steps)
        self._rollback_last = True

    def flush(self) -> None:
        if self._rollback_last and self._unsynced:
            self._check_usable()
            self._unsynced = 0  # the bug: "nothing new to make durable"
            self._last_sync = time.monotonic()
            return
        super().flush()
