"""R5 specimen (batched mode only): a refused splice whose record stays in the file."""

from __future__ import annotations

import time

from rollcert.impl.file_journal import FileJournal
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register(
    "keep_record_after_failed_sync", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen
)
class KeepRecordAfterFailedSync(FileJournal):
    """A batched journal that counts a record as written once its write
    returns, and only then runs the sync every N records asks for. When that
    sync fails, the splice raises JournalError and the buffer is left as it
    was — but the record is already in the file, and nobody cuts it back. The
    journal refuses everything afterwards, so the process never builds on it;
    the reopen the error recommends, though, reads the file and brings the
    refused splice back: the caller was told it did not happen, and it did.
    (rollcert's own journal did this until the sync failures were generated;
    per-operation mode cuts the record back and is correct.)"""

    def _commit(self, data: bytes) -> None:
        if self.durability.mode == "per_operation":
            super()._commit(data)
            return
        self._check_usable()
        size = self._size
        try:
            self.storage.append(self.name, data)
        except OSError as error:
            self._refuse("write", error, size)
        self._size = size + len(data)  # counted before it is synced
        self._unsynced += 1
        every_records, every_ms = self.durability.every_records, self.durability.every_ms
        if (every_records is not None and self._unsynced >= every_records) or (
            every_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= every_ms
        ):
            self.flush()  # a failure poisons the journal and raises; the record stays
