"""The tool environments (targets/tool_envs.py), without installing anything.

Creating a real venv or npm folder needs the registries and takes a minute: that is
done by the slow tests of each tool (tests/test_agent_tools.py,
tests/test_mcp_filesystem.py). Here: what is refused before any installer runs, that a
folder whose stamp matches is reused as it is, that a changed pin rebuilds it, and
that a failing installer is a TargetError with its output's tail and the command to
run by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.targets import tool_envs
from rollcert.targets.adapter import TargetError
from rollcert.targets.tool_envs import node_environment
from rollcert.targets.tool_envs import python_environment


@pytest.fixture(autouse=True)
def _root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROLLCERT_TOOL_ENVS", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "-x"])
def test_a_bad_name_is_refused(name: str) -> None:
    with pytest.raises(TargetError, match="bad tool environment name"):
        python_environment(name, ["aider-chat==0.86.2"])


@pytest.mark.parametrize("pins", [[], ["aider-chat"], ["aider-chat>=0.86"]])
def test_python_requirements_must_be_exact_pins(pins: list[str]) -> None:
    with pytest.raises(TargetError, match="exact pins"):
        python_environment("tool", pins)


@pytest.mark.parametrize("pins", [[], ["@modelcontextprotocol/server-filesystem"], ["left-pad"]])
def test_node_packages_must_be_exact_pins(pins: list[str]) -> None:
    with pytest.raises(TargetError, match="exact pins"):
        node_environment("tool", pins)


def _fake_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record the installer commands instead of running them (the venv's python is made by hand)."""
    runs: list[list[str]] = []

    def run(command: list[str], what: str, by_hand: str, env: dict[str, str] | None = None) -> None:
        runs.append(command)
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True, exist_ok=True)
            (Path(command[3]) / "bin" / "python").write_text("")

    monkeypatch.setattr(tool_envs, "_run", run)
    return runs


def test_an_environment_is_made_once_and_rebuilt_when_its_pins_change(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = _fake_runs(monkeypatch)
    python = python_environment("tool", ["pkg==1.0"])
    assert python == tmp_path / "tool" / "bin" / "python"
    assert [command[-1] for command in runs] == [str(tmp_path / "tool"), "pkg==1.0"]
    assert capsys.readouterr().err.count("\n") == 1  # one progress line
    stamp = json.loads((tmp_path / "tool" / tool_envs.STAMP).read_text())
    assert stamp["pins"] == ["pkg==1.0"] and stamp["kind"] == "python"

    assert python_environment("tool", ["pkg==1.0"]) == python and len(runs) == 2  # reused as it is
    (tmp_path / "tool" / "leftover").write_text("")
    python_environment("tool", ["pkg==2.0"])  # a new pin: made again from scratch
    assert len(runs) == 4 and not (tmp_path / "tool" / "leftover").exists()


def test_a_folder_without_its_stamp_is_made_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    runs = _fake_runs(monkeypatch)
    python_environment("tool", ["pkg==1.0"])
    (tmp_path / "tool" / tool_envs.STAMP).unlink()  # an interrupted creation leaves no stamp
    python_environment("tool", ["pkg==1.0"])
    assert len(runs) == 4


def test_a_failing_installer_is_a_target_error_with_its_tail_and_the_command(tmp_path: Path) -> None:
    failing = [
        sys.executable,
        "-c",
        "import sys; print('\\n'.join(f'line {n}' for n in range(40))); sys.exit(3)",
    ]
    with pytest.raises(TargetError) as raised:
        tool_envs._run(failing, "installing", "pip install pkg==1.0")
    message = str(raised.value)
    assert "exit status 3" in message and "line 39" in message and "line 5\n" not in message
    assert message.endswith("run by hand: pip install pkg==1.0")


def test_a_tool_that_needs_another_python_gets_a_venv_made_by_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """OpenHands' editor needs Python 3.12: its venv is made by a real 3.12, found by version."""
    runs = _fake_runs(monkeypatch)
    found = tool_envs.find_interpreter("3.12")
    done = subprocess.run(
        [found, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    )
    assert done.stdout.strip() == "(3, 12)"
    python_environment("tool", ["pkg==1.0"], python_version="3.12")
    assert runs[0][0] == found
    stamp = json.loads((tmp_path / "tool" / tool_envs.STAMP).read_text())
    assert stamp["interpreter"] == os.path.realpath(found)


@pytest.mark.parametrize("version", ["3", "3.12.1", "python3.12", "4.0"])
def test_a_python_version_is_major_dot_minor(version: str) -> None:
    with pytest.raises(TargetError, match=r"major\.minor"):
        tool_envs.find_interpreter(version)


def test_a_python_version_that_is_not_here_says_what_was_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_ROOT", "/nonexistent")
    with pytest.raises(TargetError, match=r"needs Python 3\.99, and none runs here \(tried .*python3\.99"):
        tool_envs.find_interpreter("3.99")


def test_two_processes_wanting_the_same_environment_build_it_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two pytest-xdist workers (or ``certify -j 2`` on a served tool) asking at once:
    the second waits on the first's lock and then finds the environment made."""
    import threading
    import time

    runs = _fake_runs(monkeypatch)
    slow_run = tool_envs._run

    def run(command: list[str], what: str, by_hand: str, env: dict[str, str] | None = None) -> None:
        time.sleep(0.05)  # long enough for the other thread to arrive while this one builds
        slow_run(command, what, by_hand, env)

    monkeypatch.setattr(tool_envs, "_run", run)
    made: list[Path] = []
    threads = [
        threading.Thread(target=lambda: made.append(python_environment("tool", ["pkg==1.0"])))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == [tmp_path / "tool" / "bin" / "python"] * 2
    assert len(runs) == 2, runs  # one venv, one pip install: not two builds, the second undoing the first
