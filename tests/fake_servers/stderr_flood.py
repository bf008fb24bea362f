"""On the first rollback, writes to stderr forever without a newline, and never answers."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class StderrFloodServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            err = sys.__stderr__.buffer
            piece = b"panic: stack overflow; " * 4096  # no newline, ever
            while True:
                err.write(piece)
        return super().reply(request)


sys.exit(main(StderrFloodServer()))
