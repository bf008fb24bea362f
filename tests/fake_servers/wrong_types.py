"""Answers every read with a number instead of base64 text."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import success_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class WrongTypesServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        answer = super().reply(request)
        if request.op == "read":
            return success_line(request.id, 42)
        return answer


sys.exit(main(WrongTypesServer()))
