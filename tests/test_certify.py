"""`rollcert certify`: verdicts, certificates, exit statuses, and a harness that
survives misbehaving implementations (Bowtie-style fakes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from rollcert.command.cli import main
from rollcert.model.errors import JournalError
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import to_json
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.traces import parse_trace
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

ASSESSED = ALL_PROPERTY_IDS  # the bundled implementation must pass every property


@pytest.fixture(scope="module")
def bundled_certificate_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, object], Path]:
    directory = tmp_path_factory.mktemp("certificate")
    path = directory / "c.json"
    status = main(["certify", "--json", str(path), "--markdown", str(directory / "c.md"), "--junit", str(directory / "c.xml")])
    return status, json.loads(path.read_text()), directory


@pytest.mark.slow
def test_bundled_implementation_is_certified(bundled_certificate_file: tuple[int, dict[str, object], Path]) -> None:
    status, certificate, _ = bundled_certificate_file
    assert certificate["schema"] == "rollcert-certificate/2"
    properties = certificate["properties"]
    assert isinstance(properties, dict)
    verdicts = {pid: properties[pid]["verdict"] for pid in properties}
    assert verdicts == {p: "passed" for p in ASSESSED}
    assert status == 0
    for pid in ASSESSED:
        coverage = properties[pid]["coverage"]
        assert coverage and all(count > 0 for count in coverage.values()), (pid, coverage)
        assert properties[pid]["examples"] > 0 and properties[pid]["steps"] > 0


@pytest.mark.slow
def test_markdown_and_junit_are_written(bundled_certificate_file: tuple[int, dict[str, object], Path]) -> None:
    _, _, directory = bundled_certificate_file
    assert "| R2 Offset stability | **passed** |" in (directory / "c.md").read_text()
    suite = ElementTree.fromstring((directory / "c.xml").read_text())
    assert suite.get("failures") == "0" and suite.get("skipped") == "0"  # every property assessed


@pytest.mark.slow
def test_specimen_certificate_carries_a_replayable_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    assert main(["certify", "specimen:fifo_replay", "--only", "R3", "--json", str(path)]) == 1
    printed = capsys.readouterr().out
    assert "⟦" in printed and "Replay: rollcert replay" in printed
    counterexample = json.loads(path.read_text())["properties"]["R3"]["counterexample"]
    steps = counterexample["steps"]
    assert 1 <= len(steps) <= 6 and steps[-1]["ok"] is False
    assert counterexample["expected"] != counterexample["actual"] or steps[-1]["expected"] != steps[-1]["actual"]
    # The printed one-line command replays it: violated on the specimen, clean on the bundled buffer.
    trace = counterexample["replay"].split(" --trace ", 1)[1].strip("'")
    parse_trace(trace)
    assert main(["replay", "specimen:fifo_replay", "--trace", trace]) == 1
    assert main(["replay", "bundled", "--trace", trace]) == 0
    assert main(["replay", "specimen:fifo_replay", "--certificate", str(path), "--property", "R3"]) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["certify", "no_such_module_xyz:TARGET"],
        ["certify", "specimen:nope"],
        ["certify", "json:dumps"],
        ["certify", "nonsense"],
        ["certify", "--profile", "forever"],
        ["certify", "--only", "R9"],
        ["replay", "bundled", "--trace", "{not json"],
        ["explode"],
    ],
)
def test_usage_and_target_errors_exit_3_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 3
    error = capsys.readouterr().err.strip()
    assert error and "Traceback" not in error


@pytest.mark.slow
def test_console_script_runs_in_a_real_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "specimen:best_effort_log", "--only", "R1"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "R1        violated" in result.stdout


# -- the harness itself, against fake misbehaving implementations -------------------------


class _Fake(UnsupportedOperations):
    def __init__(self, config: BufferConfig) -> None:
        self.data = bytearray(config.initial)
        self.log: list[tuple[int, bytes, int]] = []

    def read(self) -> bytes:
        return bytes(self.data)

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if not (0 <= offset <= len(self.data) and 0 <= delete_length <= len(self.data) - offset):
            raise ValueError("out of range")
        self.log.append((offset, bytes(self.data[offset : offset + delete_length]), len(insert)))
        self.data[offset : offset + delete_length] = insert

    def rollback(self, steps: int) -> None:
        if steps > len(self.log):
            from rollcert.model.errors import UnreachableRollbackError

            raise UnreachableRollbackError("past horizon")
        for _ in range(steps):
            offset, removed, length = self.log.pop()
            self.data[offset : offset + length] = removed


class _Crashing(_Fake):
    def rollback(self, steps: int) -> None:
        raise HarnessError("the SUT process died")


class _LyingRead(_Fake):
    def read(self) -> bytes:
        return "not bytes"  # type: ignore[return-value]


class _UndocumentedError(_Fake):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(self.log) >= 2:
            raise IndexError("list index out of range")
        super().splice(offset, delete_length, insert)


class _Flaky(_Fake):
    calls = 0

    def rollback(self, steps: int) -> None:
        type(self).calls += 1
        if type(self).calls % 7 == 0:
            self.data += b"?"
            return
        super().rollback(steps)


def _target(cls: type[_Fake]) -> Target:
    return Target(cls.__name__, "test", frozenset({Capability.CORE}), cls)


@pytest.mark.slow
def test_core_only_target_is_assessed_on_what_it_has() -> None:
    certificate = certify(_target(_Fake), only=("R0", "R1", "R2", "R3"))
    verdicts = {p: r.verdict for p, r in certificate.results.items()}
    assert verdicts["R2"] == "passed" and verdicts["R0"] == "passed"
    assert verdicts["R1"] == "not_assessed" and verdicts["R3"] == "not_assessed"
    assert "journal_faults" in certificate.results["R1"].reason
    assert certificate.exit_status == 0


@pytest.mark.parametrize("cls", [_Crashing, _LyingRead])
def test_broken_adapters_are_errors_not_violations(cls: type[_Fake]) -> None:
    certificate = certify(_target(cls), only=("R2",))
    assert certificate.results["R2"].verdict == "error", certificate.results["R2"].reason
    assert certificate.exit_status == 2


@pytest.mark.slow
def test_undocumented_exception_is_a_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    # R2's machine keeps exploring its own property after it met R0's finding: the
    # whole quick budget on this target took 150 s. One short round shows the rule.
    monkeypatch.setitem(PROFILES, "quick", Profile("quick", max_examples=20, steps_per_example=10, rounds=1))
    certificate = certify(_target(_UndocumentedError), only=("R2",))
    # An undocumented exception breaks no rule's clause in particular: it is R0's
    # finding (reported although only R2 was asked for), not R2's (SPEC §6a).
    assert certificate.results["R2"].verdict != "violated"
    assert certificate.results["R2"].found_elsewhere["R0"].broken == ("R0",)
    result = certificate.results["R0"]
    assert result.verdict == "violated" and result.found_by == "R2"
    assert result.counterexample is not None and "undocumented:IndexError" in result.reason
    assert result.reason.startswith("found while exploring R2")
    assert certificate.exit_status == 1


@pytest.mark.slow
def test_nondeterministic_sut_is_reported_not_crashed() -> None:
    result = certify(_target(_Flaky), only=("R2",)).results["R2"]
    assert result.verdict in ("violated", "error")


@pytest.mark.slow
def test_unknown_when_situations_are_never_reached() -> None:
    """A SUT whose every splice is refused never reaches a rollback: not a pass."""

    class Refusing(_Fake):
        def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
            raise JournalError("read-only")

    result = certify(_target(Refusing), only=("R2",)).results["R2"]
    assert result.verdict in ("violated", "unknown")


@pytest.mark.slow
def test_certificate_json_round_trips_for_every_verdict() -> None:
    certificate = certify(_target(_Crashing), only=("R1", "R2"))
    record = to_json(certificate)
    json.dumps(record)
    assert {r["verdict"] for r in record["properties"].values()} == {"error", "not_assessed"}
    assert "rollcert certificate" in render_markdown(certificate)
    assert ElementTree.fromstring(render_junit(certificate)).get("errors") == "1"


def test_bundled_target_constant() -> None:
    assert BUNDLED.capabilities == frozenset(Capability)  # every property can be assessed
