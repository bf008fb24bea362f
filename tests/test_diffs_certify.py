"""Certifying S1–S3: verdicts, the precision figure, counterexamples, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollcert.command.cli import main
from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import Placed
from rollcert.reports.certificate import format_counterexample
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import to_json
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED
from rollcert.targets.adapters.bundled_diffs import DIFF_SPECIMEN_CAPABILITIES
from rollcert.targets.adapters.bundled_diffs import specimen_adapter
from rollcert.targets.resolve import resolve_target

QUICK = PROFILES["quick"]


class RejectsEveryStaleDiff(DiffableBuffer):
    """Sound but imprecise: it never rebases, so it refuses every diff on a changed base."""

    def _rebase(self, diff: AuthoredDiff) -> list[Placed]:
        raise self._stale(diff, "this implementation does not rebase")


CAUTIOUS = Target(
    "cautious",
    "test",
    DIFF_SPECIMEN_CAPABILITIES,
    lambda config: specimen_adapter(RejectsEveryStaleDiff, config),
)


@pytest.mark.parametrize("property_id", ["S1", "S2", "S3"])
@pytest.mark.slow
def test_the_bundled_implementation_passes_with_full_precision(property_id: str) -> None:
    result = certify_property(BUNDLED, property_id, QUICK, 0)
    assert result.verdict == "passed", result.reason
    assert all(result.coverage.values()), result.coverage
    assert result.figures["precision"] == 1.0 and result.figures["rule_accepts"] > 0


@pytest.mark.slow
def test_a_sound_but_imprecise_implementation_passes_with_its_precision_reported() -> None:
    result = certify_property(CAUTIOUS, "S1", QUICK, 0)
    assert result.verdict == "passed", result.reason
    assert 0 < result.figures["precision"] < 1
    assert result.figures["sut_accepts"] < result.figures["rule_accepts"]


def test_a_target_without_diffs_is_not_assessed() -> None:
    plain = Target("plain", "test", frozenset({Capability.CORE}), BUNDLED.factory)
    certificate = certify(plain, only=("S1", "S2", "S3"))
    assert {r.verdict for r in certificate.results.values()} == {"not_assessed"}


@pytest.mark.slow  # a whole S1 certification of the specimen: 1-3 s idle, 7.5 s in a loaded CI run
def test_a_diff_counterexample_shows_base_live_base_diff_and_wrong_result() -> None:
    target = resolve_target("specimen:write_set_only")
    certificate = certify(target, only=("S1",))
    result = certificate.results["S1"]
    assert result.verdict == "violated" and result.counterexample is not None
    text = format_counterexample(result.counterexample)
    for label in ("base B0", "live B", "diff ", "rule ", "expected", "actual", "Replay: rollcert replay"):
        assert label in text, text
    assert "reject (StaleBaseError)" in text
    record = to_json(certificate)["properties"]["S1"]
    assert record["counterexample"]["trace"]["family"] == "diffs"
    applies = [s for s in record["counterexample"]["steps"] if s["operation"]["op"] == "apply_diff"]
    assert applies and "base B0" in applies[-1]["context"] and applies[-1]["context"]["diff"]
    assert "S1" in render_markdown(certificate)


@pytest.mark.slow
def test_the_replay_command_reproduces_a_diff_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = resolve_target("specimen:positional_on_advanced_base")
    certificate = certify(target, only=("S1",))
    path = tmp_path / "c.json"
    path.write_text(json.dumps(to_json(certificate)), encoding="utf-8")
    trace = json.dumps(to_json(certificate)["properties"]["S1"]["counterexample"]["trace"])
    assert main(["replay", "specimen:positional_on_advanced_base", "--trace", trace]) == 1
    assert "VIOLATED" in capsys.readouterr().out
    assert main(["replay", "specimen:positional_on_advanced_base", "--certificate", str(path), "--property", "S1"]) == 1
    assert main(["replay", "bundled", "--trace", trace]) == 0
    bad = json.dumps({"schema": "rollcert-diff-trace/1", "initial": "YWJj", "operations": [{"op": "apply_diff"}]})
    assert main(["replay", "bundled", "--trace", bad]) == 3


@pytest.mark.slow
def test_certificate_json_carries_the_precision_figure(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    assert main(["certify", "--only", "S1", "--json", str(path)]) == 0
    record = json.loads(path.read_text(encoding="utf-8"))["properties"]["S1"]
    assert record["verdict"] == "passed" and record["figures"]["precision"] == 1.0
