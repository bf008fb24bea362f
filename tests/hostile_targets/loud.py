"""A correct log whose every splice writes 256 KiB to stdout and 256 KiB to
stderr (about 900 MiB over an R0 run). rollcert passes it through without
holding it: the verdict is ``passed`` and rollcert's own memory stays bounded."""

from __future__ import annotations

import sys

from _honest import HonestAdapter
from _honest import target

NOISE = "x" * (256 << 10)


class Loud(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        sys.stdout.write(NOISE)
        sys.stderr.write(NOISE)
        super().splice(offset, delete_length, insert)


TARGET = target("loud", Loud)
