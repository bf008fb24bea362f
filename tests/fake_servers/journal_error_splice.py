"""A well-formed but wrong answer: refuses every splice with JournalError.

Not a protocol violation: the certificate must say ``violated``, not ``error``.
"""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol import error_line
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class RefusingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "splice":
            return error_line(request.id, "JournalError", "the journal is read-only")
        return super().reply(request)


sys.exit(main(RefusingServer()))
