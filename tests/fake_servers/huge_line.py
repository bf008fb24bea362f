"""Answers the first read with a 200 MB line: a result that never ends.

It streams the line in 1 MiB pieces (so the fake itself stays small); the
client must give up once the line passes its limit, not hold 200 MB.
"""

import sys

from rollcert.targets.protocol import Request
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

LINE_BYTES = 200 * 1024 * 1024
PIECE = b"A" * (1024 * 1024)


class HugeLineServer(JournaledBufferServer):
    def reply(self, request: Request) -> bytes:
        if request.op == "read":
            out = sys.__stdout__.buffer
            out.write(b'{"id": %d, "ok": true, "result": "' % request.id)
            for _ in range(LINE_BYTES // len(PIECE)):
                out.write(PIECE)
            return b'"}\n'
        return super().reply(request)


sys.exit(main(HugeLineServer()))
