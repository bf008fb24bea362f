"""The same bug (inserts written as ``z``) in a plain Python object certified
through ``PythonBufferAdapter``, whose ``read()`` returns an object whose
``__bytes__`` returns an always-equal ``bytes`` subclass: ``bytes(x)`` hands
that subclass straight back, so the adapter's ``bytes(...)`` was no defence."""

from __future__ import annotations

from _honest import CORE
from _honest import SnapshotLog
from _honest import target
from lying_bytes import AgreeableBytes

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapters.python_object import PythonBufferAdapter


class Convertible:
    def __init__(self, content: bytes) -> None:
        self.content = content

    def __bytes__(self) -> bytes:
        return AgreeableBytes(self.content)


class ZBuffer(SnapshotLog):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        super().splice(offset, delete_length, b"z" * len(insert))

    def read(self) -> Convertible:
        return Convertible(self.states[-1])


def build(config: BufferConfig) -> SystemUnderTest:
    return PythonBufferAdapter(ZBuffer(config.initial))


TARGET = target("lying-python-object", build, CORE)
