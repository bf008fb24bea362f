"""A correct buffer and its adapter, for the hostile targets to build on.

``SnapshotLog`` keeps every earlier state (the obviously right rollback log of
examples/certify_your_own.py); each hostile target changes one thing about it.
"""

from __future__ import annotations

from rollcert.model.errors import UnreachableRollbackError
from rollcert.stateful_tests.adapter import BufferConfig
from rollcert.stateful_tests.adapter import Capability
from rollcert.stateful_tests.adapter import SutFactory
from rollcert.stateful_tests.adapter import Target
from rollcert.stateful_tests.adapter import UnsupportedOperations

CORE = frozenset({Capability.CORE})
COUNTED = frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS})


class SnapshotLog:
    """A buffer that keeps every earlier state."""

    def __init__(self, initial: bytes) -> None:
        self.states = [initial]
        self.edits = 0

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        current = self.states[-1]
        if not (0 <= offset <= len(current) and 0 <= delete_length <= len(current) - offset):
            raise ValueError(f"splice({offset}, {delete_length}) outside a {len(current)}-byte buffer")
        self.states.append(current[:offset] + insert + current[offset + delete_length :])
        self.edits += 1

    def rollback(self, steps: int) -> None:
        if steps < 0:
            raise ValueError("steps must be >= 0")
        if steps > len(self.states) - 1:
            raise UnreachableRollbackError(f"rollback({steps}) goes past the horizon")
        del self.states[len(self.states) - steps :]
        self.edits += steps


class HonestAdapter(UnsupportedOperations):
    """Forwards to a :class:`SnapshotLog`; hostile targets override one method."""

    def __init__(self, config: BufferConfig) -> None:
        self.log = SnapshotLog(config.initial)

    def read(self) -> bytes:
        return self.log.states[-1]

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.log.splice(offset, delete_length, insert)

    def rollback(self, steps: int) -> None:
        self.log.rollback(steps)

    def depth(self) -> int:
        return len(self.log.states) - 1

    def revision(self) -> int:
        return self.log.edits


def target(name: str, factory: SutFactory, capabilities: frozenset[Capability] = COUNTED) -> Target:
    return Target(f"hostile-{name}", "0", capabilities, factory)


#: The honest log itself: every hostile variant is measured against it.
HONEST = target("honest", HonestAdapter)
