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
from lying_numbers import EqualToEverything
from lying_python_object import Convertible

from rollcert.targets.adapter import Capability


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
            return Convertible(super().read())  # type: ignore[return-value]

    def length(self) -> int:
        with self.lock:
            return EqualToEverything(len(self.log.states[-1]))


TARGET = target("lying-concurrent", LockedLyingLog, frozenset({Capability.CORE, Capability.CONCURRENT}))
