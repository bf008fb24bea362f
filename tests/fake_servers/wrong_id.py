"""Answers every splice with the id of the next request."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import success_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class WrongIdServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        answer = super().reply(request)
        if request.op == "splice":
            return success_line(request.id + 1, None)
        return answer


sys.exit(main(WrongIdServer()))
