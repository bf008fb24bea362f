"""Answers every rollback with a line that is not JSON."""

import sys

from rollcert.stateful_tests.protocol import Request
from rollcert.stateful_tests.protocol_server import JournaledBufferServer
from rollcert.stateful_tests.protocol_server import main


class GarbageServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            return b"Segmentation fault (core dumped)\n"
        return super().reply(request)


sys.exit(main(GarbageServer()))
