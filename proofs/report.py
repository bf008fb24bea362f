"""``rollcert prove``: run every proof obligation and report one line each.

Exit status 0 only when every theorem is PROVED and every refutation REFUTED
(with a counterexample that re-checked concretely); 1 otherwise, including any
UNKNOWN: a proof that did not finish is not a proof. 3 for a usage error (SPEC
§6's code for usage errors), with one line saying what to mend.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import z3

from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.runner import DEFAULT_TIMEOUT_SECONDS, ObligationResult, check_all

SCHEMA = "rollcert-proofs/1"
USAGE_ERROR = 3


class UsageError(Exception):
    """Bad command-line input; reported as one line, exit status 3."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rollcert prove",
        description="Prove the model's lemmas with z3 and refute the buggy rules (SPEC §4).",
    )
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument(
        "--show-counterexamples", action="store_true", help="print each refutation's decoded counterexample"
    )
    parser.add_argument(
        "--only", metavar="NAME", action="append", help="run only this obligation (repeatable)"
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        help=f"z3 budget per query (default {DEFAULT_TIMEOUT_SECONDS:g}); running out is UNKNOWN, a failure",
    )
    parser.add_argument("--list", action="store_true", help="list the obligations and exit")
    parser.add_argument(
        "--no-crosshair", action="store_true", help="skip the CrossHair checks (about 20 s) and run z3 only"
    )
    return parser


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


def main(argv: list[str] | None = None) -> int:
    try:
        arguments = build_parser().parse_args(argv)
        known = [obligation.name for obligation in REGISTRY]
        unknown_names = [name for name in arguments.only or [] if name not in known]
        if unknown_names:
            raise UsageError(f"no obligation named {unknown_names[0]!r}; `rollcert prove --list` shows the names")
        if arguments.timeout <= 0:
            raise UsageError(f"--timeout must be positive, got {arguments.timeout:g}")
    except UsageError as error:
        print(f"rollcert prove: {error}", file=sys.stderr)
        return USAGE_ERROR

    if arguments.list:
        for obligation in REGISTRY:
            print(f"{obligation.name}  [{obligation.kind}, {obligation.scope}, {','.join(obligation.properties)}]")
            print(f"    {obligation.description}")
        return 0

    started = time.perf_counter()
    results = check_all(arguments.only, arguments.timeout)
    seconds = time.perf_counter() - started

    name_width = max(len(result.obligation.name) for result in results)
    for result in results:
        print(format_line(result, name_width))
        if arguments.show_counterexamples and result.counterexample is not None:
            print(result.counterexample.render(indent="         "))
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in ("PROVED", "REFUTED", "UNKNOWN", "FAILED")}
    failing = [result.obligation.name for result in results if not result.passed]
    summary = ", ".join(f"{count} {verdict.lower()}" for verdict, count in counts.items())
    print(f"{len(results)} obligations: {summary} in {seconds:.2f}s (z3 {z3.get_version_string()})")
    crosshair_rows: list[dict[str, Any]] = []
    if not arguments.no_crosshair and not arguments.only:
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

    if arguments.json is not None:
        record = results_to_json(results, seconds)
        record["crosshair"] = crosshair_rows
        record["passed"] = not failing
        try:
            arguments.json.write_text(json.dumps(record, indent=2) + "\n")
        except OSError as error:
            print(f"rollcert prove: cannot write {arguments.json}: {error.strerror}", file=sys.stderr)
            return USAGE_ERROR
    return 0 if not failing else 1


if __name__ == "__main__":
    raise SystemExit(main())
