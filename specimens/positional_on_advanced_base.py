"""Positional hunks applied at their old offsets after the base moved."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import Placed
from rollcert.specimens._diff_base import register_diff


@register_diff(
    "positional_on_advanced_base",
    breaks={"S1"},
    also_caught_by={
        "S3": "on a snapshot of a rolled-away state, at the depth that state had, it applies a "
        "positional diff at its own offsets over bytes that changed there: exactly what a "
        "revision counter that stepped back would vouch for, so S3's clause breaks too",
    },
)
class PositionalOnAdvancedBaseBuffer(DiffableBuffer):
    """Content-anchored diffs are handled exactly, but a diff that names its
    places by offset or line number is applied at those numbers whenever they
    still fit in the live buffer, however much the base moved since the
    snapshot. A tool that inserted a line above the hunk shifts everything by
    one: the hunk now rewrites the line above the one its author meant, and
    the result reads like a plausible edit. 'Line 120' means nothing once
    somebody else has written before line 120."""

    def _place(self, diff: AuthoredDiff) -> list[Placed]:
        if diff.mode == "positional" and diff.hunks[-1].end <= len(self):
            return [(h.start, h.end, h.replacement) for h in diff.hunks]  # the bug: offsets trusted
        return super()._place(diff)
