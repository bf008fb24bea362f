"""The honest starting point of the R7 (linearizability) specimens.

``LockedNaiveBuffer`` is :class:`~rollcert.specimens._base.NaiveJournaledBuffer`
with one re-entrant lock around every public method, observations included: the
obvious way to make it thread-safe, and the control the R7 machine must pass
(``rollcert.specimens.locked_naive_control:TARGET``). Each R7 specimen takes the
lock in one wrong place. ``__len__`` is added because R7 observes the length on
its own, apart from ``read()``.
"""

from __future__ import annotations

import threading
from typing import Any

from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapters.python_object import PythonBufferAdapter

#: What the R7 specimens and the control can be driven on: the usual, and threads.
CONCURRENT_CAPABILITIES = SPECIMEN_CAPABILITIES | {Capability.CONCURRENT}


class MeasuredNaiveBuffer(NaiveJournaledBuffer):
    """The naive buffer with ``len()``; no lock at all."""

    def __len__(self) -> int:
        return len(self._bytes)


class LockedNaiveBuffer(MeasuredNaiveBuffer):
    """Every public method, observations included, under one re-entrant lock
    (re-entrant because ``rollback_to`` calls ``rollback``)."""

    def __init__(self, initial: bytes = b"", *, capacity: int | None = None, policy: str = "reject") -> None:
        super().__init__(initial, capacity=capacity, policy=policy)
        self._lock = threading.RLock()

    def read(self) -> bytes:
        with self._lock:
            return super().read()

    def __len__(self) -> int:
        with self._lock:
            return super().__len__()

    @property
    def depth(self) -> int:
        with self._lock:
            return len(self._records)

    @property
    def revision(self) -> int:
        with self._lock:
            return self._revision

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        with self._lock:
            super().splice(offset, delete_length, insert)

    def rollback(self, steps: int = 1) -> None:
        with self._lock:
            super().rollback(steps)

    def checkpoint(self) -> object:
        with self._lock:
            return super().checkpoint()

    def rollback_to(self, token: object) -> None:
        with self._lock:
            super().rollback_to(token)

    def adopt_current(self) -> None:
        with self._lock:
            super().adopt_current()

    def fail_next_append(self) -> None:
        with self._lock:
            super().fail_next_append()

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        with self._lock:
            super().write_out_of_log(offset, delete_length, insert)


class ConcurrentPythonAdapter(PythonBufferAdapter):
    """The Python-object adapter plus the ``length()`` observation."""

    def length(self) -> int:
        return len(self.buffer)


def concurrent_adapter(cls: type[Any], config: BufferConfig) -> SystemUnderTest:
    return ConcurrentPythonAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))
