"""The corpus fails closed (issue 40): a trace that fails, crashes, hangs or cannot
be judged is never a pass.

Each test is the attack that used to give a green. The corpus replay ran in one
worker: a stored trace that crashed the target (``os._exit``, SIGKILL) or hung it,
or a corpus that took longer than ``--deadline``, took the worker down, the whole
corpus was dropped, and ``rollcert certify`` exited 0 with R0 ``passed`` — "1
skipped" in the certificate the only sign, nothing on stderr. The target is
``tests/hostile_targets/corpus_breaker.py``: ``splice`` of ``crash`` exits the
process, ``kill`` SIGKILLs it, ``hang`` spins, ``slow`` takes 0.1 s, ``bad``
writes ``BAD`` (R0 violated); anything else is honest.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rollcert.stateful_tests.corpus import replay_corpus

HOSTILE = Path(__file__).parent / "hostile_targets"
TARGET = "corpus_breaker:TARGET"
TARGET_NAME = "hostile-corpus-breaker"


@pytest.fixture(autouse=True)
def hostile_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HOSTILE))


def store(corpus: Path, name: str, *inserts: bytes, target: str = TARGET_NAME, property_id: str = "R0") -> Path:
    """A corpus file ``NAME.json``: splices of ``inserts`` at offset 0, a trace of ``property_id`` of ``target``."""
    corpus.mkdir(exist_ok=True)
    record: dict[str, Any] = {
        "schema": "rollcert-trace/2", "family": "rollback", "initial": "YWJjYWJj", "capacity": None, "policy": "reject",
        "operations": [
            {"op": "splice", "offset": 0, "delete_length": 0, "insert": base64.b64encode(insert).decode()}
            for insert in inserts
        ],
        "property": property_id, "target": target,
    }
    path = corpus / f"{name}.json"
    path.write_text(json.dumps(record))
    return path


def certify(
    tmp_path: Path, corpus: Path, *options: str, only: str = "R0"
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``rollcert certify corpus_breaker:TARGET --only R0 --corpus CORPUS`` as a subprocess; and its JSON."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    certificate = tmp_path / "certificate.json"
    run = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", TARGET, "--only", only, "--profile", "quick",
         "--corpus", str(corpus), "--json", str(certificate), "-q", *options],
        capture_output=True, text=True, timeout=120, env=environment, cwd=tmp_path, check=False,
    )
    assert certificate.exists(), run.stdout + run.stderr
    return run, json.loads(certificate.read_text())


@pytest.mark.slow
def test_a_stored_trace_that_crashes_the_target_is_an_error_naming_it_and_the_rest_still_run(tmp_path: Path) -> None:
    """Was: exit 0, R0 passed, corpus "0 replayed, 1 skipped", nothing on stderr."""
    corpus = tmp_path / "corpus"
    store(corpus, "a-passes", b"x")
    store(corpus, "b-crashes", b"x", b"crash")
    store(corpus, "c-passes", b"y")
    run, certificate = certify(tmp_path, corpus)
    assert run.returncode == 2, run.stdout + run.stderr
    r0 = certificate["properties"]["R0"]
    assert r0["verdict"] == "error"
    assert r0["reason"].startswith("from the corpus (b-crashes.json): its replay did not finish: ")
    assert "exited with status 0" in r0["reason"]
    assert f"rollcert replay {TARGET} --trace" in r0["reason"]  # how to replay the one that crashed it
    assert certificate["corpus"] == {
        "directory": "corpus", "replayed": 3, "failed": 1, "skipped": 0, "added": 0
    }  # the entry after the crash was replayed too, in a fresh worker; the folder as seen from the run's cwd
    assert "rollcert: corpus: b-crashes.json (R0): its replay did not finish" in run.stderr


@pytest.mark.slow
def test_a_worker_killed_mid_replay_costs_only_its_entry_and_a_later_failure_is_still_found(tmp_path: Path) -> None:
    """A SIGKILL on the first entry; the one after it still fails: R0 violated from
    that file. Was: the corpus dropped, R0 passed, exit 0."""
    corpus = tmp_path / "corpus"
    store(corpus, "a-killed", b"kill")
    store(corpus, "b-passes", b"x")
    store(corpus, "c-fails", b"bad")
    run, certificate = certify(tmp_path, corpus)
    assert run.returncode == 1, run.stdout + run.stderr
    r0 = certificate["properties"]["R0"]
    assert r0["verdict"] == "violated"
    assert r0["reason"].startswith("from the corpus (c-fails.json)")
    assert (certificate["corpus"]["replayed"], certificate["corpus"]["failed"]) == (3, 2)
    assert "rollcert: corpus: a-killed.json (R0): its replay did not finish: " in run.stderr
    assert "killed by SIGKILL" in run.stderr


@pytest.mark.slow
def test_a_stored_trace_that_hangs_the_target_is_an_error_naming_it_at_its_own_deadline(tmp_path: Path) -> None:
    """A spin no call timeout reaches in time: the entry's deadline kills its worker.
    Was: the whole replay killed, R0 passed, exit 0."""
    corpus = tmp_path / "corpus"
    store(corpus, "a-hangs", b"hang")
    store(corpus, "b-passes", b"x")
    run, certificate = certify(tmp_path, corpus, "--deadline", "1")
    assert run.returncode == 2, run.stdout + run.stderr
    r0 = certificate["properties"]["R0"]
    assert r0["verdict"] == "error"
    assert r0["reason"].startswith("from the corpus (a-hangs.json): its replay did not finish: ")
    assert "deadline of 1 s" in r0["reason"]
    assert (certificate["corpus"]["replayed"], certificate["corpus"]["failed"]) == (2, 1)


@pytest.mark.slow
def test_a_corpus_longer_than_the_deadline_is_replayed_whole_each_entry_under_its_own(tmp_path: Path) -> None:
    """Eight entries of 0.1 s each, then one that fails, under ``--deadline 0.5``: the
    whole corpus outlasts the deadline, no entry does. Was: the replay killed at
    0.5 s with the failing entry unreplayed; never the corpus's violation."""
    corpus = tmp_path / "corpus"
    for number in range(8):
        store(corpus, f"a{number}-slow", b"slow", bytes([ord("a") + number]))
    store(corpus, "z-fails", b"bad")
    run, certificate = certify(tmp_path, corpus, "--deadline", "0.5")
    assert run.returncode == 1, run.stdout + run.stderr
    assert certificate["properties"]["R0"]["reason"].startswith("from the corpus (z-fails.json)")
    assert (certificate["corpus"]["replayed"], certificate["corpus"]["failed"]) == (9, 1)


@pytest.mark.slow
def test_stderr_names_every_file_skipped_and_why_and_counts_them(tmp_path: Path) -> None:
    """Unreadable or foreign files may be skipped (they are no test of this target),
    but never silently; a trace of another target is not this target's at all."""
    corpus = tmp_path / "corpus"
    store(corpus, "a-fails", b"bad")  # R0 decided by the corpus: its machine need not run
    (corpus / "b-junk.json").write_text("{not json")
    store(corpus, "c-other-target", b"bad", target="someone-else")  # left alone: not skipped, not replayed
    store(corpus, "d-faults", b"x", property_id="R1")  # R1 needs journal faults, which this target lacks
    run, certificate = certify(tmp_path, corpus, only="R0,R1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert certificate["properties"]["R1"]["verdict"] == "not_assessed"
    lines = [line for line in run.stderr.splitlines() if line.startswith("rollcert: corpus: ")]
    assert len(lines) == 3, run.stderr
    assert lines[0].startswith("rollcert: corpus: skipped the corpus file b-junk.json: ")
    assert lines[1].startswith("rollcert: corpus: skipped the corpus file d-faults.json: the target lacks the capability: journal_faults")
    assert lines[2] == "rollcert: corpus: 2 skipped (said above; not a test of this target)"
    assert (certificate["corpus"]["replayed"], certificate["corpus"]["skipped"]) == (1, 2)


def test_a_replay_that_times_out_in_process_is_an_error_not_a_skip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In this process (the pytest plugin's items, a shard's units) the call timeout
    ends a hang; the entry is then its property's ``error``, naming the file. Was:
    skipped with a warning the plugin never showed, and the property certified."""
    from corpus_breaker import TARGET as target

    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", "0.2")
    corpus = tmp_path / "corpus"
    store(corpus, "a-hangs", b"hang")
    store(corpus, "b-passes", b"x")
    replayed = replay_corpus(target, corpus, ["R0"])
    found = replayed.properties["R0"]
    assert (found.replayed, found.failed) == (2, 1)
    assert found.result is not None and found.result.verdict == "error"
    assert found.result.reason.startswith("from the corpus (a-hangs.json): ")
    assert replayed.warnings == ()


@pytest.mark.slow
def test_a_shard_replays_the_corpus_as_certify_does(tmp_path: Path) -> None:
    """``certify --shard`` replayed the corpus inside each first unit's worker: a
    crash there was the unit's error naming no file. Now it replays as certify
    does, and the merged certificate says which file."""
    corpus = tmp_path / "corpus"
    store(corpus, "a-crashes", b"crash")
    store(corpus, "b-passes", b"x")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    rollcert = [sys.executable, "-m", "rollcert.command.cli"]
    shard = subprocess.run(
        [*rollcert, "certify", TARGET, "--only", "R0", "--corpus", str(corpus), "--shard", "1/1", "--json", "p.json"],
        capture_output=True, text=True, timeout=120, env=environment, cwd=tmp_path, check=False,
    )
    assert shard.returncode == 0, shard.stdout + shard.stderr  # a shard writes its partial; the merge judges
    assert "rollcert: corpus: a-crashes.json (R0): its replay did not finish" in shard.stderr
    merged = subprocess.run(
        [*rollcert, "merge", "p.json", "--json", "c.json"],
        capture_output=True, text=True, timeout=120, env=environment, cwd=tmp_path, check=False,
    )
    assert merged.returncode == 2, merged.stdout + merged.stderr
    certificate = json.loads((tmp_path / "c.json").read_text())
    assert certificate["properties"]["R0"]["verdict"] == "error"
    assert certificate["properties"]["R0"]["reason"].startswith("from the corpus (a-crashes.json)")
    assert (certificate["corpus"]["replayed"], certificate["corpus"]["failed"]) == (2, 1)
