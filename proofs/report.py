"""What ``rollcert prove`` prints of the z3 obligations and the CrossHair checks,
and how every check of the command counts (schema ``rollcert-proofs/2``).
:mod:`rollcert.command.prove` runs them with the refinement checks of the
production code (which live above this room) and prints each rule's reach.

Every check is counted by what it found, never by whether that was hoped for
(issue 40: a counterexample in the production code used to count as "met"):

- **exit 1** — a counterexample where the rule must hold: a z3 theorem with a
  model, a CrossHair contract of unplanted code FOUND, the production ``impl``
  disagreeing with the model (:mod:`rollcert.stateful_tests.refinement`). The
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


def exit_status(counted: Sequence[Counted]) -> int:
    """1 on any counterexample, else 2 on anything unsettled or toothless, else 0."""
    worst = max((c.standing for c in counted), key=_SEVERITY.__getitem__, default="met")
    return _EXIT[worst]


def run_crosshair(*, thorough: bool = False) -> list[dict[str, Any]]:
    """The CrossHair lines of ``rollcert prove``; never reported as PROVED."""
    from rollcert.proofs.crosshair_checks import crosshair_summary

    return crosshair_summary(thorough=thorough)


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


def obligation_names() -> list[str]:
    return [obligation.name for obligation in REGISTRY]


def list_obligations() -> None:
    for obligation in REGISTRY:
        print(f"{obligation.name}  [{obligation.kind}, {obligation.scope}, {','.join(obligation.properties)}]")
        print(f"    {obligation.description}")


def proved_claims(results: Sequence[ObligationResult], rule: str) -> tuple[list[str], list[str]]:
    """The PROVED theorems of ``rule``: unbounded ones (for every size, or by
    induction) and bounded ones (a z3 query over a stated bound)."""
    proved = [r.obligation for r in results if r.obligation.kind == "theorem" and r.verdict == "PROVED"
              and rule in r.obligation.properties]
    unbounded = [o.name for o in proved if not o.scope.startswith("bounded")]
    bounded = [f"{o.name} ({o.scope})" for o in proved if o.scope.startswith("bounded")]
    return unbounded, bounded


def run_obligations(names: list[str] | None, timeout: float, *, show_counterexamples: bool) -> tuple[list[ObligationResult], list[Counted], float]:
    """The z3 obligations (all, or the named ones), one line each; a counterexample
    of a theorem is always printed, a refutation's only when asked."""
    started = time.perf_counter()
    results = check_all(names, timeout)
    seconds = time.perf_counter() - started
    counted: list[Counted] = []
    name_width = max((len(result.obligation.name) for result in results), default=0)
    for result in results:
        print(format_line(result, name_width))
        standing = obligation_standing(result)
        counted.append(Counted(result.obligation.name, "z3", result.verdict, standing, result.detail))
        if result.counterexample is not None and (show_counterexamples or standing != "met"):
            print(result.counterexample.render(indent="         "))
    tally = {verdict: sum(r.verdict == verdict for r in results) for verdict in ("PROVED", "REFUTED", "UNKNOWN", "FAILED")}
    summary = ", ".join(f"{count} {verdict.lower()}" for verdict, count in tally.items())
    print(f"{len(results)} obligations: {summary} in {seconds:.2f}s (z3 {z3.get_version_string()})")
    return results, counted, seconds


def run_crosshair_checks(*, thorough: bool = False) -> tuple[list[dict[str, Any]], list[Counted]]:
    """Every CrossHair check, one line each, counted by its role."""
    rows = run_crosshair(thorough=thorough)
    counted: list[Counted] = []
    width = max(len(str(row["name"])) for row in rows)
    for row in rows:
        standing = crosshair_standing(row)
        row["standing"] = standing
        counted.append(Counted(str(row["name"]), "crosshair", str(row["status"]), standing, str(row["detail"])))
        print(f"{row['status']:<10} {row['name']!s:<{width}}  crosshair {row['role']:<8} {float(row['seconds']):7.3f}s")
        if standing in ("counterexample", "toothless", "unknown"):
            print(f"           {row['detail']}")
    tally = {s: sum(r["status"] == s for r in rows) for s in ("CONFIRMED", "FOUND", "UNKNOWN", "MISSED")}
    print(
        f"{len(rows)} CrossHair checks: " + ", ".join(f"{n} {s.lower()}" for s, n in tally.items())
        + "; UNKNOWN means not exhausted within the budget (a search over bytes never is), not a proof"
    )
    return rows, counted


def print_tally(counted: Sequence[Counted]) -> int:
    """The closing lines: every check counted by its standing; the exit status."""
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
    return status
