"""A revision counter that steps back on rollback, trusted to say "unchanged"."""

from __future__ import annotations

from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import DiffSnapshot
from rollcert.impl.journaled_buffer import Checkpoint
from rollcert.specimens._diff_base import register_diff
from rollcert.targets.adapter import Capability
from rollcert.targets.adapters.bundled_diffs import DIFF_SPECIMEN_CAPABILITIES


@register_diff(
    "revision_reuse",
    breaks={"S3"},
    also_caught_by={
        "S1": "the diff it trusts on the reused counter is stale: its hunks land on bytes "
        "that changed since the snapshot, so the failing apply breaks S1's clause too "
        "(a stale diff accepted)",
    },
    # Its counter is internal (it does not offer revision()), so only what it
    # does with diffs can give it away.
    capabilities=DIFF_SPECIMEN_CAPABILITIES - {Capability.REVISIONS},
)
class RevisionReuseBuffer(DiffableBuffer):
    """Its revision counter counts the edits currently applied: +1 per splice
    or applied diff, -1 per rollback step, so after a rollback and a new edit
    the counter shows a number it showed before, for different text. A
    snapshot is stamped with that counter, and a diff whose snapshot's number
    equals the live one (and whose length matches, a cheap sanity check) is
    taken to apply to an unchanged base, at its original positions, with no
    further check. A snapshot taken before a
    rollback and a different edit now looks current: the ABA bug, with
    revisions instead of checkpoints."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._counter = 0

    @property
    def revision(self) -> int:
        return self._counter

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        super().splice(offset, delete_length, insert)
        self._counter += 1

    def apply_diff(self, diff: AuthoredDiff) -> AppliedDiff:
        applied = super().apply_diff(diff)
        self._counter += 1
        return applied

    def rollback(self, steps: int = 1) -> None:
        super().rollback(steps)
        self._counter -= steps  # the bug: the counter steps back

    def rollback_to(self, token: Checkpoint) -> None:
        depth = self.depth
        super().rollback_to(token)
        self._counter -= depth - self.depth

    def _base_unchanged(self, base: DiffSnapshot) -> bool:
        # the bug: a matching number (and, as a cheap sanity check, a matching
        # length) is taken to mean "unchanged"
        return base.revision == self._counter and len(self) == len(base.content)
