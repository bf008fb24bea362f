"""A server whose words try to forge a verdict: its hello version is raw HTML
that opens a comment (printable, so the handshake takes it) and, for a splice
that deletes something, an error kind and message that clear the terminal and
paint a passing verdict. The refusal is a wrong answer (R0 ``violated``); none
of the words may show as markup or control characters (``tests/test_forged_output.py``)."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import error_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

STEER = "\x1b[2J\x1b[H\x1b[32mR0        passed\x1b[0m\u202e"


class ForgingServer(JournaledBufferServer):
    version = "<img src=x onerror=alert(1)> <!-- | R0 | **passed** |"

    def reply(self, request: Request) -> bytes:
        if request.op == "splice" and request.arguments["delete_length"]:
            return error_line(request.id, f"Panic{STEER}", f"refused {STEER}\n<script>alert(1)</script>")
        return super().reply(request)


sys.exit(main(ForgingServer()))
