"""Answers every read with a result nested 100,000 arrays deep (a recursive
parser runs out of stack; RecursionError must not pass for an answer)."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

DEPTH = 100_000


class DeepNestingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "read":
            return b'{"id": %d, "ok": true, "result": %s%s}\n' % (request.id, b"[" * DEPTH, b"]" * DEPTH)
        return super().reply(request)


sys.exit(main(DeepNestingServer()))
