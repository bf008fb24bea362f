"""The reference model on hand-checked cases: each rule of SPEC §2–4 once."""

from __future__ import annotations

import pytest

from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.model.reference import step


def run(state: ModelState, *operations: Operation) -> ModelState:
    for operation in operations:
        outcome = step(state, operation)
        assert outcome.error is None, (operation, outcome.message)
        state = outcome.state
    return state


def test_splice_meaning() -> None:
    assert splice_bytes(b"hello", 1, 3, b"EY") == b"hEYo"
    state = run(initial_state(b"hello"), Splice(1, 3, b"EY"))
    assert (state.current, state.depth, state.revision) == (b"hEYo", 1, 1)


@pytest.mark.parametrize("offset, delete_length", [(-1, 0), (6, 0), (0, 6), (5, 1), (2, -1)])
def test_invalid_splice_is_a_value_error(offset: int, delete_length: int) -> None:
    with pytest.raises(ValueError):
        step(initial_state(b"hello"), Splice(offset, delete_length, b""))


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        step(initial_state(b"x"), Splice(True, 0, b""))  # a bool is not an offset
    with pytest.raises(TypeError):
        step(initial_state(b"x"), Splice(0, 0, "text"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        step(initial_state(b"x"), Rollback(1.0))  # type: ignore[arg-type]


def test_rollback_restores_every_earlier_state_exactly() -> None:
    state = run(initial_state(b"int x"), Splice(0, 3, b"list[int]"), Splice(0, 4, b"tuple"), Splice(9, 0, b"!"))
    history = state.states
    for depth in range(3, -1, -1):
        assert run(state, Rollback(3 - depth)).current == history[depth]


def test_revisions_never_repeat_after_rollback() -> None:
    state = run(initial_state(b""), Splice(0, 0, b"a"), Rollback(1), Splice(0, 0, b"a"))
    assert state.revision == 3 and state.current == b"a"


def test_rollback_past_horizon_changes_nothing() -> None:
    state = run(initial_state(b"ab"), Splice(0, 0, b"x"))
    outcome = step(state, Rollback(2))
    assert outcome.error is UnreachableRollbackError and outcome.state == state


def test_fault_refuses_splice_and_is_spent() -> None:
    state = run(initial_state(b"ab"), ArmJournalFault())
    refused = step(state, Splice(0, 0, b"x"))
    assert refused.error is JournalError and refused.state.current == b"ab" and not refused.state.fault_armed
    assert step(refused.state, Splice(0, 0, b"x")).error is None


def test_checkpoint_dies_when_rolled_past_even_if_depth_returns() -> None:
    """S3 / R3: the ABA case: same depth, same bytes even, different state."""
    state = run(initial_state(b""), Splice(0, 0, b"a"), TakeCheckpoint(), Rollback(1), Splice(0, 0, b"a"))
    outcome = step(state, RollbackTo(0))
    assert outcome.error is UnreachableRollbackError and outcome.state == state


def test_foreign_checkpoint_refused() -> None:
    assert step(initial_state(b""), RollbackToForeign()).error is UnreachableRollbackError


def test_barrier_blocks_exactly_the_step_that_crosses_the_write() -> None:
    state = run(initial_state(b"abc"), Splice(0, 0, b"1"), OutOfLogWrite(3, 1, b"X"), Splice(0, 0, b"2"))
    above = run(state, Rollback(1))  # the record made on top of the write undoes normally
    assert above.current == b"1abX"
    crossing = step(above, Rollback(1))
    assert crossing.error is DivergenceError and crossing.state == above
    interrupted = step(state, Rollback(2))
    assert interrupted.error is DivergenceError
    assert interrupted.state == state and interrupted.also_acceptable == above
    adopted = run(above, AdoptCurrent())
    assert (adopted.current, adopted.depth, adopted.barriers) == (b"1abX", 0, frozenset())


def test_bounded_reject_and_evict_oldest() -> None:
    full = run(initial_state(b"", capacity=1, policy="reject"), Splice(0, 0, b"a"))
    assert step(full, Splice(0, 0, b"b")).error is JournalError
    evicting = run(initial_state(b"", capacity=1, policy="evict_oldest"), TakeCheckpoint(), Splice(0, 0, b"a"), Splice(1, 0, b"b"))
    assert evicting.states == (b"a", b"ab")
    assert step(evicting, RollbackTo(0)).error is UnreachableRollbackError  # the horizon moved past it
    assert run(evicting, Rollback(1)).current == b"a"


def test_bad_model_configuration() -> None:
    with pytest.raises(ValueError):
        initial_state(b"", capacity=0)
    with pytest.raises(ValueError):
        initial_state(b"", policy="drop_newest")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "operation",
    [Splice(1, 2, b"\x00\xff"), Rollback(3), TakeCheckpoint(), RollbackTo(2), RollbackToForeign(),
     OutOfLogWrite(0, 0, b"z"), ArmJournalFault(), AdoptCurrent()],
)
def test_operations_round_trip_through_json(operation: Operation) -> None:
    assert operation_from_json(operation_to_json(operation)) == operation


@pytest.mark.parametrize("record", [None, {"op": "explode"}, {"op": "rollback", "steps": "2"}, {"op": "splice", "offset": 0, "delete_length": 0, "insert": "***"}])
def test_bad_operation_json_is_a_typed_error(record: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        operation_from_json(record)
