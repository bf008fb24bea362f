"""Undoing an applied diff "repairs" the buffer from the author's snapshot when the lengths agree."""

from __future__ import annotations

from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.specimens._diff_base import register_diff


@register_diff("author_snapshot_when_lengths_agree", breaks={"S2"})
class AuthorSnapshotWhenLengthsAgreeBuffer(DiffableBuffer):
    """Undoing an applied diff rolls the journal back to the live base it was
    applied to, as it should, and then "repairs" the result from the author's
    snapshot B0, which it keeps as the known-good text: the repair was added
    for an apply that had left normalised line endings behind. Its author knew
    that writing B0 back over another writer's text would be wrong, so the
    repair runs only when the base after the rollback is exactly as long as
    B0, a cheap sanity check ("same length, so nobody else wrote here"). A
    tool that rewrote a word with one of the same length between the snapshot
    and the apply (a renamed variable, a bumped version digit, a fixed typo)
    passes that check, and undoing the diff silently erases the tool's write:
    the backward conflict S2 forbids, hidden behind a length that agrees."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._authored_on: dict[AppliedDiff, bytes] = {}

    def apply_diff(self, diff: AuthoredDiff) -> AppliedDiff:
        applied = super().apply_diff(diff)
        self._authored_on[applied] = diff.base.content
        return applied

    def rollback_diff(self, applied: AppliedDiff) -> None:
        super().rollback_diff(applied)
        snapshot = self._authored_on.get(applied)
        if snapshot is not None and len(snapshot) == len(self) and snapshot != self.read():
            self.splice(0, len(self), snapshot)  # the bug: a length that agrees is taken for "nobody wrote"
