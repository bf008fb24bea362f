"""Dies on the first rollback, saying why on stderr (as a crashing server would)."""

import os
import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class ExitingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            print("fake server: out of memory while rolling back", file=sys.stderr, flush=True)
            os._exit(70)
        return super().reply(request)


sys.exit(main(ExitingServer()))
