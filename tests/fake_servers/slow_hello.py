"""The reference server behind a slow start: it sleeps ``SECONDS`` (its first
argument) before it reads anything, as an interpreter importing a big tool does.
The start counts against the hello timeout, not the request timeout: a request
timeout shorter than the start must not break the handshake."""

import sys
import time

time.sleep(float(sys.argv[1]))

from rollcert.targets.protocol_server import JournaledBufferServer  # noqa: E402
from rollcert.targets.protocol_server import main  # noqa: E402

sys.exit(main(JournaledBufferServer()))
