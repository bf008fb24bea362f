"""Undoing an applied diff restores the snapshot the diff was authored on."""

from __future__ import annotations

from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.specimens._diff_base import register_diff


@register_diff("rollback_to_author_snapshot", breaks={"S2"})
class RollbackToAuthorSnapshotBuffer(DiffableBuffer):
    """Applying diffs is exact, but undoing one is implemented as "put back
    what the author started from": the journal records are rolled back as
    they should be, and then the author's snapshot B0 is written over the
    buffer (as one more journaled splice). When nothing happened between the
    snapshot and the apply, that is the same thing. When a tool wrote in
    between, the undo erases the tool's write too — a backward conflict that
    nobody can re-author, because the tool's output is simply gone."""

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
        if snapshot is not None and self._writes_back(snapshot):
            self.splice(0, len(self), snapshot)  # the bug: B0, not the base it was applied to

    def _writes_back(self, snapshot: bytes) -> bool:
        """Whether the undo writes the author's snapshot over the buffer: here
        whenever they differ (author_snapshot_when_lengths_agree narrows it)."""
        return snapshot != self.read()
