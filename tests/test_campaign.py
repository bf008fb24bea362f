"""``rollcert campaign``: rounds with fresh seeds until the budget, findings into the corpus."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.command.parallel import TERMINATE_GRACE
from rollcert.stateful_tests.campaign import parse_budget

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]


def test_budgets_are_read_in_hours_minutes_and_seconds() -> None:
    assert [parse_budget(t) for t in ("2h", "30m", "90s", "45", "1.5m")] == [7200, 1800, 90, 45, 90]
    for bad in ("", "0", "-1h", "2 weeks", "nan", "1e9"):
        with pytest.raises(ValueError):
            parse_budget(bad)


@pytest.mark.slow
def test_a_campaign_stops_within_its_budget_and_fills_the_corpus(tmp_path: Path) -> None:
    budget = 20.0
    completed = subprocess.run(
        [*ROLLCERT, "campaign", "specimen:first_match_scan", "--budget", f"{budget:.0f}s", "--only", "R2,R5",
         "--corpus", "corpus", "--json", "campaign.json", "--seed", "11"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    record = json.loads((tmp_path / "campaign.json").read_text())
    campaign = record["campaign"]
    # The budget is enforced by the command itself: a round still running at the
    # budget is stopped (its workers get TERMINATE_GRACE to go), not waited for.
    assert campaign["elapsed_seconds"] <= budget + TERMINATE_GRACE + 1.0
    lines = re.findall(r"^rollcert: campaign round (\d+) \(seed (\d+)\)", completed.stderr, re.MULTILINE)
    assert campaign["rounds"] == len(lines)
    assert [int(seed) for _, seed in lines] == [11 + k * 1_000_003 for k in range(len(lines))]  # fresh seeds
    r2 = campaign["properties"]["R2"]
    assert record["properties"]["R5"]["verdict"] in ("not_assessed", "unknown")
    if campaign["rounds"]:  # (a machine loaded enough to finish no round in 20 s has nothing to count)
        assert completed.returncode == 1
        assert r2["distinct_findings"] >= 1 and record["properties"]["R2"]["verdict"] == "violated"
        assert sorted(p.name for p in (tmp_path / "corpus").glob("*.json")) == sorted(f["file"] for f in r2["findings"])
        assert all(0 < f["seconds_to_find"] <= campaign["elapsed_seconds"] for f in r2["findings"])
    else:
        assert completed.returncode == 2 and record["properties"]["R2"]["verdict"] == "unknown"


def test_a_bad_budget_is_a_usage_error() -> None:
    from rollcert.command.cli import main

    assert main(["campaign", "bundled", "--budget", "soon"]) == 3
    assert main(["campaign", "bundled"]) == 3


def _unit_with(property_id: str, initial: bytes, harm: str, steps: int, round_number: int = 0) -> object:
    from rollcert.model.operations import operation_from_json
    from rollcert.stateful_tests.certify import RoundRecord
    from rollcert.stateful_tests.family import StepRecord
    from rollcert.stateful_tests.shards import Unit
    from rollcert.stateful_tests.shards import UnitResult
    from rollcert.stateful_tests.verdicts import Counterexample
    from rollcert.stateful_tests.verdicts import PropertyResult

    operation = operation_from_json({"op": "splice", "offset": 0, "delete_length": 0, "insert": "YQ=="})
    records = tuple(StepRecord(i, operation, b"", None, None, True, "", (), "") for i in range(steps))
    found = Counterexample(property_id, "specimen:x", initial, None, "reject", records, "why", broken=(property_id,),
                           harm=harm)
    result = PropertyResult(property_id, "violated", "", 10, 20, counterexample=found, reason="why")
    return UnitResult(Unit(property_id, round_number), result, RoundRecord(True, {}, [], 0))


def test_one_bug_met_in_three_rounds_is_one_finding_shown_by_its_shortest_trace() -> None:
    """Distinct by the rule broken and the harm done (finding_key), not by bytes:
    three rounds' different traces of one bug used to count as three findings."""
    from rollcert.stateful_tests.campaign import PropertyCampaign

    tally = PropertyCampaign("R2")
    assert tally.add(_unit_with("R2", b"x", "wrong bytes", 4), 0, 1.0, "specimen:x")  # type: ignore[arg-type]
    assert not tally.add(_unit_with("R2", b"yy", "wrong bytes", 3, 1), 1, 2.0, "specimen:x")  # type: ignore[arg-type]
    assert not tally.add(_unit_with("R2", b"zzz", "wrong bytes", 5, 2), 2, 3.0, "specimen:x")  # type: ignore[arg-type]
    assert tally.add(_unit_with("R2", b"w", "refused op went through", 6, 3), 3, 4.0, "specimen:x")  # type: ignore[arg-type]
    record = tally.to_json()
    assert record["distinct_findings"] == 2
    assert [f["round"] for f in record["findings"]] == [0, 3]  # numbered from 0, as the seeds are
    result = tally.result()
    assert result.verdict == "violated" and result.counterexample is not None
    assert result.counterexample.initial == b"yy"  # the shortest trace of the findings
    assert result.reason.startswith("2 distinct findings in 4 rounds")


def test_long_byte_strings_are_shortened_in_printed_output_only() -> None:
    from rollcert.reports.certificate import abbreviate_bytes

    long = b"a" * 7000
    shortened = abbreviate_bytes(f"Let the buffer be {long!r} before step 3; expected {b'ab'!r}")
    assert shortened.startswith("Let the buffer be b'aaaaaaaaaaaaaaaa…aaaaaaaa' (7,000 bytes, sha256:")
    assert shortened.endswith("before step 3; expected b'ab'")
    assert len(shortened) < 120
    assert abbreviate_bytes("b'" + "\\x00" * 20 + "'") == "b'" + "\\x00" * 20 + "'"  # short enough: as it was
