"""Portable certificates (issue 43): no absolute path of the run's machine in any format.

A certificate travels (a CI artefact, a bug report), so the corpus folder, its
files and a target's command line appear relative to the run's working
directory where they lie under it, else by their role (``<corpus>``) or, in a
command line, by the file's name; a replay command still runs as printed from
the directory where the run happened. And a run that printed a counterexample
with ``--corpus`` saves it, creating the folder, even when the machine that met
it was exploring another rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.stateful_tests.certify import PropertiesRunner
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.corpus import read_corpus
from rollcert.stateful_tests.corpus import replay_corpus
from rollcert.stateful_tests.progress_events import ProgressSink
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Target
from rollcert.targets.portable import portable_path
from rollcert.targets.portable import portable_target
from rollcert.targets.resolve import resolve_target

SPECIMEN = "specimen:fifo_replay"
ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]
#: fifo_replay's minimal R3 counterexample (what ``--only R3 --profile quick`` finds).
TRACE = {
    "schema": "rollcert-trace/2", "family": "rollback", "initial": "", "capacity": None, "policy": "reject",
    "operations": [
        {"op": "splice", "offset": 0, "delete_length": 0, "insert": "YQ=="},
        {"op": "splice", "offset": 1, "delete_length": 0, "insert": "YQ=="},
        {"op": "rollback", "steps": 2},
    ],
}
#: A findings file that sets aside nothing fifo_replay's R3 run meets.
FINDINGS = """\
[[finding]]
name = "positional_on_moved_base"
property = "S1"
operation = "apply_diff"
when = "positional and base_moved"
reason = "a positional diff on a moved base"
"""


def _leaks(text: str, *paths: str | Path) -> list[str]:
    """The machine-specific paths ``text`` holds: each of ``paths`` (as given and
    with links resolved), the working directory, and any home or temporary folder."""
    given = {str(p) for p in paths} | {os.path.realpath(p) for p in paths} | {os.getcwd()}
    return sorted(word for word in (*given, "/tmp/", "/root", "/home") if word in text)


def _r3_counterexample(target: Target, directory: Path) -> Counterexample:
    """fifo_replay's R3 counterexample, judged afresh from :data:`TRACE` (no search: fast)."""
    directory.mkdir()
    (directory / "seed.json").write_text(json.dumps({**TRACE, "property": "R3", "target": target.name}))
    result = replay_corpus(target, directory, ["R3"]).properties["R3"].result
    assert result is not None and result.counterexample is not None
    return result.counterexample


def _r4_machine_meeting(found: Counterexample) -> PropertiesRunner:
    """A property runner whose R4 machine passed its own rule but met R3's violation on the way."""

    def run(to_run: Sequence[str], profile: str, seed: int, progress: ProgressSink | None) -> dict[str, PropertyResult]:
        assert list(to_run) == ["R4"]
        result = PropertyResult("R4", "passed", "Divergence detection", 1, 3)
        result.found_elsewhere = {"R3": replace(found, property_id="R4")}
        return {"R4": result}

    return run


def _every_format(certificate: CertificateData) -> dict[str, str]:
    return {
        "text": render_text(certificate), "json": json.dumps(to_json(certificate)),
        "markdown": render_markdown(certificate), "junit": render_junit(certificate),
        "html": render_html(from_certificate_data(certificate)),
    }


def test_a_path_is_relative_under_the_working_directory_and_else_its_role(tmp_path: Path) -> None:
    here = tmp_path / "run"
    assert portable_path(here / "ci" / "corpus", "corpus", cwd=str(here)) == "ci/corpus"
    assert portable_path(here, "corpus", cwd=str(here)) == "."
    assert portable_path(tmp_path / "corpus", "corpus", cwd=str(here)) == "<corpus>"
    assert portable_path("/root/.cache/corpus", "corpus", cwd=str(here)) == "<corpus>"
    assert portable_path("ci/corpus", "corpus", cwd=str(here)) == "ci/corpus"  # typed relative: as typed
    assert portable_path("<corpus>", "corpus", cwd=str(here)) == "<corpus>"  # rendered once: the same again


def test_a_target_command_line_still_runs_from_the_run_directory(tmp_path: Path) -> None:
    here = str(tmp_path)
    server = f"{tmp_path}/srv/server.py"
    assert portable_target(f"subprocess:{server} --state={tmp_path}/state", cwd=here) == (
        "subprocess:./srv/server.py --state=state"  # a program keeps a slash, so no $PATH search
    )
    assert portable_target(f"subprocess:/opt/py/bin/python3 {server} lying", cwd=here) == (
        "subprocess:python3 srv/server.py lying"  # outside the run's directory: the file's name
    )
    assert portable_target("subprocess:python  -m my_server", cwd=here) == "subprocess:python  -m my_server"
    assert portable_target("specimen:fifo_replay", cwd=here) == "specimen:fifo_replay"
    shown = portable_target(f"subprocess:{server}", cwd=here)
    assert portable_target(shown, cwd=here) == shown


def test_every_format_of_a_target_typed_with_absolute_paths_names_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subprocess target and a corpus given by absolute paths: the certificate
    shows them from the working directory, and its replay command names the
    server as ``./srv/server.py``, which runs from there."""
    monkeypatch.chdir(tmp_path)
    specimen = resolve_target(SPECIMEN)
    found = _r3_counterexample(specimen, tmp_path / "seeds")
    typed = f"subprocess:{sys.executable} {tmp_path}/srv/server.py"
    target = replace(specimen, name=typed)
    corpus = tmp_path / "corpus"
    certificate = certify(
        target, only=("R4",), target_text=typed, run_properties=_r4_machine_meeting(found), corpus=corpus,
    )
    formats = _every_format(certificate)
    for name, text in formats.items():
        assert _leaks(text, tmp_path, sys.executable, corpus) == [], name
    record = json.loads(formats["json"])
    python = Path(sys.executable).name
    assert record["target"]["name"] == f"subprocess:{python} srv/server.py"
    assert record["corpus"]["directory"] == "corpus"
    assert record["properties"]["R3"]["counterexample"]["replay"].startswith(
        f"rollcert replay 'subprocess:{python} srv/server.py' --trace "
    )


def test_a_finding_met_under_another_rule_is_saved_in_a_corpus_not_yet_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The measured failure: ``--only R4`` printed R3's counterexample (met by
    the R4 machine) and ``--corpus`` saved nothing, not even the folder. Now it
    is saved as R3's, and the next replay of the corpus finds it again."""
    monkeypatch.chdir(tmp_path)
    target = resolve_target(SPECIMEN)
    found = _r3_counterexample(target, tmp_path / "seeds")
    corpus = tmp_path / "not" / "yet" / "corpus"
    certificate = certify(
        target, only=("R4",), target_text=SPECIMEN, run_properties=_r4_machine_meeting(found), corpus=corpus,
    )
    assert certificate.results["R3"].verdict == "violated"
    assert certificate.corpus is not None and certificate.corpus.added == 1
    entries, warnings = read_corpus(corpus, target.name)
    assert warnings == [] and [entry.property_id for entry in entries] == ["R3"]
    again = replay_corpus(target, corpus, ["R3"]).properties["R3"]
    assert again.result is not None and again.result.verdict == "violated"


@pytest.mark.slow
@pytest.mark.parametrize("where", ["beside", "elsewhere"])
def test_a_certification_with_absolute_paths_writes_no_absolute_path_and_replays(tmp_path: Path, where: str) -> None:
    """``rollcert certify`` with ``--corpus`` and ``--set-aside`` given as absolute
    paths, run from the folder that holds them (``beside``) and from another one
    (``elsewhere``): no format holds a path of this machine, the corpus folder is
    created with the trace, and the JSON's replay command, run from the same
    directory, replays the violation (about 3 s)."""
    run = tmp_path / "run"
    cwd = run if where == "beside" else tmp_path / "elsewhere"
    cwd.mkdir(parents=True, exist_ok=True)
    run.mkdir(exist_ok=True)
    findings, corpus = run / "findings.toml", run / "corpus"
    findings.write_text(FINDINGS)
    outputs = {option: run / f"certificate.{suffix}" for option, suffix in
               (("--json", "json"), ("--markdown", "md"), ("--junit", "xml"), ("--html", "html"))}
    completed = subprocess.run(
        [*ROLLCERT, "certify", SPECIMEN, "--only", "R3", "--profile", "quick", "--corpus", str(corpus),
         "--set-aside", str(findings), *(word for pair in outputs.items() for word in map(str, pair)), "-q"],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    shown = {"text": completed.stdout, **{option: path.read_text() for option, path in outputs.items()}}
    for name, text in shown.items():
        assert _leaks(text, tmp_path, corpus, findings, cwd) == [], name
    record = json.loads(shown["--json"])
    assert len(list(corpus.glob("*.json"))) == record["corpus"]["added"] >= 1  # one trace per distinct finding
    assert record["corpus"]["directory"] == ("corpus" if where == "beside" else "<corpus>")
    replay = record["properties"]["R3"]["counterexample"]["replay"]
    bin_dir = str(Path(sys.executable).parent)  # where `rollcert` is installed beside this Python
    replayed = subprocess.run(
        replay, shell=True, cwd=cwd, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
    )
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "VIOLATED at step 3 of 3" in replayed.stdout
