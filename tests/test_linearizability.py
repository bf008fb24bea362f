"""The R7 checker on hand-written histories, linearizable and not.

Times are small integers; what matters is only which calls overlap.
"""

from __future__ import annotations

import itertools

import pytest

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.stateful_tests.linearizability import Call
from rollcert.stateful_tests.linearizability import Checkpoint
from rollcert.stateful_tests.linearizability import History
from rollcert.stateful_tests.linearizability import Observe
from rollcert.stateful_tests.linearizability import RollbackCall
from rollcert.stateful_tests.linearizability import RollbackToLabel
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.stateful_tests.linearizability import check
from rollcert.stateful_tests.linearizability import overlapping
from rollcert.stateful_tests.linearizability import replay_order


def history(initial: bytes, *calls: tuple[str, int, int | None, object, str | None, bytes | int | None]) -> History:
    return History(
        initial,
        tuple(
            Call(index, thread, called, returned, action, error, value)  # type: ignore[arg-type]
            for index, (thread, called, returned, action, error, value) in enumerate(calls)
        ),
    )


def splice(offset: int, delete_length: int, insert: bytes) -> SpliceCall:
    return SpliceCall(Splice(offset, delete_length, insert))


def rollback(steps: int) -> RollbackCall:
    return RollbackCall(Rollback(steps))


# The issue's example: b"abc" -> b"abc12" -> b"abc123456", then rollback(2) back to b"abc".
PREFIX = (
    ("prefix", 0, 1, splice(3, 0, b"12"), None, None),
    ("prefix", 2, 3, splice(5, 0, b"3456"), None, None),
)


def test_sequential_history_is_linearizable_in_its_own_order() -> None:
    h = history(b"abc", *PREFIX, ("prefix", 4, 5, Observe("length"), None, 9))
    result = check(h)
    assert result.verdict == "linearizable"
    assert result.order == (0, 1, 2)


def test_wrong_sequential_observation_is_not_linearizable() -> None:
    h = history(b"abc", *PREFIX, ("prefix", 4, 5, Observe("length"), None, 8))
    result = check(h)
    assert result.verdict == "not_linearizable"
    assert result.order == (0, 1)
    [stuck] = result.stuck
    assert stuck.call.id == 2 and stuck.allowed is not None and stuck.allowed.value == 9


@pytest.mark.parametrize("seen", [9, 3])
def test_observer_overlapping_a_rollback_may_see_before_or_after(seen: int) -> None:
    h = history(
        b"abc",
        *PREFIX,
        ("T1", 10, 20, rollback(2), None, None),
        ("T2", 12, 14, Observe("length"), None, seen),
    )
    assert check(h).verdict == "linearizable"


def test_the_issue_example_length_5_at_depth_2_is_not_linearizable() -> None:
    h = history(
        b"abc",
        *PREFIX,
        ("T1", 10, 20, rollback(2), None, None),
        ("T2", 12, 14, Observe("length"), None, 5),
    )
    result = check(h)
    assert result.verdict == "not_linearizable"
    # Longest partial order: the prefix and the rollback; then length 5 fits nowhere.
    assert result.order == (0, 1, 2)
    [stuck] = result.stuck
    assert stuck.call.id == 3 and stuck.allowed is not None and stuck.allowed.value == 3


def test_real_time_order_is_respected() -> None:
    """The observer called after the rollback returned must see its result, even
    though the old value would fit an order that ignores real time."""
    h = history(
        b"abc",
        *PREFIX,
        ("T1", 10, 20, rollback(2), None, None),
        ("T2", 21, 22, Observe("length"), None, 9),
    )
    assert check(h).verdict == "not_linearizable"


def test_two_observations_in_one_thread_cannot_disagree_with_one_mutation() -> None:
    """depth says the splice happened, the later revision says it did not."""
    h = history(
        b"",
        ("T1", 0, 100, splice(0, 0, b"x"), None, None),
        ("T2", 10, 11, Observe("depth"), None, 1),
        ("T2", 12, 13, Observe("revision"), None, 0),
    )
    assert check(h).verdict == "not_linearizable"
    consistent = history(
        b"",
        ("T1", 0, 100, splice(0, 0, b"x"), None, None),
        ("T2", 10, 11, Observe("depth"), None, 1),
        ("T2", 12, 13, Observe("revision"), None, 1),
    )
    assert check(consistent).verdict == "linearizable"


def test_concurrent_splices_may_apply_in_either_order() -> None:
    for first, second in itertools.permutations([b"ab", b"ba"]):
        h = history(
            b"",
            ("T1", 0, 10, splice(0, 0, b"a"), None, None),
            ("T2", 1, 9, splice(0, 0, b"b"), None, None),
            ("T1", 11, 12, Observe("read"), None, first),
        )
        assert check(h).verdict == "linearizable", second
    torn = history(
        b"",
        ("T1", 0, 10, splice(0, 0, b"a"), None, None),
        ("T2", 1, 9, splice(0, 0, b"b"), None, None),
        ("T1", 11, 12, Observe("read"), None, b"a"),  # one splice lost
    )
    assert check(torn).verdict == "not_linearizable"


def test_an_error_depends_on_the_order_chosen() -> None:
    """rollback(1) on an empty log is refused unless the concurrent splice went first."""
    refused = history(
        b"q",
        ("T1", 0, 10, splice(0, 0, b"a"), None, None),
        ("T2", 1, 9, rollback(1), "UnreachableRollbackError", None),
        ("T1", 11, 12, Observe("read"), None, b"aq"),
    )
    assert check(refused).verdict == "linearizable"
    undone = history(
        b"q",
        ("T1", 0, 10, splice(0, 0, b"a"), None, None),
        ("T2", 1, 9, rollback(1), None, None),
        ("T1", 11, 12, Observe("read"), None, b"q"),
    )
    assert check(undone).verdict == "linearizable"
    impossible = history(
        b"q",
        ("T1", 0, 10, splice(0, 0, b"a"), None, None),
        ("T2", 11, 12, rollback(1), "UnreachableRollbackError", None),
    )
    assert check(impossible).verdict == "not_linearizable"


def test_bad_offset_is_judged_in_the_order_chosen() -> None:
    h = history(
        b"",
        ("T1", 0, 10, splice(0, 0, b"abc"), None, None),
        ("T2", 1, 9, splice(2, 1, b"Z"), None, None),  # valid only after the first
        ("T2", 11, 12, Observe("read"), None, b"abZ"),
    )
    assert check(h).verdict == "linearizable"
    refused = history(b"", ("T2", 1, 9, splice(2, 1, b"Z"), "ValueError", None))
    assert check(refused).verdict == "linearizable"


def test_checkpoints_are_matched_by_label_whatever_their_model_index() -> None:
    """Two threads take checkpoints concurrently; which is the model's #0 depends on
    the order. Each thread rolls back to its own."""
    h = history(
        b"",
        ("T1", 0, 10, splice(0, 0, b"a"), None, None),
        ("T1", 11, 30, Checkpoint(1), None, None),
        ("T2", 12, 29, Checkpoint(2), None, None),
        ("T2", 31, 32, splice(1, 0, b"b"), None, None),
        ("T2", 33, 34, RollbackToLabel(2), None, None),
        ("T2", 35, 36, Observe("read"), None, b"a"),
        ("T2", 37, 38, Observe("depth"), None, 1),
    )
    assert check(h).verdict == "linearizable"


def test_unknown_outcome_may_be_placed_or_not() -> None:
    took_effect = history(
        b"",
        ("T1", 0, None, splice(0, 0, b"x"), None, None),
        ("T2", 5, 6, Observe("read"), None, b"x"),
    )
    assert check(took_effect).verdict == "linearizable"
    never = history(
        b"",
        ("T1", 0, None, splice(0, 0, b"x"), None, None),
        ("T2", 5, 6, Observe("read"), None, b""),
    )
    assert check(never).verdict == "linearizable"
    but_not_before_its_call = history(
        b"",
        ("T2", 0, 1, Observe("read"), None, b"x"),
        ("T1", 5, None, splice(0, 0, b"x"), None, None),
    )
    assert check(but_not_before_its_call).verdict == "not_linearizable"


def test_budget_exhausted_is_unknown_never_linearizable() -> None:
    # Many concurrent same-result splices: lots of orders, and the final read fails.
    calls = [(f"T{i}", 0, 100, splice(0, 0, b"a"), None, None) for i in range(8)]
    calls.append(("R", 101, 102, Observe("length"), None, 7))
    h = history(b"", *calls)
    assert check(h, budget=5).verdict == "unknown"
    assert check(h).verdict == "not_linearizable"


def test_memoisation_keeps_commuting_histories_cheap() -> None:
    """Twelve concurrent identical observations: 12! orders, but the memo sees one
    model state per set placed, so the search visits on the order of 2**12 nodes."""
    calls = [(f"T{i}", 0, 100, Observe("depth"), None, 0) for i in range(12)]
    result = check(history(b"", *calls))
    assert result.verdict == "linearizable"
    assert result.nodes < 12 * 2**12


def test_replay_and_overlap_helpers() -> None:
    h = history(
        b"abc",
        *PREFIX,
        ("T1", 10, 20, rollback(2), None, None),
        ("T2", 12, 14, Observe("length"), None, 3),
    )
    result = check(h)
    placed = replay_order(h, result.order)
    assert [p.call.id for p in placed] == list(result.order)
    assert placed[-1].prediction.after.model.current in (b"abc", b"abc123456")
    assert [c.id for c in overlapping(h, h.calls[2])] == [3]
    assert overlapping(h, h.calls[0]) == []


def test_malformed_histories_are_refused() -> None:
    with pytest.raises(ValueError):
        History(b"", (Call(1, "T", 0, 1, Observe("read"), None, b""),))
    with pytest.raises(ValueError):
        History(b"", (Call(0, "T", 5, 1, Observe("read"), None, b""),))
    with pytest.raises(ValueError):
        Observe("colour")
