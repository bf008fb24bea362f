"""A declared read checked by its ends and its length only, as an editor's tracked range."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import Edit
from rollcert.impl.diffs import Interval
from rollcert.impl.diffs import map_intervals
from rollcert.model.contract import Region
from rollcert.specimens._diff_base import register_diff


def _traced(position: int, route: list[tuple[Edit, ...]]) -> int | None:
    """Where the byte at ``position`` of the snapshot stands now, or ``None`` if it was removed."""
    pieces: list[Interval] | None = [(position, position + 1)]
    for edits in route:
        pieces = map_intervals(pieces, edits) if pieces is not None else None
    return pieces[0][0] if pieces else None


@register_diff("read_set_ends_only", breaks={"S1"})
class ReadSetEndsOnlyBuffer(DiffableBuffer):
    """The bytes each hunk rewrites (and the byte on either side) are traced
    exactly through the revision map, but a declared read region can be long
    (a whole function the new code calls), so it is tracked the way an editor
    tracks a range: by markers on its first and last byte, which move with
    every edit. The region counts as unchanged when both markers survive and
    still span as many bytes as before: nothing inserted, nothing deleted,
    its ends untouched. A tool that rewrote bytes strictly inside the region
    with as many other bytes (a renamed parameter of the same length, a
    flipped constant) moves neither marker and changes no length, so the diff
    applies over a read its author never saw."""

    def _regions_to_check(self, diff: AuthoredDiff) -> tuple[Region, ...]:
        declared = set(diff.reads)
        exact = tuple(region for region in diff.effective_reads if region not in declared or self._is_write_context(diff, region))
        route = self._route(diff.base.node, self._path[-1])
        for region in diff.reads:
            if region in exact:
                continue
            first = _traced(region.start, route) if route is not None else None
            last = _traced(region.end - 1, route) if route is not None else None
            if first is None or last is None or last - first != region.end - region.start - 1:
                # the markers did not survive or span another length: stale, checked the exact way
                exact += (region,)
            # the bug: markers that survived at the old distance are taken for an unchanged region
        return tuple(sorted(exact, key=lambda r: (r.start, r.end)))

    @staticmethod
    def _is_write_context(diff: AuthoredDiff, region: Region) -> bool:
        """A declared read that is also a hunk's widened span: checked exactly, as the write-set is."""
        length = len(diff.base.content)
        return any(Region(max(0, h.start - 1), min(length, h.end + 1)) == region for h in diff.hunks)
