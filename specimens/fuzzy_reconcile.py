"""Hunks located again by searching for their old text, as patch tools with fuzz do."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import Placed
from rollcert.model.contract import Region
from rollcert.specimens._diff_base import register_diff


def _nearest(live: bytes, text: bytes, origin: int) -> int | None:
    """The start of the occurrence of ``text`` in ``live`` nearest to ``origin``."""
    found = [p for p in range(len(live) - len(text) + 1) if live.startswith(text, p)]
    return min(found, key=lambda p: (abs(p - origin), p)) if found else None


@register_diff("fuzzy_reconcile", breaks={"S1"})
class FuzzyReconcileBuffer(DiffableBuffer):
    """When the base changed, a content diff is reconciled the way patch
    tools with fuzz do it: each read region counts as unchanged if its old
    text still occurs somewhere in the live buffer, and each hunk is placed
    at the occurrence of its old text (with one byte of context on each side)
    nearest to where it was. Text is not identity: a region a tool deleted
    and retyped, or one that now also occurs elsewhere, passes the search,
    and a hunk over repeated text lands on the wrong copy. No history is
    consulted, so nothing tells the copies apart."""

    def _rebase(self, diff: AuthoredDiff) -> list[Placed]:
        live, base = self.read(), diff.base.content
        for region in self._regions_to_check(diff):
            if base[region.start : region.end] not in live:
                raise self._stale(diff, f"no text matches region {region.describe()}", conflict=(region.start, region.end))
        placed: list[Placed] = []
        for hunk in diff.hunks:
            context = Region(max(0, hunk.start - 1), min(len(base), hunk.end + 1))
            position = _nearest(live, base[context.start : context.end], context.start)  # the bug: search
            if position is None:
                raise self._stale(diff, f"hunk context {context.describe()} not found", conflict=(context.start, context.end))
            shift = position - context.start
            placed.append((hunk.start + shift, hunk.end + shift, hunk.replacement))
        if any(placed[i][1] > placed[i + 1][0] for i in range(len(placed) - 1)):
            raise self._stale(diff, "hunks found out of order")
        return placed
