"""The reference server, durable, with a pause of 300 ms at one point of every
sync of appended records, so that a kill armed a few milliseconds into a splice lands
there: ``before-sync`` (the record written, not yet synced: a kill loses it)
or ``after-sync`` (synced, the reply not yet sent: a kill keeps it)."""

import sys
import time

from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import StateDirectory
from rollcert.targets.protocol_server import main

PAUSE_SECONDS = 0.3
WHERE = sys.argv[1]


class PausingDirectory(StateDirectory):
    def sync(self, name: str) -> None:
        appended = bool(self._unsynced.get(name))
        if appended and WHERE == "before-sync":
            time.sleep(PAUSE_SECONDS)
        super().sync(name)
        if appended and WHERE == "after-sync":
            time.sleep(PAUSE_SECONDS)


class SlowServer(JournaledBufferServer):
    def __init__(self) -> None:
        super().__init__()
        if self.directory is not None:
            self.directory = PausingDirectory(self.directory.path)


sys.exit(main(SlowServer()))
