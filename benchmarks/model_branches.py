"""Model-branch coverage on the bundled target at quick: branches reached with
and without steering, and what measuring them costs (docs/performance.md,
"Model-branch coverage").

*Steering* is what the certification does to reach the model's branches: the
round loop goes on while a required branch is missing, and the rollback rules
reach the refusals past the horizon (R1/R2's one-step rollback at depth 0, one
diff rollback in eight past the horizon). *Without* puts the generation back
as it was and stops the rounds on situations alone; the branches are still
measured, so the two columns count the same thing. *Cost* runs each
property's first round with the recording on and off (CPU seconds of this
process, paired, so that other load on the machine counts less)::

    .venv/bin/python -m benchmarks.model_branches --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis.stateful import precondition

from rollcert.stateful_tests import certify
from rollcert.stateful_tests import diff_machine
from rollcert.stateful_tests import machines
from rollcert.stateful_tests import model_coverage
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.resolve import resolve_target

PROPERTIES = ("R0", "R1", "R2", "R3", "R4", "R5", "R6", "S1", "S2", "S3")


@contextmanager
def without_steering() -> Iterator[None]:
    """The generation and the stopping rule of before model-branch coverage."""
    rule = machines.RULES["rollback_one"]
    share = diff_machine.PAST_THE_HORIZON_SHARE
    unreached = model_coverage.BranchRun.unreached
    machines.RULES["rollback_one"] = precondition(
        lambda machine: machine.session is not None and machine.live.model.depth >= 1
    )(rule)
    diff_machine.PAST_THE_HORIZON_SHARE = 1 << 30
    model_coverage.BranchRun.unreached = lambda self: []  # type: ignore[method-assign]
    try:
        yield
    finally:
        machines.RULES["rollback_one"] = rule
        diff_machine.PAST_THE_HORIZON_SHARE = share
        model_coverage.BranchRun.unreached = unreached  # type: ignore[method-assign]


@contextmanager
def not_recording() -> Iterator[None]:
    enter, ended = model_coverage.BranchRun.__enter__, model_coverage.BranchRun.round_ended
    model_coverage.BranchRun.__enter__ = lambda self: self  # type: ignore[method-assign]
    model_coverage.BranchRun.round_ended = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        model_coverage.BranchRun.__enter__, model_coverage.BranchRun.round_ended = enter, ended  # type: ignore[method-assign]


def reached(seed: int, steer: bool) -> dict[str, tuple[int, int, int, float]]:
    """Per property: (branches reached, required, rounds' examples, CPU seconds)."""
    target = resolve_target("bundled")
    rows = {}
    for pid in PROPERTIES:
        started = time.process_time()
        if steer:
            result = certify.certify_property(target, pid, PROFILES["quick"], seed)
        else:
            with without_steering():
                result = certify.certify_property(target, pid, PROFILES["quick"], seed)
        record = result.model_branches
        rows[pid] = (len(record["reached"]), len(record["required"]), result.examples, time.process_time() - started)
    return rows


def cost(seed: int) -> tuple[float, float]:
    """CPU seconds of every property's round 0, recording on and off (alternating order)."""
    target = resolve_target("bundled")
    on = off = 0.0
    for index, pid in enumerate(PROPERTIES):
        for recording in ((True, False) if index % 2 else (False, True)):
            started = time.process_time()
            if recording:
                certify._certify_property(target, pid, PROFILES["quick"], seed, None, only_round=0)
                on += time.process_time() - started
            else:
                with not_recording():
                    certify._certify_property(target, pid, PROFILES["quick"], seed, None, only_round=0)
                off += time.process_time() - started
    return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--no-cost", action="store_true", help="skip the paired cost measurement")
    args = parser.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):
        for steer in (False, True):
            rows = reached(seed, steer)
            missed = {pid: f"{r}/{n}" for pid, (r, n, _, _) in rows.items() if r < n}
            total = sum(r for r, _, _, _ in rows.values()), sum(n for _, n, _, _ in rows.values())
            seconds = sum(s for _, _, _, s in rows.values())
            label = "steered" if steer else "without"
            print(f"seed {seed} {label}: {total[0]}/{total[1]} branches; short: {missed or 'none'}; "
                  f"examples {sum(e for _, _, e, _ in rows.values())}; {seconds:.1f} CPU s", flush=True)
        if not args.no_cost:
            on, off = cost(seed)
            print(f"seed {seed} cost: round 0 of every property {on:.1f} CPU s recording, {off:.1f} not "
                  f"({on / off - 1:+.1%})", flush=True)


if __name__ == "__main__":
    main()
