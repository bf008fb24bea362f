"""Hostile servers and hostile target modules: rollcert stays bounded and truthful.

Each fake server of ``tests/fake_servers`` attacks one bound of the subprocess
client (a 200 MB reply line, endless stdout, a stderr flood without newlines, a
5000-digit integer, 100,000 nested arrays in a reply and in the hello, a forked
child that never exits, replies out of order, a hello that is not even UTF-8).
rollcert runs each in a real subprocess, as a user would, and the test asserts
what a user must be able to rely on:

- the verdict is ``error`` (exit status 2) with a reason naming the attack —
  never ``violated``, never a traceback;
- rollcert's own peak memory (``VmHWM`` of the rollcert process, read in
  that process: see ``_helpers.OWN_PEAK_KIB``) stays under 300 MB;
- no process is left behind: every server's process group is gone
  (``os.killpg(pgid, 0)`` raises ``ProcessLookupError``) and no process carries
  the run's marker in its environment;
- each run is bounded in time (a 1 s protocol timeout and a subprocess timeout).

Target modules that fail on import or construction (``sys.exit(7)``, a
SyntaxError, a native panic) are usage errors: exit status 3 and one line.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from _helpers import OWN_PEAK_KIB

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapters.subprocess_client import SubprocessServer

FAKES = Path(__file__).parent / "fake_servers"
#: rollcert's own peak memory must stay below this, whatever the server sends.
MEMORY_LIMIT_KB = 300 * 1024
#: Runs rollcert's CLI, then writes its own peak RSS (KiB) to argv[1].
RUN_ROLLCERT = OWN_PEAK_KIB + """
import sys
from rollcert.command.cli import main
status = main(sys.argv[2:])
with open(sys.argv[1], "w") as peak:
    peak.write(str(own_peak_kib()))
sys.exit(status)
"""
MARKER_VARIABLE = "ROLLCERT_HOSTILE_TEST_MARKER"


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str
    peak_kb: int
    process_groups: list[int]


def run_rollcert(tmp_path: Path, command: str, server: str | None, *extra: str, timeout: str = "1") -> Run:
    """``rollcert COMMAND subprocess:<server> EXTRA...`` in a subprocess; each server
    start records its process group id (``start_new_session`` makes it the pid)."""
    groups_file = tmp_path / "process_groups"
    peak_file = tmp_path / "peak_kb"
    marker = uuid.uuid4().hex
    if server is not None:
        wrapped = ["sh", "-c", f"echo $$ >> {shlex.quote(str(groups_file))}; exec {sys.executable} {FAKES / server}.py"]
        arguments = [command, f"subprocess:{shlex.join(wrapped)}", *extra]
    else:
        arguments = [command, *extra]
    environment = {**os.environ, "ROLLCERT_PROTOCOL_TIMEOUT": timeout, MARKER_VARIABLE: marker}
    completed = subprocess.run(
        [sys.executable, "-c", RUN_ROLLCERT, str(peak_file), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        check=False,
    )
    groups = [int(line) for line in groups_file.read_text().split()] if groups_file.exists() else []
    assert_nothing_left_behind(groups, marker)
    peak = int(peak_file.read_text()) if peak_file.exists() else -1
    return Run(completed.returncode, completed.stdout, completed.stderr, peak, groups)


def assert_nothing_left_behind(groups: list[int], marker: str) -> None:
    """No live process is in a server's process group or carries the run's marker.

    A process killed a moment ago may linger as a zombie until init reaps it:
    dead, but still a member of its group for ``kill(0)``. So the groups are
    read from ``/proc`` (zombies skipped), and ``os.killpg(pgid, 0)`` is asked
    once the zombies have had time to be reaped.
    """
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    survivors = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _, group = (entry / "stat").read_text().rpartition(")")[2].split()[:3]
            carries_marker = needle in (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if state != "Z" and (int(group) in groups or carries_marker):
            survivors.append(f"pid {entry.name} (group {group}, state {state})")
    assert not survivors, f"processes left behind: {survivors}"
    for group in groups:
        for _ in range(200):  # zombies of the killed group are reaped by init, not by rollcert
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)


#: (fake server, words of the reason the verdict must give).
HOSTILE_SERVERS = [
    ("huge_line", "longer than the 16777216-byte line limit"),
    ("endless_stdout", "the line is not JSON"),
    ("stderr_flood", "panic: stack overflow"),
    ("huge_integer", "integer of 5000 digits"),
    ("deep_nesting", "deeper than 32 levels"),
    ("deep_hello", "handshake failed: protocol violation: the line nests arrays or objects deeper than 32"),
    ("forks_child", "within the 1 s timeout"),
    ("out_of_order", "replies out of order"),
    ("garbage_hello", "handshake failed: protocol violation: the line is not UTF-8"),
]


@pytest.mark.parametrize(("server", "reason"), HOSTILE_SERVERS)
@pytest.mark.slow
def test_smoke_against_a_hostile_server_is_an_error_in_bounded_memory(
    tmp_path: Path, server: str, reason: str
) -> None:
    run = run_rollcert(tmp_path, "smoke", server)
    assert run.status == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    errors = [line for line in run.stdout.splitlines() if line.startswith("ERROR")]
    assert errors and not any(line.startswith("FAIL") for line in run.stdout.splitlines()), run.stdout
    assert reason in errors[0], errors[0]
    assert 0 < run.peak_kb < MEMORY_LIMIT_KB, f"rollcert peaked at {run.peak_kb} KiB"
    assert run.process_groups, "the server was never started"


@pytest.mark.parametrize(("server", "reason"), HOSTILE_SERVERS)
@pytest.mark.slow
def test_certify_against_a_hostile_server_is_an_error_in_bounded_memory(
    tmp_path: Path, server: str, reason: str
) -> None:
    run = run_rollcert(tmp_path, "certify", server, "--only", "R0,R1")
    assert run.status == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert "violated" not in run.stdout.lower().replace("nothing violated", ""), run.stdout
    assert reason in run.stdout, run.stdout
    assert 0 < run.peak_kb < MEMORY_LIMIT_KB, f"rollcert peaked at {run.peak_kb} KiB"


@pytest.mark.slow
def test_a_slow_server_is_reported_while_rollcert_waits(capsys: pytest.CaptureFixture[str]) -> None:
    server = SubprocessServer([sys.executable, str(FAKES / "hang.py")], 2.5)  # progress starts after 2 s
    try:
        buffer = server.new_buffer(BufferConfig(b"ab"))
        buffer.splice(0, 0, b"x")
        with pytest.raises(HarnessError, match=r"no reply to request \d+ \(rollback\) within the 2.5 s timeout"):
            buffer.rollback(1)
    finally:
        server.close()
    waiting = [line for line in capsys.readouterr().err.splitlines() if "still waiting for the server's reply" in line]
    assert len(waiting) == 1, waiting  # after 2 s; the next one would come 10 s later
    assert "(rollback)" in waiting[0] and "timeout 2.5 s" in waiting[0] and "hang.py" in waiting[0]


@pytest.mark.slow
@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "soon", "1e999"])
def test_a_bad_protocol_timeout_is_a_usage_error_in_one_line(tmp_path: Path, value: str) -> None:
    run = run_rollcert(tmp_path, "smoke", "hang", timeout=value)
    assert run.status == 3, run.stderr
    assert run.stderr.count("\n") == 1 and "ROLLCERT_PROTOCOL_TIMEOUT" in run.stderr, run.stderr
    assert not run.process_groups  # refused before any server was started


@pytest.mark.slow
def test_a_bad_line_limit_is_a_usage_error_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLCERT_PROTOCOL_MAX_LINE_BYTES", "-5")
    run = run_rollcert(tmp_path, "smoke", "hang")
    assert run.status == 3 and run.stderr.count("\n") == 1 and "MAX_LINE_BYTES" in run.stderr, run.stderr


@pytest.mark.slow
def test_the_line_limit_can_be_lowered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLCERT_PROTOCOL_MAX_LINE_BYTES", "100000")
    run = run_rollcert(tmp_path, "smoke", "huge_line")
    assert run.status == 2 and "longer than the 100000-byte line limit" in run.stdout, run.stdout


# -- target modules that fail to import or to build ----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "named"),
    [
        ("target_exits_on_import:TARGET", "importing module 'target_exits_on_import' raised SystemExit (exit status 7)"),
        ("target_bad_syntax_on_import:TARGET", "raised SyntaxError: invalid syntax"),
        ("target_panics:build_target", "raised PanicException: called `Option::unwrap()` on a `None` value"),
    ],
)
@pytest.mark.parametrize("command", ["smoke", "certify"])
def test_a_target_that_fails_to_import_or_build_is_a_target_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, target: str, named: str
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FAKES))
    run = run_rollcert(tmp_path, command, None, target)
    assert run.status == 3, run.stdout + run.stderr
    assert run.stderr.startswith("rollcert: ") and run.stderr.count("\n") == 1, run.stderr
    assert named in run.stderr, run.stderr


@pytest.mark.slow
def test_smoke_reports_a_native_panic_of_the_adapter_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FAKES))
    run = run_rollcert(tmp_path, "smoke", None, "target_panics:PANICKING_BUFFERS")
    assert run.status == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert "ERROR new+read           the adapter raised PanicException: thread '<unnamed>' panicked" in run.stdout


@pytest.mark.parametrize(
    ("mode", "verdict", "words"),
    [
        ("hello", "error", "'name' must be printable text of at most 200 characters"),
        ("message", "violated", "ValueError: refused \\x1b[2J\\x1b[H\\x1b[32mR0 passed\\x1b[0m\\u202e"),
        ("stderr", "error", "its last stderr lines: dying \\x1b[2J"),
    ],
)
@pytest.mark.slow
def test_a_server_cannot_steer_the_terminal_through_its_words(mode: str, verdict: str, words: str) -> None:
    """Escape sequences, line breaks and a right-to-left override in the server's
    name, its error messages and its stderr reach neither the terminal nor the
    certificate as control characters (they cleared the screen and printed a
    green fake verdict before); they are shown escaped, or refused at the hello."""
    command = shlex.join([sys.executable, str(FAKES / "escape_sequences.py"), mode])
    completed = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", f"subprocess:{command}", "--only", "R0", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ROLLCERT_PROTOCOL_TIMEOUT": "5"},
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert "\x1b" not in output and "\u202e" not in output, output
    assert f"R0        {verdict}" in completed.stdout, completed.stdout
    assert words in completed.stdout, completed.stdout
