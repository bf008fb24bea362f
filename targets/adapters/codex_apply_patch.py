"""Codex's ``apply_patch`` tool, certified on S1 (``rollcert certify codex-apply-patch``).

Codex (npm ``@openai/codex``, pinned below) is a coding agent whose model edits
files by writing a patch in Codex's own format (``*** Begin Patch`` /
``*** Update File:`` / ``@@`` chunks of context, ``-`` and ``+`` lines). The npm
package is a small launcher; the CLI itself is a native binary shipped in a
per-platform package (``@openai/codex-linux-x64`` on this machine kind), which
npm installs as an optional dependency. The binary applies a patch by itself
when run as ``codex --codex-run-as-apply-patch PATCH`` — no model, no network.

The package lives in an npm folder of its own
(:func:`rollcert.targets.tool_envs.node_environment`), and a standard-library tool
server run by this interpreter, ``targets/tool_servers/codex_server.py`` (its
docstring says how a diff becomes the patch), runs the binary once per apply. What
the tool cannot be told: the anchor mode and the declared reads; its read-set is
each chunk's context and removed lines. No undo log: capability ``core`` is not
declared (S2, S3 and R not assessed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError

#: The npm package and the exact version certified (docs/certifications/codex.md).
PACKAGE = "@openai/codex"
VERSION = "0.169.0"
PIN = f"{PACKAGE}@{VERSION}"
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "openai-codex"
NAME = "codex-apply-patch"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "codex_server.py"


def codex_binary(environment: Path) -> Path:
    """The native CLI inside the npm folder: ``@openai/codex-<platform>/vendor/<triple>/bin/codex``."""
    found = sorted((environment / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"))
    if not found:
        raise TargetError(
            f"{NAME}: npm installed {PIN} into {environment} without a native binary for this platform "
            f"(the optional dependency @openai/codex-<platform> is missing: an unsupported platform, or npm "
            f"run with --omit=optional); the launcher bin/codex.js cannot run the tool without it"
        )
    return found[0]


def server_command(codex: Path) -> list[str]:
    """The tool server's command line: this interpreter (the server needs the standard library only)."""
    return [sys.executable, str(SERVER), str(codex)]


def build_target() -> Target:
    """The registered ``codex-apply-patch`` target: makes the npm environment on first use."""
    from rollcert.targets.tool_envs import node_environment
    from rollcert.targets.tool_envs import served_tool_target

    codex = codex_binary(node_environment(ENVIRONMENT, [PIN]))
    return served_tool_target(
        server_command(codex),
        name=NAME,
        description=f"the apply_patch tool of {PACKAGE} (codex --codex-run-as-apply-patch) on a file",
        notes={
            "mode and reads": "not passed (a Codex patch cannot carry them): the tool judges staleness by each "
            "chunk's context and removed lines alone, sought in order: exactly, then ignoring trailing "
            "whitespace, then ignoring surrounding whitespace",
            "core": "not declared: apply_patch keeps no undo log (no rollback, no rollback_diff)",
            "edits": "B0 -> B1 as difflib.unified_diff with 3 lines of context, one '@@' chunk per hunk, in an "
            "'*** Update File: buffer.txt' patch; the format is line-based",
        },
        alphabet=ALPHABET,
    )
