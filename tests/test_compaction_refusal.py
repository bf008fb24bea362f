"""Issue 42 (precision): a compaction that keeps a record above an out-of-log
write may succeed (the model keeps every state whole, so its base is truthful)
or be refused with DivergenceError, changing nothing (a journal of inverses
would compute its base by undoing across the write). The model states both
(``model.reference.compaction_may_refuse``); the bundled buffer refuses, and
R0's compaction rule now draws such compactions instead of avoiding them."""

from __future__ import annotations

import pytest

from rollcert.model.operations import Compact
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import compaction_may_refuse
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import COMPACTION_REFUSED
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.resolve import resolve_target

#: Two records with an out-of-log write between them: the barrier sits at depth 1.
HISTORY: list[Operation] = [Splice(0, 0, b"ab"), OutOfLogWrite(0, 1, b"Z"), Splice(2, 0, b"cd")]


def _state_after(operations: list[Operation]):  # type: ignore[no-untyped-def]
    state = initial_state(b"")
    for operation in operations:
        state = step(state, operation).state
    return state


@pytest.mark.parametrize(
    ("keep", "may_refuse"),
    [(0, False), (1, False), (2, True)],
    ids=["keep none", "keep the record above the write only (base is the written state)", "keep both (crosses it)"],
)
def test_a_compaction_may_be_refused_only_when_its_kept_records_cross_an_out_of_log_write(keep: int, may_refuse: bool) -> None:
    state = _state_after(HISTORY)
    assert state.depth == 2 and state.barriers == frozenset({1})
    assert compaction_may_refuse(state, Compact(keep)) is may_refuse
    assert step(state, Compact(keep)).error is None  # the model itself always succeeds
    readings = ROLLBACK.predict(state, Compact(keep)).readings
    refusals = [r for r in readings if r.error == "DivergenceError"]
    assert [r.note for r in refusals] == ([COMPACTION_REFUSED] if may_refuse else [])
    assert all(r.state == state for r in refusals)  # a refusal changes nothing


def test_no_barrier_no_refusal_and_bad_arguments_are_not_refusals() -> None:
    plain = _state_after([Splice(0, 0, b"ab"), Splice(2, 0, b"cd")])
    assert not any(compaction_may_refuse(plain, Compact(keep)) for keep in range(3))
    crossed = _state_after(HISTORY)
    assert not compaction_may_refuse(crossed, Compact(3)) and not compaction_may_refuse(crossed, Compact(-1))
    assert not compaction_may_refuse(crossed, Rollback(1))


def test_the_bundled_buffer_refuses_such_a_compaction_and_the_judge_accepts_it() -> None:
    steps = replay(ROLLBACK, resolve_target("bundled"), BufferConfig(b""), [*HISTORY, Compact(2), Compact(1), Rollback(1)])
    assert all(record.ok for record in steps)
    assert [record.actual.error for record in steps[3:]] == ["DivergenceError", None, None]
    assert steps[-1].actual.buffer == b"Zb"  # the kept record undone: the written state below it
