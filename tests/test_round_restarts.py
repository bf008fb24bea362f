"""A round that Hypothesis finds inconsistent is started afresh, not reported as an error.

Over the protocol a real SIGKILL lands inside a request one time and after it the
next, so the state the machines draw from differs between two examples that
share a start, and Hypothesis refuses to go on (``FlakyStrategyDefinition``).
Every step that ran was judged, so this is no verdict: ``certify._run_round``
starts the round again with another seed. The machine here is inconsistent on
purpose, for its first examples only (as a real crash is now and then).
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import rule

from rollcert.stateful_tests.certify import ROUND_RESTARTS
from rollcert.stateful_tests.certify import _failure_behind
from rollcert.stateful_tests.certify import _run_round
from rollcert.stateful_tests.family import owner_of
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.profiles import Profile
from rollcert.targets.adapter import BufferConfig

PROFILE = Profile("tiny", max_examples=20, steps_per_example=3, rounds=1)


def machine_inconsistent_for(examples: int) -> tuple[type[RuleBasedStateMachine], list[int]]:
    """A machine whose first draw is an integer or a boolean by turns during its
    first ``examples`` examples (the same start, different draws), then always an integer."""
    started: list[int] = [0]

    class Inconsistent(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            started[0] += 1
            self.number = started[0]

        @rule(data=st.data())
        def draw(self, data: st.DataObject) -> None:
            if self.number <= examples and self.number % 2 == 0:
                data.draw(st.booleans())
            else:
                data.draw(st.integers(0, 10))

    return Inconsistent, started


def test_a_round_restarts_after_an_inconsistent_start() -> None:
    machine, started = machine_inconsistent_for(examples=2)
    assert _run_round(machine, PROFILE, round_seed=0) == 1
    assert started[0] > 2  # the restarted round ran examples of its own


def test_a_round_that_stays_inconsistent_is_still_an_error() -> None:
    machine, _ = machine_inconsistent_for(examples=10**9)
    with pytest.raises(FlakyStrategyDefinition):
        _run_round(machine, PROFILE, round_seed=0)


def test_a_consistent_round_is_not_restarted() -> None:
    machine, started = machine_inconsistent_for(examples=0)
    assert _run_round(machine, PROFILE, round_seed=0) == 0
    assert ROUND_RESTARTS >= 1 and started[0] >= 1


# -- another rule's finding, set aside in the inconsistent example --------------------

CONFIG = BufferConfig(initial=b"ab")


def _inconsistency_after(found: Violation) -> FlakyStrategyDefinition:
    """The chain Hypothesis leaves when the draws went another way right after a
    machine set ``found`` aside: the machine ends the example with ``reject()``
    inside its ``except Violation`` block, and the inconsistency is raised while
    that is handled."""
    try:
        try:
            raise found
        except Violation:
            raise UnsatisfiedAssumption("set aside")  # noqa: B904 -- as reject() raises it: context, no cause
    except UnsatisfiedAssumption:
        try:
            raise FlakyStrategyDefinition("the same choices drew differently")
        except FlakyStrategyDefinition as inconsistent:
            return inconsistent
    raise AssertionError("unreachable")


def test_another_rules_finding_set_aside_is_no_failure_behind_an_inconsistency() -> None:
    """pycrdt's undo is not deterministic, so its rounds restart; once, the R0-only
    finding R2's machine had set aside was raised as R2's verdict ("R2 violated",
    counterexample breaking R0 alone). It is recorded for R0; the round restarts."""
    r0_only = Violation(CONFIG, [], "the depth is 0, not 1", ("R0",))
    assert _failure_behind(_inconsistency_after(r0_only), owner_of("R2")) is None
    assert _failure_behind(_inconsistency_after(r0_only), owner_of("R0")) is r0_only


def test_a_finding_of_the_rounds_own_rule_behind_an_inconsistency_is_the_verdict() -> None:
    own = Violation(CONFIG, [], "restored one place off", ("R0", "R2"))
    assert _failure_behind(_inconsistency_after(own), owner_of("R2")) is own


def test_a_restarted_round_prints_nothing_beside_the_certificate(capsys: pytest.CaptureFixture[str]) -> None:
    """Hypothesis reports the steps before an inconsistency ("Steps leading up to this
    error: …") on the terminal; the round restarts, so that is noise beside a certificate."""
    machine, _ = machine_inconsistent_for(examples=2)
    assert _run_round(machine, PROFILE, round_seed=0) == 1
    printed = capsys.readouterr()
    assert "Steps leading up" not in printed.out + printed.err
