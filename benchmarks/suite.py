"""SPEC §7's suite targets, measured: for every specimen and seeds 0..N-1, does the
machine of its story property find it, how long does that take (including the
minimising replay), and is the counterexample as short as the shortest one the
bounded exhaustive search finds (the BFS length is minimal by construction)?

    python -m benchmarks.suite [--seeds 10] [--json PATH] [--only NAME[,NAME...]]
    python -m benchmarks.suite --baseline plain [--seeds 5] [--budget 60]

Prints one row per specimen. No assertion on time: this is a measurement.
``--baseline plain`` instead compares, on the rollback-class specimens, rollcert's
machine with the uniform-strategy Hypothesis machine of
:mod:`benchmarks.plain_machine` (the "10x faster than a plain machine" target);
``python -m benchmarks.plain_machine`` is the same with more options.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks.shortest import SHORTEST
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES


def measure(seeds: int, only: frozenset[str] | None = None) -> dict[str, dict[str, object]]:
    """One row per specimen (only those named in ``only``, when given)."""
    rows: dict[str, dict[str, object]] = {}
    profile = PROFILES["quick"]
    specimens = load_all()
    unknown = sorted((only or frozenset()) - specimens.keys())
    if unknown:
        raise SystemExit(f"no such specimen: {', '.join(unknown)}")
    for name, specimen in sorted(specimens.items()):
        if only is not None and name not in only:
            continue
        assert specimen.target is not None
        story = sorted(specimen.breaks)[0]
        found, minimal, seconds, lengths = 0, 0, [], []
        for seed in range(seeds):
            started = time.perf_counter()
            result = certify_property(specimen.target, story, profile, seed)
            seconds.append(time.perf_counter() - started)
            if result.verdict == "violated" and result.counterexample is not None:
                found += 1
                length = len(result.counterexample.steps)
                lengths.append(length)
                minimal += name in SHORTEST and length <= SHORTEST[name]
        rows[name] = {
            "property": story,
            "found": f"{found}/{seeds}",
            # The diff specimens have no exhaustive search to say what is shortest.
            "minimal": f"{minimal}/{seeds}" if name in SHORTEST else "n/a",
            "median_seconds": round(statistics.median(seconds), 3),
            "max_seconds": round(max(seconds), 3),
            "lengths": lengths,
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--only", type=lambda text: frozenset(filter(None, text.split(","))), help="comma-separated specimen names"
    )
    parser.add_argument("--baseline", choices=("plain",), help="compare with the plain machine")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per plain run (--baseline)")
    args = parser.parse_args()
    if args.baseline == "plain":
        from benchmarks import plain_machine

        argv = ["--seeds", str(args.seeds), "--budget", str(args.budget)]
        plain_machine.main(argv + (["--json", str(args.json)] if args.json is not None else []))
        return
    rows = measure(args.seeds, args.only)
    width = max([len("specimen"), *map(len, rows)]) + 2  # specimen names are long: keep the columns
    print(f"{'specimen':<{width}}{'prop':<6}{'found':<8}{'minimal':<9}{'median s':>9}{'max s':>8}  lengths")
    for name, row in rows.items():
        print(
            f"{name:<{width}}{row['property']!s:<6}{row['found']!s:<8}{row['minimal']!s:<9}"
            f"{row['median_seconds']:>9}{row['max_seconds']:>8}  {row['lengths']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
