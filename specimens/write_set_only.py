"""A staleness check that looks only at the bytes the diff writes."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.model.contract import Region
from rollcert.model.diffs import effective_regions
from rollcert.specimens._diff_base import register_diff


@register_diff("write_set_only", breaks={"S1"})
class WriteSetOnlyBuffer(DiffableBuffer):
    """Before applying a content diff to a changed base, it checks that the
    bytes each hunk rewrites (and the byte on either side) are untouched, and
    moves the hunks to where those bytes now stand — exactly, through the
    revision map — but it never looks at the diff's declared read-set. A tool
    that rewrote the region the author *read* (the function whose signature
    the new code calls, the lines a summary summarises) goes unnoticed: the
    diff applies cleanly, and its content now rests on text that is gone.
    This is what a merge tool's overlap check does; in the incident, an
    inserted block of constraints referred to lines a retrieval tool had just
    replaced."""

    def _regions_to_check(self, diff: AuthoredDiff) -> tuple[Region, ...]:
        return effective_regions(len(diff.base.content), diff.hunks, ())  # the bug: reads ignored
