"""aider's two edit appliers, certified on S1 (``rollcert certify aider-search-replace``,
``rollcert certify aider-udiff``).

aider (the PyPI package ``aider-chat``, pinned below) pins dozens of
dependencies that must never meet rollcert's, so it lives in a venv of its own
(:func:`rollcert.targets.tool_envs.python_environment`) and is driven by a
rollcert-protocol/2 tool server run under that venv's interpreter,
``targets/tool_servers/aider_server.py`` (argument ``search-replace`` or
``udiff``), as a subprocess target. The server's docstring says how a rollcert
diff becomes the reply an agent sends aider — SEARCH/REPLACE blocks quoting the
whole lines each hunk touches, or a ``diff -u``-style unified diff of B0 -> B1 —
and that aider's own parser and ``apply_edits`` apply it to a real file.

What the tool cannot be told: the anchor mode and the declared reads. A block or
a hunk is text to search for and text to put instead, so the tool's read-set is
the text it searches for (with its fallbacks: leading whitespace, a dropped blank
first line, and for the unified diff blank-line stripping, relative indentation
and hunks retried with less context). S1 violations are expected; the
certificates find them and ``docs/certifications/aider.md`` reproduces and judges
each. No undo log: capability ``core`` is not declared (S2, S3 and R not assessed).
"""

from __future__ import annotations

from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target

#: The PyPI distribution and the exact version certified (docs/certifications/aider.md).
REQUIREMENT = "aider-chat==0.86.2"
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "aider"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "aider_server.py"
JUDGED = {
    "search-replace": "the tool judges staleness by each SEARCH text alone: the first exact run of its lines, "
    "then the same ignoring a uniform leading-whitespace change, then without a blank first line",
    "udiff": "the tool judges staleness by each hunk's before-text alone: replaced wherever it occurs (every "
    "occurrence), then with blank lines stripped and indentation made relative, then with less context",
}
EDITS = {
    "search-replace": "each hunk becomes a SEARCH/REPLACE block quoting the whole lines it touches (an insertion at "
    "a line start quotes that line, at the end the last line); hunks sharing a line are one block",
    "udiff": "B0 -> B1 as difflib.unified_diff with 3 lines of context, hunks headed '@@ ... @@', fenced as "
    "```diff; every line ends in a line break",
}


def server_command(python: Path, applier: str) -> list[str]:
    """The tool server's command line under aider's own interpreter."""
    return [str(python), str(SERVER), applier]


def _build(applier: str) -> Target:
    from rollcert.targets.tool_envs import python_environment
    from rollcert.targets.tool_envs import served_tool_target

    coder = "EditBlockCoder" if applier == "search-replace" else "UnifiedDiffCoder"
    return served_tool_target(
        server_command(python_environment(ENVIRONMENT, [REQUIREMENT]), applier),
        name=f"aider-{applier}",
        description=f"{coder}.apply_edits on a file, the reply parsed by aider's own parser",
        notes={
            "mode and reads": f"not passed (an aider edit cannot carry them): {JUDGED[applier]}",
            "core": "not declared: aider's appliers keep no undo log (no rollback, no rollback_diff)",
            "edits": EDITS[applier],
        },
        alphabet=ALPHABET,
    )


def build_search_replace_target() -> Target:
    """The registered ``aider-search-replace`` target: makes aider's venv on first use."""
    return _build("search-replace")


def build_udiff_target() -> Target:
    """The registered ``aider-udiff`` target: makes aider's venv on first use."""
    return _build("udiff")
