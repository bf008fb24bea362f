"""The README's adapter example, certified as a new user would run it.

The example is read out of README.md here (not copied), so the README and this
test cannot drift: the code a user copies is the code certified. It is put in
front of two small editors written below, each with its own undo stack: a
correct one must come out ``passed`` on every property it declares (no false
finding from an invalid call rollcert makes on purpose), and one whose undo
restores at a stale offset must come out ``violated``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

EDITOR = '''
"""A tiny editor with an undo stack of (offset, removed bytes, inserted length)."""


class NothingToUndo(Exception):
    """An undo asked for more steps than the history holds."""


class MyEditor:
    def __init__(self, initial: bytes) -> None:
        self._text = bytearray(initial)
        self._undo: list[tuple[int, bytes, int]] = []
        self._last_offset = 0

    def text(self) -> bytes:
        return bytes(self._text)

    def replace(self, offset: int, delete_length: int, insert: bytes) -> None:
        removed = bytes(self._text[offset : offset + delete_length])
        self._text[offset : offset + delete_length] = insert
        self._undo.append((offset, removed, len(insert)))
        self._last_offset = offset

    def undo(self, steps: int = 1) -> None:
        if steps > len(self._undo):
            raise NothingToUndo(f"{steps} undo steps asked, {len(self._undo)} recorded")
        for _ in range(steps):
            offset, removed, inserted = self._undo.pop()
            offset = OFFSET_ON_UNDO
            self._text[offset : offset + inserted] = removed

    def undo_depth(self) -> int:
        return len(self._undo)
'''

CORRECT = EDITOR.replace("OFFSET_ON_UNDO", "offset")
#: The bug: undo restores at the offset of the newest edit, whichever record it pops.
STALE_OFFSET = EDITOR.replace("OFFSET_ON_UNDO", "self._last_offset")


def readme_example() -> str:
    """The ```python block of README.md that starts with ``# my_adapter.py``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# my_adapter\.py\n.*?)```", readme, re.DOTALL)
    assert len(blocks) == 1, "README.md must hold exactly one '# my_adapter.py' example"
    return blocks[0]


def project(directory: Path, editor: str) -> Path:
    directory.mkdir()
    (directory / "my_editor.py").write_text(editor, encoding="utf-8")
    (directory / "my_adapter.py").write_text(readme_example(), encoding="utf-8")
    return directory


def certify(directory: Path) -> tuple[int, dict[str, object]]:
    """``rollcert certify my_adapter:TARGET`` from ``directory``, as the README says (no PYTHONPATH),
    on R0 and R2: the rules the example's stale undo breaks (every property of the correct
    editor took over two minutes, a search the tests leave to the README's main command)."""
    result = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "my_adapter:TARGET",
         "--profile", "quick", "--seed", "0", "--only", "R0,R2", "--json", "certificate.json"],
        cwd=directory, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    certificate = json.loads((directory / "certificate.json").read_text(encoding="utf-8"))
    return result.returncode, certificate


def verdicts(certificate: dict[str, object]) -> dict[str, str]:
    properties = certificate["properties"]
    assert isinstance(properties, dict)
    return {pid: result["verdict"] for pid, result in properties.items()}


def test_the_example_forwards_only_valid_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Invalid arguments get the model's errors and change nothing; a rollback past
    the start is the editor's own answer, mapped to UnreachableRollbackError."""
    from rollcert.model.errors import UnreachableRollbackError
    from rollcert.targets.adapter import BufferConfig

    namespace: dict[str, object] = {}
    exec(compile(CORRECT, "my_editor.py", "exec"), namespace)
    editor_module = type(sys)("my_editor")
    editor_module.__dict__.update(namespace)
    monkeypatch.setitem(sys.modules, "my_editor", editor_module)
    example: dict[str, object] = {}
    exec(compile(readme_example(), "my_adapter.py", "exec"), example)
    adapter = example["MyAdapter"](BufferConfig(b"abc"))  # type: ignore[operator]
    for call, error in (
        (lambda: adapter.splice(-666, 0, b"x"), ValueError),
        (lambda: adapter.splice(1, 3, b""), ValueError),
        (lambda: adapter.splice(True, 0, b""), TypeError),
        (lambda: adapter.splice(0, 0, "text"), TypeError),
        (lambda: adapter.rollback(-1), ValueError),
        (lambda: adapter.rollback(1.0), TypeError),
    ):
        with pytest.raises(error):
            call()
        assert adapter.read() == b"abc" and adapter.depth() == 0
    adapter.splice(1, 1, b"XY")
    with pytest.raises(UnreachableRollbackError):
        adapter.rollback(2)
    assert adapter.read() == b"aXYc"
    adapter.rollback(1)
    assert adapter.read() == b"abc"


@pytest.mark.slow
def test_the_readme_example_certifies_a_correct_editor_and_catches_a_stale_undo(tmp_path: Path) -> None:
    status, certificate = certify(project(tmp_path / "correct", CORRECT))
    declared = {pid: verdict for pid, verdict in verdicts(certificate).items() if verdict != "not_assessed"}
    assert set(declared) >= {"R0", "R2"}, declared
    assert set(declared.values()) == {"passed"}, declared
    assert status == 0

    status, certificate = certify(project(tmp_path / "stale", STALE_OFFSET))
    found = verdicts(certificate)
    assert found["R2"] == "violated", found
    assert status == 1
    last = certificate["properties"]["R2"]["counterexample"]["steps"][-1]  # type: ignore[index]
    assert last["operation"]["op"] == "rollback" and not last["ok"], last  # undo put the bytes back elsewhere
    assert last["expected"]["buffer"] != last["actual"]["buffer"]


def test_the_readme_example_imports_from_the_public_module_and_the_errors_only() -> None:
    """An adapter author needs two rollcert imports: ``rollcert.targets`` and ``rollcert.model.errors``."""
    rollcert_modules = set(re.findall(r"^from (rollcert\S*) import", readme_example(), re.MULTILINE))
    assert rollcert_modules == {"rollcert.targets", "rollcert.model.errors"}
