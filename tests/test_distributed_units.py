"""The work units as pytest items (``rollcert::TARGET::R2::shard-3``), spread by
pytest-xdist over its execnet gateways, and the ``rollcert_gate`` fixture's
corpus, jobs and replay command (SPEC §7).

The gateway test starts execnet's own socket server (``execnet/script/socketserver.py``)
on 127.0.0.1 only — it runs whatever a client sends, so it never listens beyond
this machine — and stops it at the end."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]
SPECIMEN = "specimen:first_match_scan"
ENVIRONMENT = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}


@pytest.fixture
def socket_gateway(tmp_path: Path) -> Iterator[int]:
    """execnet's socket server on a free loopback port; its port."""
    log = tmp_path / "socketserver.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-u", "-m", "execnet.script.socketserver", "127.0.0.1:0"],
            stdout=output, stderr=subprocess.STDOUT, cwd=tmp_path,
        )
    try:
        for _ in range(200):  # it prints the port it bound once it listens
            found = re.search(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)", log.read_text())
            if found or server.poll() is not None:
                break
            time.sleep(0.05)
        assert found, log.read_text()
        yield int(found.group(1))
    finally:
        server.kill()
        server.wait()


@pytest.mark.slow
def test_a_sharded_certification_runs_over_an_execnet_socket_gateway(tmp_path: Path, socket_gateway: int) -> None:
    only = "R0,R2"  # R2 fails, R0 folds it in: what the gateway must carry (four properties took 119 s)
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "xdist", "-q", "-rf",
         "-d", "--tx", f"socket=127.0.0.1:{socket_gateway}",
         "--rollcert-target", SPECIMEN, "--rollcert-only", only, "--rollcert-units", "--rollcert-seed", "3",
         "--rollcert-corpus", "off", "--rollcert-json", "units.json", "--rollcert-reproducible",
         "--junitxml", "junit.xml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env=ENVIRONMENT,
    )
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED, completed.stdout + completed.stderr
    assert "[gw0] " in completed.stdout  # ran on the gateway's worker
    assert "FAILED rollcert::specimen:first_match_scan::R2::shard-0" in completed.stdout
    junit = (tmp_path / "junit.xml").read_text()
    assert '<property name="rollcert_seed" value="3"' in junit and "rollcert_unit" not in junit
    serial = subprocess.run(
        [*ROLLCERT, "certify", SPECIMEN, "--only", only, "--seed", "3", "--reproducible", "--json", "serial.json", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env=ENVIRONMENT,
    )
    assert serial.returncode == 1, serial.stderr
    assert (tmp_path / "units.json").read_bytes() == (tmp_path / "serial.json").read_bytes()


GATE_PROJECT = '''
from rollcert.targets.resolve import resolve_target

MINE = resolve_target("specimen:first_match_scan")


def test_gate_by_object(rollcert_gate):
    rollcert_gate(MINE, only=("R2",), seed={seed})


def test_gate_by_text_in_workers(rollcert_gate):
    rollcert_gate("specimen:first_match_scan", only=("R2", "R3"), jobs=2, seed={seed}, corpus=None)
'''


@pytest.mark.slow
def test_the_gate_fixture_remembers_and_prints_a_replay_that_runs(tmp_path: Path) -> None:
    def run(seed: int) -> subprocess.CompletedProcess[str]:
        (tmp_path / "test_gate.py").write_text(textwrap.dedent(GATE_PROJECT).replace("{seed}", str(seed)))
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_gate.py"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )

    first = run(1)
    assert first.returncode == 1 and "2 failed" in first.stdout, first.stdout
    corpus = tmp_path / ".rollcert" / "corpus"
    assert len(list(corpus.glob("*.json"))) == 1  # only the first test has a corpus (corpus=None in the second)
    replay = re.search(r"Replay: (rollcert replay test_gate:MINE --trace '[^']*')", first.stdout)
    assert replay, first.stdout  # a Target object is named module:attr, which resolves
    replayed = subprocess.run(
        [*ROLLCERT, *shlex.split(replay.group(1))[1:]],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert replayed.returncode == 1 and "VIOLATED" in replayed.stdout, replayed.stdout + replayed.stderr
    second = run(2)
    assert "from the corpus" in second.stdout


@pytest.mark.slow
def test_the_per_property_items_replay_the_corpus_first(tmp_path: Path) -> None:
    def items(seed: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rollcert-target", SPECIMEN,
             "--rollcert-only", "R2", "--rollcert-seed", str(seed)],
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )

    first = items(1)
    assert first.returncode == pytest.ExitCode.TESTS_FAILED and "from the corpus" not in first.stdout
    (written,) = (tmp_path / ".rollcert" / "corpus").glob("*.json")  # on by default, under the rootdir
    second = items(7)
    assert second.returncode == pytest.ExitCode.TESTS_FAILED
    assert f"from the corpus ({written.name})" in second.stdout, second.stdout


LATE_BUG = '''
"""A target whose bug shows only after round 0: the work unit of round 0 (as
PYTEST_CURRENT_TEST names it) gets a sound buffer, which reaches every situation
(so the serial run stops after it); every later round gets one whose splice
inserts a byte too many."""

import json
import os
from dataclasses import replace

from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.targets.adapters.python_object import PythonBufferAdapter
from rollcert.targets.resolve import resolve_target


class OneByteTooMany(NaiveJournaledBuffer):
    def splice(self, offset, delete_length, insert):
        super().splice(offset, delete_length, bytes(insert) + b"!" if insert else insert)


def _factory(config):
    late = "::shard-0 " not in os.environ.get("PYTEST_CURRENT_TEST", "")
    kind = OneByteTooMany if late else NaiveJournaledBuffer
    return PythonBufferAdapter(kind(config.initial, capacity=config.capacity, policy=config.policy))


TARGET = replace(resolve_target("specimen:fifo_replay"), name="late_bug", factory=_factory, breaks=frozenset())
'''


@pytest.mark.slow
def test_a_violation_only_a_later_round_finds_is_in_the_units_certificate(tmp_path: Path) -> None:
    """Issue 40: the items of rounds 1-3 failed with the real counterexample and
    pytest exited 1, but the --rollcert-json certificate said R0 ``passed`` —
    round 0 passed and reached everything, where the serial run stops. The serial
    rule decides what to run, never what to forget: the certificate says violated."""
    (tmp_path / "late_bug.py").write_text(LATE_BUG, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "xdist", "-n", "2", "-q", "-rf",
         "--rollcert-target", "late_bug:TARGET", "--rollcert-only", "R0", "--rollcert-units",
         "--rollcert-corpus", "off", "--rollcert-json", "units.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**ENVIRONMENT, "PYTHONPATH": str(tmp_path)},
    )
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED, completed.stdout + completed.stderr
    assert "FAILED rollcert::late_bug:TARGET::R0::shard-1" in completed.stdout  # the construction held:
    assert "FAILED rollcert::late_bug:TARGET::R0::shard-0" not in completed.stdout  # round 0 passed
    record = json.loads((tmp_path / "units.json").read_text())
    assert record["properties"]["R0"]["verdict"] == "violated" and record["exit_status"] == 1
    assert "b'a!'" in record["properties"]["R0"]["counterexample"]["explanation"]
