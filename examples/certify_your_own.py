"""Certify an implementation of your own: about 30 lines, certified on R0 and R2.

``SnapshotLog`` keeps a copy of the buffer per edit (slow, but obviously right:
rollback is popping copies). The adapter tells rollcert what it can do, and
``certify`` drives it through random interleavings against the model; the
properties whose capabilities it lacks are reported ``not_assessed``, never
``passed``. Swap in your own class and run it.

Run: python examples/certify_your_own.py
"""

from __future__ import annotations

from rollcert.model.errors import UnreachableRollbackError
from rollcert.stateful_tests.certify import certify
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations


class SnapshotLog:
    """A buffer that keeps every earlier state: the simplest correct rollback log."""

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


class SnapshotLogAdapter(UnsupportedOperations):  # anything not declared raises CapabilityMissing
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


TARGET = Target(
    "snapshot-log", "1.0", frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS}), SnapshotLogAdapter
)

if __name__ == "__main__":
    certificate = certify(TARGET, profile="quick", seed=0, only=("R0", "R1", "R2"))
    for property_id, result in certificate.results.items():
        print(f"{property_id}  {result.verdict:<13} {result.title}  {result.reason}")
    print(f"exit status {certificate.exit_status}")
