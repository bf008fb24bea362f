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
