"""Answers every depth request with a 5000-digit integer (more than Python's
json will convert: a ValueError that must not pass for the implementation's answer)."""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class HugeIntegerServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "depth":
            return b'{"id": %d, "ok": true, "result": %s}\n' % (request.id, b"9" * 5000)
        return super().reply(request)


sys.exit(main(HugeIntegerServer()))
