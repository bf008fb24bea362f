"""A server that speaks only ``rollcert-protocol/1``: it refuses the version 2
hello with a ProtocolError, as every server written before version 2 does, and
the client must say hello again in version 1 and drive it as before."""

import sys

from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main


class VersionOneServer(JournaledBufferServer):
    name = "version-one-only"
    protocols = (PROTOCOL_VERSION,)


sys.exit(main(VersionOneServer()))
