"""A diff applied to an emptied buffer without a staleness check: "nothing there to conflict with"."""

from __future__ import annotations

from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import Placed
from rollcert.specimens._diff_base import register_diff


def post_image(diff: AuthoredDiff) -> bytes:
    """The snapshot with the diff's hunks applied: the text the author meant to leave."""
    base, pieces, cursor = diff.base.content, [], 0
    for hunk in diff.hunks:
        pieces += [base[cursor : hunk.start], hunk.replacement]
        cursor = hunk.end
    return b"".join([*pieces, base[cursor:]])


@register_diff("unchecked_when_live_empty", breaks={"S1"})
class UncheckedWhenLiveEmptyBuffer(DiffableBuffer):
    """The staleness check is exact, except where it seemed pointless: when
    the live buffer is empty there is "nothing there to conflict with", so the
    diff is taken as the creation of the file and the author's intended text
    (the snapshot with the hunks applied) is written into it, as an editor
    does when it saves over a file that was truncated or deleted under it. But
    an empty buffer is not an absent one: a tool emptied it on purpose (a
    formatter that cleared a generated file, a `git rm`, a `truncate` before a
    rewrite), and the stale diff now brings back every byte the tool removed,
    on top of a base its author never saw."""

    def _place(self, diff: AuthoredDiff) -> list[Placed]:
        if not len(self) and not self._base_unchanged(diff.base):
            return [(0, 0, post_image(diff))]  # the bug: an empty base is never stale
        return super()._place(diff)
