"""Answers every rollback with a line that is not JSON."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class GarbageServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            return b"Segmentation fault (core dumped)\n"
        return super().reply(request)


sys.exit(main(GarbageServer()))
