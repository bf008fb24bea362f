"""R5 specimen (batched mode only): a flush that does not sync."""

from __future__ import annotations

import time

from rollcert.impl.file_journal import FileJournal
from rollcert.model.errors import JournalError
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("flush_without_sync", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class FlushWithoutSync(FileJournal):
    """A batched journal whose flush() forgets the fsync. The records were
    written, so "they are in the file"; flush() marks them synced and returns,
    and the caller takes the flush as the point it may rely on. But the records
    sit in the page cache: a power failure after the flush takes them back, and
    recovery yields a state from before the flush — outside the batched window.
    In per-operation mode every record is synced as it is committed and flush()
    has nothing to do, so that mode is correct: only a run in batched mode
    finds it."""

    def flush(self) -> None:
        if self._broken is not None:
            raise JournalError(self._broken)
        self._unsynced = 0  # the sync that should come first never does
        self._last_sync = time.monotonic()
