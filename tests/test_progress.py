"""The live progress display of ``rollcert certify``: the renderer as a pure
function, the redraw throttle on a fake clock, and the command on a pseudo-
terminal (the display appears and ends with the verdicts) and off one (stderr
stays empty)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.reports.progress import Row
from rollcert.reports.progress import TerminalDisplay
from rollcert.reports.progress import display_for
from rollcert.reports.progress import render
from rollcert.stateful_tests.progress_events import INTERVAL
from rollcert.stateful_tests.progress_events import Budget

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]
BUDGET = Budget(examples=400, steps=8000)


def test_render_shows_counts_of_the_budget_elapsed_time_and_the_first_violation() -> None:
    rows = [
        Row("R0", "done", BUDGET, 177, 2352, started_at=10.0, finished_at=11.25, verdict="passed"),
        Row("R2", "running", BUDGET, 12, 1500, started_at=11.0, violation="step 3 of example 12:\nbytes differ"),
        Row("R3", "waiting"),
        Row("S1", "done", BUDGET, started_at=12.0, finished_at=12.0, verdict="not_assessed", detail="lacks: diffs"),
        Row("R7", "running", None, 40, 900, started_at=11.5),
        Row("R7", "running", None, started_at=11.5),
    ]
    assert render(rows, now=13.0, width=200) == [
        "R0   passed       examples 177/400, steps 2,352/8,000, 1.2 s",
        "R2   running      examples 12/400, steps 1,500/8,000, 2.0 s — violation found, minimising: "
        "step 3 of example 12: bytes differ",
        "R3   waiting",
        "S1   not_assessed 0.0 s — lacks: diffs",
        "R7   running      examples 40, steps 900, 1.5 s",
        "R7   running      1.5 s",
    ]


def test_render_cuts_lines_to_the_width_so_none_wraps() -> None:
    row = Row("R2", "running", BUDGET, 1, 2, started_at=0.0, violation="x" * 500)
    (line,) = render([row], now=1.0, width=40)
    assert len(line) == 40 and line.endswith("…")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _frames(text: str) -> list[str]:
    """The drawings written to a display's stream, each without its cursor movements."""
    return [re.sub(r"\x1b\[[0-9]*[A-Za-z]", "", frame) for frame in re.split(r"\x1b\[\d+F", text)]


def test_the_display_redraws_at_most_once_an_interval_and_ends_with_the_verdicts() -> None:
    clock, stream = _Clock(), io.StringIO()
    display = TerminalDisplay(stream, ["R0", "R1"], clock=clock, columns=lambda: 120)
    display.started("R0", BUDGET)  # the first drawing
    for step in range(50):
        display.advanced("R0", 1, step)  # same instant: no drawing
    assert len(_frames(stream.getvalue())) == 1
    clock.now += 3 * INTERVAL
    display.advanced("R0", 7, 99)
    assert _frames(stream.getvalue())[-1].splitlines()[0] == "R0   running      examples 7/400, steps 99/8,000, 0.3 s"
    display.violation("R0", "step 2 of example 7: wrong")  # drawn at once
    display.violation("R0", "a later one")  # the first is kept
    assert "minimising: step 2 of example 7: wrong" in _frames(stream.getvalue())[-1]
    display.finished("R0", "violated", "counterexample of 2 steps")
    display.started("R1", None)
    display.finished("R1", "not_assessed", "the target lacks the capability: diffs")
    display.close()
    display.advanced("R1", 5, 5)  # nothing after the end
    clock.now += 1
    display.tick()
    final = _frames(stream.getvalue())[-1]
    assert final.splitlines() == [
        "R0   violated     examples 7/400, steps 99/8,000, 0.3 s — counterexample of 2 steps",
        "R1   not_assessed 0.0 s — the target lacks the capability: diffs",
    ]
    assert stream.getvalue().endswith("\x1b[J")


def test_no_display_off_a_terminal_or_when_quiet() -> None:
    assert display_for(["R0"], quiet=False, stream=io.StringIO()) is None

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(display_for(["R0"], quiet=False, stream=Terminal()), TerminalDisplay)
    assert display_for(["R0"], quiet=True, stream=Terminal()) is None


@pytest.mark.slow
def test_certify_writes_nothing_to_stderr_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    completed = subprocess.run(
        [*ROLLCERT, "certify", "specimen:fifo_replay", "--only", "R3,S1", "-j", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 1
    assert completed.stderr == ""
    assert "R3        violated" in completed.stdout


def _on_a_terminal(tmp_path: Path, *arguments: str) -> tuple[int, str, str]:
    """Run ``rollcert certify`` with stderr on a pseudo-terminal; its exit status, stdout and stderr."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*ROLLCERT, "certify", *arguments], cwd=tmp_path, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "COLUMNS": "150"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert process.stdout is not None
    stdout = process.stdout.read().decode()
    return process.wait(timeout=300), stdout, b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.slow
def test_on_a_terminal_the_display_appears_and_ends_with_the_verdicts(tmp_path: Path, jobs: str) -> None:
    status, stdout, stderr = _on_a_terminal(tmp_path, "specimen:fifo_replay", "--only", "R1,R3,S1", "-j", jobs)
    assert status == 1
    frames = _frames(stderr)
    assert any("R1   running      examples" in frame for frame in frames)
    assert re.fullmatch(
        r"R1   passed       examples \d+/400, steps [\d,]+/8,000, [\d.]+ s\n"
        r"R3   violated     examples \d+/400, steps [\d,]+/8,000, [\d.]+ s — counterexample of 3 steps\n"
        r"S1   not_assessed [\d.]+ s — the target lacks the capability: diffs\n",
        frames[-1],
    ), frames[-1]
    assert "Counterexample for R3" in stdout and "\x1b" not in stdout


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_quiet_leaves_a_terminal_alone(tmp_path: Path) -> None:
    status, stdout, stderr = _on_a_terminal(tmp_path, "specimen:fifo_replay", "--only", "R3,S1", "--quiet")
    assert status == 1 and stderr == "" and "R3        violated" in stdout
