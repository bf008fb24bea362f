"""The judge keeps every model reading consistent with what it saw.

A multi-step rollback that meets an out-of-log write may refuse outright or stop
at the write (SPEC R4; the model's ``also_acceptable``). A target that reports
no depth cannot be seen to do one or the other when the bytes agree, so the
judge must carry both readings until a later step tells them apart — picking one
too early turned a correct implementation's later, correct DivergenceError into
a false violation (issue 11).

The implementations here are the model itself, so their correctness is not in
question: one takes the model's first outcome, one the other allowed outcome,
and a broken one ignores out-of-log writes.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations


class ModelBackedBuffer(UnsupportedOperations):
    """A buffer that *is* the reference model, choosing among allowed outcomes."""

    def __init__(self, config: BufferConfig, *, stop_at_the_write: bool, ignore_writes: bool = False) -> None:
        self.state: ModelState = initial_state(config.initial)
        self.stop_at_the_write = stop_at_the_write
        self.ignore_writes = ignore_writes

    def _do(self, operation: Operation) -> None:
        state = replace(self.state, barriers=frozenset()) if self.ignore_writes else self.state
        outcome = step(state, operation)
        chosen = outcome.also_acceptable if self.stop_at_the_write and outcome.also_acceptable else outcome.state
        self.state = replace(chosen, barriers=frozenset()) if self.ignore_writes else chosen
        if outcome.error is not None:
            raise outcome.error(outcome.message)

    def read(self) -> bytes:
        return self.state.current

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self._do(Splice(offset, delete_length, insert))

    def rollback(self, steps: int) -> None:
        self._do(Rollback(steps))

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        self._do(OutOfLogWrite(offset, delete_length, insert))

    def close(self) -> None:
        pass


def _target(**choices: bool) -> Target:
    # No DEPTH, no REVISIONS: the two readings look the same after rollback(2).
    return Target(
        "model-backed",
        "test",
        frozenset({Capability.CORE, Capability.OUT_OF_LOG_WRITES}),
        lambda config: ModelBackedBuffer(config, **choices),
    )


TRACE: list[Operation] = [
    Splice(0, 0, b""),
    OutOfLogWrite(0, 1, b""),
    Splice(0, 0, b""),
    Rollback(2),
    Rollback(1),
]


@pytest.mark.parametrize("stop_at_the_write", [False, True], ids=["refuses-outright", "stops-at-the-write"])
def test_either_allowed_outcome_passes_on_a_target_without_depth(stop_at_the_write: bool) -> None:
    steps = replay(ROLLBACK, _target(stop_at_the_write=stop_at_the_write), BufferConfig(b"a"), TRACE)
    assert all(record.ok for record in steps)
    assert steps[3].actual.error == "DivergenceError"
    # The last step tells the readings apart: a target that stopped at the write
    # meets it again; one that refused undoes the record above it.
    assert steps[4].actual.error == ("DivergenceError" if stop_at_the_write else None)


def test_a_target_that_ignores_the_write_still_fails() -> None:
    with pytest.raises(Violation) as raised:
        replay(ROLLBACK, _target(stop_at_the_write=False, ignore_writes=True), BufferConfig(b"a"), TRACE)
    violation = raised.value
    assert len(violation.steps) == 4 and violation.steps[-1].expected.error == "DivergenceError"
    assert "2 outcomes" in violation.explanation  # it says which readings were considered


def test_a_target_with_depth_is_held_to_the_reading_it_showed() -> None:
    """With DEPTH the readings are told apart at once; after stopping at the
    write, succeeding at the next rollback would undo across the write."""
    seen_depth = replace(_target(stop_at_the_write=True), capabilities=frozenset(
        {Capability.CORE, Capability.OUT_OF_LOG_WRITES, Capability.DEPTH}))

    class Depth(ModelBackedBuffer):
        def depth(self) -> int:
            return self.state.depth

    seen_depth = replace(seen_depth, factory=lambda config: Depth(config, stop_at_the_write=True))
    steps = replay(ROLLBACK, seen_depth, BufferConfig(b"a"), TRACE)
    assert [record.actual.depth for record in steps] == [1, 1, 2, 1, 1]
