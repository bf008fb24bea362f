"""``pytest --rollcert-target TARGET``: one test item per property, spread by pytest-xdist.

Each test runs pytest in a subprocess, in an empty directory, so that only the
plugin's items are collected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BROKEN_TARGET = '''
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target


def broken(config):
    raise HarnessError("the editor's process is gone")


BROKEN = Target("broken", "1", frozenset({Capability.CORE}), broken)
'''


def _pytest(directory: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *arguments],
        cwd=directory, capture_output=True, text=True, timeout=600,
    )


@pytest.mark.slow
def test_one_item_per_property_named_by_its_id_in_the_suite_order(tmp_path: Path) -> None:
    listings = [
        _pytest(tmp_path, "--collect-only", "-q", "--rollcert-target", "bundled", "--rollcert-only", "S1,r2,R0")
        for _ in range(2)
    ]
    assert listings[0].returncode == 0, listings[0].stdout + listings[0].stderr
    first, second = ([line for line in listing.stdout.splitlines() if "::" in line] for listing in listings)
    assert first == ["rollcert::bundled::R0", "rollcert::bundled::R2", "rollcert::bundled::S1"]
    assert second == first  # nothing random: every xdist worker collects the same


@pytest.mark.slow
def test_no_items_without_the_option(tmp_path: Path) -> None:
    completed = _pytest(tmp_path, "--collect-only", "-q")
    assert "rollcert::" not in completed.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--rollcert-only", "R9"], "--rollcert-only takes property IDs"),
        (["--rollcert-seed", "-1"], "--rollcert-seed takes a whole number"),
        (["--rollcert-target", "no_such_module:TARGET"], "cannot import module 'no_such_module'"),
    ],
)
@pytest.mark.slow
def test_bad_options_are_usage_errors(tmp_path: Path, arguments: list[str], message: str) -> None:
    if "--rollcert-target" not in arguments:
        arguments = ["--rollcert-target", "bundled", *arguments]
    completed = _pytest(tmp_path, "--collect-only", *arguments)
    assert completed.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in completed.stderr


@pytest.mark.slow
def test_a_harness_error_is_an_error_not_a_failure(tmp_path: Path) -> None:
    (tmp_path / "broken_target.py").write_text(BROKEN_TARGET)
    completed = _pytest(tmp_path, "--rollcert-target", "broken_target:BROKEN", "--rollcert-only", "R0,S1")
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED
    assert "ERROR rollcert::broken_target:BROKEN::R0" in completed.stdout
    assert "the adapter or the SUT broke" in completed.stdout and "the editor's process is gone" in completed.stdout
    assert "SKIPPED" in completed.stdout and "S1 not assessed: the target lacks the capability: diffs" in completed.stdout
    assert "1 skipped, 1 error" in completed.stdout


@pytest.mark.slow
def test_bundled_under_xdist_runs_one_item_per_property_and_passes(tmp_path: Path) -> None:
    completed = _pytest(tmp_path, "--rollcert-target", "bundled", "--rollcert-only", "R0,R1", "-p", "xdist", "-n", "2")
    assert completed.returncode == pytest.ExitCode.OK, completed.stdout + completed.stderr
    assert "2 workers [2 items]" in completed.stdout
    assert "PASSED rollcert::bundled::R0" in completed.stdout and "PASSED rollcert::bundled::R1" in completed.stdout
    assert "2 passed" in completed.stdout


@pytest.mark.slow
def test_a_specimen_fails_the_item_of_the_property_it_breaks(tmp_path: Path) -> None:
    """specimen:fifo_replay replays records oldest first: R3 is broken, R1 is not."""
    completed = _pytest(
        tmp_path, "--rollcert-target", "specimen:fifo_replay", "--rollcert-only", "R1,R3,S1", "-p", "xdist", "-n", "2"
    )
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED, completed.stdout
    assert "FAILED rollcert::specimen:fifo_replay::R3" in completed.stdout
    assert "PASSED rollcert::specimen:fifo_replay::R1" in completed.stdout
    assert "Counterexample for R3" in completed.stdout
    assert "Replay: rollcert replay specimen:fifo_replay --trace" in completed.stdout
    assert "Traceback" not in completed.stdout
    assert "SKIPPED" in completed.stdout and "S1 not assessed" in completed.stdout
    assert "1 failed, 1 passed, 1 skipped" in completed.stdout
