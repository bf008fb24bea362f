"""Answers every splice with the id of the next request."""

import sys

from rollcert.stateful_tests.protocol import Request
from rollcert.stateful_tests.protocol import success_line
from rollcert.stateful_tests.protocol_server import JournaledBufferServer
from rollcert.stateful_tests.protocol_server import main


class WrongIdServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        answer = super().reply(request)
        if request.op == "splice":
            return success_line(request.id + 1, None)
        return answer


sys.exit(main(WrongIdServer()))
