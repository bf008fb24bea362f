"""The diff model (model/diffs.py): identities, the S1 rule, S2 and S3."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import Accepted
from rollcert.model.diffs import Diff
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import DiffOutcome
from rollcert.model.diffs import Rejected
from rollcert.model.diffs import apply
from rollcert.model.diffs import content_of
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.properties import PROPERTIES


def run(initial: bytes, *operations: object) -> DiffModelState:
    state = initial_diff_state(initial)
    for operation in operations:
        state = diff_step(state, operation).state  # type: ignore[arg-type]
    return state


def outcome_of(initial: bytes, *operations: object):  # type: ignore[no-untyped-def]
    state = run(initial, *operations[:-1])
    return diff_step(state, operations[-1])  # type: ignore[arg-type]


# -- identities ---------------------------------------------------------------------


def test_inserted_bytes_get_fresh_identities_and_rollback_restores_the_originals() -> None:
    state = run(b"abc", Splice(1, 1, b"x"))
    assert content_of(state.current) == b"axc"
    assert state.current[1][0] == 3  # the first identity after the initial three
    rolled = diff_step(state, Rollback(1)).state
    assert rolled.current == initial_diff_state(b"abc").current  # identities included
    again = diff_step(rolled, Splice(1, 1, b"x")).state
    assert content_of(again.current) == b"axc"
    assert again.current[1][0] == 4  # never reused, even for the same text at the same place


def test_revisions_grow_on_every_mutation_and_are_never_reused() -> None:
    state = run(b"ab", Splice(0, 0, b"a"), Rollback(1), Splice(0, 0, b"b"))
    assert state.revision == 3 and state.depth == 1


# -- S1: the rule -----------------------------------------------------------------------


def diff_on(state: DiffModelState, mode: str, hunks: tuple[Hunk, ...], reads: tuple[Region, ...] = ()) -> Diff:
    return Diff(state.snapshots[-1], mode, hunks, reads)  # type: ignore[arg-type]


def test_unchanged_content_applies_at_the_original_positions_in_both_modes() -> None:
    state = run(b"abcdef", TakeSnapshot())
    for mode in ("positional", "content"):
        result = apply(diff_on(state, mode, (Hunk(2, 3, b"X"),)), state.current, state.next_identity)
        assert isinstance(result, Accepted) and content_of(result.cells) == b"abXdef"


def test_same_content_by_other_bytes_counts_as_unchanged() -> None:
    # The tool deletes 'a' and types 'a' again: new identities, same content.
    state = run(b"abc", TakeSnapshot(), ToolWrite(0, 1, b"a"))
    diff = diff_on(state, "positional", (Hunk(1, 2, b"X"),))
    result = apply(diff, state.current, state.next_identity)
    assert isinstance(result, Accepted) and content_of(result.cells) == b"aXc"


def test_a_positional_diff_is_rejected_once_the_base_moved() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(0, 0, b"1"))
    result = apply(diff_on(state, "positional", (Hunk(4, 5, b"X"),)), state.current, state.next_identity)
    assert isinstance(result, Rejected) and result.conflict is None


def test_a_content_diff_moves_past_a_tool_write_elsewhere() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(0, 0, b"12"))
    result = apply(diff_on(state, "content", (Hunk(4, 5, b"X"),), (Region(3, 4),)), state.current, state.next_identity)
    assert isinstance(result, Accepted)
    assert content_of(result.cells) == b"12abcdXf"
    assert result.placed == ((6, 7, b"X"),)


def test_a_changed_read_region_rejects_even_when_the_hunk_is_untouched() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(1, 1, b"1"))
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(4, 5, b"X"),), (Region(0, 2),)))
    assert outcome.error is StaleBaseError
    assert outcome.conflict == Region(0, 2)
    assert outcome.state.current == state.current and outcome.state.revision == state.revision


def test_an_insertion_touching_a_hunk_conflicts_because_hunks_are_widened() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(5, 0, b"1"))  # right after the hunk [4, 5)
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(4, 5, b"X"),)))
    assert outcome.error is StaleBaseError and outcome.conflict == Region(3, 6)


def test_identity_not_text_decides_a_read_region() -> None:
    # The read region "bc" is deleted and typed again: same text, other bytes.
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(1, 2, b"bc"), ToolWrite(6, 0, b"1"))
    assert content_of(state.current) == b"abcdef1"
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(4, 5, b"X"),), (Region(1, 3),)))
    assert outcome.error is StaleBaseError and outcome.conflict == Region(1, 3)


def test_a_rollback_restores_a_region_so_a_diff_across_it_applies() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(1, 1, b"1"), Rollback(1), ToolWrite(6, 0, b"2"))
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(3, 4, b"X"),), (Region(0, 3),)))
    assert outcome.error is None and outcome.state.content == b"abcXef2"


def test_first_conflicting_region_is_named_in_base_order() -> None:
    state = run(b"abcdefgh", TakeSnapshot(), ToolWrite(0, 1, b""), ToolWrite(5, 1, b""))
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(3, 4, b"X"),), (Region(5, 7), Region(0, 2))))
    assert outcome.conflict == Region(0, 2)


def _project(cells: tuple[tuple[int, int], ...], keep: set[int], new: set[int]) -> list[object]:
    """Cells that both orders share, with the diff's fresh cells compared by byte."""
    return [("new", byte) if ident in new else ident for ident, byte in cells if ident in keep or ident in new]


@given(
    initial=st.binary(min_size=4, max_size=10).map(lambda data: bytes(b % 3 + 97 for b in data)),
    writes=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 2), st.sampled_from([b"", b"1", b"22"])), min_size=1, max_size=3),
    hunk=st.tuples(st.integers(0, 10), st.integers(0, 2), st.sampled_from([b"X", b"YY", b""])),
    read=st.tuples(st.integers(0, 9), st.integers(1, 3)),
)
def test_an_accepted_stale_content_diff_commutes_with_the_writes_in_between(
    initial: bytes,
    writes: list[tuple[int, int, bytes]],
    hunk: tuple[int, int, bytes],
    read: tuple[int, int],
) -> None:
    """SPEC S1: the rebased result equals applying the diff first and the writes after."""
    state = run(initial, TakeSnapshot())
    base = state.current
    for offset, delete_length, insert in writes:
        offset = min(offset, len(state.current))
        delete_length = min(delete_length, len(state.current) - offset)
        if delete_length or insert:
            state = diff_step(state, ToolWrite(offset, delete_length, insert)).state
    start = min(hunk[0], len(base))
    end = min(start + hunk[1], len(base))
    replacement = hunk[2] or (b"Z" if start == end else b"")
    read_start = min(read[0], len(base) - 1)
    reads = (Region(read_start, min(len(base), read_start + read[1])),)
    diff = Diff(state.snapshots[0], "content", (Hunk(start, end, replacement),), reads)
    rebased = apply(diff, state.current, state.next_identity)
    if not isinstance(rebased, Accepted) or content_of(state.current) == content_of(base):
        return
    diff_first = apply(diff, base, state.next_identity)
    assert isinstance(diff_first, Accepted)
    live_ids = {ident for ident, _ in state.current}
    base_ids = {ident for ident, _ in base}
    common = live_ids & base_ids & {ident for ident, _ in rebased.cells} & {ident for ident, _ in diff_first.cells}
    fresh = set(range(state.next_identity, rebased.next_identity))
    assert _project(rebased.cells, common, fresh) == _project(diff_first.cells, common, fresh)


# -- authoring: bad diffs are ValueError / TypeError --------------------------------------


@pytest.mark.parametrize(
    ("hunks", "reads", "message"),
    [
        ((), (), "at least one hunk"),
        ((Hunk(0, 9, b""),), (), "outside"),
        ((Hunk(2, 3, b""), Hunk(1, 2, b"")), (), "sorted"),
        ((Hunk(1, 3, b""), Hunk(2, 4, b"")), (), "non-overlapping"),
        ((Hunk(1, 1, b"x"), Hunk(1, 1, b"y")), (), "sorted"),
        ((Hunk(1, 2, b""),), (Region(2, 2),), "non-empty"),
        ((Hunk(1, 2, b""),), (Region(3, 9),), "inside"),
    ],
)
def test_malformed_diffs_are_refused_when_authored(
    hunks: tuple[Hunk, ...], reads: tuple[Region, ...], message: str
) -> None:
    state = run(b"abcd", TakeSnapshot())
    with pytest.raises(ValueError, match=message):
        diff_step(state, ApplyDiff(0, "content", hunks, reads))


def test_bad_mode_snapshot_and_handle_are_value_errors() -> None:
    state = run(b"abcd", TakeSnapshot())
    with pytest.raises(ValueError, match="anchor mode"):
        diff_step(state, ApplyDiff(0, "fuzzy", (Hunk(0, 1, b""),)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no snapshot #3"):
        diff_step(state, ApplyDiff(3, "content", (Hunk(0, 1, b""),)))
    with pytest.raises(ValueError, match="did not apply"):
        diff_step(state, RollbackDiff(0))
    with pytest.raises(TypeError):
        diff_step(state, ApplyDiff(0, "content", (Hunk(0, "1", b""),)))  # type: ignore[arg-type]


# -- S2 and S3 -------------------------------------------------------------------------------


def test_rolling_back_an_applied_diff_gives_the_live_base_not_the_snapshot() -> None:
    state = run(b"abcdef", TakeSnapshot(), ToolWrite(0, 0, b"1"), ApplyDiff(0, "content", (Hunk(4, 5, b"X"),)))
    assert state.content == b"1abcdXf"
    outcome = diff_step(state, RollbackDiff(0))
    assert outcome.error is None and outcome.state.content == b"1abcdef"  # the tool's write survives


def test_rolling_back_a_diff_after_more_writes_undoes_them_too() -> None:
    state = run(b"abc", TakeSnapshot(), ApplyDiff(0, "content", (Hunk(1, 2, b"X"),)), ToolWrite(0, 0, b"1"))
    outcome = diff_step(state, RollbackDiff(0))
    assert outcome.state.content == b"abc" and outcome.state.depth == 0 and outcome.state.revision == 4


def test_a_diff_rolled_away_cannot_be_rolled_back_again() -> None:
    state = run(b"abc", TakeSnapshot(), ApplyDiff(0, "content", (Hunk(1, 2, b"X"),)), Rollback(1))
    outcome = diff_step(state, RollbackDiff(0))
    assert outcome.error is UnreachableRollbackError and outcome.state == state


def test_a_stale_snapshot_at_a_matching_depth_is_judged_by_content() -> None:
    # Snapshot at depth 1, roll back, edit differently: depth 1 again, other text.
    state = run(b"abcd", Splice(0, 1, b"x"), TakeSnapshot(), Rollback(1), Splice(0, 1, b"y"))
    assert state.depth == state.snapshots[0].depth and state.revision == 3
    outcome = diff_step(state, ApplyDiff(0, "positional", (Hunk(2, 3, b"X"),)))
    assert outcome.error is StaleBaseError


# -- operations and the registry ----------------------------------------------------------------


@pytest.mark.parametrize(
    "operation",
    [
        Splice(1, 2, b"\x00ab"),
        ToolWrite(0, 0, b"12"),
        Rollback(2),
        TakeSnapshot(),
        ApplyDiff(1, "positional", (Hunk(0, 1, b"X"), Hunk(3, 3, b"\xff")), (Region(1, 2),)),
        RollbackDiff(4),
    ],
)
def test_diff_operations_round_trip_through_json(operation: object) -> None:
    assert operation_from_json(operation_to_json(operation)) == operation  # type: ignore[arg-type]
    assert operation.describe()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "record",
    [
        [],
        {"op": "teleport"},
        {"op": "apply_diff", "snapshot": 0, "mode": "content", "hunks": [[0, "1", ""]], "reads": []},
        {"op": "apply_diff", "snapshot": 0, "mode": "sideways", "hunks": [], "reads": []},
        {"op": "rollback_diff", "applied": "0"},
    ],
)
def test_bad_diff_operation_json_is_refused(record: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        operation_from_json(record)


def test_s1_s2_s3_are_in_the_property_registry_with_situations() -> None:
    for property_id in ("S1", "S2", "S3"):
        prop = PROPERTIES[property_id]
        assert prop is PROPERTIES[property_id]
        assert prop.statement.strip() and prop.situations


# -- S1's allowance: reads rewritten with equal bytes ------------------------------------


def _stale_over_rewrite(rewrite: bytes) -> DiffOutcome:
    """B0 = 'abcdef'; a tool rewrites [2, 4) with ``rewrite`` and appends 'X' (so the
    content differs from B0); a content diff that read [2, 4) then edits [0, 1)."""
    state = initial_diff_state(b"abcdef")
    for operation in (TakeSnapshot(), ToolWrite(2, 2, rewrite), ToolWrite(6, 0, b"X")):
        state = diff_step(state, operation).state
    return diff_step(state, ApplyDiff(0, "content", (Hunk(0, 1, b"Z"),), (Region(2, 4),)))


def test_a_read_rewritten_with_equal_bytes_may_be_accepted_but_the_rule_rejects() -> None:
    outcome = _stale_over_rewrite(b"cd")
    assert outcome.error is StaleBaseError and outcome.state.content == b"abcdefX"  # the rule's answer
    assert outcome.also_acceptable is not None
    assert outcome.also_acceptable.content == b"ZbcdefX"  # what the author meant, where it meant it


def test_a_read_rewritten_with_other_bytes_allows_nothing_else() -> None:
    outcome = _stale_over_rewrite(b"cX")
    assert outcome.error is StaleBaseError and outcome.also_acceptable is None


def test_the_allowance_needs_the_neighbours_where_they_were() -> None:
    """'cd' typed again somewhere else is not the region: its neighbours say where it belongs."""
    state = initial_diff_state(b"abcdef")
    for operation in (TakeSnapshot(), ToolWrite(2, 2, b""), ToolWrite(4, 0, b"cd")):
        state = diff_step(state, operation).state
    assert state.content == b"abefcd"
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(0, 1, b"Z"),), (Region(2, 4),)))
    assert outcome.error is StaleBaseError and outcome.also_acceptable is None
