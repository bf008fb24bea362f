"""The MCP reference filesystem server's ``edit_file`` tool, certified on S1
(``rollcert certify mcp-filesystem-edit``).

The package (``@modelcontextprotocol/server-filesystem``, pinned below) is
TypeScript compiled to JavaScript, so it lives in an npm environment of its own
(:func:`rollcert.targets.tool_envs.node_environment`) and is driven
through its own stdio interface — MCP, JSON-RPC 2.0 — by a rollcert-protocol/2
tool server, ``targets/tool_servers/mcp_filesystem_server.py``, run as a
subprocess (``subprocess:`` target). That file's docstring says how a rollcert
diff becomes the ``{oldText, newText}`` edits an agent sends: each hunk quotes the
whole lines around it (its span widened by one byte on each side, S1's effective
read of a hunk), with more lines until the quote is unique in the snapshot; hunks
that quote the same line share one edit, and the tool's error result is a refusal
(``StaleBaseError``).

What the tool cannot be told: the anchor mode and the declared reads. An edit is
text to search for and text to put instead; the tool searches for the first exact
occurrence, then line by line ignoring each line's surrounding whitespace. So its
read-set is its ``oldText``, and S1 violations are expected (the certificate finds
them; ``docs/certifications/mcp_filesystem.md`` reproduces and judges each).

The tool edits UTF-8 text and turns ``\\r\\n`` into ``\\n`` across the whole file
on every edit, so the target's alphabet is ASCII without ``\\r``
(:data:`ALPHABET`): ``\\n`` for lines, a space for the whitespace-flexible match.
No undo log: capability ``core`` is not declared (S2, S3 and R not assessed).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError

#: The npm package and the exact version certified (docs/certifications/mcp_filesystem.md).
PACKAGE = "@modelcontextprotocol/server-filesystem"
VERSION = "2026.8.31"
PIN = f"{PACKAGE}@{VERSION}"
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "mcp-server-filesystem"
NAME = "mcp-filesystem-edit"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "mcp_filesystem_server.py"


def package_folder(environment: Path) -> Path:
    """Where npm put the package inside the environment."""
    return environment / "node_modules" / Path(*PACKAGE.split("/"))


def server_command(package: Path, node: str) -> list[str]:
    """The tool server's command line: this interpreter (the server needs the standard library only)."""
    return [sys.executable, str(SERVER), str(package), "--node", node]


def build_target() -> Target:
    """The registered ``mcp-filesystem-edit`` target: makes the npm environment on first use."""
    from rollcert.targets.tool_envs import node_environment
    from rollcert.targets.tool_envs import served_tool_target

    node = shutil.which("node")
    if node is None:
        raise TargetError(f"{NAME} needs node (Node.js 18 or later) on PATH to run {PACKAGE}")
    package = package_folder(node_environment(ENVIRONMENT, [PIN]))
    return served_tool_target(
        server_command(package, node),
        name=NAME,
        description=f"the edit_file tool of {PACKAGE} over MCP stdio, one oldText/newText edit per hunk",
        notes={
            "mode and reads": "not passed (an edit_file call cannot carry them): the tool judges staleness "
            "by its oldText alone, searched exactly (first occurrence), then line by line ignoring whitespace",
            "core": "not declared: edit_file keeps no undo log (no rollback, no rollback_diff)",
            "edits": "each hunk quotes the whole lines around it (the hunk widened by one byte each side), "
            "more lines until the quote is unique in the snapshot; hunks quoting a shared line are one edit",
        },
        alphabet=ALPHABET,
    )
