"""Answers the hello with capabilities nested 100,000 arrays deep."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

DEPTH = 100_000


class DeepHelloServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "hello":
            capabilities = b"[" * DEPTH + b'"core"' + b"]" * DEPTH
            return (
                b'{"id": %d, "ok": true, "result": {"protocol": "rollcert-protocol/1", "name": "deep", '
                b'"version": "1", "capabilities": %s}}\n' % (request.id, capabilities)
            )
        return super().reply(request)


sys.exit(main(DeepHelloServer()))
