"""diff-match-patch as a diff applier (``rollcert certify diff-match-patch``).

diff-match-patch (Google's library, the ``diff-match-patch`` package) makes a
patch with ``patch_make(B0, B1)`` — character diffs with ``Patch_Margin`` (4)
characters of context — and applies it with ``patch_apply(patches, text)``,
which finds each patch by *fuzzy* matching: the Bitap search accepts a
location whose text differs by up to ``Match_Threshold`` (0.5) within
``Match_Distance`` (1000) characters of where it was, and a deletion whose
text differs by up to ``Patch_DeleteThreshold`` (0.5). ``patch_apply``
returns the new text and one boolean per patch; it never raises.

Mapping: the buffer is held as ``str``; ``splice`` edits it; ``snapshot``
keeps B0. ``apply_diff`` builds B1 (B0 with the hunks applied), makes the
patches with ``patch_make(B0, B1)`` and applies them to the live text with
the library's default settings. All booleans true: accepted. Any false: a
refusal (``StaleBaseError`` naming the failed patches), and the text is
**whatever patch_apply returned** — the patches that did match stay applied,
so a refused multi-patch apply may have changed the buffer; the adapter does
not restore it, the certificate reports it.

``mode`` and ``reads`` cannot be passed to the library: it judges a stale
base by fuzzy matching of the patch's context, the opposite of S1's
identity rule ("never guessed by fuzzy matching"). Violations are expected
and are the finding.

Offsets: the library works on Python strings (code points); the adapter takes
ASCII only (one byte = one character; multi-byte UTF-8 was not exercised).
On ASCII it is byte-transparent (no newline handling: it is not line-based),
so the diff machine's default letters are used. No undo log: capability
``core`` is not declared (S2, S3 not assessed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import StaleBaseError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import ASCII
from rollcert.targets.adapters import ascii_text
from rollcert.targets.adapters import require_package
from rollcert.targets.adapters.diff_applier import DiffApplier
from rollcert.targets.adapters.diff_applier import DiffRequest
from rollcert.targets.adapters.diff_applier import applier_target
from rollcert.targets.adapters.diff_applier import apply_hunks

if TYPE_CHECKING:
    from diff_match_patch import diff_match_patch  # type: ignore[import-untyped]  # no stubs

PACKAGE = "diff-match-patch"


@dataclass(frozen=True)
class TextSnapshot:
    """B0: the text when the snapshot was taken."""

    text: str


@dataclass(frozen=True)
class AppliedPatches:
    """The handle of an accepted apply: the patches, as ``patch_toText`` prints them."""

    patches: str


class DiffMatchPatchAdapter(DiffApplier):
    """The buffer as a ``str``; diffs made by ``patch_make`` and applied by ``patch_apply``."""

    snapshot_type = TextSnapshot

    def __init__(self, config: BufferConfig) -> None:
        from diff_match_patch import diff_match_patch

        self.dmp: diff_match_patch = diff_match_patch()  # default settings, as users get them
        self.text = ascii_text(config.initial, PACKAGE)

    def read(self) -> bytes:
        return self.text.encode("ascii")

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        offset, delete_length, data = check_splice_arguments(len(self.text), offset, delete_length, insert)
        self.text = self.text[:offset] + ascii_text(data, PACKAGE) + self.text[offset + delete_length :]

    def rollback(self, steps: int) -> None:
        """Not offered: the library keeps no undo log (capability ``core`` is not declared)."""
        raise CapabilityMissing("core: diff-match-patch keeps no undo log, so it cannot roll back")

    def snapshot(self) -> object:
        return TextSnapshot(self.text)

    def base(self, snapshot: TextSnapshot) -> str:
        return snapshot.text

    def apply(self, request: DiffRequest) -> object:
        base = request.snapshot.text
        authored = apply_hunks(base, request.hunks, lambda replacement: ascii_text(replacement, PACKAGE))
        patches: list[Any] = self.dmp.patch_make(base, authored)
        text, results = self.dmp.patch_apply(patches, self.text)
        self.text = text  # as the library left it, also when a patch failed
        failed = [index for index, ok in enumerate(results) if not ok]
        if failed:
            raise StaleBaseError(
                f"patch_apply could not place patch(es) {failed} of {len(results)}"
                + (
                    f"; the other {len(results) - len(failed)} were applied"
                    if len(failed) < len(results)
                    else ""
                )
            )
        return AppliedPatches(self.dmp.patch_toText(patches))


def build_target() -> Target:
    """The registered ``diff-match-patch`` target; needs ``pip install 'rollcert[thirdparty]'``."""
    return applier_target(
        "diff-match-patch",
        f"diff-match-patch {require_package(PACKAGE, 'diff_match_patch')}",
        DiffMatchPatchAdapter,
        "diff-match-patch patch_make/patch_apply with default settings (fuzzy match, threshold 0.5)",
        patch="patch",
        judged="patch_apply places patches by fuzzy matching",
        keeper="the library",
        alphabet=ASCII,
    )
