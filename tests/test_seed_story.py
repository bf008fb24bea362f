"""The seed's incident, replayed: ``int`` → ``list[int]``, an overlapping rewrite
whose inverse append is dropped, then a rollback.

On the seed's design (``best_effort_log``: mutate first, append best-effort) the
rollback silently produces a buffer that never existed. On the bundled
implementation the dropped append is a ``JournalError`` before anything changes,
and the rollback is exact.
"""

from __future__ import annotations

import contextlib

import pytest

from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.impl import JournalError
from rollcert.specimens.best_effort_log import BestEffortLogBuffer

SOURCE = b'def total(values: int) -> int:\n    """Sum of values; values is an int."""\n'
PARAMETER = SOURCE.index(b"int")
# Step 2 rewrites a span that overlaps step 1's and changes length before the
# rest of the line: "values: list[int]) -> int" becomes "values: list[int]) -> list[int]".
STEP_TWO_OFFSET = SOURCE.index(b"values")


def incident(buffer: object, fail_next_append: object) -> bytes:
    splice = buffer.splice  # type: ignore[attr-defined]
    splice(PARAMETER, 3, b"list[int]")  # 1. int -> list[int]; logged
    after_one = buffer.read()  # type: ignore[attr-defined]
    end = after_one.index(b":\n")
    fail_next_append()  # type: ignore[operator]  # memory pressure: the next append is refused
    with contextlib.suppress(JournalError):  # the bundled buffer refuses; the seed's design does not
        splice(STEP_TWO_OFFSET, end - STEP_TWO_OFFSET, b"values: list[int]) -> list[int]")  # 2. overlapping
    buffer.rollback(1)  # type: ignore[attr-defined]  # 3. dead end: undo the last edit
    return buffer.read()  # type: ignore[attr-defined, no-any-return]


def test_seed_design_corrupts_silently() -> None:
    buffer = BestEffortLogBuffer(SOURCE)
    result = incident(buffer, buffer.fail_next_append)
    after_one = SOURCE.replace(b"values: int", b"values: list[int]", 1)
    assert result not in (SOURCE, after_one)  # a state that never existed
    assert result.count(b"\n") == SOURCE.count(b"\n")  # ...and it still looks plausible


def test_bundled_implementation_refuses_then_rolls_back_exactly() -> None:
    journal = FaultInjectingJournal(InMemoryJournal())
    buffer = JournaledBuffer(SOURCE, journal=journal)
    buffer.splice(PARAMETER, 3, b"list[int]")
    journal.fail_next_append()
    end = buffer.read().index(b":\n")
    with pytest.raises(JournalError):
        buffer.splice(STEP_TWO_OFFSET, end - STEP_TWO_OFFSET, b"values: list[int]) -> list[int]")
    assert buffer.depth == 1
    buffer.rollback(1)
    assert buffer.read() == SOURCE


def test_incident_function_on_bundled_matches() -> None:
    journal = FaultInjectingJournal(InMemoryJournal())
    assert incident(JournaledBuffer(SOURCE, journal=journal), journal.fail_next_append) == SOURCE
