"""A correct log whose every splice sleeps 50 ms: a run long enough to press Ctrl-C into."""

from __future__ import annotations

import time

from _honest import HonestAdapter
from _honest import target


class Slow(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        time.sleep(0.05)
        super().splice(offset, delete_length, insert)


TARGET = target("slow-splice", Slow)
