"""R7 seeds benchmark: how often the R7 machine finds each specimen, and what checking costs.

Usage (from the repository root)::

    python -m benchmarks.linearizability                 # 10 seeds, quick profile
    python -m benchmarks.linearizability --seeds 3 --json /tmp/r7.json

For each R7 specimen, ``certify_linearizability`` runs on seeds 0..N-1: the
share of seeds where it was violated with a timeline counterexample (the target:
at least 9 of 10), the median seconds including minimisation. For the controls
(the bundled buffer and the naive buffer under one lock) the verdict per seed.
Then the checker alone: histories recorded from the bundled buffer, checked again
and again, give the checker's cost per history and histories per second, beside
the cost of *recording* one history (running the program) in the same run. No
timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import given
from hypothesis import seed as hypothesis_seed
from hypothesis import settings

from rollcert.stateful_tests.concurrency import Program
from rollcert.stateful_tests.concurrency import certify_linearizability
from rollcert.stateful_tests.concurrency import programs
from rollcert.stateful_tests.concurrency import run_program
from rollcert.stateful_tests.linearizability import check
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.resolve import resolve_target

SPECIMENS = ("unlocked_buffer", "lock_per_rollback_step", "unlocked_between_journal_and_mutation", "unlocked_observations")
CONTROLS = ("bundled", "rollcert.specimens.locked_naive_control:TARGET")


def seeds_table(seeds: int, profile: str) -> dict[str, dict[str, object]]:
    rows: dict[str, dict[str, object]] = {}
    for name in (*(f"specimen:{s}" for s in SPECIMENS), *CONTROLS):
        target = resolve_target(name)
        verdicts, seconds, with_timeline = [], [], 0
        for seed in range(seeds):
            result = certify_linearizability(target, PROFILES[profile], seed)
            verdicts.append(result.verdict)
            seconds.append(result.seconds)
            with_timeline += result.verdict == "violated" and "Timeline" in result.reason
            print(f"  {name} seed {seed}: {result.verdict} in {result.seconds:.1f} s", file=sys.stderr, flush=True)
        rows[name] = {
            "verdicts": verdicts,
            "violated_with_timeline": with_timeline,
            "median_seconds": statistics.median(seconds),
        }
    return rows


def checker_cost(histories: int, repeats: int) -> dict[str, float]:
    """Record ``histories`` histories of drawn programs on the bundled buffer, then
    time the checker over all of them ``repeats`` times."""
    target = resolve_target("bundled")
    drawn: list[Program] = []

    @settings(max_examples=histories, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs(target))
    def collect(program: Program) -> None:
        drawn.append(program)

    hypothesis_seed(0)(collect)()
    started = time.perf_counter()
    recorded = [run_program(target, p, forced_yields=i % 4 != 0, seed=i) for i, p in enumerate(drawn)]
    recording = (time.perf_counter() - started) / len(recorded)
    per_history: list[float] = []
    nodes = 0
    for _ in range(repeats):
        started = time.perf_counter()
        for history in recorded:
            nodes += check(history).nodes
        per_history.append((time.perf_counter() - started) / len(recorded))
    cost = statistics.median(per_history)
    return {
        "histories": float(len(recorded)),
        "calls_per_history": statistics.mean(len(h.calls) for h in recorded),
        "checker_us_per_history": cost * 1e6,
        "checker_histories_per_second": 1 / cost,
        "checker_nodes_per_history": nodes / (repeats * len(recorded)),
        "recording_us_per_history": recording * 1e6,
        "check_over_record": cost / recording,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    parser.add_argument("--histories", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    cost = checker_cost(args.histories, 5)
    print("checker:", ", ".join(f"{k} {v:.2f}" for k, v in cost.items()))
    table = seeds_table(args.seeds, args.profile)
    for name, row in table.items():
        print(f"{name:<58} {row['verdicts']}  violated+timeline {row['violated_with_timeline']}/{args.seeds}  "
              f"median {row['median_seconds']:.1f} s")
    if args.json is not None:
        args.json.write_text(json.dumps({"checker": cost, "seeds": table}, indent=2))


if __name__ == "__main__":
    main()
