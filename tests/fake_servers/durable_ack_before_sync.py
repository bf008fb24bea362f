"""The reference server with a durable journal that acknowledges before it
syncs: a record is written but never synced before the operation returns (a
journal that leaves its fsync to "later", or forgets it). The reference
server's state directory keeps unsynced bytes in the process, so a SIGKILL
loses every operation since the last sync: an operation that returned is lost,
which R5 must catch through a real kill over the protocol."""

import sys

from rollcert.impl.file_journal import FileJournal
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class AcknowledgeBeforeSync(FileJournal):
    def _commit(self, data: bytes) -> None:
        self._check_usable()
        try:
            self.storage.append(self.name, data)  # the fsync the mode owes before returning never comes
        except OSError as error:
            self._refuse("write", error, self._size)
        self._size += len(data)


class AckBeforeSyncServer(JournaledBufferServer):
    name = "durable-ack-before-sync"
    journal_class = AcknowledgeBeforeSync


sys.exit(main(AckBeforeSyncServer()))
