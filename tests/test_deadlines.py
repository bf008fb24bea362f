"""Deadlines from outside (SPEC §8): a target that blocks or disarms SIGALRM,
waits inside C code or spins in threads ends in ``error`` naming the deadline,
and after SIGTERM (or at its deadline) no process of the run is left.

Each run is the real command in a subprocess, in a session of its own, with a
marker in its environment: every process the run starts (forkserver, workers,
protocol servers and their children) inherits it, so "none left" is checked
over all of ``/proc``, and over the run's process group and session too."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

HOSTILE = Path(__file__).parent / "hostile_targets"


def _environment(marker: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")])),
        "ROLLCERT_TEST_RUN": marker,
    }


def processes_of(marker: str, group: int) -> list[int]:
    """Live processes that carry ``marker`` in their environment, or sit in the
    process group or session ``group`` (zombies are not left running: they are gone)."""
    found = []
    needle = f"ROLLCERT_TEST_RUN={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":
                continue
            with open(f"/proc/{entry}/environ", "rb") as environ:
                marked = needle in environ.read().split(b"\0")
        except OSError:
            continue
        if marked or int(fields[2]) == group or int(fields[3]) == group:
            found.append(int(entry))
    return found


def run(tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    marker = uuid.uuid4().hex
    process = subprocess.Popen(
        [sys.executable, "-m", "rollcert.command.cli", *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=_environment(marker), cwd=tmp_path, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    left = processes_of(marker, process.pid)
    for pid in left:  # do not leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), left


DEADLINE = "certifying R0 did not finish within its deadline of 3 s (--deadline)"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["BLOCKS_SIGALRM", "DISARMS", "WAITS_IN_C", "SPINS_IN_THREADS", "IGNORES_TERM"])
def test_a_target_that_outlasts_the_call_timeout_meets_the_deadline(tmp_path: Path, name: str) -> None:
    done, left = run(
        tmp_path, "certify", f"outlasts:{name}", "--only", "R0", "--call-timeout", "0.5", "--deadline", "3",
        "-q", "--json", "c.json",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    result = json.loads((tmp_path / "c.json").read_text())["properties"]["R0"]
    assert result["verdict"] == "error", result
    if name != "SPINS_IN_THREADS":  # which net catches it first depends on where the GIL is when the alarm rings
        assert result["reason"].startswith(DEADLINE), result
    else:
        assert result["reason"].startswith(DEADLINE) or "(the call timeout)" in result["reason"], result
    assert left == [], left


@pytest.mark.slow
def test_a_protocol_server_that_never_answers_dies_with_its_worker_at_the_deadline(tmp_path: Path) -> None:
    done, left = run(tmp_path, "certify", "outlasts:SERVER", "--only", "R0,R2", "-j", "2", "--deadline", "3", "-q")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.count("did not finish within its deadline of 3 s") == 2, done.stdout
    assert left == [], left


@pytest.mark.slow
@pytest.mark.parametrize("command", [["smoke"], ["replay", "--trace", json.dumps({
    "schema": "rollcert-trace/2", "family": "rollback", "initial": "",
    "operations": [{"op": "splice", "offset": 0, "delete_length": 0, "insert": "YWJj"}],
})]])
def test_a_supervised_command_meets_its_deadline(tmp_path: Path, command: list[str]) -> None:
    name, *rest = command
    done, left = run(tmp_path, name, "outlasts:BLOCKS_SIGALRM", *rest, "--deadline", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith(
        "did not finish within its deadline of 3 s (--deadline); rollcert killed its worker's process group, "
        "whatever the target did to signals, threads or native code"
    ), done.stderr
    assert left == [], left


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_after_sigterm_or_ctrl_c_no_process_of_the_run_is_left(tmp_path: Path, how: signal.Signals) -> None:
    """``kill -TERM`` of ``rollcert certify`` used to leave its forkserver, a worker
    and a protocol server running. The run here has all three, each stuck: two
    workers whose servers never answer a splice (and fork a child each)."""
    marker = uuid.uuid4().hex
    process = subprocess.Popen(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "outlasts:SERVER", "--only", "R0,R2", "-j", "2", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(marker), cwd=tmp_path,
        start_new_session=True,
    )
    try:
        give_up = time.monotonic() + 120
        while len(processes_of(marker, process.pid)) < 7 and time.monotonic() < give_up:  # rollcert, forkserver,
            time.sleep(0.2)  # two workers, two servers, a server's child: the run is under way
        assert len(processes_of(marker, process.pid)) >= 7, "the run never got under way"
        time.sleep(0.5)
        if how == signal.SIGTERM:
            process.send_signal(signal.SIGTERM)  # to rollcert alone, as kill -TERM PID does
        else:
            os.killpg(process.pid, signal.SIGINT)  # to the foreground group, as Ctrl-C does
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    left = processes_of(marker, process.pid)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert process.returncode == 2, stderr  # interrupted, nothing violated: a certificate, never green
    assert stderr.startswith(f"rollcert: interrupted by {how.name}; the certificate holds"), stderr
    assert left == [], left
