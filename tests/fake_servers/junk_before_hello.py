"""Prints a banner on stdout before the handshake (stdout belongs to the protocol)."""

import sys

from rollcert.targets.protocol_server import main

sys.stdout.write("Loading model weights... done\n")
sys.stdout.flush()
sys.exit(main())
