"""What ``rollcert prove`` prints and writes: one line per z3 obligation, per
CrossHair check and per refinement check of the production code, a line per
rule saying how far its evidence reaches, and the same as JSON (schema
``rollcert-proofs/2``).

The options are parsed by rollcert's one command line
(:mod:`rollcert.command.cli`); this module only runs and reports.

Every check is counted by what it found, never by whether that was hoped for
(issue 40: a counterexample in the production code used to count as "met"):

- **exit 1** — a counterexample where the rule must hold: a z3 theorem with a
  model, a CrossHair contract of unplanted code FOUND, the production ``impl``
  disagreeing with the model (:mod:`rollcert.proofs.refinement`). The
  counterexample is printed.
- **exit 2** — nothing refuted, but something that must hold was not settled:
  z3 ``unknown``, a refinement search over its budget, an integer contract
  CrossHair did not exhaust; or a check lost its teeth (a planted mutant
  MISSED, a refutation z3 could not refute, an adapter that broke).
- **exit 0** — everything that must hold held within its stated scope.

A CrossHair *search* over bytes (role ``search``) can never be exhausted: its
UNKNOWN is counted and shown, and does not change the exit status, because the
same statements are proved by z3 or checked exhaustively here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Literal

import z3

from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.refinement import CHECKS as REFINEMENT_CHECKS
from rollcert.proofs.refinement import RefinementBounds
from rollcert.proofs.refinement import RefinementResult
from rollcert.proofs.refinement import run_refinement
from rollcert.proofs.runner import ObligationResult
from rollcert.proofs.runner import check_all

SCHEMA = "rollcert-proofs/2"

#: How one check's outcome counts: held, refuted where it must hold, not settled
#: where it must be, lost its teeth, or (a search) not exhausted by design.
Standing = Literal["met", "counterexample", "unknown", "toothless", "searched"]
#: Exit status per standing; the worst one wins.
_EXIT = {"met": 0, "searched": 0, "unknown": 2, "toothless": 2, "counterexample": 1}
_SEVERITY = {"met": 0, "searched": 0, "unknown": 1, "toothless": 1, "counterexample": 2}


@dataclass(frozen=True)
class Counted:
    """One check of any kind, with what its outcome counts as."""

    name: str
    kind: str
    status: str
    standing: Standing
    detail: str = ""


def obligation_standing(result: ObligationResult) -> Standing:
    """z3: a theorem PROVED is met, a theorem with a model is a counterexample,
    ``unknown`` is unknown; a refutation that did not re-check lost its teeth."""
    if result.passed:
        return "met"
    if result.verdict == "UNKNOWN":
        return "unknown"
    if result.obligation.kind == "theorem" and result.z3_status == "sat":
        return "counterexample"
    return "toothless"


def crosshair_standing(row: dict[str, Any]) -> Standing:
    """CrossHair, by the check's role (see :mod:`rollcert.proofs.crosshair_checks`)."""
    status, role = row["status"], row.get("role", "holds")
    if role == "planted":
        return "met" if status == "FOUND" else "toothless"
    if status == "FOUND":
        return "counterexample"
    if status == "CONFIRMED":
        return "met"
    return "searched" if role == "search" else "unknown"


def refinement_standing(result: RefinementResult) -> Standing:
    return {"CONFIRMED": "met", "FOUND": "counterexample", "UNKNOWN": "unknown"}.get(result.status, "toothless")  # type: ignore[return-value]


def exit_status(counted: Sequence[Counted]) -> int:
    """1 on any counterexample, else 2 on anything unsettled or toothless, else 0."""
    worst = max((c.standing for c in counted), key=_SEVERITY.__getitem__, default="met")
    return _EXIT[worst]


def run_crosshair() -> list[dict[str, Any]]:
    """The CrossHair lines of ``rollcert prove``; never reported as PROVED."""
    from rollcert.proofs.crosshair_checks import crosshair_summary

    return crosshair_summary()


def format_line(result: ObligationResult, name_width: int) -> str:
    obligation = result.obligation
    line = (
        f"{result.verdict:<8} {obligation.name:<{name_width}}  {obligation.kind:<10} "
        f"{obligation.scope:<29} {','.join(obligation.properties):<6} {result.seconds:7.3f}s"
    )
    if result.detail and not result.passed:
        line += f"\n         {result.detail}"
    return line


def results_to_json(results: list[ObligationResult], seconds: float) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "z3_version": z3.get_version_string(),
        "passed": all(result.passed for result in results),
        "seconds": round(seconds, 3),
        "obligations": [result.to_json() for result in results],
    }


def check_names() -> list[str]:
    """Everything ``--only`` can name: the z3 obligations and the refinement checks."""
    return [obligation.name for obligation in REGISTRY] + [check.name for check in REFINEMENT_CHECKS]


#: Kept for callers that only know the z3 names.
obligation_names = check_names


def list_obligations() -> None:
    for obligation in REGISTRY:
        print(f"{obligation.name}  [{obligation.kind}, {obligation.scope}, {','.join(obligation.properties)}]")
        print(f"    {obligation.description}")
    for check in REFINEMENT_CHECKS:
        print(f"{check.name}  [bounded exhaustive, production code, {','.join(check.properties)}]")
        print(f"    {check.description}; {RefinementBounds().describe(check.family)}")


def rule_evidence(results: Sequence[ObligationResult], refinements: Sequence[RefinementResult]) -> dict[str, str]:
    """Per rule, how far the evidence of this run reaches: proved (unbounded, on
    the model's z3 encoding), checked within stated bounds (a bounded z3 query,
    or the production code searched exhaustively), or tested only (by
    ``rollcert certify``'s state machines, which sample)."""
    from rollcert.model.properties import ALL_PROPERTY_IDS

    evidence: dict[str, str] = {}
    for rule in ALL_PROPERTY_IDS:
        claims: list[str] = []
        proved = [r.obligation.name for r in results if r.obligation.kind == "theorem" and r.verdict == "PROVED"
                  and rule in r.obligation.properties]
        unbounded = [n for n in proved if not _bounded(n, results)]
        bounded = [n for n in proved if _bounded(n, results)]
        if unbounded:
            claims.append(f"model proved (unbounded, z3): {', '.join(unbounded)}")
        if bounded:
            claims.append(f"model checked symbolically (bounded, z3): {', '.join(bounded)}")
        for refinement in refinements:
            if rule not in refinement.check.properties:
                continue
            if refinement.status == "CONFIRMED":
                claims.append(
                    f"impl checked exhaustively within bounds ({refinement.check.name}: sequences <= "
                    f"{refinement.bounds.depth} operations, buffers <= {refinement.bounds.max_length} bytes)"
                )
            elif refinement.status == "FOUND":
                claims.append(f"impl COUNTEREXAMPLE ({refinement.check.name})")
            else:
                claims.append(f"impl {refinement.status} ({refinement.check.name})")
        if not claims:
            evidence[rule] = "tested only (rollcert certify's state machines sample it)"
            continue
        found = any("COUNTEREXAMPLE" in claim for claim in claims)
        headline = "COUNTEREXAMPLE" if found else "proved (unbounded)" if unbounded else "checked within stated bounds"
        evidence[rule] = f"{headline}: " + "; ".join(claims)
    return evidence


def _bounded(name: str, results: Sequence[ObligationResult]) -> bool:
    scope = next(r.obligation.scope for r in results if r.obligation.name == name)
    return scope.startswith("bounded")


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
    those), print one line each; the exit status and the JSON record."""
    z3_names = [name for name in only or [] if name not in {c.name for c in REFINEMENT_CHECKS}]
    refinement_names = [name for name in only or [] if name in {c.name for c in REFINEMENT_CHECKS}]
    counted: list[Counted] = []

    started = time.perf_counter()
    results = check_all(z3_names or None, timeout) if z3_names or not only else []
    seconds = time.perf_counter() - started
    if results:
        name_width = max(len(result.obligation.name) for result in results)
        for result in results:
            print(format_line(result, name_width))
            standing = obligation_standing(result)
            counted.append(Counted(result.obligation.name, "z3", result.verdict, standing, result.detail))
            if result.counterexample is not None and (show_counterexamples or standing != "met"):
                print(result.counterexample.render(indent="         "))
        tally = {verdict: sum(r.verdict == verdict for r in results) for verdict in ("PROVED", "REFUTED", "UNKNOWN", "FAILED")}
        summary = ", ".join(f"{count} {verdict.lower()}" for verdict, count in tally.items())
        print(f"{len(results)} obligations: {summary} in {seconds:.2f}s (z3 {z3.get_version_string()})")

    crosshair_rows: list[dict[str, Any]] = []
    if crosshair and not only:
        crosshair_rows = run_crosshair()
        width = max(len(str(row["name"])) for row in crosshair_rows)
        for row in crosshair_rows:
            standing = crosshair_standing(row)
            row["standing"] = standing
            counted.append(Counted(str(row["name"]), "crosshair", str(row["status"]), standing, str(row["detail"])))
            print(f"{row['status']:<10} {row['name']!s:<{width}}  crosshair {row['role']:<8} {float(row['seconds']):7.3f}s")
            if standing in ("counterexample", "toothless", "unknown"):
                print(f"           {row['detail']}")
        tally = {s: sum(r["status"] == s for r in crosshair_rows) for s in ("CONFIRMED", "FOUND", "UNKNOWN", "MISSED")}
        print(
            f"{len(crosshair_rows)} CrossHair checks: " + ", ".join(f"{n} {s.lower()}" for s, n in tally.items())
            + "; UNKNOWN means not exhausted within the budget (a search over bytes never is), not a proof"
        )

    refinements: list[RefinementResult] = []
    wanted = [c for c in REFINEMENT_CHECKS if c.name in refinement_names or (not only and refinement is not None)]
    for check in wanted:
        result = run_refinement(check, refinement)
        refinements.append(result)
        standing = refinement_standing(result)
        counted.append(Counted(check.name, "refinement", result.status, standing, result.detail))
        print(f"{result.status:<10} {check.name}  production code  {','.join(check.properties)}  {result.seconds:7.3f}s")
        print(f"           within: {result.bounds.describe(check.family)}")
        print(f"           {result.detail}")
        if result.counterexample:
            print("\n".join("         " + line for line in result.counterexample))

    evidence = rule_evidence(results, refinements) if results and not only else {}
    if evidence:
        print("How far each rule is established by this run:")
        for rule, text in evidence.items():
            print(f"  {rule:<3} {text}")

    status = exit_status(counted)
    by_standing = {s: [c.name for c in counted if c.standing == s] for s in _EXIT}
    print(
        f"{len(counted)} checks: {len(by_standing['met'])} met, {len(by_standing['counterexample'])} counterexample, "
        f"{len(by_standing['unknown'])} unknown, {len(by_standing['toothless'])} without teeth, "
        f"{len(by_standing['searched'])} searched without a counterexample (not exhausted); exit status {status}"
    )
    if by_standing["counterexample"]:
        print(f"COUNTEREXAMPLE: {', '.join(by_standing['counterexample'])}")
    if by_standing["unknown"] or by_standing["toothless"]:
        print(f"NOT SETTLED: {', '.join(by_standing['unknown'] + by_standing['toothless'])}")
    record = results_to_json(results, seconds)
    record["crosshair"] = crosshair_rows
    record["refinement"] = [result.to_json() for result in refinements]
    record["rules"] = evidence
    record["exit_status"] = status
    record["passed"] = status == 0
    return status, record
