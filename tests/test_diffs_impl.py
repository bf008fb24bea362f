"""impl/diffs.py: the fast diff layer agrees with the model, and keeps its promises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollcert.impl import JournaledBuffer
from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import map_gap
from rollcert.impl.diffs import map_intervals
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.stateful_tests import strategies


def fresh(initial: bytes = b"abcdefgh", **options: object) -> DiffableBuffer:
    return DiffableBuffer(JournaledBuffer(initial), **options)  # type: ignore[arg-type]


# -- differential: the implementation against the model, step by step ------------------------


@st.composite
def diff_operations(draw: st.DrawFn, state: DiffModelState) -> DiffOperation:
    content = state.content
    choices = ["tool_write", "agent_edit", "snapshot"]
    if state.depth:
        choices.append("rollback")
    if state.snapshots:
        choices += ["apply_diff", "apply_diff"]
    if any(made is not None for made in state.applied):
        choices.append("rollback_diff")
    kind = draw(st.sampled_from(choices))
    if kind in ("tool_write", "agent_edit"):
        edit = draw(strategies.diff_edits(content, strategies.TOOL_ALPHABET))
        return ToolWrite(*edit) if kind == "tool_write" else Splice(*edit)
    if kind == "rollback":
        return Rollback(draw(st.integers(1, state.depth)))
    if kind == "snapshot":
        return TakeSnapshot()
    if kind == "apply_diff":
        index = draw(st.integers(0, len(state.snapshots) - 1))
        base = state.snapshots[index].content
        return ApplyDiff(
            index,
            draw(st.sampled_from(["content", "positional"])),
            tuple(Hunk(*h) for h in draw(strategies.hunk_lists(base))),
            tuple(Region(*r) for r in draw(strategies.read_region_lists(base))),
        )
    return RollbackDiff(draw(st.sampled_from([i for i, made in enumerate(state.applied) if made is not None])))


@pytest.mark.slow
@given(initial=strategies.diff_initial_buffers(), data=st.data())
def test_the_implementation_makes_the_model_s_decisions(initial: bytes, data: st.DataObject) -> None:
    """Every accept and reject, every conflict region, every byte, depth and revision."""
    model = initial_diff_state(initial)
    buffer = fresh(initial)
    snapshots = []
    handles: list[AppliedDiff | None] = []
    for _ in range(data.draw(st.integers(1, 25))):
        operation = data.draw(diff_operations(model))
        outcome = diff_step(model, operation)
        error: Exception | None = None
        try:
            if isinstance(operation, (Splice, ToolWrite)):
                buffer.splice(operation.offset, operation.delete_length, operation.insert)
            elif isinstance(operation, Rollback):
                buffer.rollback(operation.steps)
            elif isinstance(operation, TakeSnapshot):
                snapshots.append(buffer.snapshot())
            elif isinstance(operation, ApplyDiff):
                handles.append(None)
                diff = buffer.author_diff(snapshots[operation.snapshot], operation.mode, operation.hunks, operation.reads)
                handles[-1] = buffer.apply_diff(diff)
            else:
                handle = handles[operation.applied]
                assert handle is not None
                buffer.rollback_diff(handle)
        except (StaleBaseError, UnreachableRollbackError) as raised:
            error = raised
        assert (type(error) if error else None) is outcome.error, (operation, error, outcome.message)
        if isinstance(error, StaleBaseError) and outcome.conflict is not None:
            assert error.conflict == (outcome.conflict.start, outcome.conflict.end)
        model = outcome.state
        assert buffer.read() == model.content
        assert (buffer.depth, buffer.revision) == (model.depth, model.revision)


# -- S1 in the implementation ---------------------------------------------------------------------


def test_stale_base_error_names_both_revisions_and_the_region_in_both_coordinates() -> None:
    buffer = fresh(b"abcdefgh")
    snapshot = buffer.snapshot()
    buffer.write(0, 0, b"12")  # elsewhere: shifts everything by two
    buffer.write(6, 1, b"3")  # inside the read region [3, 6) of the snapshot ("def" -> "de3")
    before = (buffer.read(), buffer.depth, buffer.revision)
    diff = buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X")], [Region(3, 6)])
    with pytest.raises(StaleBaseError) as raised:
        buffer.apply_diff(diff)
    error = raised.value
    assert (error.base_revision, error.live_revision) == (0, 2)
    assert error.conflict == (3, 6)
    assert error.live_conflict == (5, 8)
    assert b"[3, 6)" in str(error).encode() and b"[5, 8)" in str(error).encode()
    assert (buffer.read(), buffer.depth, buffer.revision) == before


def test_an_applied_diff_is_one_record_and_one_revision() -> None:
    buffer = fresh(b"abcdefgh")
    snapshot = buffer.snapshot()
    buffer.write(8, 0, b"1")
    buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X"), Hunk(5, 7, b"")]))
    assert buffer.read() == b"Xbcdeh1"
    assert (buffer.depth, buffer.revision) == (2, 2)
    buffer.rollback(1)
    assert buffer.read() == b"abcdefgh1"


def test_a_history_older_than_the_limit_is_rejected_as_unprovable() -> None:
    buffer = fresh(b"abcdefgh", history_limit=2)
    snapshot = buffer.snapshot()
    for _ in range(3):
        buffer.write(8, 0, b"1")
    with pytest.raises(StaleBaseError, match="unprovable") as raised:
        buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X")]))
    assert raised.value.conflict is None
    # The same diff within the kept history applies.
    recent = buffer.snapshot()
    buffer.write(0, 0, b"2")
    buffer.apply_diff(buffer.author_diff(recent, "content", [Hunk(3, 4, b"X")]))
    assert buffer.read() == b"2abcXefgh111"


def test_an_out_of_log_write_makes_stale_diffs_unprovable() -> None:
    buffer = fresh(b"abcdefgh")
    snapshot = buffer.snapshot()
    buffer.journaled.storage.replace(7, 1, b"Z")  # behind the journal's back
    with pytest.raises(StaleBaseError, match="unprovable"):
        buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X")]))


def test_eviction_keeps_the_map_in_step_and_an_evicted_diff_cannot_be_rolled_back() -> None:
    buffer = DiffableBuffer(JournaledBuffer(b"abcd", capacity=2, policy="evict_oldest"))
    snapshot = buffer.snapshot()
    applied = buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X")]))
    buffer.write(4, 0, b"1")
    buffer.write(5, 0, b"2")  # evicts the diff's record
    assert buffer.read() == b"Xbcd12" and buffer.depth == 2
    with pytest.raises(UnreachableRollbackError):
        buffer.rollback_diff(applied)
    buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(2, 3, b"Y")]))
    assert buffer.read() == b"XbYd12"


def test_checkpoints_adoption_and_compaction_keep_the_map_in_step() -> None:
    buffer = fresh(b"abcdefgh")
    token = buffer.checkpoint()
    snapshot = buffer.snapshot()
    buffer.write(0, 1, b"1")
    buffer.rollback_to(token)
    buffer.write(8, 0, b"2")
    buffer.compact(1)
    buffer.adopt_current()
    buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(3, 4, b"X")], [Region(0, 2)]))
    assert buffer.read() == b"abcXefgh2"


# -- S2 and bad input -------------------------------------------------------------------------------


def test_rollback_diff_returns_to_the_live_base_and_dies_with_its_state() -> None:
    buffer = fresh(b"abcdefgh")
    snapshot = buffer.snapshot()
    buffer.write(0, 0, b"1")
    applied = buffer.apply_diff(buffer.author_diff(snapshot, "content", [Hunk(6, 7, b"X")]))
    buffer.write(0, 0, b"2")
    buffer.rollback_diff(applied)
    assert buffer.read() == b"1abcdefgh"  # the tool's first write survives; B0 is not restored
    before = (buffer.read(), buffer.depth, buffer.revision)
    with pytest.raises(UnreachableRollbackError):
        buffer.rollback_diff(applied)
    assert (buffer.read(), buffer.depth, buffer.revision) == before


def test_foreign_snapshots_and_handles_and_bad_arguments_change_nothing() -> None:
    buffer, other = fresh(b"abcd"), fresh(b"abcd")
    foreign = other.snapshot()
    applied = other.apply_diff(other.author_diff(foreign, "content", [Hunk(0, 1, b"X")]))
    with pytest.raises(ValueError, match="another buffer"):
        buffer.apply_diff(buffer.author_diff(foreign, "content", [Hunk(0, 1, b"X")]))
    with pytest.raises(UnreachableRollbackError, match="another buffer"):
        buffer.rollback_diff(applied)
    snapshot = buffer.snapshot()
    with pytest.raises(ValueError, match="anchor mode"):
        buffer.author_diff(snapshot, "fuzzy", [Hunk(0, 1, b"X")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        buffer.author_diff(snapshot, "content", [Hunk(0, 1, b"X")], [Region(2, 2)])
    with pytest.raises(TypeError):
        buffer.apply_diff("diff")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        buffer.rollback_diff(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        DiffableBuffer(b"abcd")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        fresh(history_limit=0)
    assert (buffer.read(), buffer.depth, buffer.revision) == (b"abcd", 0, 0)


# -- the interval and gap maps ---------------------------------------------------------------------------


def test_map_intervals_shifts_splits_and_loses() -> None:
    assert map_intervals([(2, 5)], ((0, 0, 2),)) == [(4, 7)]  # insertion before: shift
    assert map_intervals([(2, 5)], ((5, 0, 1),)) == [(2, 5)]  # insertion at the end: stays
    assert map_intervals([(2, 5)], ((3, 0, 1),)) == [(2, 3), (4, 6)]  # inside: split
    assert map_intervals([(2, 5)], ((4, 2, 0),)) is None  # a byte deleted: lost
    assert map_intervals([(2, 5)], ((0, 1, 0), (6, 1, 3))) == [(1, 4)]


def test_map_gap_keeps_the_region_s_stretch() -> None:
    edits = ((3, 2, 4),)  # [3, 5) replaced by four bytes
    assert map_gap(1, edits, left=True) == 1 and map_gap(1, edits, left=False) == 1
    assert map_gap(4, edits, left=True) == 3 and map_gap(4, edits, left=False) == 7
    assert map_gap(6, edits, left=True) == 8
