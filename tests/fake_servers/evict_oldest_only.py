"""A version 2.1 server whose bounded history has one policy: like a real undo
stack of N entries, it drops the oldest when full and cannot refuse instead. It
declares ``history_bound`` at the hello, and refuses a bounded buffer with the
other policy as a malformed request (``ProtocolError``): before 2.1 a server
like it had to be asked both policies, and R6 broke on the one it does not have.

With ``v2`` as its argument it speaks version 2 only (no ``history_bound`` to
declare): the client must drive it as before."""

import sys

from rollcert.targets.adapter import HistoryBound
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION_2
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

VERSION_2_ONLY = sys.argv[1:] == ["v2"]


class EvictOldestOnly(JournaledBufferServer):
    name = "evict-oldest-only"
    protocols = (PROTOCOL_VERSION_2, PROTOCOL_VERSION) if VERSION_2_ONLY else (PROTOCOL_VERSION_2_1,)
    history_bound = HistoryBound("evict_oldest", "an undo stack of N entries that drops the oldest")

    def do_new(self, initial: bytes, capacity: int | None, policy: str, *args: object, **kwargs: object) -> str:  # type: ignore[override]
        if capacity is not None and policy != "evict_oldest":
            raise ProtocolError(f"this history only evicts the oldest record; it was asked for policy {policy!r}")
        return super().do_new(initial, capacity, policy, *args, **kwargs)  # type: ignore[arg-type]


sys.exit(main(EvictOldestOnly()))
