"""Swarm testing in the diff machine (issue 42): one S1 example in
``SWARM_SHARE`` runs with only some of its optional rules, so the rules it keeps
come round more often. The snapshot and the apply are never switched off, and
neither are the rules S2 and S3 judge (those machines do not swarm)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis.stateful import RuleBasedStateMachine

from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.diff_machine import SWARM_RULES_BY_PROPERTY
from rollcert.stateful_tests.diff_machine import SWARM_SHARE
from rollcert.stateful_tests.diff_machine import swarm_rules
from rollcert.stateful_tests.family import Tracker
from rollcert.targets.resolve import resolve_target

S1_OPTIONAL = SWARM_RULES_BY_PROPERTY["S1"]


def test_an_example_keeps_all_its_optional_rules_or_a_subset_read_from_its_start_word() -> None:
    words = [random.Random(seed).randbytes(16) for seed in range(400)]
    chosen = [swarm_rules(word, S1_OPTIONAL) for word in words]
    assert [swarm_rules(word, S1_OPTIONAL) for word in words] == chosen  # a function of the word
    whole = sum(rules == S1_OPTIONAL for rules in chosen)
    assert 400 / SWARM_SHARE * 0.8 < whole < 400 / SWARM_SHARE * 1.2 + 400 / 2 ** len(S1_OPTIONAL)
    subsets = Counter(rules for rules in chosen if rules != S1_OPTIONAL)
    assert len(subsets) == 2 ** len(S1_OPTIONAL) - 1  # every other subset met, the empty one too
    assert all(rules <= S1_OPTIONAL for rules in chosen)
    assert swarm_rules(b"", frozenset()) == frozenset()


def test_only_the_s1_machine_gates_its_optional_rules_and_never_the_snapshot_or_the_apply() -> None:
    target = resolve_target("bundled")
    for property_id in ("S1", "S2", "S3"):
        machine = DIFFS.build_machine(target, property_id, Tracker(property_id))()
        assert isinstance(machine, RuleBasedStateMachine)
        optional = SWARM_RULES_BY_PROPERTY.get(property_id, frozenset())
        machine.enabled_rules = frozenset()  # every optional rule off: the rest still run
        off = {rule.function.__name__ for rule in machine.rules if not all(_swarm_allows(c, machine) for c in rule.preconditions)}
        assert off == optional and "rollback_diff" not in off
        machine.enabled_rules = optional
        assert not any(not all(_swarm_allows(c, machine) for c in rule.preconditions) for rule in machine.rules)


def _swarm_allows(condition: object, machine: object) -> bool:
    """A swarm precondition's answer; the machine's other preconditions (a
    snapshot to apply, room for another) read state the test has not built."""
    if getattr(condition, "__qualname__", "").startswith("_swarm_enabled"):
        return bool(condition(machine))  # type: ignore[operator]
    return True
