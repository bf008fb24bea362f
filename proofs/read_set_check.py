"""S1 on the code's own check: CrossHair on ``impl/diffs.py``'s read-region trace.

Why (issue 44): the z3 theorem ``read-set-equality-means-apply-equals-reauthor``
said that equal reads give equal writes — true of any function, and still
provable with almost all its hypotheses removed. What S1 needs is a statement
about the check ``impl`` runs: ``DiffableBuffer._shift`` (with
``map_intervals``) accepts a read region only when every byte of it is still
there, contiguous and in order, at the place it moves the hunk to.

The statement here is checked by CrossHair on the *real* ``_shift``: for a
snapshot of ``length`` bytes, a non-empty read region ``[start, end)`` and a
route of two edits (any offset, removed and inserted length valid where it
applies), the bytes are tagged with identities (the model's idea: the original
cell ``i`` is ``i``, an inserted cell is a fresh negative number) and the
edits applied to the tags; the check must **accept exactly when** the
region's cells are, after the edits, contiguous and in order, and then the
shift it returns must point at them. Accepting a changed region is S1's
violation; rejecting an unchanged one is imprecision, which ``impl`` claims
not to have (its docstring: "exact"), so it is checked too.

The inputs are small integers and the code is integer arithmetic over lists
of pairs, which CrossHair keeps symbolic: ``CONFIRMED`` means every path
within the stated bounds was explored.
"""

from __future__ import annotations

from typing import Any

#: Longest snapshot, and longest insert of one edit, in the CrossHair check.
MAX_LENGTH = 5
MAX_INSERT = 2
BUDGET_S = 120.0


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


def traced_shift(start: int, end: int, route: list[tuple[tuple[int, int, int], ...]]) -> int | None:
    """``impl``'s answer for region ``[start, end)`` along ``route``: the shift,
    or ``None`` for a rejection (``StaleBaseError``)."""
    from rollcert.impl.diffs import DiffableBuffer
    from rollcert.model.contract import Region
    from rollcert.model.errors import StaleBaseError

    try:
        return DiffableBuffer._shift(_Host(), _Diff(), Region(start, end), route)  # type: ignore[arg-type]
    except StaleBaseError:
        return None


def tagged_after(length: int, route: list[tuple[tuple[int, int, int], ...]]) -> list[int]:
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


def check(budget_s: float = BUDGET_S) -> tuple[str, float, str]:
    """CrossHair on :func:`read_check_is_exact`: (status, seconds, detail)."""
    from rollcert.proofs.crosshair_checks import check_contract

    result = check_contract(read_check_is_exact, budget_s)
    return result.status, result.seconds, result.detail


BOUNDS = (
    f"snapshots of 0..{MAX_LENGTH} bytes, every non-empty read region, routes of two edits "
    f"(every offset, removed length, insert of 0..{MAX_INSERT} bytes valid where it applies)"
)
