"""Answers the hello with bytes that are not even UTF-8."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class GarbageHelloServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "hello":
            return b"\x7fELF\x02\x01\x01\x00\xff\xfe garbage\n"
        return super().reply(request)


sys.exit(main(GarbageHelloServer()))
