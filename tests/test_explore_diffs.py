"""``rollcert explore`` on a diffs-only target (SPEC §6a, issue 24): it searches
the diff family (S1) and sends nothing the target did not declare."""

from __future__ import annotations

from typing import Any

import pytest

from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.specimens.write_set_only import WriteSetOnlyBuffer
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.exhaustive import diff_operations_at
from rollcert.stateful_tests.exhaustive import explore
from rollcert.stateful_tests.exhaustive import operations_at
from rollcert.stateful_tests.exhaustive import search_family
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled_diffs import BundledDiffAdapter

DIFFS_ONLY = frozenset({Capability.DIFFS})
#: What a diffs-only target may be sent (a splice reaches a 2.1 server as a write).
DECLARED = {"read", "splice", "snapshot", "apply_diff", "close"}


class _Spy:
    """The SUT as the harness sees it: every method the harness calls is noted
    (in ``calls``) before it reaches the real adapter."""

    def __init__(self, inner: BundledDiffAdapter, calls: list[str]) -> None:
        self._inner, self._calls = inner, calls

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if not callable(method):
            return method

        def called(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            return method(*args, **kwargs)

        return called


class _WriteSetOnlyAdapter(BundledDiffAdapter):
    diff_layer = WriteSetOnlyBuffer


def _target(adapter: type[BundledDiffAdapter], calls: list[str]) -> Target:
    """``adapter`` declared as diffs only."""
    return Target(f"test:{adapter.__name__}", "test", DIFFS_ONLY, lambda config: _Spy(adapter(config), calls))


def test_a_diffs_only_target_is_searched_in_the_diff_family() -> None:
    assert search_family(_target(BundledDiffAdapter, [])) == DIFFS.name
    assert search_family(Target("t", "1", frozenset(Capability), BundledDiffAdapter)) == ROLLBACK.name
    assert search_family(Target("t", "1", frozenset(Capability), BundledDiffAdapter), ["S1"]) == DIFFS.name


def test_the_alphabets_hold_only_declared_operations() -> None:
    rollback_kinds = {op.kind for op in operations_at(ROLLBACK.initial_state(BufferConfig(b"ab")), DIFFS_ONLY)}
    assert rollback_kinds == {"splice"}  # no rollback to a target without the core
    state = DIFFS.initial_state(BufferConfig(b"ab"))
    for operation in (TakeSnapshot(), Splice(0, 0, b"a")):
        state = DIFFS.predict(state, operation).readings[0].state
    assert {op.kind for op in diff_operations_at(state, DIFFS_ONLY)} == {"snapshot", "splice", "tool_write", "apply_diff"}
    assert "rollback" in {op.kind for op in diff_operations_at(state, frozenset(Capability))}


def test_explore_passes_a_sound_diffs_only_target_sending_nothing_undeclared() -> None:
    calls: list[str] = []
    result = explore(_target(BundledDiffAdapter, calls), depth=2)
    assert result.verdict == "passed", result.reason
    assert result.family == DIFFS.name and "S1-S3" in result.summary()
    assert result.states > 100
    assert {"snapshot", "apply_diff"} <= set(calls) <= DECLARED, set(calls) - DECLARED


@pytest.mark.slow
def test_explore_finds_the_write_set_check_on_a_diffs_only_target_as_s1() -> None:
    calls: list[str] = []
    result = explore(_target(_WriteSetOnlyAdapter, calls), depth=3)
    assert result.verdict == "violated", result.reason
    assert result.property_id == "S1"
    assert result.violation is not None and "S1" in result.violation.broken
    assert set(calls) <= DECLARED, set(calls) - DECLARED
