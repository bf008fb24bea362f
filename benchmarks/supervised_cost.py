"""What a supervised worker process costs ``rollcert smoke``, ``replay`` and ``explore``.

Usage (from the repository root)::

    python -m benchmarks.supervised_cost                 # 9 rounds
    python -m benchmarks.supervised_cost --rounds 5 --baseline-only

Those subcommands run the target in a worker process that rollcert supervises
(so that a target calling ``os._exit(0)`` cannot end rollcert with exit status
0); ``--in-process`` runs it in rollcert's own process, as they all did before.
Each round runs every command once supervised and once ``--in-process``,
back to back in alternating order, so a noisy neighbour hits both alike; the
report is the median wall time of each, in a fresh interpreter each time (what
a user waits for), and the median of the per-round differences.

``--baseline-only`` runs each command as typed, without ``--in-process``: for
measuring a checkout whose subcommands do not take the flag yet (the code
before supervision). Nothing here asserts a timing.

Measured 2026-11-30, 2 shared cores at load 1-3, 9 rounds (medians):

===================================  ==========  ===========  ===========
command                              in-process  fork worker  forkserver
===================================  ==========  ===========  ===========
smoke bundled                        0.346 s     +14 ms       +251 ms
replay bundled --trace (5 steps)     0.357 s     +19 ms       +260 ms
explore bundled --depth 2            0.606 s     +13 ms       +266 ms
===================================  ==========  ===========  ===========

(before supervision, ec97896, ``--baseline-only``, 7 rounds at load 3: 0.484 s,
0.475 s, 0.768 s). The forkserver column is what a worker costs where rollcert
runs more than one thread: a second interpreter and its imports.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

#: A five-step trace of the bundled buffer, all of which agrees with the model.
TRACE = json.dumps({
    "schema": "rollcert-trace/2", "family": "rollback", "initial": "YWJjYWJj", "capacity": None, "policy": "reject",
    "operations": [
        {"op": "splice", "offset": 0, "delete_length": 0, "insert": "eA=="},
        {"op": "splice", "offset": 2, "delete_length": 1, "insert": "eXo="},
        {"op": "rollback", "steps": 1},
        {"op": "splice", "offset": 1, "delete_length": 0, "insert": "cQ=="},
        {"op": "rollback", "steps": 2},
    ],
})

COMMANDS: dict[str, list[str]] = {
    "smoke bundled": ["smoke", "bundled"],
    "replay bundled --trace (5 steps)": ["replay", "bundled", "--trace", TRACE],
    "explore bundled --depth 2": ["explore", "bundled", "--depth", "2"],
}


def _seconds(arguments: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", *arguments],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--baseline-only", action="store_true", help="no --in-process runs (an older checkout)")
    args = parser.parse_args()
    for name, arguments in COMMANDS.items():
        _seconds(arguments)  # warm the file cache and the bytecode
        supervised: list[float] = []
        in_process: list[float] = []
        for round_number in range(args.rounds):
            if args.baseline_only:
                supervised.append(_seconds(arguments))
                continue
            pair = [(supervised, arguments), (in_process, [*arguments, "--in-process"])]
            for times, command in pair if round_number % 2 == 0 else reversed(pair):
                times.append(_seconds(command))
        line = f"{name:<34} as typed: median {statistics.median(supervised):.3f} s"
        if in_process:
            differences = [s - i for s, i in zip(supervised, in_process, strict=True)]
            line += (
                f"   --in-process: median {statistics.median(in_process):.3f} s"
                f"   added: median {statistics.median(differences) * 1000:+.0f} ms"
            )
        print(line + f"   ({args.rounds} rounds)", flush=True)


if __name__ == "__main__":
    main()
