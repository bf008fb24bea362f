"""Certificates stand alone (SPEC §6a): ``html``, ``explain CERT.json`` and the
renderers draw a JSON certificate from what it records, and never import, start
or run the target it names; replaying one takes the target on the command line.

The certificates are real ones: specimens certified here, in this process, on
the properties their stories break, then written with ``to_json``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rollcert.command.cli import main
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import certify
from rollcert.targets.resolve import resolve_target

#: Every test here reads certificates made by a live certification (once per
#: worker, about 4 s): the slow tier.
pytestmark = pytest.mark.slow

SPECIMENS = {
    "fifo_replay": ("R3", "R0"),
    "write_set_only": ("S1",),
    "no_divergence_check": ("R4",),
}


@cache
def certified(specimen: str) -> CertificateData:
    return certify(resolve_target(f"specimen:{specimen}"), profile="quick", seed=0, only=SPECIMENS[specimen])


def certificate_json(specimen: str) -> dict[str, Any]:
    return json.loads(json.dumps(to_json(certified(specimen))))


def write(path: Path, record: object) -> Path:
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("specimen", sorted(SPECIMENS))
def test_a_certificate_read_back_renders_as_the_run_did(specimen: str) -> None:
    run = certified(specimen)
    assert any(result.verdict == "violated" for result in run.results.values())
    stored = certificate_from_json(certificate_json(specimen)).data
    assert render_markdown(stored) == render_markdown(run)
    assert render_text(stored) == render_text(run)
    assert render_junit(stored) == render_junit(run)


def test_every_step_records_the_models_outcomes_and_the_targets(specimen: str = "fifo_replay") -> None:
    for step in certificate_json(specimen)["properties"]["R3"]["counterexample"]["steps"]:
        assert {"operation", "before", "expected", "actual", "ok"} <= set(step)
        for side in ("expected", "actual"):
            assert {"error", "buffer", "depth", "revision"} <= set(step[side])


def _hostile_names(tmp_path: Path) -> dict[str, str]:
    """Target names that run something if anything resolves them."""
    (tmp_path / "planted.py").write_text(
        f"from pathlib import Path\nPath({str(tmp_path / 'IMPORTED')!r}).touch()\nTARGET = None\n", encoding="utf-8"
    )
    return {
        "subprocess": f"subprocess:sh -c 'touch {tmp_path / 'RAN'}'",
        "module": "planted:TARGET",
    }


@pytest.mark.parametrize("kind", ["subprocess", "module"])
@pytest.mark.parametrize("specimen", sorted(SPECIMENS))
def test_html_and_explain_never_run_the_target_a_certificate_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str, specimen: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    record = certificate_json(specimen)
    record["target"]["name"] = _hostile_names(tmp_path)[kind]
    path = write(tmp_path / "c.json", record)
    assert main(["html", str(path), str(tmp_path / "c.html")]) == 0
    assert main(["explain", str(path), "--all"]) == 1  # a violation explained
    out = capsys.readouterr().out
    assert "Broken:" in out
    assert not (tmp_path / "RAN").exists() and not (tmp_path / "IMPORTED").exists()
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert 'class="step failing"' in page


def test_a_passed_certificate_naming_a_command_is_read_without_running_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    record = certificate_json("fifo_replay")
    record["target"]["name"] = _hostile_names(tmp_path)["subprocess"]
    for result in record["properties"].values():
        result.pop("counterexample", None)
        result["verdict"] = "passed"
    path = write(tmp_path / "c.json", record)
    assert main(["html", str(path), str(tmp_path / "c.html")]) == 0
    assert main(["explain", str(path)]) == 2  # nothing to explain
    assert not (tmp_path / "RAN").exists()
    assert "nothing is violated" in capsys.readouterr().out


def test_a_certificate_without_recorded_outcomes_says_to_replay_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = certificate_json("fifo_replay")
    for step in record["properties"]["R3"]["counterexample"]["steps"]:
        for key in ("before", "expected", "actual", "ok", "allowed"):
            step.pop(key, None)
    path = write(tmp_path / "old.json", record)
    for command in (["explain", str(path), "--property", "R3"], ["html", str(path), str(tmp_path / "c.html")]):
        assert main(command) == 2
        said = capsys.readouterr().out.strip()
        assert len(said.splitlines()) == 1 and "rollcert replay TARGET --certificate CERT --property R3" in said


def test_replay_takes_the_target_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    record = certificate_json("fifo_replay")
    record["target"]["name"] = _hostile_names(tmp_path)["subprocess"]
    path = write(tmp_path / "c.json", record)
    assert main(["replay", "specimen:fifo_replay", "--certificate", str(path), "--property", "R3", "--in-process"]) == 1
    assert main(["replay", "bundled", "--certificate", str(path), "--property", "R3", "--in-process"]) == 0
    assert not (tmp_path / "RAN").exists()
    assert main(["replay", "bundled", "--certificate", str(path), "--property", "S2", "--in-process"]) == 3
    assert "no counterexample for 'S2'" in capsys.readouterr().err


def test_a_target_flooding_its_buffer_is_recorded_as_a_window() -> None:
    """The failing step's actual buffer is the target's: a megabyte of it is kept as
    the window a person is shown, and the reader says what was left out."""
    from dataclasses import replace

    from rollcert.reports.certificate import RECORDED_BYTES

    run = certified("fifo_replay")
    result = run.results["R3"]
    assert result.counterexample is not None
    last = result.counterexample.steps[-1]
    flooded = replace(last, actual=replace(last.actual, buffer=b"z" * (1 << 20)))
    counterexample = replace(result.counterexample, steps=(*result.counterexample.steps[:-1], flooded))
    flood = CertificateData(run.target, run.profile, run.seed, {"R3": replace(result, counterexample=counterexample)})
    record = json.loads(json.dumps(to_json(flood)))
    assert len(json.dumps(record)) < 4 * RECORDED_BYTES
    stored = certificate_from_json(record).data.results["R3"].counterexample
    assert stored is not None
    assert "of this 1048576-byte buffer" in stored.steps[-1].sut_message
