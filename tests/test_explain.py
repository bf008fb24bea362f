"""``rollcert explain``: the walkthrough of a counterexample, on real specimens,
through the real command (a subprocess), from a target and from a certificate."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.reports.explain import Span
from rollcert.reports.explain import from_certificate_data
from rollcert.reports.explain import render_text
from rollcert.reports.explain import run_interactive
from rollcert.reports.explain import show_marked
from rollcert.stateful_tests.certify import certify
from rollcert.targets.resolve import resolve_target


def rollcert(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", *arguments],
        capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.mark.slow
def test_first_match_scan_shows_the_wrong_restore_position_and_names_r2() -> None:
    done = rollcert("explain", "specimen:first_match_scan", "--all")
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "Broken:   R2 Offset stability" in out
    # Which counterexample the search finds depends on the seed; what the walkthrough
    # must show of it does not: the recorded offset, and a first difference elsewhere.
    wrong = re.search(r"Wrong restore position: the record says offset (\d+), and the implementation's "
                      r"result first differs from the model's at offset (\d+)", out)
    assert wrong is not None, out
    assert wrong.group(1) != wrong.group(2)
    assert re.search(rf"#1 offset {wrong.group(1)}, removed b'[^']*', inserted b'[^']*'", out), out  # the live record
    assert "⟦" in out and ("{+" in out or "[-" in out)  # the edited span and the corrupted bytes are marked


@pytest.mark.slow
def test_a_diff_specimen_names_s1_and_the_conflicting_region() -> None:
    done = rollcert("explain", "specimen:write_set_only", "--property", "S1", "--all")
    assert done.returncode == 1, done.stderr
    assert "Broken:   S1 Read-set staleness rule" in done.stdout
    # S1's first finding (explain walks every one: issue 43).
    first = done.stdout.split("=== Finding 2 of ")[0]
    # Which stale read the search finds depends on the search; what the walkthrough
    # must show of it does not: the region of B0, its bytes, and the same region in
    # the failing step's diff.
    region = re.search(r"Conflicting region \[(\d+), (\d+)\) of the snapshot B0 \(b'([^']*)'\)", first)
    assert region is not None, done.stdout
    start, end, quoted = int(region.group(1)), int(region.group(2)), region.group(3)
    base = re.findall(r"base B0   '([^']*)'", first)[-1]  # the failing step's snapshot
    assert end - start > 0 and base[start:end] == quoted, (base, start, end, quoted)


@pytest.mark.slow
def test_explain_reads_a_json_certificate_and_replays_it(tmp_path: Path) -> None:
    certificate = tmp_path / "c.json"
    made = rollcert("certify", "specimen:no_divergence_check", "--only", "R4", "--json", str(certificate))
    assert made.returncode == 1, made.stderr
    done = rollcert("explain", str(certificate), "--all")
    assert done.returncode == 1, done.stderr
    assert "Broken:   R4 Divergence detection" in done.stdout
    assert "behind the log's back at depth 1" in done.stdout
    replay = json.loads(certificate.read_text())["properties"]["R4"]["counterexample"]["replay"]
    assert f"Replay: {replay}" in done.stdout


@pytest.mark.slow
def test_nothing_to_explain_is_said_plainly() -> None:
    done = rollcert("explain", "bundled", "--property", "R2", "--all")
    assert done.returncode == 2
    assert "R2 is passed: there is no counterexample to explain" in done.stdout


@pytest.mark.slow
def test_interactive_mode_waits_for_enter_between_steps(capsys: object) -> None:
    walk = from_certificate_data(certify(resolve_target("specimen:first_match_scan"), only=("R2",)))
    prompts: list[str] = []

    def enter(prompt: str) -> str:
        prompts.append(prompt)
        return ""

    run_interactive(walk, enter)
    assert len(prompts) == len(walk.steps) - 1  # one Enter between consecutive steps
    shown = capsys.readouterr().out  # type: ignore[attr-defined]
    assert shown.count("Step ") == len(walk.steps)
    assert render_text(walk).count("Step ") == len(walk.steps)


def test_marks_show_empty_spans_as_places() -> None:
    assert show_marked(b"abc", [Span(1, 1, "inserted"), Span(2, 3, "corrupt")]) == "'a{++}b⟦c⟧'"
