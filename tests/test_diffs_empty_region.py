"""A content diff authored on an empty snapshot, applied to a buffer that has
grown since: the rule rejects it (its one effective region, ``[0, 0)``, is
located nowhere), and the equal-bytes allowance must say the same instead of
raising ``IndexError`` (issue 16: a quick S3 run of revision_reuse, seed 9,
ended ``error`` on it rather than going on to find the specimen)."""

from __future__ import annotations

from rollcert.model.contract import Hunk
from rollcert.model.diffs import Diff
from rollcert.model.diffs import apply_over_equal_rewrites
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.errors import StaleBaseError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import replay
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.bundled import TARGET

#: Empty the buffer, snapshot it, write a byte, apply a content diff on the empty snapshot.
TRACE: list[DiffOperation] = [
    Splice(0, 1, b""),
    TakeSnapshot(),
    Splice(0, 0, b"b"),
    ApplyDiff(0, "content", (Hunk(0, 0, b"Y"),)),
]


def test_the_rule_rejects_a_content_diff_on_an_empty_snapshot_once_text_was_written() -> None:
    state = initial_diff_state(b"a")
    for operation in TRACE[:-1]:
        state = diff_step(state, operation).state
    outcome = diff_step(state, TRACE[-1])
    assert outcome.error is StaleBaseError
    snapshot = state.snapshots[0]
    assert apply_over_equal_rewrites(Diff(snapshot, "content", (Hunk(0, 0, b"Y"),)), state.current, 99) is None


def test_the_trace_replays_on_the_bundled_buffer_without_a_harness_error() -> None:
    steps = replay(DIFFS, TARGET, BufferConfig(b"a"), TRACE)
    assert len(steps) == len(TRACE)
