"""The adapter of rollcert's own ``impl.JournaledBuffer`` with the in-memory journal.

Faults are injected through the real journal interface (a wrapping journal
that refuses chosen appends), and out-of-log writes go straight to the
buffer's storage, bypassing the journal exactly as a stray writer would. The
diff and durable adapters extend it; :mod:`rollcert.targets.adapters.bundled`
puts the three together as the ``bundled`` target.
"""

from __future__ import annotations

from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.model.contract import check_splice_arguments
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import UnsupportedOperations


class BundledAdapter(UnsupportedOperations):
    def __init__(self, config: BufferConfig) -> None:
        self.journal = FaultInjectingJournal(InMemoryJournal())
        self.buffer = JournaledBuffer(
            config.initial,
            capacity=config.capacity,
            policy=config.policy,
            journal=self.journal,
            start_revision=config.start_revision,
            chunk_size=config.chunk_bytes,
        )

    def read(self) -> bytes:
        return self.buffer.read()

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.buffer.splice(offset, delete_length, insert)

    def rollback(self, steps: int) -> None:
        self.buffer.rollback(steps)

    def length(self) -> int:
        return len(self.buffer)

    def depth(self) -> int:
        return self.buffer.depth

    def revision(self) -> int:
        return self.buffer.revision

    def checkpoint(self) -> object:
        return self.buffer.checkpoint()

    def rollback_to(self, token: object) -> None:
        self.buffer.rollback_to(token)  # type: ignore[arg-type]  # a wrong type must raise TypeError

    def arm_journal_fault(self) -> None:
        self.journal.fail_next_append()

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        offset, delete_length, insert = check_splice_arguments(
            len(self.buffer.storage), offset, delete_length, insert
        )
        self.buffer.storage.replace(offset, delete_length, insert)

    def adopt_current(self) -> None:
        self.buffer.adopt_current()
