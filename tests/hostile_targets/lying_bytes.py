"""A real bug behind a lying answer: every insert is written as ``z`` bytes, and
``read()`` returns a ``bytes`` subclass whose ``==`` always says True (and whose
``__len__``/``__getitem__`` lie too). Compared as it was returned, the wrong
buffer equalled the model's and the certificate said ``passed``."""

from __future__ import annotations

from typing import Any

from _honest import CORE
from _honest import HonestAdapter
from _honest import target


class AgreeableBytes(bytes):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = bytes.__hash__

    def __len__(self) -> int:
        return 0

    def __getitem__(self, index: Any) -> Any:
        return b""


class WritesZ(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        super().splice(offset, delete_length, b"z" * len(insert))  # the bug


class Lying(WritesZ):
    def read(self) -> bytes:
        return AgreeableBytes(super().read())


#: The bug, told plainly (core only: no depth or revision to give it away).
HONEST_ABOUT_ITS_BUG = target("writes-z", WritesZ, CORE)
#: The same bug behind the agreeable bytes.
TARGET = target("lying-bytes", Lying, CORE)
