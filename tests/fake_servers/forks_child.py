"""Forks a child that sleeps forever (holding stdout open), then dies on the
first rollback: no end of output ever comes, and the child would outlive
rollcert unless its whole process group is killed."""

import os
import sys
import time

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class ForkingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            os._exit(71)
        return super().reply(request)


if os.fork() == 0:  # the child: inherits stdin, stdout and stderr, and never exits
    while True:
        time.sleep(3600)
sys.exit(main(ForkingServer()))
