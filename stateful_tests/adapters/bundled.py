"""The adapter for rollcert's own ``impl.JournaledBuffer``.

Faults are injected through the real journal interface (a wrapping journal
that refuses chosen appends), and out-of-log writes go straight to the
buffer's storage, bypassing the journal exactly as a stray writer would.
"""

from __future__ import annotations

from rollcert.impl import FaultInjectingJournal, InMemoryJournal, JournaledBuffer
from rollcert.model.contract import check_splice_arguments
from rollcert.stateful_tests import SUITE_VERSION
from rollcert.stateful_tests.adapter import (
    BufferConfig,
    Capability,
    SystemUnderTest,
    Target,
    UnsupportedOperations,
)


class BundledAdapter(UnsupportedOperations):
    def __init__(self, config: BufferConfig) -> None:
        self.journal = FaultInjectingJournal(InMemoryJournal())
        self.buffer = JournaledBuffer(
            config.initial, capacity=config.capacity, policy=config.policy, journal=self.journal
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


def bundled_factory(config: BufferConfig) -> SystemUnderTest:
    """The in-memory journal, or the durable file journal when the run asks for
    durability (the R5 machine does): both are the same ``JournaledBuffer``."""
    if config.durable:
        from rollcert.stateful_tests.adapters.durable import DurableAdapter

        return DurableAdapter(config)
    # Capability DIFFS: the same adapter with its mutations routed through
    # rollcert.impl.diffs.DiffableBuffer (see adapters/bundled_diffs.py for why).
    from rollcert.stateful_tests.adapters.bundled_diffs import BundledDiffAdapter

    return BundledDiffAdapter(config)


TARGET = Target(
    name="bundled",
    version=SUITE_VERSION,
    capabilities=frozenset(Capability),
    factory=bundled_factory,
    description="impl.JournaledBuffer with the in-memory journal (R5: the file journal on a simulated disk)",
)
