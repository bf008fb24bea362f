"""Elastic work units (issue 45): ``certify -j N`` hands the work units (a round
of a property, or R7 whole) to whichever worker is free, and a unit whose worker
died is run again by another: a worker killed mid-run (a real SIGKILL, from
outside) costs the run nothing, and the certificate is still the serial run's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollcert.command.parallel import RETRIES
from rollcert.command.parallel import _UnitTasks
from rollcert.stateful_tests.profiles import PROFILES

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]
RUN = ["certify", "specimen:fifo_replay", "--only", "R2,R3", "--seed", "0", "--reproducible", "-q"]


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _a_worker(root: int) -> int | None:
    """A worker process of ``root``'s run: a descendant leading its own process group."""
    for pid in _descendants(root):
        try:
            if os.getpgid(pid) == pid:
                return pid
        except OSError:
            continue
    return None


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers through /proc (Linux)")
def test_a_worker_killed_mid_run_is_replaced_and_the_certificate_is_the_serial_one(tmp_path: Path) -> None:
    # The serial run alongside (one worker, a property at a time), for the certificate to compare with.
    serial = subprocess.Popen([*ROLLCERT, *RUN, "--json", "serial.json"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    run = subprocess.Popen([*ROLLCERT, *RUN, "-j", "3", "--json", "elastic.json"], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and run.poll() is None and time.monotonic() < deadline:
        killed = _a_worker(run.pid)
        if killed is None:
            time.sleep(0.01)
    assert killed is not None, "no worker process was seen"
    os.kill(killed, signal.SIGKILL)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 1, stderr
    assert serial.wait(timeout=120) == 1
    assert f"was killed by SIGKILL before reporting; it goes to another worker (attempt 2 of {RETRIES + 1})" in stderr
    assert (tmp_path / "elastic.json").read_bytes() == (tmp_path / "serial.json").read_bytes()


@pytest.mark.slow  # imports the engine (about a second)
def test_a_round_is_handed_out_only_once_the_serial_loop_would_start_it() -> None:
    """Rounds of one property go out in order, each after the previous one is in,
    and a round the earlier ones made useless is never handed out: exactly the
    serial run's rounds run."""
    from rollcert.stateful_tests.certify import RoundRecord
    from rollcert.stateful_tests.shards import Unit
    from rollcert.stateful_tests.shards import UnitResult
    from rollcert.stateful_tests.verdicts import PropertyResult

    tasks = _UnitTasks(["R2", "R3"], PROFILES["quick"], None, {})
    assert tasks.take() == "R2::shard-0" and tasks.take() == "R3::shard-0"
    assert tasks.take() is None and tasks.left()  # round 1 waits for round 0
    situations = [("reached", "a situation")]
    unfinished = PropertyResult("R2", "unknown", "", 10, 20, coverage={"reached": 0})
    tasks.done("R2::shard-0", UnitResult(Unit("R2", 0), unfinished, RoundRecord(True, {}, situations, 0)))
    assert tasks.take() == "R2::shard-1"
    violated = PropertyResult("R3", "violated", "", 3, 9)
    tasks.done("R3::shard-0", UnitResult(Unit("R3", 0), violated, RoundRecord(True, {}, situations, 0)))
    assert tasks.results["R3"].verdict == "violated"  # rounds 1-3 never run: the serial loop stopped
    assert tasks.take() is None and tasks.waiting == ["R2::shard-2", "R2::shard-3"]
    assert tasks.died("R2::shard-1", -9) and tasks.take() == "R2::shard-1"  # a lost worker's unit, again
    assert tasks.died("R2::shard-1", -9) and tasks.take() == "R2::shard-1"
    assert not tasks.died("R2::shard-1", -9)  # a third SIGKILL: the unit took every worker down, its error
    assert not tasks.died("R3::shard-0", 0) and not tasks.died("R3::shard-0", -11)  # the target's own exit, crash
