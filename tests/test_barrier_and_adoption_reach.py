"""Issue 42's mutation run, two more blind spots closed by the generators:

- a rollback whose count ends exactly at the depth of an out-of-log write (R4):
  allowed, where one more record is refused. The counts drawn were 1, the whole
  depth, one past it, or anything between, so a check that also refused the
  rollback ending there passed (``strategies.rollback_steps_from`` now draws it);
- adoption on a durable journal: ``adopt_current`` rewrites the journal's base,
  and no durable run adopted, so a base that recovery refuses passed (R5's
  ``reopen`` rule now adopts first, one time in four).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Reopen
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.strategies import rollback_steps_from
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.resolve import resolve_target

#: A record, an out-of-log write (at depth 1), then two records above it.
ABOVE_A_WRITE: list[Operation] = [Splice(0, 1, b"J"), OutOfLogWrite(4, 1, b"O"), Splice(1, 1, b"E"), Splice(2, 1, b"L")]


def _after(operations: list[Operation], initial: bytes = b"hello") -> ModelState:
    state = initial_state(initial)
    for operation in operations:
        state = step(state, operation).state
    return state


def _words(count: int) -> Iterator[bytes]:
    rng = random.Random(42)
    for _ in range(count):
        yield rng.randbytes(16)


def test_a_rollback_count_is_drawn_that_stops_exactly_at_an_out_of_log_write() -> None:
    state = _after([Splice(0, 0, b"ab"), OutOfLogWrite(0, 1, b"Z"), Splice(2, 0, b"cd"), Splice(0, 0, b"x")])
    assert state.depth == 3 and state.barriers == frozenset({1})
    counts = [rollback_steps_from(state, word) for word in _words(2000)]
    assert counts.count(2) > 2000 // 5 * 0.8  # its own fifth, beside the "anything between" draws of 2
    plain = _after([Splice(0, 0, b"ab"), Splice(2, 0, b"cd"), Splice(0, 0, b"x")])
    # Without a write, the draws are what they were (1, anything, the depth, one past it).
    assert {rollback_steps_from(plain, word) for word in _words(2000)} == {1, 2, 3, 4}


def test_the_rollback_that_stops_at_the_write_is_allowed_and_one_more_is_refused() -> None:
    target = resolve_target("bundled")
    allowed = replay(ROLLBACK, target, BufferConfig(b"hello"), [*ABOVE_A_WRITE, Rollback(2)])
    assert all(record.ok for record in allowed) and allowed[-1].actual.buffer == b"JellO"
    refused = replay(ROLLBACK, target, BufferConfig(b"hello"), [*ABOVE_A_WRITE, Rollback(3)])
    assert all(record.ok for record in refused) and refused[-1].actual.error == "DivergenceError"


def test_a_durable_buffer_that_adopted_reopens_at_the_adopted_state() -> None:
    operations: list[Operation] = [
        Splice(0, 1, b"J"),
        Splice(1, 1, b"E"),
        AdoptCurrent(),
        Reopen(),
        Splice(0, 0, b"!"),
        Rollback(1),
        Rollback(1),
    ]
    records = replay(ROLLBACK, resolve_target("bundled"), BufferConfig(b"hello", durable=True), operations)
    assert all(record.ok for record in records)
    assert [record.actual.buffer for record in records[3:]] == [b"JEllo", b"!JEllo", b"JEllo", b"JEllo"]
    assert records[-1].actual.depth == 0  # the adopted state is the horizon: nothing below it to undo
