"""A server whose words try to steer the user's terminal: with ``hello`` its name
holds a line break, a clear-screen sequence and a green fake verdict; with
``message`` its refusal of 3-byte inserts says so in escape sequences and a
right-to-left override; with ``stderr`` it takes every splice, writes them to
stderr and exits on the first rollback (so its verdict is an error whichever
step a run draws first, not a refusal found before any rollback). None of it may reach the terminal or a certificate as
control characters (``tests/test_hostile_servers.py``)."""

import sys

from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

STEER = "\x1b[2J\x1b[H\x1b[32mR0        passed\x1b[0m\u202e"
MODE = sys.argv[1] if len(sys.argv) > 1 else "message"


class SteeringServer(JournaledBufferServer):
    name = f"steering\n{STEER}" if MODE == "hello" else "steering"

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) == 3 and MODE != "stderr":
            raise ValueError(f"refused {STEER}")
        super().do_splice(buffer, offset, delete_length, insert)

    def do_rollback(self, buffer: str, steps: int) -> None:
        if MODE != "stderr":
            return super().do_rollback(buffer, steps)
        sys.stderr.write(f"dying {STEER}\n")
        sys.stderr.flush()
        sys.exit(9)


sys.exit(main(SteeringServer()))
