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
from rollcert.proofs.report import results_to_json
from rollcert.proofs.report import run_crosshair_checks
from rollcert.proofs.report import run_obligations
from rollcert.stateful_tests.refinement import CHECKS as REFINEMENT_CHECKS
from rollcert.stateful_tests.refinement import RefinementBounds
from rollcert.stateful_tests.refinement import RefinementResult
from rollcert.stateful_tests.refinement import run_refinement


def symbolic_names(thorough: bool = True) -> list[str]:
    """The CrossHair checks on the production code (``--thorough`` adds wider
    ones), and the exhaustive check of impl/diffs.py's read check (S1)."""
    from rollcert.command.proof_reach import S1_CHECK
    from rollcert.proofs.symbolic_refinement import DEFAULT_CHECKS
    from rollcert.proofs.symbolic_refinement import THOROUGH_CHECKS

    return [c.name for c in DEFAULT_CHECKS + (THOROUGH_CHECKS if thorough else ())] + [S1_CHECK]


def check_names() -> list[str]:
    """Everything ``--only`` can name: the z3 obligations, the CrossHair checks of
    the production code and the refinement checks."""
    return obligation_names() + symbolic_names() + [check.name for check in REFINEMENT_CHECKS]


def list_checks() -> None:
    from rollcert.command.proof_reach import S1_CHECK
    from rollcert.proofs.read_set_check import BOUNDS as S1_BOUNDS
    from rollcert.proofs.symbolic_refinement import DEFAULT_CHECKS
    from rollcert.proofs.symbolic_refinement import THOROUGH_CHECKS

    list_obligations()
    for symbolic in DEFAULT_CHECKS + THOROUGH_CHECKS:
        extra = ", --thorough only" if symbolic in THOROUGH_CHECKS else ""
        print(f"{symbolic.name}  [CrossHair, production code{extra}, {','.join(symbolic.properties)}]")
        print(f"    {symbolic.bounds.describe()}")
    print(f"{S1_CHECK}  [bounded exhaustive, production code (impl/diffs.py), S1]")
    print(f"    the read check accepts exactly the unchanged regions: {S1_BOUNDS}")
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


def rule_evidence(counted: Sequence[Counted], *, thorough: bool = False) -> dict[str, str]:
    """Per rule, how far this run's evidence reaches, from the one table of
    :mod:`rollcert.command.proof_reach`: only the checks that met in this run count;
    a rule with a counterexample in this run says so first."""
    from rollcert.command.proof_reach import claims
    from rollcert.command.proof_reach import summary
    from rollcert.model.properties import ALL_PROPERTY_IDS

    met = {c.name for c in counted if c.standing == "met"}
    refuted = {c.name for c in counted if c.standing == "counterexample"}
    evidence: dict[str, str] = {}
    for rule in ALL_PROPERTY_IDS:
        broken = sorted({c.check for c in claims(thorough=thorough) if c.rule == rule and c.check in refuted})
        line = summary(rule, met, thorough=thorough)
        evidence[rule] = (f"COUNTEREXAMPLE ({', '.join(broken)}); " if broken else "") + line
    return evidence


def symbolic_standing(status: str, role: str) -> Standing:
    """CrossHair on the production code: CONFIRMED (every path) is met, FOUND a
    counterexample; UNKNOWN is unsettled for a run that must be exhausted,
    and a search's expected outcome for a ``search`` (counted, shown)."""
    if status == "CONFIRMED":
        return "met"
    if status == "FOUND":
        return "counterexample"
    return "searched" if role == "search" else "unknown"


def run_symbolic(names: Sequence[str]) -> tuple[list[dict[str, Any]], list[Counted]]:
    """The CrossHair checks of the production code, one line each with its bounds."""
    from rollcert.command.proof_reach import S1_CHECK
    from rollcert.proofs import read_set_check
    from rollcert.proofs import symbolic_refinement

    rows: list[dict[str, Any]] = []
    counted: list[Counted] = []
    for symbolic in symbolic_refinement.DEFAULT_CHECKS + symbolic_refinement.THOROUGH_CHECKS:
        if symbolic.name not in names:
            continue
        result = symbolic_refinement.check(symbolic.name, symbolic.bounds)
        standing = symbolic_standing(result.status, symbolic.role)
        rows.append({**result.to_json(), "role": symbolic.role, "properties": list(symbolic.properties),
                     "standing": standing})
        counted.append(Counted(symbolic.name, "symbolic", result.status, standing, result.detail))
        print(f"{result.status:<10} {symbolic.name}  CrossHair, production code  {','.join(symbolic.properties)}  "
              f"{result.seconds:7.3f}s")
        print(f"           within: {symbolic.bounds.describe()}")
        print(f"           {result.detail if result.status != 'FOUND' else 'counterexample: ' + result.counterexample}")
    if S1_CHECK in names:
        status, seconds, detail = read_set_check.exhaustive()
        standing = symbolic_standing(status, "bounded")
        rows.append({"name": S1_CHECK, "status": status, "seconds": round(seconds, 3), "bounds": read_set_check.BOUNDS,
                     "detail": detail, "role": "bounded", "properties": ["S1"], "standing": standing})
        counted.append(Counted(S1_CHECK, "symbolic", status, standing, detail))
        print(f"{status:<10} {S1_CHECK}  exhaustive, production code (impl/diffs.py)  S1  {seconds:7.3f}s")
        print(f"           within: {read_set_check.BOUNDS}")
        print(f"           {detail}")
    return rows, counted


def prove(
    only: list[str] | None,
    timeout: float,
    *,
    show_counterexamples: bool,
    crosshair: bool,
    refinement: RefinementBounds | None = None,
    thorough: bool = False,
) -> tuple[int, dict[str, Any]]:
    """Run the obligations, the CrossHair checks and the refinement checks (all
    unless ``only`` names some; ``crosshair=False`` or ``refinement=None`` skips
    those), print one line each, each rule's reach and the tally; the exit
    status and the JSON record."""
    refinement_names = {check.name for check in REFINEMENT_CHECKS}
    all_symbolic = set(symbolic_names())
    z3_names = [name for name in only or [] if name not in refinement_names and name not in all_symbolic]
    counted: list[Counted] = []
    results: list[Any] = []
    seconds = 0.0
    if z3_names or not only:
        results, counted, seconds = run_obligations(z3_names or None, timeout, show_counterexamples=show_counterexamples)
    crosshair_rows: list[dict[str, Any]] = []
    if crosshair and not only:
        crosshair_rows, crosshair_counted = run_crosshair_checks(thorough=thorough)
        counted += crosshair_counted
    symbolic_wanted = [name for name in only or [] if name in all_symbolic]
    if not only and crosshair:
        symbolic_wanted = symbolic_names(thorough)
    symbolic_rows, symbolic_counted = run_symbolic(symbolic_wanted)
    counted += symbolic_counted
    wanted = [name for name in only or [] if name in refinement_names]
    if not only and refinement is not None:
        wanted = [check.name for check in REFINEMENT_CHECKS]
    refinements, refinement_counted = run_refinements(wanted, refinement)
    counted += refinement_counted
    evidence = rule_evidence(counted, thorough=thorough) if not only else {}
    if evidence:
        print("How far each rule is established by this run:")
        for rule, text in evidence.items():
            print(f"  {rule:<3} {text}")
    status = print_tally(counted)
    record = results_to_json(results, seconds)
    record["crosshair"] = crosshair_rows
    record["symbolic"] = symbolic_rows
    record["refinement"] = [result.to_json() for result in refinements]
    record["rules"] = evidence
    record["exit_status"] = status
    record["passed"] = status == 0
    return status, record
