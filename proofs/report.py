"""What ``rollcert prove`` prints and writes: one line per obligation, then the
CrossHair checks, and the same as JSON (schema ``rollcert-proofs/1``).

The options are parsed by rollcert's one command line
(:mod:`rollcert.command.cli`); this module only runs and reports.
Exit status 0 only when every theorem is PROVED and every refutation REFUTED
(with a counterexample that re-checked concretely); 1 otherwise, including any
UNKNOWN: a proof that did not finish is not a proof.
"""

from __future__ import annotations

import time
from typing import Any

import z3

from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.runner import ObligationResult
from rollcert.proofs.runner import check_all

SCHEMA = "rollcert-proofs/1"
#: CrossHair statuses that count as meeting an obligation: the unplanted code is
#: confirmed or bounded-checked without a counterexample; each planted bug is found.
CROSSHAIR_GOOD = {"CONFIRMED", "CHECKED (bounded)", "FOUND"}


def run_crosshair() -> tuple[list[dict[str, Any]], list[str]]:
    """The CrossHair lines of ``rollcert prove``; never reported as PROVED."""
    from rollcert.proofs.crosshair_checks import crosshair_summary

    rows = crosshair_summary()
    failing = [str(row["name"]) for row in rows if row["status"] not in CROSSHAIR_GOOD]
    return rows, failing


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


def prove(
    only: list[str] | None, timeout: float, *, show_counterexamples: bool, crosshair: bool
) -> tuple[int, dict[str, Any]]:
    """Run the obligations (and the CrossHair checks unless told not to), print
    one line each; the exit status and the JSON record."""
    started = time.perf_counter()
    results = check_all(only, timeout)
    seconds = time.perf_counter() - started

    name_width = max(len(result.obligation.name) for result in results)
    for result in results:
        print(format_line(result, name_width))
        if show_counterexamples and result.counterexample is not None:
            print(result.counterexample.render(indent="         "))
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in ("PROVED", "REFUTED", "UNKNOWN", "FAILED")}
    failing = [result.obligation.name for result in results if not result.passed]
    summary = ", ".join(f"{count} {verdict.lower()}" for verdict, count in counts.items())
    print(f"{len(results)} obligations: {summary} in {seconds:.2f}s (z3 {z3.get_version_string()})")
    crosshair_rows: list[dict[str, Any]] = []
    if crosshair and not only:
        crosshair_rows, crosshair_failing = run_crosshair()
        width = max(len(str(row["name"])) for row in crosshair_rows)
        for row in crosshair_rows:
            print(f"{row['status']:<18} {row['name']!s:<{width}}  crosshair  {float(row['seconds']):7.3f}s")
        failing += crosshair_failing
        print(
            f"{len(crosshair_rows)} CrossHair checks ({sum(r['status'] not in CROSSHAIR_GOOD for r in crosshair_rows)} not met); "
            "CHECKED (bounded) means no counterexample within the budget, not a proof"
        )
    if failing:
        print(f"NOT ALL OBLIGATIONS MET: {', '.join(failing)}")
    record = results_to_json(results, seconds)
    record["crosshair"] = crosshair_rows
    record["passed"] = not failing
    return (0 if not failing else 1), record
