"""Runs that end early keep what they found, and leave no process behind (issue 40).

Measured before: a campaign whose budget ended mid-round dropped the round's
finished units (a counterexample found in seconds was in neither the corpus nor
the certificate: exit 2, no corpus file); ``kill -KILL`` of ``rollcert certify
-j 2`` left the forkserver, both workers and the resource tracker running; and a
run stopped by ``timeout`` (SIGTERM) or Ctrl-C wrote no certificate at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollcert.command.processes import descendants
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.html_certificate import from_json_file
from rollcert.reports.html_certificate import render_html
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Target

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads processes from /proc (Linux)")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: only its reaping is left)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _in_session(session: int) -> list[int]:
    """Live processes whose process group or session is ``session``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if session in (int(fields[2]), int(fields[3])):
                found.append(int(entry))
    return found


def _start(tmp_path: Path, *arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ROLLCERT, *arguments], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )


def _under_way(process: subprocess.Popen[str], count: int) -> list[int]:
    """Wait until ``process`` has ``count`` descendants (the forkserver, the resource
    tracker, the workers): the run is under way. Its descendants then."""
    give_up = time.monotonic() + 60  # a guard against a hang, not a measurement
    while len(found := descendants(process.pid)) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < give_up, f"the run never got under way: {found}"
        time.sleep(0.05)
    return found


#: The specimen best_effort_log with every rollback slowed: its R1 still fails in a
#: tenth of a second (the counterexample rolls nothing back), its R2 (rollbacks all
#: the way) now takes minutes a round. A campaign's first round is then cut by a
#: budget of seconds on any machine, after R1's unit finished.
SLOW_ROLLBACK = """
import time
from dataclasses import replace

from rollcert.specimens import load_all

_SPECIMEN = load_all()["best_effort_log"].target


def _slow(config):
    sut = _SPECIMEN.factory(config)
    rollback = sut.rollback

    def slow_rollback(*arguments, **options):
        time.sleep(0.05)
        return rollback(*arguments, **options)

    sut.rollback = slow_rollback
    return sut


TARGET = replace(_SPECIMEN, name="slow-rollback best_effort_log", factory=_slow)
"""


def _slow_target(directory: Path) -> str:
    (directory / "slow_rollback.py").write_text(SLOW_ROLLBACK)
    return "slow_rollback:TARGET"


@pytest.mark.slow
def test_a_campaign_cut_by_its_budget_keeps_the_counterexample_a_finished_unit_found(tmp_path: Path) -> None:
    """R1's unit finishes with a counterexample in about 9 s under a load of 3
    (2 s of CPU; its rollbacks sleep); R2's round outlasts the budget (about a
    minute). R1's finding was dropped with the round (exit 2, "unknown", no
    corpus file)."""
    completed = subprocess.run(
        [*ROLLCERT, "campaign", _slow_target(tmp_path), "--budget", "20s", "--only", "R1,R2", "-j", "1",
         "--corpus", "corpus", "--json", "campaign.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    record = json.loads((tmp_path / "campaign.json").read_text())
    campaign = record["campaign"]
    assert campaign["rounds"] == 0, completed.stderr
    assert campaign["cut_round"] == {"round": 0, "finished": ["R1::shard-0"], "stopped": ["R2::shard-0"]}
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert record["properties"]["R1"]["verdict"] == "violated" and record["exit_status"] == 1
    corpus = sorted(path.name for path in (tmp_path / "corpus").glob("*.json"))
    assert corpus == [f["file"] for f in campaign["properties"]["R1"]["findings"]] and len(corpus) == 1
    assert record["properties"]["R2"]["verdict"] == "unknown"
    assert "cut by the budget: kept R1::shard-0; stopped R2::shard-0" in completed.stderr


@pytest.mark.slow
def test_sigkill_of_certify_leaves_no_process_of_the_run(tmp_path: Path) -> None:
    """``kill -KILL`` runs no handler: the workers, the forkserver and the resource
    tracker ran on (the workers to the end of their property)."""
    process = _start(tmp_path, "certify", _slow_target(tmp_path), "--only", "R2,R3", "-j", "2", "-q")
    try:
        ran = _under_way(process, 4)  # the resource tracker, the forkserver, two workers
        time.sleep(0.3)
        ran = sorted({*ran, *descendants(process.pid)})
        process.kill()
        process.wait(timeout=10)
        give_up = time.monotonic() + 5
        while (left := [pid for pid in ran if _alive(pid)] + _in_session(process.pid)) and time.monotonic() < give_up:
            time.sleep(0.05)
    finally:
        for pid in [*descendants(process.pid), *_in_session(process.pid)]:
            os.kill(pid, signal.SIGKILL)
    assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes()[:120] for pid in left if _alive(pid)]


@pytest.mark.slow
def test_sigterm_writes_a_certificate_marked_interrupted(tmp_path: Path) -> None:
    """What ``timeout 20 rollcert certify`` does: the certificate of what finished,
    the rest unknown, where ``--json`` and ``--junit`` said (nothing was written)."""
    process = _start(tmp_path, "certify", _slow_target(tmp_path), "--only", "R1,R2,R3", "-j", "2", "-q",
                     "--json", "cert.json", "--junit", "cert.xml")
    try:
        _under_way(process, 4)
        time.sleep(1.5)  # R1's worker (a tenth of a second of work) has most likely reported; R2's has minutes to go
        process.send_signal(signal.SIGTERM)  # to rollcert alone, as timeout and kill -TERM do
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    record = json.loads((tmp_path / "cert.json").read_text())
    verdicts = {pid: result["verdict"] for pid, result in record["properties"].items()}
    assert record["interrupted"] == "SIGTERM" and list(verdicts) == ["R1", "R2", "R3"], stderr
    assert verdicts["R2"] == "unknown" and verdicts["R1"] in ("violated", "unknown"), verdicts
    assert process.returncode == record["exit_status"] == (1 if "violated" in verdicts.values() else 2)
    for pid, verdict in verdicts.items():
        if verdict == "unknown":
            assert record["properties"][pid]["reason"] == "the run was interrupted before this property finished"
    assert "interrupted by SIGTERM" in stdout and stderr.startswith("rollcert: interrupted by SIGTERM;")
    assert 'name="rollcert.interrupted" value="SIGTERM"' in (tmp_path / "cert.xml").read_text()
    assert "Traceback" not in stderr


def _interrupted(reason: str = "the run was interrupted before this property finished") -> CertificateData:
    target = Target("t", "1", frozenset(), lambda config: None)  # never built: only drawn
    results = {
        "R1": PropertyResult("R1", "passed", "Log completeness (write-ahead)", 3, 9),
        "R2": PropertyResult("R2", "unknown", "Offset stability", reason=reason),
    }
    certificate = CertificateData(target, "quick", 0, results)
    certificate.interrupted = "SIGTERM"
    return certificate


def test_an_interrupted_certificate_says_so_in_every_format_and_is_never_green(tmp_path: Path) -> None:
    certificate = _interrupted()
    certificate.results["R2"].verdict = "passed"  # every verdict reached green: the run still stopped short
    assert certificate.exit_status == 2
    certificate = _interrupted()
    assert "interrupted by SIGTERM: the run stopped before it finished" in render_text(certificate)
    assert "the run was interrupted before this property finished" in render_text(certificate)
    assert "**interrupted by SIGTERM" in render_markdown(certificate)
    assert 'name="rollcert.interrupted" value="SIGTERM"' in render_junit(certificate)
    record = to_json(certificate)
    assert record["interrupted"] == "SIGTERM" and record["exit_status"] == 2
    assert "interrupted" not in to_json(CertificateData(certificate.target, "quick", 0, certificate.results))
    stored = certificate_from_json(json.loads(json.dumps(record)))
    assert stored.data.interrupted == "SIGTERM" and stored.data.exit_status == 2
    (tmp_path / "cert.json").write_text(json.dumps(record))
    assert "<strong>interrupted</strong> by SIGTERM" in render_html(from_json_file(tmp_path / "cert.json"))


def test_a_forged_interrupted_field_is_escaped_in_every_format(tmp_path: Path) -> None:
    record = to_json(_interrupted())
    record["interrupted"] = "<script>x</script>\n| R0 | **passed** |"
    (tmp_path / "cert.json").write_text(json.dumps(record))
    page = render_html(from_json_file(tmp_path / "cert.json"))
    assert "<script>x" not in page and "&lt;script&gt;x" in page
    stored = certificate_from_json(record).data
    assert "\n| R0 | **passed** |" not in render_markdown(stored)
    assert "\n| R0" not in render_text(stored)


#: A protocol server that does not exit when its input closes: the reference
#: server, then a long sleep (a reply into the closed pipe does not end it either). Only the kernel's death signal ends it when
#: rollcert is killed (its own process group is out of every reach of rollcert's).
STUBBORN_SERVER = """
import signal
import time
from rollcert.targets.protocol_server import main
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
try:
    main()
except BaseException:  # a reply into a closed pipe
    pass
time.sleep(600)
"""


@pytest.mark.slow
def test_sigkill_of_certify_leaves_no_protocol_server(tmp_path: Path) -> None:
    """Measured before: the stubborn server outlived ``kill -KILL`` of rollcert
    (start_new_session put it out of the run's process group, and no finalizer ran)."""
    (tmp_path / "stubborn.py").write_text(STUBBORN_SERVER)
    target = f"subprocess:{sys.executable} {tmp_path / 'stubborn.py'}"
    process = _start(tmp_path, "certify", target, "--only", "R2", "-q")
    servers: list[int] = []
    try:
        give_up = time.monotonic() + 60  # a guard against a hang, not a measurement
        while not servers:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < give_up, "no server was started"
            servers = [
                pid for pid in descendants(process.pid)
                if b"stubborn.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
            ]
            time.sleep(0.05)
        process.kill()
        process.wait(timeout=10)
        give_up = time.monotonic() + 5
        while (left := [pid for pid in servers if _alive(pid)]) and time.monotonic() < give_up:
            time.sleep(0.05)
    finally:
        for pid in [*descendants(process.pid), *servers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert left == [], "the protocol server outlived rollcert"
