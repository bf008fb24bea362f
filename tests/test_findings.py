"""Known findings as data: findings files (``--set-aside FILE``).

A findings file must mean exactly what the Python findings it replaced meant
(the registered ``-focused`` targets now load one), a malformed file is a usage
error naming its line and key (exit 3, nothing run), and a subprocess target —
which has no Python to write a ``KnownFinding`` in — is certified with one.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rollcert.command.cli import main
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters import EMPTY_EDIT_NOT_RECORDED
from rollcert.targets.adapters import UNCHANGING_EDIT_SKIPPED
from rollcert.targets.adapters import UNDO_PAST_HORIZON_IGNORED
from rollcert.targets.findings import FINDINGS_DIR
from rollcert.targets.findings import FindingsError
from rollcert.targets.findings import load_findings
from rollcert.targets.findings import parse_findings

ROOT = Path(__file__).resolve().parent.parent

PAST_HORIZON = textwrap.dedent(
    """
    [[finding]]
    name = "undo_past_horizon_ignored"
    property = "R0"
    operation = "rollback"
    when = "steps > depth"
    reason = "undo with nothing left to undo does nothing and succeeds"
    """
)


def test_the_files_mean_what_the_python_findings_meant() -> None:
    """Every (state, operation) of a small space, valid and invalid calls alike."""
    by_name = {f.name: f for path in FINDINGS_DIR.glob("*.toml") for f in load_findings(path)}
    python = {f.name: f for f in (EMPTY_EDIT_NOT_RECORDED, UNCHANGING_EDIT_SKIPPED, UNDO_PAST_HORIZON_IGNORED)}
    states = []
    for initial, edits in itertools.product((b"", b"ab", b"aab"), ((), (Splice(0, 0, b"a"),), (Splice(0, 0, b"a"),) * 2)):
        state = initial_state(initial)
        for edit in edits:
            state = step(state, edit).state
        states.append(state)
    operations = [
        *(Splice(o, d, i) for o in (-1, 0, 1, 3, 4) for d in (-1, 0, 1, 2) for i in (b"", b"a", b"b")),
        *(Rollback(s) for s in (-1, 0, 1, 2, 3)),
        Splice(True, 0, b""),
        Rollback(True),
    ]
    compared = 0
    for name, finding in python.items():
        assert by_name[name].description == finding.description
        for state, operation in itertools.product(states, operations):
            assert by_name[name].applies(state, operation) == finding.applies(state, operation), (name, state, operation)
            compared += 1
    assert compared > 1000


def test_registered_focused_targets_load_their_findings_file() -> None:
    pytest.importorskip("textual")
    from rollcert.targets.resolve import resolve_target

    target = resolve_target("textual-focused")
    assert target.name == "textual-focused"
    # The file's findings, then the one only Python states (Focused.also): the history cap.
    assert [f.name for f in target.set_aside] == [
        *(f.name for f in load_findings(FINDINGS_DIR / "textual.toml")),
        "default_history_capped",
    ]
    assert target.set_aside[-1].unreachable == ("depth_past_64",)


def test_findings_files_are_package_data() -> None:
    """The -focused targets must work from an installed wheel, not only a checkout:
    their files sit in a package that pyproject installs with its *.toml data."""
    import tomllib

    import rollcert.targets.known_findings as known_findings

    assert Path(known_findings.__file__).resolve().parent == FINDINGS_DIR
    names = sorted(path.name for path in FINDINGS_DIR.glob("*.toml"))
    assert names == [
        "aider.toml", "codex.toml", "diff_applier.toml", "openhands.toml", "prompt_toolkit.toml", "pycrdt.toml",
        "textual.toml",
    ]
    for name in names:
        assert load_findings(FINDINGS_DIR / name)
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "rollcert.targets.known_findings" in setuptools["packages"]
    folder = setuptools["package-dir"]["rollcert.targets.known_findings"]
    assert (ROOT / folder).resolve() == FINDINGS_DIR
    assert "*.toml" in setuptools["package-data"]["*"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[finding]\nname = 'x'\n", "not valid TOML"),
        ("title = 'x'\n", "unknown key 'title'"),
        ("", "no [[finding]] table"),
        ("[[finding]]\nname = 'x'\nproperty = 'R0'\noperation = 'rollback'\n", "line 1: finding #1 has no 'reason'"),
        (PAST_HORIZON.replace('property = "R0"', 'property = "R8"'), "line 4, key 'property'"),
        (PAST_HORIZON.replace('"rollback"', '"undo"'), "line 5, key 'operation'"),
        (PAST_HORIZON.replace("steps > depth", "steps > dept"), "line 6, key 'when': unknown name 'dept'"),
        (PAST_HORIZON.replace("steps > depth", "__import__('os')"), "line 6, key 'when': cannot read"),
        (PAST_HORIZON.replace("steps > depth", "steps >"), "line 6, key 'when'"),
        (PAST_HORIZON + PAST_HORIZON, "line 10, key 'name': 'undo_past_horizon_ignored' is named twice"),
        (PAST_HORIZON.replace('reason = "', 'colour = "red"\nreason = "'), "line 7, key 'colour': unknown key"),
        (PAST_HORIZON.replace("reason = \"undo with nothing left to undo does nothing and succeeds\"", "reason = 3"),
         "line 7, key 'reason': must be a non-empty string"),
    ],
)
def test_a_malformed_file_names_its_line_and_key(text: str, message: str) -> None:
    with pytest.raises(FindingsError) as raised:
        parse_findings(text, "f.toml")
    assert message in str(raised.value)


@pytest.mark.parametrize("command", ["certify", "smoke", "explore", "replay"])
def test_a_malformed_file_is_a_usage_error_before_anything_runs(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "findings.toml"
    path.write_text(PAST_HORIZON.replace("steps > depth", "steps >> depth"), encoding="utf-8")
    # A server that does not exist: the findings file is refused before it would be started.
    argv = [command, "subprocess:/nonexistent/server", "--set-aside", str(path)]
    if command == "replay":
        from rollcert.stateful_tests.machines import RollbackFamily
        from rollcert.stateful_tests.traces import trace_json

        trace = trace_json(RollbackFamily(), BufferConfig(b"ab"), [Splice(0, 0, b"x"), Rollback(1)])
        argv += ["--trace", json.dumps(trace)]
    assert main(argv) == 3
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{path}, line 6, key 'when'" in error


SERVER = '''
"""The bundled buffer over the protocol, except that an undo past the start undoes
what there is and succeeds (a known-finding shape: undo past the horizon ignored)."""
import sys

from rollcert.targets.protocol_server import JournaledBufferServer, main


class ForgivingUndoServer(JournaledBufferServer):
    def do_rollback(self, buffer, steps):
        hosted = self._hosted(buffer).buffer
        if type(steps) is int and steps > hosted.depth:
            steps = hosted.depth
        hosted.rollback(steps)


sys.exit(main(ForgivingUndoServer()))
'''


def certify(tmp_path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    output = tmp_path / f"certificate{len(extra)}.json"
    result = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify",
         f"subprocess:{sys.executable} {tmp_path / 'server.py'}", "--only", "R0,R2",
         "--profile", "quick", "--seed", "0", "--json", str(output), *extra],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, 1, 2), result.stderr
    return result.returncode, json.loads(output.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_subprocess_target_is_certified_with_a_findings_file_and_no_python_wrapper(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    (tmp_path / "findings.toml").write_text(PAST_HORIZON, encoding="utf-8")

    status, plain = certify(tmp_path)
    assert status == 1 and plain["properties"]["R0"]["verdict"] == "violated"  # type: ignore[index]
    assert plain["target"]["set_aside"] == {}  # type: ignore[index]

    status, focused = certify(tmp_path, "--set-aside", str(tmp_path / "findings.toml"))
    verdicts = {pid: focused["properties"][pid]["verdict"] for pid in ("R0", "R2")}  # type: ignore[index]
    assert verdicts == {"R0": "passed", "R2": "passed"}, verdicts
    assert status == 0
    assert focused["target"]["set_aside"] == {  # type: ignore[index]
        "undo_past_horizon_ignored": "undo with nothing left to undo does nothing and succeeds"
    }
