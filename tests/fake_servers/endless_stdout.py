"""On the first rollback, logs to stdout forever instead of answering
(stdout belongs to the protocol; a chatty server fills it with log lines)."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class EndlessStdoutServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            out = sys.__stdout__.buffer
            line = b"working on it... " * 4096 + b"\n"
            while True:
                out.write(line)
        return super().reply(request)


sys.exit(main(EndlessStdoutServer()))
