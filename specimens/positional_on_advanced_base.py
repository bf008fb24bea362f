"""Positional hunks applied at their old offsets after the base moved."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff, DiffableBuffer, Placed
from rollcert.specimens import register
from rollcert.stateful_tests.adapters.bundled_diffs import DIFF_SPECIMEN_CAPABILITIES, specimen_adapter


@register(
    "positional_on_advanced_base",
    breaks={"S1"},
    also_caught_by={
        "S2": "the S2 machine applies diffs too (before rolling them back), and every apply "
        "is judged by the S1 rule, so the same wrong accept shows there",
        "S3": "the S3 machine applies diffs after edits and rollbacks, and every apply is "
        "judged by the S1 rule, so the same wrong accept shows there",
    },
    capabilities=DIFF_SPECIMEN_CAPABILITIES,
    adapter=specimen_adapter,
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
