"""The mutation benchmark's runner (benchmarks/mutation.py) scores mutants right:
a mutant the certification kills is ``killed``, one it cannot see ``survived``,
and the checkout it ran from is never left mutated. Two hand-picked mutants of
impl/journaled_buffer.py, certified with ``--only R0`` at the quick profile; the
full benchmark is not a test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import mutation

pytest.importorskip("cosmic_ray", reason="the bench extra (cosmic-ray) is not installed")

MODULE = "impl/journaled_buffer.py"


def _line_of(text: str) -> int:
    """The line of ``MODULE`` that holds ``text`` (exactly one does), so the test follows edits of the module."""
    lines = (mutation.ROOT / MODULE).read_text().splitlines()
    found = [number for number, line in enumerate(lines, 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


@pytest.mark.slow
def test_runner_scores_a_killed_and_a_surviving_mutant(tmp_path: Path) -> None:
    # adopt_current() forgets the barrier as -1; the mutant leaves it at 1, so a later
    # rollback across depth 1 is refused as a divergence that is not there: R0 sees it.
    killed = f"{_line_of(' ' * 12 + 'self._barrier_position = -1')}:ReplaceUnaryOperator_Delete_USub"
    # Every shipped journal can evict, so the guard for one that cannot never fires,
    # whichever way its capacity test reads: equivalent for the bundled target.
    survives = f"{_line_of('supports_eviction')}:ReplaceComparisonOperator_IsNot_Is"
    source = (mutation.ROOT / MODULE).read_bytes()
    output = tmp_path / "results.json"
    status = mutation.main(
        ["--module", MODULE, "--mutant", killed, "--mutant", survives, "--only", "R0", "--json", str(output)]
    )
    assert status == 0
    results = json.loads(output.read_text())["modules"][MODULE]
    outcomes = {f"{m['line']}:{m['operator']}": m["outcome"] for m in results["mutants"]}
    assert outcomes == {killed: "killed", survives: "survived"}
    assert results["score"]["killed"] == 1 and results["score"]["survived"] == 1
    assert (mutation.ROOT / MODULE).read_bytes() == source  # mutated in a copy only


@pytest.mark.slow
def test_fail_fast_stops_at_the_first_violation_and_is_never_green() -> None:
    from rollcert.stateful_tests.certify import NOT_RUN_FAIL_FAST
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.resolve import resolve_target

    target = resolve_target("specimen:fifo_replay")  # replays the oldest record first: R0 and R2 see it
    certificate = certify(target, only=("R0", "R2"), fail_fast=True)
    assert certificate.results["R0"].verdict == "violated"
    assert certificate.results["R2"].verdict == "unknown"
    assert certificate.results["R2"].reason == NOT_RUN_FAIL_FAST


def test_a_mutant_classified_equivalent_and_not_run_never_raises_the_score() -> None:
    def mutant(line: int, outcome: str, operator: str = "NumberReplacer") -> mutation.Mutant:
        return mutation.Mutant(f"{MODULE}:{line}", MODULE, operator, 0, line, 0, None, outcome, 1.0, "", "")

    equivalent_key = next(key for key, (kind, _) in mutation.CLASSIFIED.items() if key[0] == MODULE and kind == "equivalent")
    miss_key = next(key for key, (kind, _) in mutation.CLASSIFIED.items() if key[0] == MODULE and kind == "miss")
    ran = [mutant(1, "killed"), mutant(miss_key[1], "survived", miss_key[2])]
    run_survivor = mutant(equivalent_key[1], "survived", equivalent_key[2])
    left_out = mutant(equivalent_key[1], mutation.EQUIVALENT_NOT_RUN, equivalent_key[2])
    assert mutation.classification(left_out)[0] == "equivalent"
    when_run, when_skipped = mutation.score([*ran, run_survivor]), mutation.score([*ran, left_out])
    assert when_run["score"] == when_skipped["score"] == 0.5  # one of the two behaviour-changing detected
    assert when_skipped["equivalent_not_run"] == 1 and when_skipped["mutants"] == 2 and when_run["mutants"] == 3
    assert "1 classified equivalent and not run" in mutation.format_summary(MODULE, when_skipped, [*ran, left_out])
