"""`rollcert certify -j N`: the properties in worker processes, the certificate of a serial run.

The identity tests compare bytes with ``--reproducible`` (no wall-clock readings):
a property's verdict, counts, coverage and counterexample must not depend on
which process ran it or what ran before it there. R7's coverage counts depend on
thread interleavings and differ between two serial runs too (its verdict does
not), so ``--reproducible`` keeps them as reached or not
(``PropertyResult.make_reproducible``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollcert.command.cli import main

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]

#: A target whose SUT ends its process as soon as a buffer is built, the way a
#: native crash would: ``EXITS`` by os._exit, ``SEGFAULTS`` by SIGSEGV, ``HANGS``
#: by writing its pid to a file and sleeping (for the Ctrl-C test).
CRASHING_TARGETS = '''
import os
import signal
import time
from pathlib import Path

from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target

CAPABILITIES = frozenset({Capability.CORE, Capability.DEPTH})


def exits(config):
    os._exit(7)


def segfaults(config):
    os.kill(os.getpid(), signal.SIGSEGV)


def hangs(config):
    Path(f"started.{os.getpid()}").write_text("")
    time.sleep(600)


EXITS = Target("exits", "1", CAPABILITIES, exits)
SEGFAULTS = Target("segfaults", "1", CAPABILITIES, segfaults)
HANGS = Target("hangs", "1", CAPABILITIES, hangs)
'''


def _certify_twice(tmp_path: Path, target: str, only: str) -> tuple[int, int]:
    statuses = []
    for jobs in (1, 2):
        statuses.append(main([
            "certify", target, "--only", only, "-j", str(jobs), "--reproducible", "--quiet",
            "--json", str(tmp_path / f"j{jobs}.json"), "--markdown", str(tmp_path / f"j{jobs}.md"),
        ]))
    return statuses[0], statuses[1]


@pytest.mark.slow
def test_bundled_certificate_is_the_same_with_two_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Three properties of three families (the whole certificate twice took 107 s): the
    # workers share no state, so what holds for these holds for the others.
    serial, parallel = _certify_twice(tmp_path, "bundled", "R0,R3,S1")
    assert serial == parallel == 0
    assert (tmp_path / "j2.json").read_bytes() == (tmp_path / "j1.json").read_bytes()
    assert (tmp_path / "j2.md").read_bytes() == (tmp_path / "j1.md").read_bytes()


@pytest.mark.slow
def test_violations_and_counterexamples_are_the_same_with_two_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serial, parallel = _certify_twice(tmp_path, "specimen:first_match_scan", "R0,R1,R2,R3")
    assert serial == parallel == 1
    assert (tmp_path / "j2.json").read_bytes() == (tmp_path / "j1.json").read_bytes()
    assert (tmp_path / "j2.md").read_bytes() == (tmp_path / "j1.md").read_bytes()
    properties = json.loads((tmp_path / "j2.json").read_text())["properties"]
    assert properties["R2"]["verdict"] == "violated" and properties["R2"]["counterexample"]["steps"]
    # R0 took a counterexample found in another worker, as a serial run would.
    assert properties["R0"]["verdict"] == "violated"


def _run_crashing(tmp_path: Path, target: str, only: str) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, str]]]:
    (tmp_path / "crashing.py").write_text(CRASHING_TARGETS)
    completed = subprocess.run(
        [*ROLLCERT, "certify", f"crashing:{target}", "--only", only, "-j", "2", "--json", "c.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    return completed, json.loads((tmp_path / "c.json").read_text())["properties"]


@pytest.mark.slow
def test_a_worker_that_exits_is_that_property_error(tmp_path: Path) -> None:
    completed, properties = _run_crashing(tmp_path, "EXITS", "R0,R2,S1")
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    for pid in ("R0", "R2"):
        assert properties[pid]["verdict"] == "error"
        assert f"worker process certifying {pid} exited with status 7" in properties[pid]["reason"]
    assert properties["S1"]["verdict"] == "not_assessed"  # a worker that did not crash still reports


@pytest.mark.slow
def test_a_worker_killed_by_a_signal_is_that_property_error(tmp_path: Path) -> None:
    completed, properties = _run_crashing(tmp_path, "SEGFAULTS", "R0,R2")
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    for pid in ("R0", "R2"):
        assert properties[pid]["verdict"] == "error"
        assert "was killed by SIGSEGV" in properties[pid]["reason"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: only its parent has not reaped it yet
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_ctrl_c_stops_every_worker(tmp_path: Path) -> None:
    (tmp_path / "crashing.py").write_text(CRASHING_TARGETS)
    process = subprocess.Popen(
        [*ROLLCERT, "certify", "crashing:HANGS", "--only", "R0,R1,R2", "-j", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        give_up = time.monotonic() + 120  # a guard against a hang, not a measurement
        while len(list(tmp_path.glob("started.*"))) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < give_up, "the workers never started"
            time.sleep(0.05)
        workers = [int(path.suffix[1:]) for path in tmp_path.glob("started.*")]
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C on a terminal does: the whole group
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 2  # interrupted: the certificate of what finished, never green
    assert stderr.startswith("rollcert: interrupted by SIGINT; the certificate holds the verdicts reached")
    assert "Traceback" not in stderr and "interrupted by SIGINT" in stdout
    give_up = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < give_up:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


@pytest.mark.parametrize("jobs", ["0", "-1", "2.5", "two", ""])
def test_bad_job_counts_are_refused_in_one_line(jobs: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "bundled", "-j", jobs]) == 3
    err = capsys.readouterr().err
    assert err.startswith("rollcert: certify: argument -j/--jobs:") and err.count("\n") == 1


def test_a_bad_source_date_is_refused_before_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    assert main(["certify", "bundled", "--reproducible"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and "SOURCE_DATE_EPOCH" in captured.err


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: quick)" in text and "-j N, --jobs N" in text and "--quiet" in text


@pytest.mark.slow
def test_a_property_run_does_not_depend_on_what_was_imported_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis draws now and then from the literals of the local modules
    imported so far; a serial run imports more before each property than a
    worker does. ``without_local_constants`` keeps that pool out of the run."""
    from rollcert.stateful_tests.certify import certify_property
    from rollcert.stateful_tests.profiles import PROFILES
    from rollcert.targets.adapters.bundled import TARGET

    def run() -> tuple[int, int, dict[str, int]]:
        result = certify_property(TARGET, "R6", PROFILES["quick"], 3)
        return result.examples, result.steps, result.coverage

    before = run()
    (tmp_path / "lots_of_literals.py").write_text(
        "LITERALS = [" + ", ".join(str(n) for n in range(-40, 400, 7)) + ", b'ab', b'\\x00']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("lots_of_literals")
    assert run() == before


@pytest.mark.slow
def test_workers_set_aside_the_findings_file_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A worker builds the target again from its text and the --set-aside file:
    without the file it would find the finding set aside (a multi-step rollback)."""
    findings = tmp_path / "findings.toml"
    findings.write_text(
        '[[finding]]\nname = "fifo_multi_step"\nproperty = "R3"\noperation = "rollback"\n'
        'when = "steps > 1"\nreason = "replays oldest first"\n'
    )
    statuses = [
        main([
            "certify", "specimen:fifo_replay", "--only", "R2,R3", "--set-aside", str(findings), "-j", jobs,
            "--reproducible", "--quiet", "--json", str(tmp_path / f"j{jobs}.json"),
        ])
        for jobs in ("1", "2")
    ]
    assert statuses == [1, 1]
    assert (tmp_path / "j2.json").read_bytes() == (tmp_path / "j1.json").read_bytes()
    certificate = json.loads((tmp_path / "j2.json").read_text())
    assert list(certificate["target"]["set_aside"]) == ["fifo_multi_step"]
    steps = certificate["properties"]["R3"]["counterexample"]["steps"]
    assert all(not (s["operation"]["op"] == "rollback" and s["operation"]["steps"] > 1) for s in steps)
