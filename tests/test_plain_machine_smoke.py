"""The plain-machine baseline runs and finds an easy specimen. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# ``benchmarks`` is a directory of the repository, not an installed package.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from benchmarks.plain_machine import build_plain_machine  # noqa: E402
from benchmarks.plain_machine import run_plain  # noqa: E402
from rollcert.specimens import load_all  # noqa: E402
from rollcert.stateful_tests.machines import rules_for  # noqa: E402


@pytest.mark.slow
def test_plain_machine_finds_best_effort_log() -> None:
    target = load_all()["best_effort_log"].target
    assert target is not None
    result = run_plain(target, "R1", seed=0, max_examples=50)
    assert result.found, result.error
    assert result.length is not None and result.length >= 1


@pytest.mark.parametrize("property_id", ["R1", "R2", "R3", "R4", "R6"])
def test_plain_machine_has_rollcerts_rules(property_id: str) -> None:
    target = load_all()["evict_newest"].target
    assert target is not None
    machine = build_plain_machine(target, property_id)
    for name in rules_for(property_id, target.capabilities):
        assert hasattr(machine, name)


def _row(ours_found: int, ours_first: float | None, plain_found: int, plain_first: float | None) -> dict[str, object]:
    return {
        "rollcert": {"found": ours_found, "runs": 3, "median_seconds_to_first_failure": ours_first},
        "plain": {"found": plain_found, "runs": 3, "median_seconds_to_first_failure": plain_first},
    }


@pytest.mark.parametrize(
    ("row", "reading"),
    [
        (_row(3, 0.2, 3, 0.5), "rollcert sooner"),
        (_row(3, 0.9, 3, 0.5), "SLOWER: the plain machine sees it first"),
        (_row(0, None, 2, 0.5), "MISSED: the plain machine finds it, rollcert does not"),
        (_row(1, 0.1, 2, 0.5), "MISSED on some seeds the plain machine finds it on"),
        (_row(3, 0.2, 0, None), "only rollcert finds it"),
        (_row(0, None, 0, None), "neither finds it"),
        (
            {**_row(3, 0.2, 0, None), "plain": {"found": 0, "runs": 3, "timeouts_while_shrinking": 2}},
            "the plain machine saw a failure but was still shrinking it at the budget",
        ),
    ],
)
def test_the_side_by_side_reading_says_who_found_it_first(row: dict[str, object], reading: str) -> None:
    from benchmarks.plain_machine import first_violation_verdict

    assert first_violation_verdict(row) == reading  # type: ignore[arg-type]
