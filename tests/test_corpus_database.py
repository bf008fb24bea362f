"""A corpus many machines share (issue 45): the corpus as a Hypothesis example
database — a real redis-server on 127.0.0.1, or any ``ExampleDatabase`` named as
``module:attr`` (read-only and multiplexed compositions) — with every value as
untrusted as a file. The Redis tests start their own server on a free port and
skip, saying why, where ``redis-server`` is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rollcert.stateful_tests.corpus import DatabaseCorpus
from rollcert.stateful_tests.corpus import TraceDirectoryDatabase
from rollcert.stateful_tests.corpus import add_counterexample
from rollcert.stateful_tests.corpus import corpus_key
from rollcert.stateful_tests.corpus import corpus_location
from rollcert.stateful_tests.corpus import read_corpus
from rollcert.stateful_tests.corpus import replay_corpus
from rollcert.stateful_tests.corpus import shown_spec
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.targets.resolve import resolve_target

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]
SPECIMEN = "specimen:fifo_replay"
#: R3's minimal counterexample on fifo_replay: two inserts, then rollback(2) replays them FIFO.
FIFO_TRACE = {
    "schema": "rollcert-trace/2", "family": "rollback", "initial": "", "capacity": None, "policy": "reject",
    "operations": [
        {"op": "splice", "offset": 0, "delete_length": 0, "insert": "YQ=="},
        {"op": "splice", "offset": 1, "delete_length": 0, "insert": "YQ=="},
        {"op": "rollback", "steps": 2},
    ],
}


def _value(trace: dict[str, object], property_id: str, target: str) -> bytes:
    return json.dumps({**trace, "property": property_id, "target": target}, sort_keys=True).encode()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A redis-server of the caller's own on a free loopback port, no persistence;
    killed at the end. Skips, saying why, where it is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (.ci/run installs it from the distribution's packages)")
    pytest.importorskip("redis", reason="the redis package is not installed (pip install 'rollcert[redis]')")
    port = _free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start on 127.0.0.1:{port}")
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def _certify(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ROLLCERT, "certify", *arguments, "--quiet"], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_a_finding_of_one_process_is_replayed_first_by_another_through_redis(redis_url: str, tmp_path: Path) -> None:
    first = _certify(SPECIMEN, "--only", "R3", "--seed", "0", "--corpus", redis_url, "--json", "one.json", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    one = json.loads((tmp_path / "one.json").read_text())
    assert one["properties"]["R3"]["verdict"] == "violated"
    assert one["corpus"]["added"] >= 1 and one["corpus"]["replayed"] == 0
    assert one["corpus"]["directory"] == redis_url

    second = _certify(SPECIMEN, "--only", "R3", "--seed", "7", "--corpus", redis_url, "--json", "two.json", cwd=tmp_path)
    assert second.returncode == 1, second.stderr
    two = json.loads((tmp_path / "two.json").read_text())
    r3 = two["properties"]["R3"]
    assert r3["verdict"] == "violated"
    assert r3["reason"].startswith("from the corpus (")  # replayed first: the machine never ran
    assert r3["examples"] == 0
    assert two["corpus"]["replayed"] >= 1 and two["corpus"]["failed"] >= 1


@pytest.mark.slow
def test_two_processes_writing_one_key_at_once_lose_nothing(redis_url: str, tmp_path: Path) -> None:
    writer = textwrap.dedent(f"""
        import sys
        from rollcert.model.operations import operation_from_json
        from rollcert.stateful_tests.corpus import DatabaseCorpus, add_counterexample
        from rollcert.stateful_tests.family import StepRecord
        from rollcert.stateful_tests.verdicts import Counterexample
        ops = [operation_from_json(o) for o in {FIFO_TRACE["operations"]!r}]
        corpus = DatabaseCorpus({redis_url!r})
        first = int(sys.argv[1])
        for n in range(first, first + 40):
            steps = tuple(StepRecord(i, op, b"", None, None, True, "", (), "") for i, op in enumerate(ops))
            found = Counterexample("R3", {SPECIMEN!r}, b"x%d" % n, None, "reject", steps, "")
            assert add_counterexample(corpus, found, {SPECIMEN!r})
    """)
    writers = [subprocess.Popen([sys.executable, "-c", writer, str(first)]) for first in (0, 40)]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    stored = DatabaseCorpus(redis_url).open().fetch(corpus_key(SPECIMEN, "R3"))
    initials = {parse_trace(value.decode())[1].initial for value in stored}
    assert initials == {b"x%d" % n for n in range(80)}


@pytest.mark.slow
def test_database_values_are_untrusted_input(redis_url: str) -> None:
    """Garbage, an oversized value, another target's trace under this key: each
    skipped with a warning naming why; the real trace still fails (never a pass,
    never a crash)."""
    corpus = DatabaseCorpus(redis_url)
    database = corpus.open()
    key = corpus_key(SPECIMEN, "R3")
    for value in (b"not json", b"{" * 100_000, b"x" * (5 << 20), _value(FIFO_TRACE, "R3", "specimen:other"),
                  _value(FIFO_TRACE, "R3", SPECIMEN)):
        database.save(key, value)
    replayed = replay_corpus(resolve_target(SPECIMEN), corpus, ["R3"])
    r3 = replayed.properties["R3"]
    assert (r3.replayed, r3.failed) == (1, 1)
    assert r3.result is not None and r3.result.verdict == "violated"
    assert len(replayed.warnings) == 4
    assert any("larger than" in w for w in replayed.warnings)
    assert any("'specimen:other'" in w for w in replayed.warnings)


@pytest.mark.slow
def test_a_corpus_server_that_is_not_there_is_one_line_and_exit_3(tmp_path: Path) -> None:
    pytest.importorskip("redis", reason="the redis package is not installed (pip install 'rollcert[redis]')")
    url = f"redis://127.0.0.1:{_free_port()}/0"
    ran = _certify(SPECIMEN, "--only", "R3", "--corpus", url, cwd=tmp_path)
    assert ran.returncode == 3
    assert ran.stderr.count("\n") == 1 and f"--corpus {url}: cannot read it" in ran.stderr


def test_corpus_option_names_a_directory_a_url_or_an_object(tmp_path: Path) -> None:
    assert corpus_location("redis://h:1/0") == DatabaseCorpus("redis://h:1/0")
    assert corpus_location("my_project.corpus:DATABASE") == DatabaseCorpus("my_project.corpus:DATABASE")
    assert corpus_location(".rollcert/corpus") == Path(".rollcert/corpus")
    existing = tmp_path / "a:b"
    existing.mkdir()
    assert corpus_location(str(existing)) == existing
    assert shown_spec("redis://user:secret@h:6379/0") == "redis://user:***@h:6379/0"


def test_read_only_and_multiplexed_compositions_as_hypothesis_documents_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local directory (today's layout) multiplexed with a shared store only
    read (as with GitHubArtifactDatabase): the shared store's finding is replayed,
    a new one lands in the local directory only, in the files today's corpus reads."""
    from hypothesis.database import InMemoryExampleDatabase

    shared = InMemoryExampleDatabase()
    shared.save(corpus_key(SPECIMEN, "R3"), _value(FIFO_TRACE, "R3", SPECIMEN))
    module = tmp_path / "corpus_setup.py"
    module.write_text(textwrap.dedent(f"""
        from hypothesis.database import MultiplexedDatabase, ReadOnlyDatabase
        from rollcert.stateful_tests.corpus import TraceDirectoryDatabase
        SHARED = None
        def database():
            return MultiplexedDatabase(TraceDirectoryDatabase({str(tmp_path / "local")!r}), ReadOnlyDatabase(SHARED))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import corpus_setup  # type: ignore[import-not-found]

    corpus_setup.SHARED = shared
    corpus = corpus_location("corpus_setup:database")
    assert isinstance(corpus, DatabaseCorpus)
    target = resolve_target(SPECIMEN)
    replayed = replay_corpus(target, corpus, ["R3"]).properties["R3"]
    assert replayed.result is not None and replayed.result.verdict == "violated"
    assert replayed.result.counterexample is not None

    moved = Counterexample(**{**replayed.result.counterexample.__dict__, "initial": b"zz"})
    assert add_counterexample(corpus, moved, SPECIMEN, "R3")
    assert not add_counterexample(corpus, moved, SPECIMEN, "R3")  # a set: the same trace once
    assert len(list(shared.fetch(corpus_key(SPECIMEN, "R3")))) == 1  # read only: untouched
    entries, warnings = read_corpus(tmp_path / "local", SPECIMEN)  # today's directory layout
    assert [parse_trace(e.trace)[1].initial for e in entries] == [b"zz"] and warnings == []
    assert list(TraceDirectoryDatabase(tmp_path / "local").fetch(corpus_key(SPECIMEN, "R2"))) == []


@pytest.mark.slow
def test_the_pytest_gate_shares_a_redis_corpus(redis_url: str, tmp_path: Path) -> None:
    """``rollcert_gate(corpus="redis://...")`` (and ``--rollcert-corpus URL``): a gate in one
    project's test run remembers what another found, through the shared store."""
    def gate(seed: int) -> subprocess.CompletedProcess[str]:
        (tmp_path / "test_gate.py").write_text(
            "def test_gate(rollcert_gate):\n"
            f"    rollcert_gate({SPECIMEN!r}, only=('R3',), seed={seed}, corpus={redis_url!r})\n"
        )
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_gate.py"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)

    first = gate(0)
    assert "1 failed" in first.stdout and re.search(r"\b[1-9]\d* new counterexamples added", first.stdout), first.stdout
    second = gate(7)
    assert "1 failed" in second.stdout and "(below, from the corpus)" in second.stdout, second.stdout
