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

from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES

#: Shortest counterexample lengths from `rollcert explore` (BFS), per specimen; for
#: first_match_scan, from the exhaustive test's longer starting buffer.
SHORTEST = {
    "best_effort_log": 2,
    "depth_checkpoints": 5,  # with the R3 machine's operations (3 with adopt_current)
    "evict_newest": 3,
    "fifo_replay": 3,
    "first_match_scan": 2,
    "no_divergence_check": 3,
    # R5, by argument rather than search: a torn record needs only the crash of one
    # splice, and so does a lost fsync (a crash that comes after the splice
    # returned). A damaged record that is not the last needs one edit and the
    # damage: every open appends a serial floor, so the edit's record is not the
    # last (a bit flip, a record out of place, a second writer's append).
    # A flush that does not sync needs an edit, the flush and a crash.
    # Checked by search as far as the minimiser's small scope goes
    # (stateful_tests/small_scope.py): from b'' and b'a', in both durability
    # modes, no trace of 1 step fails skip_bad_record, crc_only or
    # no_writer_lock (26 each), and none of 1-2 steps fails flush_without_sync
    # (750 per-operation, 734 batched). A corruption needs a record to damage,
    # so no R5 damage story is shorter than 2.
    "torn_tail_applied": 1,
    "mutate_before_fsync": 1,
    "skip_bad_record": 2,
    "crc_only": 2,
    "no_writer_lock": 2,
    "flush_without_sync": 3,
}


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
    print(f"{'specimen':<22}{'prop':<6}{'found':<8}{'minimal':<9}{'median s':>9}{'max s':>8}  lengths")
    for name, row in rows.items():
        print(
            f"{name:<22}{row['property']!s:<6}{row['found']!s:<8}{row['minimal']!s:<9}"
            f"{row['median_seconds']:>9}{row['max_seconds']:>8}  {row['lengths']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
