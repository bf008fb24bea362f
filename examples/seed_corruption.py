"""The seed's incident, reproduced and then prevented.

An agent rewrites ``int`` -> ``list[int]`` (logged), then makes an overlapping
rewrite whose undo record is dropped under memory pressure, then rolls back
one step. On the seed's design (mutate first, append the record best-effort)
the rollback replays the first record at an offset the second edit shifted:
a plausible buffer that never existed. The bundled ``JournaledBuffer`` refuses
the second rewrite with ``JournalError`` before touching anything, and the
rollback is exact.

Run: python examples/seed_corruption.py
"""

from __future__ import annotations

from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.impl import JournalError
from rollcert.specimens.best_effort_log import BestEffortLogBuffer

SOURCE = b'def total(values: int) -> int:\n    """Sum of values."""\n'


def incident(buffer: BestEffortLogBuffer | JournaledBuffer, drop_next_record: object) -> bytes:
    buffer.splice(SOURCE.index(b"int"), 3, b"list[int]")  # 1. logged
    end = buffer.read().index(b":\n")
    start = SOURCE.index(b"values")
    drop_next_record()  # type: ignore[operator]  # memory pressure: the next record is refused
    try:
        buffer.splice(start, end - start, b"values: list[int]) -> list[int]")  # 2. overlapping
        print("  step 2 went through (its undo record was dropped)")
    except JournalError as error:
        print(f"  step 2 refused: JournalError: {error}")
    buffer.rollback(1)  # 3. undo "the last edit"
    return buffer.read()


print("The seed's design (best-effort log):")
seed = BestEffortLogBuffer(SOURCE)
result = incident(seed, seed.fail_next_append)
after_step_one = SOURCE.replace(b"values: int", b"values: list[int]", 1)
print(f"  after rollback: {result!r}")
print(f"  a state that existed before: {result in (SOURCE, after_step_one)}  <- silent corruption")

print("The bundled JournaledBuffer:")
journal = FaultInjectingJournal(InMemoryJournal())
bundled = JournaledBuffer(SOURCE, journal=journal)
result = incident(bundled, journal.fail_next_append)
print(f"  after rollback: {result!r}")
print(f"  equals the original: {result == SOURCE}")
