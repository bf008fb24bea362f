"""A log whose buffer, after its third splice, reads as 20 MB of ``z`` bytes: a
real bug, which must be reported ``violated`` with a counterexample a person can
read — the long buffer shown around the first difference and the rest counted,
not 20 MB quoted in every line (``tests/test_hostile_inprocess.py``)."""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import target

FLOOD = b"z" * (20 << 20)


class FloodingBuffer(HonestAdapter):
    def read(self) -> bytes:
        return FLOOD if self.log.edits >= 3 else super().read()


TARGET = target("flooding-buffer", FloodingBuffer)
