"""A revision counter kept in one byte, trusted to say "unchanged"."""

from __future__ import annotations

from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import DiffSnapshot
from rollcert.specimens._diff_base import register_diff

#: The counter's field: one byte.
WRAP = 256


@register_diff(
    "revision_mod_256",
    breaks={"S3"},
    # A real buffer can be resumed at any revision; this one says so, and the
    # machines start some examples just below a wrap (issue 42).
    declares={"starts_at_revision": True},
)
class RevisionMod256Buffer(DiffableBuffer):
    """It counts revisions as it should, one per mutation and never back, but
    keeps the counter in one byte (a ``uint8`` field of a wire header, a
    version tag packed next to flags): after revision 255 comes 0. A snapshot
    is stamped with that byte, and a diff whose snapshot's stamp equals the
    live one (and whose length matches, a cheap sanity check) is taken to
    apply to an unchanged base, at its original positions. 256 mutations
    after a snapshot, a stale diff looks current: the ABA bug, with a counter
    that wraps instead of one that steps back. Every run whose revisions stay
    below 256 passes it; so does every run that never looks at the number it
    reports (issue 42: a counter kept modulo 256 passed S3, and the world
    stated no revision range)."""

    @property
    def revision(self) -> int:
        return super().revision % WRAP  # the bug: the counter wraps

    def _base_unchanged(self, base: DiffSnapshot) -> bool:
        # the bug: a matching stamp (and a matching length) is taken to mean "unchanged"
        if base.revision == self.revision and len(self) == len(base.content):
            return True
        return super()._base_unchanged(base)
