"""The corpus (SPEC §7, "a CI gate remembers"): counterexamples kept as trace files,
replayed first by the next run, whatever its seed; bad files skipped, never a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.command.cli import auto_seed
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.corpus import MAX_FILE_BYTES
from rollcert.stateful_tests.corpus import read_corpus
from rollcert.stateful_tests.corpus import replay_corpus
from rollcert.targets.resolve import resolve_target

SPECIMEN = "specimen:first_match_scan"
ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]


def _traces(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json"))


@pytest.mark.slow
def test_a_violation_found_with_one_seed_is_replayed_first_by_a_run_with_another(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    target = resolve_target(SPECIMEN)
    first = certify(target, seed=1, only=("R2",), target_text=SPECIMEN, corpus=corpus)
    assert first.results["R2"].verdict == "violated"
    # Every distinct finding is saved (issue 43), the counterexample among them.
    findings = first.results["R2"].findings
    assert first.corpus is not None and (first.corpus.replayed, first.corpus.added) == (0, len(findings))
    written = _traces(corpus)
    assert len(written) == len(findings)
    found = first.results["R2"].counterexample
    assert found is not None

    elsewhere = certify(target, seed=7, only=("R2",))  # what seed 7 finds on its own: another counterexample
    assert elsewhere.results["R2"].counterexample != found

    second = certify(target, seed=7, only=("R2",), target_text=SPECIMEN, corpus=corpus)
    result = second.results["R2"]
    assert result.verdict == "violated"
    assert any(result.reason.startswith(f"from the corpus ({trace.name})") for trace in written)
    assert result.examples == 0  # reported at once: the machine never ran
    assert result.counterexample is not None
    assert [s.operation for s in result.counterexample.steps] in [[s.operation for s in f.steps] for f in findings]
    assert (second.corpus.replayed, second.corpus.failed, second.corpus.added) == (1, 1, 0)
    assert _traces(corpus) == written  # the same counterexample is the same file
    assert "from the corpus" in render_text(second)
    assert to_json(second)["corpus"] == {  # outside the working directory: named by its role (issue 43)
        "directory": "<corpus>", "replayed": 1, "failed": 1, "skipped": 0, "added": 0
    }


@pytest.mark.slow
def test_a_trace_that_passes_stays_and_counts(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    certify(resolve_target(SPECIMEN), seed=1, only=("R2",), corpus=corpus)
    (written,) = _traces(corpus)
    bundled = resolve_target("bundled")
    record = json.loads(written.read_text())
    record["target"] = bundled.name  # the same steps, as if the bundled target had failed them once
    (corpus / "fixed.json").write_text(json.dumps(record))
    certificate = certify(bundled, seed=0, only=("R2",), corpus=corpus)
    assert certificate.results["R2"].verdict == "passed"
    assert certificate.results["R2"].examples > 0
    assert certificate.results["R2"].figures["corpus_replayed"] == 1.0
    assert (certificate.corpus.replayed, certificate.corpus.failed) == (1, 0)
    assert (corpus / "fixed.json").exists() and written.exists()


@pytest.mark.slow
def test_unreadable_files_are_skipped_with_a_warning(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    certify(resolve_target(SPECIMEN), seed=1, only=("R2",), corpus=corpus)
    (good,) = _traces(corpus)
    record = json.loads(good.read_text())
    (corpus / "junk.json").write_text("{not json")
    (corpus / "old.json").write_text(json.dumps({**record, "schema": "rollcert-trace/0"}))
    (corpus / "future.json").write_text(json.dumps({**record, "schema": "rollcert-trace/9"}))
    (corpus / "no-property.json").write_text(json.dumps({**record, "property": "S1"}))  # not a rollback property
    (corpus / "huge.json").write_bytes(b" " * (MAX_FILE_BYTES + 1))
    (corpus / "binary.json").write_bytes(b"\xff\xfe\x00")
    (corpus / "link.json").symlink_to(good)
    (corpus / "directory.json").mkdir()
    os.mkfifo(corpus / "fifo.json")  # opening it must not block the run
    entries, warnings = read_corpus(corpus, record["target"])
    assert [entry.name for entry in entries] == [good.name]
    skipped = sorted(warning.split(":")[0] for warning in warnings)
    assert skipped == sorted(
        f"skipped the corpus file {name}" for name in (
            "junk.json", "old.json", "future.json", "no-property.json", "huge.json", "binary.json", "link.json",
            "directory.json", "fifo.json",
        )
    )
    replayed = replay_corpus(resolve_target(SPECIMEN), corpus, ["R2"])
    assert replayed.properties["R2"].failed == 1


@pytest.mark.slow
def test_a_missing_corpus_is_empty_and_created_on_first_finding(tmp_path: Path) -> None:
    corpus = tmp_path / "a" / "b"
    certificate = certify(resolve_target("bundled"), seed=0, only=("R3",), corpus=corpus)
    assert certificate.corpus.replayed == 0 and not corpus.exists()  # nothing found: nothing written


def test_seed_auto_follows_the_ci_run_and_else_the_date() -> None:
    assert auto_seed({"GITHUB_RUN_ID": "42"}) == auto_seed({"GITHUB_RUN_ID": "42", "BUILD_NUMBER": "1"})
    assert auto_seed({"GITHUB_RUN_ID": "42"}) != auto_seed({"GITHUB_RUN_ID": "43"})
    assert auto_seed({}, today="2026-01-01") != auto_seed({}, today="2026-01-02")
    assert auto_seed({"GITHUB_RUN_ID": "42"}).source == "--seed auto, from $GITHUB_RUN_ID=42"


@pytest.mark.slow
def test_the_command_prints_and_records_an_auto_seed_and_uses_the_corpus(tmp_path: Path) -> None:
    corpus, certificate = tmp_path / "corpus", tmp_path / "cert.json"
    environment = {**os.environ, "GITHUB_RUN_ID": "1234"}
    completed = subprocess.run(
        [*ROLLCERT, "certify", SPECIMEN, "--only", "R2", "--seed", "auto", "--corpus", str(corpus),
         "--json", str(certificate), "-q"],
        capture_output=True, text=True, env=environment, timeout=300, cwd=tmp_path,
    )
    assert completed.returncode == 1, completed.stderr
    seed = int(auto_seed({"GITHUB_RUN_ID": "1234"}))
    assert f"rollcert: seed {seed} (--seed auto, from $GITHUB_RUN_ID=1234)" in completed.stderr
    record = json.loads(certificate.read_text())
    assert record["seed"] == seed and record["seed_source"] == "--seed auto, from $GITHUB_RUN_ID=1234"
    # Every counterexample the certificate shows is saved: R2's, and R0's when one was
    # met while exploring R2 (on some seeds; which ones moves with the generator).
    shown = sorted(pid for pid, found in record["properties"].items() if found["verdict"] == "violated")
    assert "R2" in shown and set(shown) <= {"R0", "R2"}
    # every distinct finding of each is saved (issue 43): at least one trace a property shown
    assert record["corpus"]["added"] == len(_traces(corpus)) >= len(shown)
    (corpus / "junk.json").write_text("[]")
    again = subprocess.run(
        [*ROLLCERT, "certify", SPECIMEN, "--only", "R2", "--seed", "3", "--corpus", str(corpus), "-q"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert again.returncode == 1
    assert "rollcert: corpus: skipped the corpus file junk.json" in again.stderr
    assert "(below, from the corpus)" in again.stdout
    not_a_directory = subprocess.run(
        [*ROLLCERT, "certify", SPECIMEN, "--corpus", str(certificate)], capture_output=True, text=True, timeout=60,
    )
    assert not_a_directory.returncode == 3 and "not a directory" in not_a_directory.stderr


def test_corpus_off_is_no_corpus_and_makes_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--corpus off`` is what the help calls the default: no corpus, never a folder named off."""
    from rollcert.command.cli import corpus_option
    from rollcert.command.cli import main

    assert corpus_option("off") is None and corpus_option(" OFF ") is None
    assert corpus_option("./off") == Path("off") and corpus_option("corpus") == Path("corpus")
    monkeypatch.chdir(tmp_path)
    assert main(["certify", "specimen:best_effort_log", "--only", "R1", "--corpus", "off", "--in-process", "-q"]) == 1
    assert not (tmp_path / "off").exists()
