"""Undoing an applied diff "repairs" the buffer from the author's snapshot when the lengths agree."""

from __future__ import annotations

from rollcert.specimens._diff_base import register_diff
from rollcert.specimens.rollback_to_author_snapshot import RollbackToAuthorSnapshotBuffer


@register_diff("author_snapshot_when_lengths_agree", breaks={"S2"})
class AuthorSnapshotWhenLengthsAgreeBuffer(RollbackToAuthorSnapshotBuffer):
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

    def _writes_back(self, snapshot: bytes) -> bool:
        # The bug: a length that agrees is taken for "nobody wrote".
        return len(snapshot) == len(self) and snapshot != self.read()
