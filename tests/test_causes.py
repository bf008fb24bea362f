"""Causes, not symptoms (issue 43): a refusal that changed nothing is a refusal,
never "wrong bytes"; an operation that never succeeded is named as the cause of
an ``unknown`` and of a violation; an out-of-reach dimension says why it matters."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.stateful_tests.causes import count_call
from rollcert.stateful_tests.causes import operations_never_succeeded
from rollcert.stateful_tests.causes import restated
from rollcert.stateful_tests.causes import unknown_reason
from rollcert.stateful_tests.causes import why_it_matters
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.family import REFUSED
from rollcert.stateful_tests.family import WRONG_BYTES
from rollcert.stateful_tests.family import WRONG_ERROR
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import harm_of
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED


class _UndoNeverWorks:
    """The bundled buffer, except that undo refuses every time and changes nothing
    (a tool whose undo is wired to a history that is always empty)."""

    def __init__(self, config: BufferConfig) -> None:
        self.inner = BUNDLED.factory(config)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def rollback(self, steps: int) -> None:
        raise UnreachableRollbackError("nothing to undo")


def _undo_never_works(capabilities: frozenset[Capability]) -> Target:
    def build(config: BufferConfig) -> SystemUnderTest:
        return _UndoNeverWorks(config)  # type: ignore[return-value]

    return replace(BUNDLED, name="undo-never-works", capabilities=capabilities, factory=build)


CORE_DEPTH = frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS})


def _failing_step(target: Target, *operations: Any) -> Violation:
    session = Session(ROLLBACK, target, BufferConfig(b"abc"))
    try:
        with pytest.raises(Violation) as raised:
            for operation in operations:
                session.execute(operation)
    finally:
        session.close()
    return raised.value


def test_a_refusal_that_changed_nothing_is_an_allowed_operation_refused_not_wrong_bytes() -> None:
    violation = _failing_step(_undo_never_works(CORE_DEPTH), Splice(0, 1, b"xy"), Rollback(1))
    assert violation.harm == REFUSED
    assert "never existed" not in violation.explanation
    assert "The refusal left the buffer as it was" in violation.explanation, violation.explanation


def test_a_refusal_with_the_wrong_error_that_changed_nothing_is_a_wrong_error() -> None:
    target = _undo_never_works(CORE_DEPTH | {Capability.OUT_OF_LOG_WRITES})
    violation = _failing_step(target, Splice(0, 0, b"x"), OutOfLogWrite(1, 1, b"Q"), Rollback(1))
    assert violation.steps[-1].expected.error == "DivergenceError"
    assert violation.harm == WRONG_ERROR


def test_a_refusal_that_changed_bytes_is_still_wrong_bytes() -> None:
    allowed = [Observed(None, b"ab", None, None)]
    changed = Observed("UnreachableRollbackError", b"zz", None, None)
    assert harm_of(Rollback(1), allowed, changed, [b""], before=b"xab") == WRONG_BYTES
    unchanged = replace(changed, buffer=b"xab")
    assert harm_of(Rollback(1), allowed, unchanged, [b""], before=b"xab") == REFUSED
    untyped = replace(unchanged, error="undocumented:KeyError")  # an untyped answer is no refusal
    assert harm_of(Rollback(1), allowed, untyped, [b""], before=b"xab") == WRONG_BYTES


def test_the_session_counts_every_call_accepted_and_allowed_per_kind() -> None:
    tallies: Counter[str] = Counter()
    session = Session(ROLLBACK, _undo_never_works(CORE_DEPTH), BufferConfig(b"abc"), tallies)
    try:
        session.execute(Splice(0, 0, b"x"))
        session.execute(Splice(9, 0, b"x"))  # bad arguments: refused by both
        with pytest.raises(Violation):
            session.execute(Rollback(1))
    finally:
        session.close()
    assert (tallies["calls:splice"], tallies["accepted:splice"], tallies["allowed:splice"]) == (2, 1, 1)
    assert (tallies["calls:rollback"], tallies["accepted:rollback"], tallies["allowed:rollback"]) == (1, 0, 1)
    assert operations_never_succeeded(tallies) == ["rollback never succeeded: 0 of 1 call (the rules allowed 1 of them)"]


@pytest.mark.slow
def test_an_undo_that_never_works_is_reported_as_that_not_as_a_wrong_error() -> None:
    """Issue 43: "an undo that never works at all reads as R4 'wrong error'"."""
    target = _undo_never_works(CORE_DEPTH | {Capability.OUT_OF_LOG_WRITES, Capability.ADOPT})
    result = certify_property(target, "R4", PROFILES["quick"], 0)
    assert result.verdict == "violated" and result.counterexample is not None
    assert result.reason.startswith("rollback never succeeded: 0 of "), result.reason
    assert "(the rules allowed " in result.reason.split(". ")[0]
    assert result.counterexample.explanation == result.reason


def test_an_unknown_names_the_operation_that_never_succeeded_first_and_why_a_dimension_matters() -> None:
    tallies: Counter[str] = Counter()
    for _ in range(3):
        count_call(tallies, "splice", target_accepted=False, rules_allow=False)
    count_call(tallies, "rollback_to_foreign", target_accepted=False, rules_allow=False)  # refused by design
    reason = unknown_reason(
        "R4",
        ["a rollback that met an out-of-log write"],
        [("removed_past_4096", "an edit that removed a run of bytes longer than 4096 bytes")],
        tallies,
    )
    assert reason == (
        "splice never succeeded: 0 of 3 calls (the rules refused every one too); so the run never reached: "
        "a rollback that met an out-of-log write; an edit that removed a run of bytes longer than 4096 bytes "
        "(removed_past_4096) — R4: a divergence check that hashes or samples only a prefix or window of a large "
        "region misses an out-of-log write past it"
    )
    assert "\n" not in reason


def test_every_dimension_says_why_it_matters_to_every_property_that_requires_it() -> None:
    from rollcert.stateful_tests.world import DIMENSIONS

    for property_id in ("R0", "R1", "R2", "R3", "R4", "R5", "R6", "S1", "S2", "S3"):
        for dimension in DIMENSIONS:
            why = why_it_matters(property_id, dimension.name)
            assert why and not why.endswith(" past"), (property_id, dimension.name)
    assert why_it_matters("R5", "removed_past_128").endswith("past 128 bytes")


def test_a_merge_counts_the_cause_again_over_every_round_it_keeps() -> None:
    text = "rollback never succeeded: 0 of 4 calls (the rules allowed 2 of them). Let the buffer be ..."
    tallies = Counter({"calls:rollback": 9, "allowed:rollback": 5})
    assert restated(text, tallies) == (
        "rollback never succeeded: 0 of 9 calls (the rules allowed 5 of them). Let the buffer be ..."
    )
    assert restated("Let the buffer be ...", tallies) == "Let the buffer be ..."
