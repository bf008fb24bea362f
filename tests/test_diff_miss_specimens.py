"""The diff specimens of issue 23's misses, each driven through the exact
sequence its bug needs: the bundled applier agrees with the model there, the
specimen disagrees at the last step, and the judge blames the story's property.

A deterministic replay (milliseconds), so that a change to a specimen or to
the judge shows here before the kill matrix runs."""

from __future__ import annotations

import pytest

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.specimens import load_all
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import HARMS
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

#: name -> (initial buffer, the trace, the bytes the specimen leaves at the failing step)
SCENES: dict[str, tuple[bytes, list[DiffOperation], bytes]] = {
    # A same-length tool write before the apply; undoing the diff writes B0 back over it.
    "author_snapshot_when_lengths_agree": (
        b"abcd",
        [TakeSnapshot(), ToolWrite(0, 1, b"1"), ApplyDiff(0, "content", (Hunk(3, 4, b"X"),)), RollbackDiff(0)],
        b"abcd",
    ),
    # A tool empties the buffer; the stale diff brings the snapshot back with its hunk.
    "unchecked_when_live_empty": (
        b"abc",
        [TakeSnapshot(), ToolWrite(0, 3, b""), ApplyDiff(0, "content", (Hunk(1, 2, b"X"),))],
        b"aXc",
    ),
    # One byte strictly inside a declared read of three bytes, rewritten with another.
    "read_set_ends_only": (
        b"abcdef",
        [TakeSnapshot(), ToolWrite(1, 1, b"1"), ApplyDiff(0, "content", (Hunk(5, 6, b"X"),), (Region(0, 3),))],
        b"a1cdeX",
    ),
}


@pytest.mark.parametrize("name", sorted(SCENES))
def test_the_bundled_applier_agrees_with_the_model_on_the_scene(name: str) -> None:
    initial, trace, _ = SCENES[name]
    steps = replay(DIFFS, BUNDLED, BufferConfig(initial), trace)
    assert len(steps) == len(trace)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_the_specimen_breaks_its_story_at_the_last_step(name: str) -> None:
    initial, trace, wrong = SCENES[name]
    specimen = load_all()[name]
    assert specimen.target is not None
    with pytest.raises(Violation) as caught:
        replay(DIFFS, specimen.target, BufferConfig(initial), trace)
    violation = caught.value
    assert len(violation.steps) == len(trace)
    assert specimen.breaks <= set(violation.broken), violation.broken
    assert violation.harm in HARMS
    assert violation.steps[-1].actual.buffer == wrong
