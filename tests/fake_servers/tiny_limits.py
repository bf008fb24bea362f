"""A version 2 server that declares small limits and keeps them: buffers of at
most 6 bytes and inserts of at most 2. It refuses anything bigger with
ValueError, changing nothing, as the protocol allows a server with limits to do.
Honest otherwise: rollcert must not call those refusals violations.

With ``lying`` as its argument it also corrupts every 1-byte insert (within the
limits): the limits must not hide a real bug."""

import sys

from rollcert.targets.protocol import Limits
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

MAX_BUFFER, MAX_INSERT = 6, 2
LYING = sys.argv[1:] == ["lying"]


class TinyLimitsServer(JournaledBufferServer):
    name = "tiny-limits-lying" if LYING else "tiny-limits"
    limits = Limits(alphabet=None, max_buffer_bytes=MAX_BUFFER, max_insert_bytes=MAX_INSERT)

    def _check(self, buffer: str, delete_length: int, insert: bytes) -> None:
        if len(insert) > MAX_INSERT:
            raise ValueError(f"an insert of {len(insert)} bytes is more than the declared {MAX_INSERT}")
        if len(self.do_read(buffer)) - delete_length + len(insert) > MAX_BUFFER:
            raise ValueError(f"the buffer would be longer than the declared {MAX_BUFFER} bytes")

    def do_new(self, initial: bytes, *args: object, **kwargs: object) -> str:  # type: ignore[override]
        if len(initial) > MAX_BUFFER:
            raise ValueError(f"an initial buffer of {len(initial)} bytes is more than the declared {MAX_BUFFER}")
        return super().do_new(initial, *args, **kwargs)  # type: ignore[arg-type]

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        self._check(buffer, delete_length, insert)
        if LYING and len(insert) == 1:
            insert = b"Z"
        super().do_splice(buffer, offset, delete_length, insert)

    def do_write_out_of_log(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        self._check(buffer, delete_length, insert)
        super().do_write_out_of_log(buffer, offset, delete_length, insert)


sys.exit(main(TinyLimitsServer()))
