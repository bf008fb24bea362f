"""Targets with two independent bugs that both break R0, alone and together
(issue 43's done-when): ``DROPS_CR`` drops every ``\\r`` from inserted text,
``SHORT_UNDO`` rolls back a delete of three bytes or more with only its first
two, ``BOTH`` has both. Each is the honest naive buffer the specimens start
from (``specimens/_base.py``) with one method changed. Importable as
``two_bugs:BOTH`` with this folder on the path, so a Replay line runs as printed.
"""

from __future__ import annotations

from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.python_object import PythonBufferAdapter


class DropsCr(NaiveJournaledBuffer):
    """Inserted text loses its carriage returns, as an editor that normalises
    what it is given would; the record matches what went in, so undo is exact.
    Only a bytes-like insert is changed: ``bytes()`` of an int or a list would
    make bytes of it, a second bug (R0's bad_arguments sends those, SPEC §2)."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if isinstance(insert, (bytes, bytearray, memoryview)):
            insert = bytes(insert).replace(b"\r", b"")
        super().splice(offset, delete_length, insert)


class ShortUndo(NaiveJournaledBuffer):
    """The undo of a splice that removed three bytes or more puts back two."""

    def _undo_one(self, record: InverseRecord) -> None:
        removed = record.removed[:2] if len(record.removed) >= 3 else record.removed
        self._bytes[record.offset : record.offset + record.inserted_length] = removed


class Both(DropsCr, ShortUndo):
    """Both bugs at once."""


def _target(name: str, cls: type[NaiveJournaledBuffer]) -> Target:
    def factory(config: BufferConfig) -> SystemUnderTest:
        return PythonBufferAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))

    return Target(f"two-bugs-{name}", "0", SPECIMEN_CAPABILITIES, factory)


DROPS_CR = _target("drops-cr", DropsCr)
SHORT_UNDO = _target("short-undo", ShortUndo)
BOTH = _target("both", Both)
