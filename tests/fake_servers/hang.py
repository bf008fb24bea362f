"""Never answers a rollback: it sleeps instead."""

import sys
import time

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class HangingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "rollback":
            time.sleep(3600)
        return super().reply(request)


sys.exit(main(HangingServer()))
