"""The attribution search (``model.properties._misplaced_restorations``) stops
building candidate buffers once it holds as many as it keeps: it used to build
one per remaining place anyway (a buffer copy each), and a failing step on a
1.3 KB start in one-byte chunks (issue 42's small chunks) spent minutes of
copies per minimisation. The budget is counted as before, so the candidates
are exactly those of the plain loop, written out here as the reference."""

from __future__ import annotations

import random
import time

from rollcert.model import properties
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import step


def _reference(before: ModelState, count: int, *, anywhere: bool) -> set[bytes]:
    """The loop as it was: every place tried, every candidate built."""
    buffers = {before.current}
    work = 0
    for edit, below in properties._records(before, count):
        reached: set[bytes] = set()
        for buffer in buffers:
            big = len(buffer) > properties.ATTRIBUTION_SCAN_BYTES
            if work > properties.ATTRIBUTION_WORK:
                places: list[int] | range = [edit.offset]
            elif anywhere and not big:
                places = range(len(buffer) - len(edit.insert) + 1)
            else:
                places = properties._look_alikes(buffer, edit)
            limit = properties.ATTRIBUTION_WIDE_CANDIDATES if big else properties.ATTRIBUTION_CANDIDATES
            for at in places:
                work += 1 + len(buffer) // 1024
                undone = properties._undo_at(buffer, below, edit, at)
                if undone is not None and len(reached) < limit:
                    reached.add(undone)
        buffers = reached
    return buffers


def _history(size: int, seed: int) -> ModelState:
    rng = random.Random(seed)
    state = initial_state(bytes(rng.choices(b"ab\n", k=size)))
    for _ in range(3):
        offset = rng.randrange(len(state.current) + 1)
        state = step(state, Splice(offset, min(2, len(state.current) - offset), bytes(rng.choices(b"abc", k=2)))).state
    return state


def test_the_candidates_are_the_plain_loops_and_the_search_is_quick() -> None:
    for seed, size in ((0, 40), (1, 300), (2, 1300)):
        state = _history(size, seed)
        for anywhere in (True, False):
            assert properties._misplaced_restorations(state, 3, anywhere=anywhere) == _reference(
                state, 3, anywhere=anywhere
            )
    started = time.perf_counter()
    properties._misplaced_restorations(_history(1300, 3), 3, anywhere=True)
    assert time.perf_counter() - started < 0.05  # 3 ms here; the plain loop 120 ms (100,000 buffers of 1.3 KB)
