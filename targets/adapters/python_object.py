"""The in-process adapter for Python objects that speak rollcert's buffer API.

Any object with the methods of :class:`RollbackBuffer` can be certified through
it; the test hooks (``fail_next_append``, ``write_out_of_log``) are only needed
for the capabilities that use them. The specimens are certified this way.
"""

from __future__ import annotations

from typing import Any
from typing import Protocol

from rollcert.targets.adapter import UnsupportedOperations
from rollcert.targets.adapter import exact_bytes


class RollbackBuffer(Protocol):
    """rollcert's Python buffer API (the bundled ``impl.JournaledBuffer`` has it)."""

    def read(self) -> bytes: ...
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None: ...
    def rollback(self, steps: int = 1) -> None: ...


class PythonBufferAdapter(UnsupportedOperations):
    """Forwards every call to ``buffer``; optional methods only if it has them."""

    def __init__(self, buffer: RollbackBuffer) -> None:
        # Typed loosely: the optional methods are found at run time, by capability.
        self.buffer: Any = buffer

    def read(self) -> bytes:
        # bytes() of an object whose __bytes__ returns a lying bytes subclass is that subclass
        return exact_bytes(bytes(self.buffer.read()), "the buffer's read()")

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.buffer.splice(offset, delete_length, insert)

    def rollback(self, steps: int) -> None:
        self.buffer.rollback(steps)

    def depth(self) -> int:
        return int(self.buffer.depth)

    def revision(self) -> int:
        return int(self.buffer.revision)

    def checkpoint(self) -> object:
        return self.buffer.checkpoint()

    def rollback_to(self, token: object) -> None:
        self.buffer.rollback_to(token)

    def arm_journal_fault(self) -> None:
        self.buffer.fail_next_append()

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.buffer.write_out_of_log(offset, delete_length, insert)

    def adopt_current(self) -> None:
        self.buffer.adopt_current()
