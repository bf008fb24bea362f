"""Answers each rollback twice; the second copy arrives as the reply to the next
request (a duplicate id: replies out of order)."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class OutOfOrderServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        answer = super().reply(request)
        if request.op == "rollback":
            return answer + answer
        return answer


sys.exit(main(OutOfOrderServer()))
