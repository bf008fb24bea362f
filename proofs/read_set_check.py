"""S1 on the code's own check: ``impl/diffs.py``'s read-region trace, checked.

Why (issue 44): the z3 theorem ``read-set-equality-means-apply-equals-reauthor``
said that equal reads give equal writes — true of any function, and still
provable with almost all its hypotheses removed. What S1 needs is a statement
about the check ``impl`` runs: ``DiffableBuffer._shift`` (with
``map_intervals``) accepts a read region only when every byte of it is still
there, contiguous and in order, at the place it moves the hunk to.

Two checks state it, on the *real* ``_shift``:

- :func:`read_check_is_exact`, for every snapshot of up to :data:`MAX_LENGTH`
  bytes, every non-empty read region ``[start, end)`` and every route of two
  edits (any offset, removed length and insert of up to :data:`MAX_INSERT`
  bytes valid where it applies; a rollback on the route is such an edit too):
  the bytes are tagged with identities (the model's idea: snapshot cell ``i``
  is ``i``, an inserted cell a fresh negative number) and the edits applied to
  the tags; the check must accept **exactly when** the region's cells are,
  after the edits, contiguous and in order, and then the shift it returns
  must point at them. Accepting a changed region is S1's violation;
  rejecting an unchanged one is imprecision, which ``impl`` claims not to
  have ("exact"), so it is checked too. :func:`exhaustive` runs every case
  (78,588; about 4 s here under load).
- ``read-check-accepts-only-unchanged-regions`` (z3, unbounded, one edit) on an
  encoding of the same check that ``tests/test_proofs_vacuity.py`` compares
  with the real function.

CrossHair was tried on :func:`read_check_is_exact` (it is a PEP 316 contract):
it finds a planted bug in ~6 s, but did not exhaust the paths of even the
4-byte bounds in 6 minutes on this machine (the identity lists become
symbolic sequences), and overran its own time budget, so ``rollcert prove``
runs the exhaustive check instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

#: Longest snapshot, and longest insert of one edit, in the CrossHair check.
MAX_LENGTH = 5
MAX_INSERT = 2


class _Host:
    """What ``DiffableBuffer._shift`` uses of its ``self``: ``_stale`` and
    ``revision``; the real ``_stale`` builds the real ``StaleBaseError``."""

    revision = 0

    def _stale(self, diff: Any, why: str, **fields: Any) -> Exception:
        from rollcert.impl.diffs import DiffableBuffer

        return DiffableBuffer._stale(self, diff, why, **fields)  # type: ignore[arg-type]


class _Base:
    revision = 0


class _Diff:
    base = _Base()


def traced_shift(start: int, end: int, route: Sequence[tuple[tuple[int, int, int], ...]]) -> int | None:
    """``impl``'s answer for region ``[start, end)`` along ``route``: the shift,
    or ``None`` for a rejection (``StaleBaseError``)."""
    from rollcert.impl.diffs import DiffableBuffer
    from rollcert.model.contract import Region
    from rollcert.model.errors import StaleBaseError

    try:
        return DiffableBuffer._shift(_Host(), _Diff(), Region(start, end), list(route))  # type: ignore[arg-type]
    except StaleBaseError:
        return None


def tagged_after(length: int, route: Sequence[tuple[tuple[int, int, int], ...]]) -> list[int]:
    """The identities of the cells after the route's edits: cell ``i`` of the
    snapshot is ``i``; each inserted cell gets a fresh negative identity."""
    cells = list(range(length))
    fresh = -1
    for edits in route:
        for offset, removed, inserted in reversed(edits):  # each in its node's coordinates
            new = list(range(fresh, fresh - inserted, -1))
            fresh -= inserted
            cells = cells[:offset] + new + cells[offset + removed :]
    return cells


def region_unchanged_at(cells: list[int], start: int, end: int) -> int | None:
    """Where the region's cells now lie, contiguous and in order, or ``None``."""
    if start not in cells:
        return None
    where = cells.index(start)
    return where if cells[where : where + end - start] == list(range(start, end)) else None


def read_check_is_exact(
    length: int, start: int, end: int, o1: int, r1: int, i1: int, o2: int, r2: int, i2: int
) -> bool:
    """impl's read-region check accepts exactly the unchanged regions, and moves them right.

    pre: 0 <= length <= 5
    pre: 0 <= start < end <= length
    pre: 0 <= o1 <= length and 0 <= r1 <= length - o1 and 0 <= i1 <= 2
    pre: 0 <= o2 <= length - r1 + i1 and 0 <= r2 <= length - r1 + i1 - o2 and 0 <= i2 <= 2
    post: __return__
    """
    route = [((o1, r1, i1),), ((o2, r2, i2),)]
    shift = traced_shift(start, end, route)
    where = region_unchanged_at(tagged_after(length, route), start, end)
    if shift is None:
        return where is None
    return where is not None and where == start + shift


def cases(max_length: int = 5, max_insert: int = 2) -> Iterator[tuple[int, ...]]:
    """Every input of :func:`read_check_is_exact` within the bounds."""
    for length in range(max_length + 1):
        for start in range(length):
            for end in range(start + 1, length + 1):
                for o1 in range(length + 1):
                    for r1 in range(length - o1 + 1):
                        for i1 in range(max_insert + 1):
                            middle = length - r1 + i1
                            for o2 in range(middle + 1):
                                for r2 in range(middle - o2 + 1):
                                    for i2 in range(max_insert + 1):
                                        yield (length, start, end, o1, r1, i1, o2, r2, i2)


def exhaustive(max_length: int = MAX_LENGTH, max_insert: int = MAX_INSERT) -> tuple[str, float, str]:
    """Every case of the bounds through the real check: (status, seconds, detail).
    ``FOUND`` names the first case where the check is not exact."""
    started = time.perf_counter()
    count = 0
    for case in cases(max_length, max_insert):
        count += 1
        if not read_check_is_exact(*case):
            length, start, end, o1, r1, i1, o2, r2, i2 = case
            route = [((o1, r1, i1),), ((o2, r2, i2),)]
            shift = traced_shift(start, end, route)
            verdict = "accepted" if shift is not None else "rejected"
            where = region_unchanged_at(tagged_after(length, route), start, end)
            truth = "unchanged" if where is not None else "changed"
            return ("FOUND", time.perf_counter() - started,
                    f"a {length}-byte snapshot, read region [{start}, {end}), edits (offset, removed, inserted) "
                    f"{route[0][0]} then {route[1][0]}: impl's check {verdict} it (shift {shift}), the region is {truth}"
                    + (f" at {where}" if where is not None else ""))
    return ("CONFIRMED", time.perf_counter() - started,
            f"all {count} cases: the check accepts exactly the unchanged regions and moves them right")


BOUNDS = (
    f"snapshots of 0..{MAX_LENGTH} bytes, every non-empty read region, routes of two edits "
    f"(every offset, removed length, insert of 0..{MAX_INSERT} bytes valid where it applies)"
)
