"""serena's ``replace_content`` tool, certified on S1 (``rollcert certify serena-replace-content``).

serena (PyPI ``serena-agent``, pinned below) gives an agent an IDE's tools over
MCP; its file-level ``replace_content`` replaces a needle (literal or a regular
expression, which must match once) in a file of the agent's project, through a
language server's buffer. It lives in a venv of its own
(:func:`rollcert.targets.tool_envs.python_environment`) with the Jedi language
server beside it (serena's default Python language server is fetched with
``uvx`` at run time, which this machine cannot do; ``jedi-language-server`` is
one serena supports and installs from PyPI). A rollcert-protocol/2.1 tool server
run under that venv's Python, ``targets/tool_servers/serena_server.py`` (its
docstring says how a diff becomes tool calls), makes one real serena project and
drives every buffer as a file of it. What the tool cannot be told: the anchor
mode and the declared reads; its read-set is the needle. No undo log: capability
``core`` is not declared (S2, S3 and R not assessed).
"""

from __future__ import annotations

from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target

#: The PyPI distributions and the exact versions certified (docs/certifications/serena.md).
REQUIREMENTS = ["serena-agent==2.1.0", "jedi-language-server==0.47.0"]
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "serena-agent"
NAME = "serena-replace-content"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "serena_server.py"


def server_command(python: Path) -> list[str]:
    """The tool server's command line under serena's own interpreter."""
    return [str(python), str(SERVER)]


def build_target() -> Target:
    """The registered ``serena-replace-content`` target: makes serena's venv on first use."""
    from rollcert.targets.tool_envs import python_environment
    from rollcert.targets.tool_envs import served_tool_target

    return served_tool_target(
        server_command(python_environment(ENVIRONMENT, REQUIREMENTS)),
        name=NAME,
        description="ReplaceContentTool (literal mode) on a file of a serena project, through the Jedi language server",
        notes={
            "mode and reads": "not passed (a replace_content call cannot carry them): the tool judges staleness "
            "by its needle alone, which must occur exactly once in the file",
            "core": "not declared: replace_content keeps no undo log (no rollback, no rollback_diff)",
            "edits": "each hunk becomes a literal replace_content quoting the whole lines it touches; hunks "
            "sharing a line are one call; calls go in text order, each on the live file",
        },
        alphabet=ALPHABET,
    )
