"""CrossHair checks with teeth: the unplanted code gives no counterexample, every
planted bug is found within its stated budget, and only integer arithmetic is
reported CONFIRMED (never "proved" for the bytes contracts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rollcert.proofs import crosshair_checks as ch

pytestmark = pytest.mark.proof


@pytest.mark.parametrize("function", ch.INTEGER_CONTRACTS, ids=lambda f: f.__name__)
def test_integer_offset_arithmetic_is_confirmed(function: Callable[..., Any]) -> None:
    # CrossHair's per-path solver timeouts depend on machine load: on a busy machine a
    # path can come back "cannot confirm". A counterexample would fail at once; only
    # the inconclusive answer is retried, with a larger budget.
    for attempt in range(3):
        result = ch.check_contract(function, budget_s=ch.CONTRACT_BUDGET_S * (attempt + 1))
        print(f"\n{result.name}: {result.status} in {result.seconds:.2f} s")
        assert result.status != "FOUND", result.detail
        if result.status == "CONFIRMED":
            break
    assert result.status == "CONFIRMED", result.detail


@pytest.mark.parametrize("function", ch.BYTES_CONTRACTS, ids=lambda f: f.__name__)
@pytest.mark.slow
def test_bytes_contracts_hold_within_the_budget(function: Callable[..., Any]) -> None:
    result = ch.check_contract(function, budget_s=3.0)
    print(f"\n{result.name}: {result.status} in {result.seconds:.2f} s")
    assert result.status in ("CONFIRMED", "UNKNOWN"), result.detail


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ch.MUTANTS))
def test_every_planted_bug_is_found_within_its_budget(name: str) -> None:
    result = ch.check_mutant(name, ch.MUTANTS[name])
    print(f"\n{result.name}: {result.status} in {result.seconds:.2f} s — {result.detail}")
    assert result.status == "FOUND", f"{name} survived {ch.MUTANT_BUDGET_S} s"


@pytest.mark.slow
def test_impl_agrees_with_the_model_and_the_dropped_record_does_not() -> None:
    honest = ch.check_contract(ch.impl_agrees_with_model, budget_s=5.0)
    print(f"\nimpl vs model: {honest.status} in {honest.seconds:.2f} s")
    assert honest.status == "UNKNOWN", honest.detail
    planted = ch.check_contract(ch.dropped_record_agrees_with_model, budget_s=ch.MUTANT_BUDGET_S)
    print(f"dropped record vs model: {planted.status} in {planted.seconds:.2f} s — {planted.detail}")
    assert planted.status == "FOUND"


def test_mirrors_agree_with_impl_and_model_on_concrete_inputs() -> None:
    """The mirrors are restatements, so check them against the real code on a few inputs."""
    from rollcert.model.reference import splice_bytes

    for buffer in (b"", b"ab", b"aab"):
        for offset in range(len(buffer) + 1):
            for delete in range(len(buffer) - offset + 1):
                for insert in (b"", b"x", b"yz"):
                    assert ch.splice_then_undo(buffer, offset, delete, insert) == buffer
                    changed = splice_bytes(buffer, offset, delete, insert)
                    assert ch.impl_agrees_with_model(buffer, offset, delete, insert, 0, len(changed), b"q")
    assert ch.impl_accepts_splice(3, 3, 0) and not ch.impl_accepts_splice(3, 2, 2)
