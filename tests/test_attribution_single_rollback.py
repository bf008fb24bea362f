"""Issue 42, attribution: a rollback(1) that puts back the wrong bytes is R0's.

"Rk violated" must mean rule k's own clause broke at the failing step (SPEC §6a).
A single rollback step whose bytes come back wrong broke no ordering (R3) and no
bounded-journal rule (R6), even when its bytes happen to equal an earlier state
or the journal has evicted records; each claim here has a control where the
rule's clause does hold.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.python_object import PythonBufferAdapter

sys.path.insert(0, str(Path(__file__).parent / "findings_targets"))
import two_bugs


class JumpsToTheHorizon(NaiveJournaledBuffer):
    """rollback(1) undoes every record: a jump to the oldest state, depth and all."""

    def rollback(self, steps: int = 1) -> None:
        super().rollback(len(self._records) if steps == 1 else steps)


def _factory(config: BufferConfig) -> SystemUnderTest:
    return PythonBufferAdapter(JumpsToTheHorizon(config.initial, capacity=config.capacity, policy=config.policy))


JUMPS = Target("jumps-to-the-horizon", "0", SPECIMEN_CAPABILITIES, _factory)


def _broken(target: Target, operations: list[Any], initial: bytes, capacity: int | None = None) -> tuple[str, ...]:
    config = BufferConfig(initial, capacity, "evict_oldest" if capacity else "reject")
    with pytest.raises(Violation) as caught:
        replay(family_named("rollback"), target, config, operations)
    assert len(caught.value.steps) == len(operations)  # it fails at the rollback, not before
    return caught.value.broken


def test_a_short_undo_whose_bytes_equal_an_earlier_state_is_not_r3() -> None:
    # "ab" -> "abc" -> "" -> rollback(1) should give "abc"; the short undo gives
    # "ab", which is the state at depth 0, but the target says depth 1: no jump.
    trace = [Splice(2, 0, b"c"), Splice(0, 3, b""), Rollback(1)]
    assert _broken(two_bugs.SHORT_UNDO, trace, b"ab") == ("R0",)


def test_a_rollback_of_one_that_lands_on_another_state_with_its_depth_is_r3() -> None:
    # The control: the same bytes, and the target's depth says it jumped there.
    trace = [Splice(2, 0, b"c"), Splice(0, 3, b""), Rollback(1)]
    assert _broken(JUMPS, trace, b"ab") == ("R3",)


def test_a_short_undo_after_an_eviction_is_not_r6() -> None:
    # The first edit is evicted (capacity 1); the newest is undone at its place, short.
    trace = [Splice(0, 0, b"z"), Splice(1, 3, b""), Rollback(1)]
    assert _broken(two_bugs.SHORT_UNDO, trace, b"abc", capacity=1) == ("R0",)
