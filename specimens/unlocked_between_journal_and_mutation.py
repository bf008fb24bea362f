"""A splice that releases the lock between the journal append and the mutation."""

from __future__ import annotations

import hashlib

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter


@register(
    "unlocked_between_journal_and_mutation",
    breaks={"R7"},
    capabilities=CONCURRENT_CAPABILITIES,
    adapter=concurrent_adapter,
)
class UnlockedBetweenJournalAndMutationBuffer(LockedNaiveBuffer):
    """Write-ahead done right for one thread: the inverse record is appended
    first, under the lock. Then the lock is let go while the journal is flushed
    ("the flush is the slow part, nobody should wait for it") and taken again
    to write the bytes. In between, the log already counts the splice and the
    bytes do not show it: a reader sees the old bytes at the new depth, a
    rollback undoes a record whose bytes are not there yet, and a second splice
    builds its record from bytes that are about to move."""

    def _commit_and_apply(self, record: InverseRecord, insert: bytes) -> None:
        self._append_record(record)
        self._lock.release()  # the bug: the lock is dropped between the journal and the bytes
        try:
            self._flush_journal()
        finally:
            self._lock.acquire()
        self._apply(record, insert)

    def _flush_journal(self) -> None:
        """Stands in for a flush to disk: a checksum over the log's records."""
        checksum = hashlib.sha256()
        for logged in list(self._records):
            checksum.update(logged.offset.to_bytes(8, "little"))
            checksum.update(logged.removed)
        self._journal_checksum = checksum.digest()
