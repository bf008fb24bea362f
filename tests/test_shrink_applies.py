"""The diff family's minimiser tells a scene-setting apply of several hunks as
the one edit that spans them (issue 16).

revision_reuse's story counterexample (S3, quick, seed 0) opened with a
snapshot and a two-hunk diff that only made the edit the rest of the story
rolls away; the one-hunk-only move left it at 6 steps. Told as one splice, its
snapshot goes too: 5 steps, the length of the story's shape (an edit, a
snapshot, a rollback, another edit of the same length, the stale diff).
"""

from __future__ import annotations

import pytest

from rollcert.model.contract import Hunk
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.specimens import load_all
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.shrink import minimise
from rollcert.targets.adapter import BufferConfig

TWO_HUNK_SCENE: list[DiffOperation] = [
    TakeSnapshot(),
    ApplyDiff(0, "content", (Hunk(4, 5, b""), Hunk(6, 6, b"YX"))),
    TakeSnapshot(),
    Rollback(1),
    Splice(0, 0, b"X"),
    ApplyDiff(1, "content", (Hunk(4, 5, b""),)),
]


def test_a_two_hunk_scene_is_told_as_one_edit() -> None:
    target = load_all()["revision_reuse"].target
    assert target is not None
    config = BufferConfig(b"abcdef")
    with pytest.raises(Violation) as caught:
        replay(DIFFS, target, config, TWO_HUNK_SCENE)
    minimal = minimise(DIFFS, target, caught.value)
    steps = [step.operation for step in minimal.steps]
    assert len(steps) == 5, steps
    assert sum(isinstance(op, ApplyDiff) for op in steps) == 1
    with pytest.raises(Violation):
        replay(DIFFS, target, minimal.config, steps)


def test_the_spanning_edit_writes_the_bytes_between_the_hunks_again() -> None:
    candidates = list(DIFFS._applies_as_splices(BufferConfig(b"abcdef"), TWO_HUNK_SCENE))
    # 'abcdef' -> 'abcd' + '' + 'f' + 'YX': one splice from the first hunk's start to the last one's end.
    assert candidates[0][1][1] == Splice(4, 2, b"fYX")
