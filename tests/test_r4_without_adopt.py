"""R4 is assessed on any target with out-of-log writes, with or without adopt.

Adoption is the only way *past* a divergence; detecting one does not need it.
Before, a target without ``adopt_current`` got R4 ``not_assessed``, and a weak
divergence detector was found only by chance through R0.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED
from rollcert.targets.resolve import resolve_target


def _without_adopt(target: Target) -> Target:
    return replace(target, capabilities=target.capabilities - {Capability.ADOPT})


@pytest.mark.slow
def test_a_correct_target_without_adopt_passes_r4_with_its_situations_reached() -> None:
    result = certify_property(_without_adopt(BUNDLED), "R4", PROFILES["quick"], 0)
    assert result.verdict == "passed", result.reason
    assert "adopt" not in result.coverage  # not asked of a target that cannot adopt
    assert result.coverage["divergence_met"] > 0 and result.coverage["undo_above_write"] > 0


@pytest.mark.slow
def test_a_divergence_specimen_without_adopt_is_violated_on_r4() -> None:
    for name in ("no_divergence_check", "snapshot_jump"):
        result = certify_property(_without_adopt(resolve_target(f"specimen:{name}")), "R4", PROFILES["quick"], 0)
        assert result.verdict == "violated", (name, result.verdict, result.reason)
        assert result.counterexample is not None
        assert not any(step.operation.kind == "adopt_current" for step in result.counterexample.steps)
