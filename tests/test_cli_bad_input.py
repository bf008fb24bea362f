"""Every subcommand's bad input: exit status 3, one line on stderr, no traceback,
and nothing run before the mistake is found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rollcert.command.cli import main

GOOD_TRACE = {"schema": "rollcert-trace/2", "family": "rollback", "initial": "", "operations": []}


def _trace(**fields: object) -> str:
    return json.dumps({**GOOD_TRACE, **fields})


BAD = {
    "no subcommand": [],
    "unknown subcommand": ["certfy"],
    "negative seed": ["certify", "--seed", "-1"],
    "seed not a number": ["certify", "--seed", "x"],
    "unknown profile": ["certify", "--profile", "fast"],
    "unknown property": ["certify", "--only", "R9"],
    "empty --only": ["certify", "--only", ","],
    "unwritable json": ["certify", "--json", "/nonexistent-dir/c.json"],
    "json path is a directory": ["certify", "--json", "/tmp"],
    "exhaustive depth 0": ["certify", "--exhaustive-depth", "0"],
    "missing module": ["certify", "no_such_module_here:TARGET"],
    "no colon": ["certify", "no_colon_here"],
    "unknown specimen": ["certify", "specimen:nope"],
    "unknown third-party": ["certify", "thirdparty:nope"],
    "empty subprocess": ["certify", "subprocess:"],
    "prove nan timeout": ["prove", "--timeout", "nan"],
    "prove inf timeout": ["prove", "--timeout", "inf"],
    "prove negative timeout": ["prove", "--timeout", "-1"],
    "prove unknown obligation": ["prove", "--only", "nope"],
    "explore negative budget": ["explore", "--time-budget", "-5"],
    "explore depth 0": ["explore", "--depth", "0"],
    "explore json directory": ["explore", "--json", "/tmp"],
    "replay not JSON": ["replay", "bundled", "--trace", "{"],
    "replay wrong schema": ["replay", "bundled", "--trace", json.dumps({"schema": "x"})],
    "replay capacity 0": ["replay", "bundled", "--trace", _trace(capacity=0)],
    "replay capacity -1": ["replay", "bundled", "--trace", _trace(capacity=-1)],
    "replay huge integer": ["replay", "bundled", "--trace", '{"schema":"rollcert-trace/2","initial":"","operations":[{"op":"rollback","steps":' + "9" * 5000 + "}]}"],
    "replay deep nesting": ["replay", "bundled", "--trace", "[" * 100_000],
    "replay bad base64": ["replay", "bundled", "--trace", _trace(initial="***")],
    "replay unknown operation": ["replay", "bundled", "--trace", _trace(operations=[{"op": "teleport"}])],
    "replay checkpoint never taken": ["replay", "bundled", "--trace", _trace(operations=[{"op": "rollback_to", "checkpoint": 5}])],
    "replay diff op in rollback trace": ["replay", "bundled", "--trace", _trace(operations=[{"op": "snapshot"}])],
    "replay certificate missing": ["replay", "bundled", "--certificate", "/nonexistent.json", "--property", "R2"],
    "replay certificate without property": ["replay", "bundled", "--certificate", "/nonexistent.json"],
    "html unwritable": ["html", "/nonexistent.json", "/nonexistent-dir/x.html"],
    "docs unwritable": ["docs", "--output", "/nonexistent-dir/tour.md"],
    "specimens unwritable": ["specimens", "--json", "/nonexistent-dir/k.json"],
}


@pytest.mark.parametrize("argv", list(BAD.values()), ids=list(BAD))
def test_bad_input_is_one_line_and_exit_3(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollcert: "), captured.err


def test_an_output_path_is_checked_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A long run must not end in 'cannot write': nothing is certified first."""
    assert main(["certify", "--json", str(tmp_path / "missing" / "c.json")]) == 3
    assert "certificate for" not in capsys.readouterr().out


@pytest.mark.parametrize("command", [["smoke", "bundled"], ["replay", "bundled", "--trace", "{}"], ["explore", "--depth", "1"]])
def test_a_bad_call_timeout_in_the_environment_is_a_usage_error_for_every_command(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rollcert smoke`` used to blame the adapter for it (exit 2, "the adapter raised UsageError")."""
    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", "inf")
    assert main(command) == 3
    captured = capsys.readouterr()
    assert captured.err.strip() == "rollcert: $ROLLCERT_CALL_TIMEOUT must be a finite number of seconds (0: no limit), got 'inf'"
    assert "adapter" not in captured.out


@pytest.mark.slow
def test_an_in_process_call_leaves_the_environment_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """``main([...])`` passes --deadline and --call-timeout to its workers through the
    environment; a test (or a program) that calls it must not find them set after."""
    monkeypatch.delenv("ROLLCERT_DEADLINE", raising=False)
    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", "30")
    main(["certify", "bundled", "--only", "R0", "--deadline", "120", "--call-timeout", "5", "-q"])
    assert "ROLLCERT_DEADLINE" not in os.environ
    assert os.environ["ROLLCERT_CALL_TIMEOUT"] == "30"


@pytest.mark.parametrize("command", [["certify"], ["certify", "--shard", "1/2", "--json", "part.json"], ["campaign", "--budget", "60s"]])
def test_a_target_whose_import_hangs_fails_at_the_deadline(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured before: ``rollcert certify hanging:TARGET`` never returned (the
    target is imported in rollcert's own process, before any worker and its deadline;
    smoke, replay and explore import it in their supervised worker)."""
    (tmp_path / "hanging_on_import.py").write_text("import time\ntime.sleep(3600)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ROLLCERT_DEADLINE", "0.3")  # what --deadline sets, for every command
    assert main([*command, "hanging_on_import:TARGET"]) == 3
    said = capsys.readouterr().err
    assert "'hanging_on_import:TARGET' did not finish within its deadline of 0.3 s (--deadline)" in said
