"""Introduces itself with a protocol version rollcert does not speak."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import success_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class FutureServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "hello":
            hello = {"protocol": "rollcert-protocol/99", "name": "future", "version": "9", "capabilities": ["core"]}
            return success_line(request.id, hello)
        return super().reply(request)


sys.exit(main(FutureServer()))
