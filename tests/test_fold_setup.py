"""Folding setup steps into the initial buffer (issue 14, item 6).

A counterexample whose first splices only build the bytes a later step trips
over reads better as that later step on the buffer they built: the minimiser
offers the fold and keeps it when the replay still fails. When the violation
needs the records those splices left (a rollback over them), the replay of the
folded trace passes and the splices stay.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens import load_all
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.shrink import folded_setup
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.python_object import PythonBufferAdapter


class LateOffsetUndo(NaiveJournaledBuffer):
    """Undoes a record made at offset 3 or later one byte too early: the bug
    needs a buffer of at least 3 bytes, not the history that built it."""

    def _undo_one(self, record: InverseRecord) -> None:
        start = record.offset - 1 if record.offset >= 3 else record.offset
        self._bytes[start : start + record.inserted_length] = record.removed


class DeepRollbackForgetsOldest(NaiveJournaledBuffer):
    """rollback(n) for n >= 3 drops the oldest record of the batch without
    putting its bytes back: the bug needs three records, not three bytes."""

    def _undo_newest(self, steps: int) -> None:
        if steps < 3:
            super()._undo_newest(steps)
            return
        for record in reversed(self._records[-steps + 1 :]):
            self._undo_one(record)
        del self._records[-steps:]
        self._revision += steps


def _target(cls: type[NaiveJournaledBuffer]) -> Target:
    def factory(config: BufferConfig) -> SystemUnderTest:
        return PythonBufferAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))

    return Target(name=f"test:{cls.__name__}", version="test", capabilities=SPECIMEN_CAPABILITIES, factory=factory)


SETUP: list[Operation] = [Splice(0, 0, b"x"), Splice(1, 0, b"y"), Splice(2, 0, b"z")]


def _violation(target: Target, operations: list[Operation]) -> Violation:
    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, BufferConfig(b""), operations)
    return caught.value


def _operations(violation: Violation) -> list[Any]:
    return [step.operation for step in violation.steps]


def test_setup_splices_are_folded_into_the_initial_buffer() -> None:
    target = _target(LateOffsetUndo)
    found = _violation(target, [*SETUP, Splice(3, 0, b"w"), Rollback(1)])
    assert len(found.steps) == 5

    shortest = minimise(ROLLBACK, target, found)

    operations = _operations(shortest)
    assert [type(op) for op in operations] == [Splice, Rollback], operations
    assert operations[0].offset == 3
    assert len(shortest.config.initial) == 3  # the bytes the three splices built (perhaps plainer)
    # The certificate's replay command reproduces it: the folded buffer travels in the trace.
    family, config, parsed = parse_trace(_json(shortest))
    assert config.initial == shortest.config.initial
    with pytest.raises(Violation):
        replay(family, target, config, parsed)


def test_fold_is_refused_when_the_violation_needs_the_records() -> None:
    target = _target(DeepRollbackForgetsOldest)
    operations: list[Operation] = [*SETUP, Rollback(3)]
    found = _violation(target, operations)

    # The move is offered (every leading splice but the failing step)...
    folds = list(folded_setup(ROLLBACK, BufferConfig(b""), operations, lambda op: isinstance(op, Splice)))
    assert [(config.initial, len(ops)) for config, ops in folds] == [(b"xyz", 1), (b"xy", 2), (b"x", 3)]
    # ...but a rollback over records that no longer exist is refused by both sides: no violation.
    for config, candidate in folds:
        replay(ROLLBACK, target, config, candidate)

    shortest = minimise(ROLLBACK, target, found)

    kept = _operations(shortest)
    assert [type(op) for op in kept] == [Splice, Splice, Splice, Rollback], kept
    assert kept[-1] == Rollback(3)


def _json(violation: Violation) -> str:
    return json.dumps(trace_json(ROLLBACK, violation.config, _operations(violation)))


def test_diff_family_folds_the_edit_made_before_the_snapshot() -> None:
    """fuzzy_reconcile's S2 counterexample at quick seed 0 began with an agent edit
    made before the snapshot: only the bytes it left mattered, so it is folded.
    (The edit made its 'b' a second copy; deleting an 'a' of 'aa' instead, as
    the counterexample did, could be either 'a' to a content-only target, and
    under the other alignment the read survives and the accept is right: SPEC §6a.)"""
    target = load_all()["fuzzy_reconcile"].target
    assert target is not None
    operations = [
        Splice(3, 0, b"ab"),
        TakeSnapshot(),
        ToolWrite(0, 0, b"1"),
        Splice(5, 1, b""),
        ApplyDiff(0, "content", (Hunk(7, 7, b"X"),), (Region(4, 5),)),
    ]
    with pytest.raises(Violation) as caught:
        replay(DIFFS, target, BufferConfig(b"bcdef"), operations)

    shortest = minimise(DIFFS, target, caught.value)

    kept = _operations(shortest)
    # (4 steps, or fewer once the folded start's letters are made plain.)
    assert len(kept) <= 4 and isinstance(kept[0], TakeSnapshot), kept
    assert len(shortest.config.initial) == 7  # b"bcdef" with the edit made
