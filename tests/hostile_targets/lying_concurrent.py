"""The ``lying_bytes`` bug under R7: a log behind one lock (so its calls do not
race) that writes every insert as ``z`` bytes, and whose ``read()`` returns an
object whose ``__bytes__`` gives a ``bytes`` subclass that equals everything,
and whose ``length()`` returns an ``int`` subclass that does the same. R7 took
``bytes(read())`` and ``int(length())``, compared what they gave, and
certified it ``passed``; it must compare plain values it made itself."""

from __future__ import annotations

import threading

from _honest import HonestAdapter
from _honest import target
from lying_bytes import AgreeableBytes

from rollcert.stateful_tests.adapter import Capability


class AgreeableInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__


class Agreeable:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def __bytes__(self) -> bytes:
        return AgreeableBytes(self.data)


class LockedLyingLog(HonestAdapter):
    lock = threading.Lock()

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        with self.lock:
            super().splice(offset, delete_length, b"z" * len(insert))  # the bug

    def rollback(self, steps: int) -> None:
        with self.lock:
            super().rollback(steps)

    def read(self) -> bytes:
        with self.lock:
            return Agreeable(super().read())  # type: ignore[return-value]

    def length(self) -> int:
        with self.lock:
            return AgreeableInt(len(self.log.states[-1]))


TARGET = target("lying-concurrent", LockedLyingLog, frozenset({Capability.CORE, Capability.CONCURRENT}))
