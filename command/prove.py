"""``rollcert prove``: the z3 obligations, the CrossHair checks and the refinement
checks of the production code, each counted by what it found, and per rule how
far this run's evidence reaches.

The z3 and CrossHair parts and the counting rules are
:mod:`rollcert.proofs.report`'s; the refinement checks are
:mod:`rollcert.stateful_tests.refinement`'s (the production ``impl`` against the
model on every operation sequence up to a stated length). This module stands
above both because it needs both, and prints a refinement counterexample with
the certificate's own step format. Exit status: 1 on any counterexample (printed),
else 2 on anything that must hold and was not settled, else 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rollcert.proofs.report import Counted
from rollcert.proofs.report import Standing
from rollcert.proofs.report import list_obligations
from rollcert.proofs.report import obligation_names
from rollcert.proofs.report import print_tally
from rollcert.proofs.report import proved_claims
from rollcert.proofs.report import results_to_json
from rollcert.proofs.report import run_crosshair_checks
from rollcert.proofs.report import run_obligations
from rollcert.proofs.runner import ObligationResult
from rollcert.stateful_tests.refinement import CHECKS as REFINEMENT_CHECKS
from rollcert.stateful_tests.refinement import RefinementBounds
from rollcert.stateful_tests.refinement import RefinementResult
from rollcert.stateful_tests.refinement import run_refinement


def check_names() -> list[str]:
    """Everything ``--only`` can name: the z3 obligations and the refinement checks."""
    return obligation_names() + [check.name for check in REFINEMENT_CHECKS]


def list_checks() -> None:
    list_obligations()
    for check in REFINEMENT_CHECKS:
        print(f"{check.name}  [bounded exhaustive, production code, {','.join(check.properties)}]")
        print(f"    {check.description}; {check.bounds_for(RefinementBounds()).describe(check.family)}")


def refinement_standing(result: RefinementResult) -> Standing:
    """CONFIRMED within the bounds is met; FOUND a counterexample; over budget
    unknown; a broken adapter or a nondeterministic SUT leaves it without teeth."""
    if result.status == "CONFIRMED":
        return "met"
    if result.status == "FOUND":
        return "counterexample"
    return "unknown" if result.status == "UNKNOWN" else "toothless"


def run_refinements(names: Sequence[str], bounds: RefinementBounds | None) -> tuple[list[RefinementResult], list[Counted]]:
    from rollcert.reports.certificate import format_steps

    results: list[RefinementResult] = []
    counted: list[Counted] = []
    for check in (c for c in REFINEMENT_CHECKS if c.name in names):
        result = run_refinement(check, bounds)
        results.append(result)
        counted.append(Counted(check.name, "refinement", result.status, refinement_standing(result), result.detail))
        print(f"{result.status:<10} {check.name}  production code  {','.join(check.properties)}  {result.seconds:7.3f}s")
        print(f"           within: {result.bounds.describe(check.family)}")
        print(f"           {result.detail}")
        if result.steps:
            print(f"           counterexample, {result.start}:")
            print("\n".join("         " + line for line in format_steps(result.steps)))
    return results, counted


def rule_evidence(results: Sequence[ObligationResult], refinements: Sequence[RefinementResult]) -> dict[str, str]:
    """Per rule, how far this run's evidence reaches: proved (unbounded, on the
    model's z3 encoding), checked within stated bounds (a bounded z3 query, or the
    production code searched exhaustively), or tested only (``rollcert certify``'s
    state machines, which sample)."""
    from rollcert.model.properties import ALL_PROPERTY_IDS

    evidence: dict[str, str] = {}
    for rule in ALL_PROPERTY_IDS:
        unbounded, bounded = proved_claims(results, rule)
        claims = []
        if unbounded:
            claims.append(f"model proved (unbounded, z3): {', '.join(unbounded)}")
        if bounded:
            claims.append(f"model checked symbolically (z3): {', '.join(bounded)}")
        found = False
        for refinement in (r for r in refinements if rule in r.check.properties):
            if refinement.status == "CONFIRMED":
                claims.append(
                    f"impl checked exhaustively within bounds ({refinement.check.name}: sequences <= "
                    f"{refinement.bounds.depth} operations from {len(refinement.bounds.initial_buffers)} "
                    f"buffer(s) <= {refinement.bounds.max_length} bytes)"
                )
            else:
                found = found or refinement.status == "FOUND"
                claims.append(f"impl {refinement.status} ({refinement.check.name})")
        if not claims:
            evidence[rule] = "tested only (rollcert certify's state machines sample it)"
            continue
        headline = ("COUNTEREXAMPLE" if found else "proved (unbounded, on the model's encoding)" if unbounded
                    else "checked within stated bounds")
        evidence[rule] = f"{headline}: " + "; ".join(claims)
    return evidence


def prove(
    only: list[str] | None,
    timeout: float,
    *,
    show_counterexamples: bool,
    crosshair: bool,
    refinement: RefinementBounds | None = None,
) -> tuple[int, dict[str, Any]]:
    """Run the obligations, the CrossHair checks and the refinement checks (all
    unless ``only`` names some; ``crosshair=False`` or ``refinement=None`` skips
    those), print one line each, each rule's reach and the tally; the exit
    status and the JSON record."""
    refinement_names = {check.name for check in REFINEMENT_CHECKS}
    z3_names = [name for name in only or [] if name not in refinement_names]
    counted: list[Counted] = []
    results: list[ObligationResult] = []
    seconds = 0.0
    if z3_names or not only:
        results, counted, seconds = run_obligations(z3_names or None, timeout, show_counterexamples=show_counterexamples)
    crosshair_rows: list[dict[str, Any]] = []
    if crosshair and not only:
        crosshair_rows, crosshair_counted = run_crosshair_checks()
        counted += crosshair_counted
    wanted = [name for name in only or [] if name in refinement_names]
    if not only and refinement is not None:
        wanted = [check.name for check in REFINEMENT_CHECKS]
    refinements, refinement_counted = run_refinements(wanted, refinement)
    counted += refinement_counted
    evidence = rule_evidence(results, refinements) if not only else {}
    if evidence:
        print("How far each rule is established by this run:")
        for rule, text in evidence.items():
            print(f"  {rule:<3} {text}")
    status = print_tally(counted)
    record = results_to_json(results, seconds)
    record["crosshair"] = crosshair_rows
    record["refinement"] = [result.to_json() for result in refinements]
    record["rules"] = evidence
    record["exit_status"] = status
    record["passed"] = status == 0
    return status, record
