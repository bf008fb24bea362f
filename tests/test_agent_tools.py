"""The agent edit tools certified over rollcert-protocol/2 and 2.1, held to their pages.

aider (docs/certifications/aider.md), gptme (gptme.md), OpenHands' editor
(openhands.md, a venv built with Python 3.12) and Codex's apply_patch (codex.md,
an npm folder with its native binary) each run in an environment of their own
(``rollcert.targets.tool_envs``); every test here
that needs one is in the slow tier and creates the venv on first use (PyPI is
reachable from CI). They:

* (the certificate embedded in each page is re-run, same profile and seed, by
  ``pytest benchmarks/search`` and ``python -m benchmarks.documented_verdicts``:
  a search, not a test);
* replay each finding the page documents on the real target and check *what* it
  is (the bytes aider wrote, or that it refused), so a verdict that stays
  ``violated`` for another reason is caught too;
* run each page's reproduction script in the tool's venv and compare its output
  with the output the page pastes.

The fast tier checks that every registered target is documented (no tool needed);
the renderings are tested in tests/test_tool_rendering.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from _helpers import REGENERATE
from _helpers import documented_certificates

from benchmarks.thirdparty_targets import AGENT_TOOL_PAGES as TARGETS
from rollcert.model.contract import Hunk
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import StepRecord
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters import THIRD_PARTY_TARGETS
from rollcert.targets.adapters import aider_tools
from rollcert.targets.adapters import codex_apply_patch
from rollcert.targets.adapters import gptme_patch
from rollcert.targets.adapters import openhands_editor
from rollcert.targets.adapters import serena_replace
from rollcert.targets.findings import FINDINGS_DIR
from rollcert.targets.findings import load_findings
from rollcert.targets.resolve import resolve_target
from rollcert.targets.tool_envs import node_environment
from rollcert.targets.tool_envs import python_environment

PAGES = Path(__file__).resolve().parent.parent / "docs" / "certifications"
#: Page -> the (venv name, pinned requirements, Python version or None) its reproduction script runs in.
ENVIRONMENTS = {
    "aider.md": (aider_tools.ENVIRONMENT, [aider_tools.REQUIREMENT], None),
    "gptme.md": (gptme_patch.ENVIRONMENT, [gptme_patch.REQUIREMENT], None),
    "openhands.md": (openhands_editor.ENVIRONMENT, [openhands_editor.REQUIREMENT], openhands_editor.PYTHON_VERSION),
    "serena.md": (serena_replace.ENVIRONMENT, serena_replace.REQUIREMENTS, None),
}
#: The pages whose reproduction runs with this interpreter and the tool's binary as its argument.
BINARY_REPRODUCTIONS = ("codex.md",)
#: The targets with an undo log of their own (capability core): S2, S3 lack diffs there, not core.
WITH_UNDO = ("openhands-editor", "openhands-editor-focused")
ALL_TARGETS = {target for targets in TARGETS.values() for target in targets}
DOCUMENTED = documented_certificates(lambda target: target in ALL_TARGETS)


def test_every_agent_tool_target_is_registered_and_documented() -> None:
    assert set(THIRD_PARTY_TARGETS) >= ALL_TARGETS
    assert {d.target for d in DOCUMENTED} == ALL_TARGETS, "every agent tool target needs its certificate"
    for documented in DOCUMENTED:
        assert documented.target in TARGETS[documented.page], f"{documented.target} is on {documented.page}"
        assert set(documented.verdicts) == set(ALL_PROPERTY_IDS), f"{documented.page}: run {REGENERATE}"


@pytest.mark.parametrize(
    ("initial", "hunk", "covered"),
    [
        (b"ab\n", Hunk(0, 1, b"X"), False),  # a file with its final line break, kept
        (b"ab", Hunk(0, 1, b"X"), True),  # a file without one
        (b"ab\n", Hunk(2, 3, b""), True),  # a diff that deletes it
        (b"ab\n", Hunk(0, 3, b""), False),  # an emptied file has no last line
    ],
)
def test_the_focused_targets_set_aside_only_unterminated_texts(
    initial: bytes, hunk: Hunk, covered: bool
) -> None:
    """aider.toml's final_line_break_added covers an apply whose live text, or whose
    result on its snapshot, lacks a final line break — and nothing else."""
    (finding,) = [f for f in load_findings(FINDINGS_DIR / "aider.toml") if f.name == "final_line_break_added"]
    state = DIFFS.predict(DIFFS.initial_state(BufferConfig(initial)), TakeSnapshot()).readings[0].state
    assert finding.applies(state, ApplyDiff(0, "content", (hunk,))) is covered




# -- what each finding is -------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A finding of a page, as a trace on a registered target and what the tool does."""

    name: str
    target: str
    initial: bytes
    operations: tuple[DiffOperation, ...]
    #: The bytes the tool leaves (None: it refuses, changing nothing).
    written: bytes | None
    #: The step is a violation (False: the tool refuses, changing nothing, as the rule allows).
    violated: bool = True
    #: When not violated: the rule refuses too (True) or accepts (False: the refusal is imprecise).
    rule_refuses: bool = False


def _apply(*hunks: tuple[int, int, bytes]) -> ApplyDiff:
    return ApplyDiff(0, "content", tuple(Hunk(start, end, replacement) for start, end, replacement in hunks))


SNAPSHOT = TakeSnapshot()
FINDINGS = [
    Finding(
        "final_line_break", "aider-search-replace", b"ab\ncd", (SNAPSHOT, _apply((1, 2, b"X"))), b"aX\ncd\n"
    ),
    Finding(
        "blank_search", "aider-search-replace", b"a\n\nb\n", (SNAPSHOT, _apply((2, 2, b"X"))), b"a\n\nb\nX\n"
    ),
    Finding(
        "first_copy", "aider-search-replace", b"a\nb\na\n", (SNAPSHOT, _apply((4, 5, b"X"))), b"X\nb\na\n"
    ),
    Finding("blank_replace", "aider-search-replace", b"a\nb\n", (SNAPSHOT, _apply((0, 1, b""))), b"b\n"),
    Finding(
        "emptied_file", "aider-search-replace", b"ab\n", (SNAPSHOT, _apply((0, 3, b""))), None, violated=False
    ),
    Finding(
        "partial",
        "aider-search-replace",
        b"a\nb\nc\n",
        (SNAPSHOT, ToolWrite(4, 1, b"1"), _apply((0, 1, b"X"), (4, 5, b"Y"))),
        b"X\nb\n1\n",
    ),
    Finding("final_line_break", "aider-udiff", b"ab\ncd", (SNAPSHOT, _apply((1, 2, b"X"))), b"aX\ncd\n"),
    Finding(
        "blank_lines_stripped",
        "aider-udiff",
        b"\nb\nc\n\n",
        (SNAPSHOT, ToolWrite(4, 1, b""), _apply((6, 6, b"\n"))),
        b"b\nc\n",
    ),
    Finding(
        "every_copy",
        "aider-udiff",
        b"ab12\n" * 4 + b"X\nY\nX\nY\n" + b"ab12\n" * 4,
        (SNAPSHOT, _apply((0, 4, b"b"))),
        b"b\n" + b"ab12\n" * 3 + b"X\nY\nX\nY\n" + b"b\n" + b"ab12\n" * 3,
    ),
    Finding("emptied_file", "aider-udiff", b"ab\n", (SNAPSHOT, _apply((0, 3, b""))), b"\n"),
    Finding(
        "udiff_partial",
        "aider-udiff",
        b"aa\nbb\nab\nba\n12\n21\nXY\nYX\n1a\na1\n",
        (SNAPSHOT, ToolWrite(27, 2, b"22"), _apply((0, 2, b"X"), (27, 29, b"Y"))),
        b"X\nbb\nab\nba\n12\n21\nXY\nYX\n1a\n22\n",
    ),
    Finding(
        "positional",
        "gptme-patch",
        b"\n",
        (SNAPSHOT, ToolWrite(0, 0, b"Y"), ApplyDiff(0, "positional", (Hunk(0, 1, b""),))),
        b"Y",
    ),
    Finding(
        "line_end_gone",
        "gptme-patch",
        b"ba\nb\nc\n",
        (SNAPSHOT, ToolWrite(0, 0, b" "), ToolWrite(7, 1, b""), _apply((6, 6, b"\n"))),
        b" ba\nb\nc\n",
    ),
    Finding(
        "not_unique",
        "gptme-patch",
        b"a\nb\n",
        (SNAPSHOT, ToolWrite(4, 0, b"a\n"), _apply((0, 1, b"X"))),
        None,
        violated=False,
    ),
    Finding(
        "all_or_none",
        "gptme-patch",
        b"a\nb\nc\n",
        (SNAPSHOT, ToolWrite(4, 1, b"1"), _apply((0, 1, b"X"), (4, 5, b"Y"))),
        None,
        violated=False,
        rule_refuses=True,
    ),
    Finding(
        "positional",
        "openhands-str-replace",
        b"\n",
        (SNAPSHOT, ToolWrite(0, 1, b""), ApplyDiff(0, "positional", (Hunk(0, 1, b""),))),
        b"",
    ),
    Finding(
        "two_calls",
        "openhands-str-replace-focused",
        b"b\n  \n",
        (SNAPSHOT, ToolWrite(3, 0, b"2"), _apply((0, 0, b"\n"), (4, 5, b""))),
        b"\nb\n 2 \n",  # the first call applied, the second refused
    ),
    Finding("final_line_break", "codex-apply-patch", b"abbb   ", (SNAPSHOT, _apply((5, 7, b""))), b"abbb \n"),
    Finding(
        "positional",
        "codex-apply-patch",
        b"b\n",
        (SNAPSHOT, ToolWrite(0, 0, b"Y\n"), ApplyDiff(0, "positional", (Hunk(0, 1, b"B"),))),
        b"Y\nB\n",
    ),
    Finding(
        "empty_last_line",
        "codex-apply-patch-focused",
        b"aaaaa\n\n",
        (SNAPSHOT, ToolWrite(6, 0, b"b"), _apply((6, 6, b" "))),
        b"aaaaa\n \nb\n",  # the chunk retried without its empty last line: inserted, the writer's b kept
    ),
    Finding(
        "all_or_none",
        "codex-apply-patch",
        b"a\nb\nc\n",
        (SNAPSHOT, ToolWrite(4, 1, b"1"), _apply((0, 1, b"X"), (4, 5, b"Y"))),
        None,
        violated=False,
        rule_refuses=True,
    ),
    Finding(
        "positional",
        "serena-replace-content",
        b"\n\n",
        (SNAPSHOT, ToolWrite(0, 1, b""), ApplyDiff(0, "positional", (Hunk(0, 1, b""),))),
        b"",
    ),
    Finding(
        "two_calls",
        "serena-replace-content-focused",
        b"b\n  \n",
        (SNAPSHOT, ToolWrite(3, 0, b"2"), _apply((0, 0, b"\n"), (4, 5, b""))),
        b"\nb\n 2 \n",  # the first call applied, the second refused
    ),
]


@dataclass(frozen=True)
class UndoFinding:
    """A finding of the editor with an undo (the rollback family): the trace, the
    error the tool answers and the bytes it leaves."""

    name: str
    target: str
    initial: bytes
    operations: tuple[Operation, ...]
    error: str
    left: bytes


#: How many versions of a file the editor keeps as shipped (finding 7).
SHIPPED = openhands_editor.SHIPPED_HISTORY
UNDO_FINDINGS = [
    UndoFinding(
        "unchanging_edit_refused",
        "openhands-editor",
        b"",
        (Splice(0, 0, b""),),
        "undocumented:openhands_aci.editor.exceptions.EditorToolParameterInvalidEr",
        b"",
    ),
    UndoFinding(
        "undo_past_horizon_partial",
        "openhands-editor",
        b"",
        (Splice(0, 0, b"a"), Rollback(2)),
        "UnreachableRollbackError",
        b"",  # the first undo done: the model keeps b"a"
    ),
    UndoFinding(
        "default_history_capped",  # finding 7 on an unbounded buffer: the shipped history of 10 versions
        "openhands-editor",
        b"",
        (*(Splice(0, 0, b"a") for _ in range(SHIPPED + 1)), Rollback(SHIPPED + 1)),
        "UnreachableRollbackError",
        b"a",  # ten undos done, the eleventh refused: the model undoes all eleven, to b""
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("finding", UNDO_FINDINGS, ids=lambda f: f"{f.target}:{f.name}")
def test_each_documented_undo_finding_is_what_the_page_says(finding: UndoFinding) -> None:
    with pytest.raises(Violation) as raised:
        replay(ROLLBACK, resolve_target(finding.target), BufferConfig(finding.initial), finding.operations)
    last: StepRecord = raised.value.steps[-1]
    assert (last.actual.error, last.actual.buffer) == (finding.error, finding.left)


@pytest.mark.slow
def test_the_focused_editor_replays_its_findings_without_a_violation() -> None:
    """With both findings set aside the same steps are skipped (the trace replays what lies behind)."""
    target = resolve_target("openhands-editor-focused")
    for finding in UNDO_FINDINGS:
        replay(ROLLBACK, target, BufferConfig(finding.initial), finding.operations)


@pytest.mark.slow
@pytest.mark.parametrize("finding", FINDINGS, ids=lambda f: f"{f.target}:{f.name}")
def test_each_documented_finding_is_what_the_page_says(finding: Finding) -> None:
    target = resolve_target(finding.target)
    if not finding.violated:
        last = replay(DIFFS, target, BufferConfig(finding.initial), finding.operations)[-1]
        assert last.actual.error == "StaleBaseError" and last.actual.buffer == last.before
        if finding.rule_refuses:
            assert last.expected.error == "StaleBaseError"
        else:
            assert last.expected.error is None and "imprecise" in last.note
        return
    with pytest.raises(Violation) as raised:
        replay(DIFFS, target, BufferConfig(finding.initial), finding.operations)
    last: StepRecord = raised.value.steps[-1]
    if finding.written is None:
        assert last.actual.error == "StaleBaseError"
    else:
        assert last.actual.buffer == finding.written, (
            f"{finding.name}: aider now writes {last.actual.buffer!r}"
        )


def reproduction_command(page: str) -> list[str]:
    """How the page's script runs: under the tool's venv Python, or (Codex) with this
    interpreter and the tool's native binary as its argument."""
    if page == "codex.md":
        folder = node_environment(codex_apply_patch.ENVIRONMENT, [codex_apply_patch.PIN])
        return [sys.executable, "repro.py", str(codex_apply_patch.codex_binary(folder))]
    environment, requirements, version = ENVIRONMENTS[page]
    return [str(python_environment(environment, requirements, python_version=version)), "repro.py"]


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted([*ENVIRONMENTS, *BINARY_REPRODUCTIONS]))
def test_the_pages_reproduction_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    """The page's script, run in the tool's venv, prints the output the page pastes."""
    text = (PAGES / page).read_text(encoding="utf-8")
    script = re.search(r"```python\n(.*?)```\n", text, re.DOTALL)
    output = re.search(r"Its output[^\n]*\n\n```\n(.*?)```", text, re.DOTALL)
    assert script is not None and output is not None, f"{page}: the reproduction script or its output is gone"
    (tmp_path / "repro.py").write_text(script[1], encoding="utf-8")
    done = subprocess.run(
        reproduction_command(page), cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == output[1], f"{page}: the reproduction now prints\n{done.stdout}"
