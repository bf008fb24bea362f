"""In-process adapters. Each file adapts one kind of implementation.

Third-party packages (textual, prompt_toolkit, pycrdt) are optional: they are
installed with ``pip install 'rollcert[thirdparty]'`` and their adapters import
them only when a target is built, so rollcert itself imports without them.
``THIRD_PARTY_TARGETS`` is the one table of their registered names; ``rollcert
certify NAME`` (or ``thirdparty:NAME``) resolves a name through it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from dataclasses import replace
from functools import partial

from rollcert.model.contract import check_splice_arguments
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import splice_bytes
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError


@dataclass(frozen=True)
class Focused:
    """A registered target with a findings file set aside: the ``plain`` registered
    name, and a file of ``targets/known_findings/`` (see
    :func:`rollcert.targets.findings.focused_from_file`)."""

    plain: str
    findings_file: str
    #: Findings only Python can state ("module:attribute" of a KnownFinding), set
    #: aside beside the file's.
    also: tuple[str, ...] = ()


#: Registered name -> "module:attribute" of a zero-argument function building the
#: Target, or the plain target and findings file of a focused one.
THIRD_PARTY_TARGETS: dict[str, str | Focused] = {
    "textual": "rollcert.targets.adapters.textual_textarea:build_target",
    "prompt_toolkit": "rollcert.targets.adapters.prompt_toolkit_buffer:build_target",
    "pycrdt": "rollcert.targets.adapters.pycrdt_text:build_tagged_target",
    "pycrdt-untagged": "rollcert.targets.adapters.pycrdt_text:build_untagged_target",
    # The same adapters with their package's shortest findings set aside: each loads its
    # findings file, targets/known_findings/*.toml (see rollcert.targets.findings).
    "textual-focused": Focused(
        "textual", "textual.toml", also=("rollcert.targets.adapters.textual_textarea:DEFAULT_HISTORY_CAPPED",)
    ),
    "prompt_toolkit-focused": Focused("prompt_toolkit", "prompt_toolkit.toml"),
    "pycrdt-focused": Focused("pycrdt", "pycrdt.toml"),
    # Diff appliers (S1): no undo log, so only the diff capability.
    "diff-match-patch": "rollcert.targets.adapters.diff_match_patch_applier:build_target",
    "gnu-patch": "rollcert.targets.adapters.gnu_patch:build_target",
    "git-apply": "rollcert.targets.adapters.git_apply:build_target",
    "git-apply-3way": "rollcert.targets.adapters.git_apply:build_three_way_target",
    "mcp-filesystem-edit": "rollcert.targets.adapters.mcp_filesystem:build_target",
    "aider-search-replace": "rollcert.targets.adapters.aider_tools:build_search_replace_target",
    "aider-udiff": "rollcert.targets.adapters.aider_tools:build_udiff_target",
    "gptme-patch": "rollcert.targets.adapters.gptme_patch:build_target",
    "openhands-str-replace": "rollcert.targets.adapters.openhands_editor:build_str_replace_target",
    "codex-apply-patch": "rollcert.targets.adapters.codex_apply_patch:build_target",
    "serena-replace-content": "rollcert.targets.adapters.serena_replace:build_target",
    # OpenHands' editor with its undo_edit: core and a bounded history (R0, R2, R6).
    "openhands-editor": "rollcert.targets.adapters.openhands_editor:build_editor_target",
    # ... with what a patch cannot carry (mode, read-set) set aside: the tool's own rule
    # (targets/known_findings/diff_applier.toml).
    "diff-match-patch-focused": Focused("diff-match-patch", "diff_applier.toml"),
    "gnu-patch-focused": Focused("gnu-patch", "diff_applier.toml"),
    "git-apply-focused": Focused("git-apply", "diff_applier.toml"),
    "git-apply-3way-focused": Focused("git-apply-3way", "diff_applier.toml"),
    "mcp-filesystem-edit-focused": Focused("mcp-filesystem-edit", "diff_applier.toml"),
    "aider-search-replace-focused": Focused("aider-search-replace", "aider.toml"),
    "aider-udiff-focused": Focused("aider-udiff", "aider.toml"),
    "gptme-patch-focused": Focused("gptme-patch", "diff_applier.toml"),
    "openhands-str-replace-focused": Focused("openhands-str-replace", "diff_applier.toml"),
    "codex-apply-patch-focused": Focused("codex-apply-patch", "codex.toml"),
    "serena-replace-content-focused": Focused("serena-replace-content", "diff_applier.toml"),
    "openhands-editor-focused": Focused(
        "openhands-editor", "openhands.toml", also=("rollcert.targets.adapters.openhands_editor:DEFAULT_HISTORY_CAPPED",)
    ),
}


def require_package(distribution: str, module: str) -> str:
    """The installed version of ``distribution``, after checking ``module`` imports.

    A missing package is a usage problem, not a verdict: it raises
    :class:`~rollcert.targets.resolve.TargetError` with the one line that mends it.
    """
    # Imported here, not at the top: importlib.metadata is a quarter of the import
    # time of rollcert.targets, which every restart of a protocol server pays.
    from importlib import metadata

    try:
        importlib.import_module(module)
        return metadata.version(distribution)
    except (ImportError, metadata.PackageNotFoundError) as error:
        raise TargetError(
            f"{distribution} is not installed ({error}); install it with: pip install 'rollcert[thirdparty]'"
        ) from None


#: The bytes a text package's adapter takes (see :func:`ascii_text`): its declared
#: alphabet (``Target.alphabet``), so the wide draws stay inside it and the
#: certificate says ``passed within`` it, and that multi-byte text was not exercised.
ASCII = bytes(range(128))


def ascii_text(data: bytes, package: str, refused: bytes = b"") -> str:
    """``data`` as the ``str`` a text package takes, or a ValueError saying why not.

    The third-party packages edit Unicode text at character offsets, not bytes.
    On ASCII one byte is one character, so offsets mean the same on both sides;
    anything else (multi-byte UTF-8, and the ``refused`` bytes a package rewrites)
    is refused here, in the open, rather than silently translated.
    """
    if not data.isascii():
        raise ValueError(f"the {package} adapter takes ASCII only (character offsets = byte offsets); got {data!r}")
    bad = sorted({byte for byte in data if byte in refused})
    if bad:
        raise ValueError(f"{package} rewrites {bytes(bad)!r}, so the adapter refuses it; got {data!r}")
    return data.decode("ascii")


# -- the findings the packages share, to set aside in focused targets -----------------


def _valid_splice(state: ModelState, operation: Operation) -> Splice | None:
    if not isinstance(operation, Splice):
        return None
    try:
        check_splice_arguments(len(state.current), operation.offset, operation.delete_length, operation.insert)
    except (ValueError, TypeError):
        return None
    return operation


def _is_empty_edit(state: ModelState, operation: Operation) -> bool:
    splice = _valid_splice(state, operation)
    return splice is not None and splice.delete_length == 0 and not splice.insert


def _is_unchanging_edit(state: ModelState, operation: Operation) -> bool:
    splice = _valid_splice(state, operation)
    return splice is not None and (
        splice_bytes(state.current, splice.offset, splice.delete_length, splice.insert) == state.current
    )


def _is_past_horizon(state: ModelState, operation: Operation) -> bool:
    return isinstance(operation, Rollback) and type(operation.steps) is int and operation.steps > state.depth


EMPTY_EDIT_NOT_RECORDED = KnownFinding(
    "empty_edit_not_recorded",
    "a splice that deletes and inserts nothing leaves no undo record, so the next undo reverts the edit before it",
    _is_empty_edit,
)
UNCHANGING_EDIT_SKIPPED = KnownFinding(
    "unchanging_edit_skipped",
    "a splice that leaves the text as it was is skipped by undo, which reverts the edit before it as well",
    _is_unchanging_edit,
)
UNDO_PAST_HORIZON_IGNORED = KnownFinding(
    "undo_past_horizon_ignored",
    "undo with nothing left to undo does nothing and succeeds instead of raising UnreachableRollbackError",
    _is_past_horizon,
)


def _past_the_cap(limit: int, state: object, operation: object) -> bool:
    return (
        isinstance(state, ModelState)
        and state.capacity is None
        and isinstance(operation, Splice)
        and state.depth >= limit
    )


def history_capped(limit: int, description: str, unreachable: tuple[str, ...] = ()) -> KnownFinding:
    """The finding of a package whose *unbounded* history silently keeps only its
    newest ``limit`` records (textual's 50 batches, OpenHands' 10 versions): every
    splice from depth ``limit`` on, set aside by a focused target, with the depth
    dimensions that then cannot be reached."""
    return KnownFinding("default_history_capped", description, partial(_past_the_cap, limit), unreachable=unreachable)


def focused(target: Target, *findings: KnownFinding) -> Target:
    """``target`` with ``findings`` (reported by its plain certificate) set aside."""
    names = ", ".join(finding.name for finding in findings)
    return replace(
        target,
        name=f"{target.name}-focused",
        description=f"{target.description} [set aside: {names}]",
        set_aside=findings,
    )
