"""A version 2 server that declares limits: it is honest only on the bytes
``a``, ``b`` and newline, and takes buffers of at most 64 bytes and inserts of
at most 8 (bigger ones are refused with ValueError, as the protocol allows)."""

import sys

from rollcert.targets.protocol import Limits
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class LimitedServer(JournaledBufferServer):
    name = "limited"
    limits = Limits(alphabet=b"ab\n", max_buffer_bytes=64, max_insert_bytes=8)

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) > 8:
            raise ValueError(f"an insert of {len(insert)} bytes is more than the declared 8")
        super().do_splice(buffer, offset, delete_length, insert)


sys.exit(main(LimitedServer()))
