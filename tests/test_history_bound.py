"""A target's own history bound (``HistoryBound``): R6 is assessed on one policy.

A real undo stack has one policy when full (textual's ``deque(maxlen=N)``
evicts the oldest); a target that declares it gets bounded buffers with that
policy only, and R6 asks only for the situations that policy can reach.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED


def _bundled_with(policy: str, declared: str) -> Target:
    """The bundled buffer, always built with ``policy``, declaring a ``declared`` bound."""

    def factory(config: BufferConfig) -> object:
        return BUNDLED.factory(config if config.capacity is None else replace(config, policy=policy))  # type: ignore[arg-type]

    return Target(
        f"bundled-{policy}", "1", frozenset({Capability.CORE, Capability.DEPTH, Capability.BOUNDED}),
        factory,  # type: ignore[arg-type]
        history_bound=HistoryBound(declared),  # type: ignore[arg-type]
    )


def test_a_bound_needs_the_bounded_capability_and_a_known_policy() -> None:
    with pytest.raises(ValueError, match=r"without Capability\.BOUNDED"):
        Target("t", "1", frozenset({Capability.CORE}), BUNDLED.factory, history_bound=HistoryBound("evict_oldest"))
    with pytest.raises(ValueError, match="policy"):
        HistoryBound("evict_newest")  # type: ignore[arg-type]


def test_bounded_buffers_take_the_bounds_policy_and_r6_asks_only_what_it_can_reach() -> None:
    target = _bundled_with("evict_oldest", "evict_oldest")
    assert target.buffer_config(BufferConfig(b"a", 2, "reject")) == BufferConfig(b"a", 2, "evict_oldest")
    assert target.buffer_config(BufferConfig(b"a")) == BufferConfig(b"a")
    names = {situation.name for situation in ROLLBACK.situations("R6", target)}
    assert names == {"eviction", "rollback_to_horizon"}
    assert {s.name for s in ROLLBACK.situations("R6", BUNDLED)} >= {"eviction", "refused_full"}


@pytest.mark.slow
def test_r6_passes_on_an_evicting_history_and_catches_one_that_refuses() -> None:
    passed = certify(_bundled_with("evict_oldest", "evict_oldest"), profile="quick", seed=0, only=("R6",))
    assert passed.results["R6"].verdict == "passed"
    wrong = certify(_bundled_with("reject", "evict_oldest"), profile="quick", seed=0, only=("R6",))
    assert wrong.results["R6"].verdict == "violated"
