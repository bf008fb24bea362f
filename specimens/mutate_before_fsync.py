"""R5 specimen: the record is synced late, after the buffer has changed."""

from __future__ import annotations

from rollcert.impl.file_journal import FileJournal
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("mutate_before_fsync", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class MutateBeforeFsync(FileJournal):
    """A journal that writes each record but defers the fsync to the next
    commit, because an fsync per edit "is too slow". The buffer mutates as soon
    as the write returns, and the operation returns to the caller, while the
    record sits in the page cache. A crash then loses an edit the caller was
    told had happened — and after a rollback record is lost the same way, a
    rolled-back edit comes back from the dead."""

    _unsynced = False

    def _commit(self, data: bytes) -> None:
        self._check_usable()
        try:
            if self._unsynced:
                self.storage.sync(self.name)  # the previous record, at last
            self.storage.append(self.name, data)
        except OSError as error:
            self._refuse("write", error, self._size)
        self._size += len(data)
        self._unsynced = True
