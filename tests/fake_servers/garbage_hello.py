"""Answers the hello with bytes that are not even UTF-8."""

import sys

from rollcert.stateful_tests.protocol import Request
from rollcert.stateful_tests.protocol_server import JournaledBufferServer
from rollcert.stateful_tests.protocol_server import main


class GarbageHelloServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "hello":
            return b"\x7fELF\x02\x01\x01\x00\xff\xfe garbage\n"
        return super().reply(request)


sys.exit(main(GarbageHelloServer()))
