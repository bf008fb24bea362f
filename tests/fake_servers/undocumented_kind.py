"""Answers a splice that deletes something with an error kind rollcert does not document."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import error_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class PanickingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "splice" and request.arguments["delete_length"]:
            return error_line(request.id, "Panic", "index out of bounds: the len is 3 but the index is 3")
        return super().reply(request)


sys.exit(main(PanickingServer()))
