"""A server that never answers a splice of two bytes or more (it sleeps, its
child too): the client waits for the request timeout; a worker killed at its
deadline must take this server's whole process group with it."""

import os
import sys
import time

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class HangingServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "splice" and len(request.arguments["insert"]) >= 2:
            if os.fork() == 0:  # a child of its own, in its process group
                time.sleep(3600)
                os._exit(0)
            time.sleep(3600)
        return super().reply(request)


sys.exit(main(HangingServer()))
