"""gptme's ``patch`` tool, certified on S1 (``rollcert certify gptme-patch``).

gptme's ``patch`` tool is text to find (which must occur exactly once) and text
to put instead, as ORIGINAL/UPDATED conflict-marker blocks — the same kind of
editor as OpenHands' ``str_replace`` (``openhands_editor.py``, certified in a
Python 3.12 venv of its own).

gptme lives in a venv of its own (:func:`rollcert.targets.tool_envs.python_environment`)
and is driven by a rollcert-protocol/2 tool server run under that venv's Python,
``targets/tool_servers/gptme_server.py`` (its docstring says how a diff
becomes the code block), as a subprocess target. What the tool cannot be told:
the anchor mode and the declared reads; its read-set is the ORIGINAL text. No undo
log: capability ``core`` is not declared (S2, S3 and R not assessed).
"""

from __future__ import annotations

from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target

#: The PyPI distribution and the exact version certified (docs/certifications/gptme.md).
REQUIREMENT = "gptme==0.35.1"
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "gptme"
NAME = "gptme-patch"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "gptme_server.py"


def server_command(python: Path) -> list[str]:
    """The tool server's command line under gptme's own interpreter."""
    return [str(python), str(SERVER)]


def build_target() -> Target:
    """The registered ``gptme-patch`` target: makes gptme's venv on first use."""
    from rollcert.targets.tool_envs import python_environment
    from rollcert.targets.tool_envs import served_tool_target

    return served_tool_target(
        server_command(python_environment(ENVIRONMENT, [REQUIREMENT])),
        name=NAME,
        description="the patch tool (execute_patch_impl) on a file, ORIGINAL/UPDATED blocks",
        notes={
            "mode and reads": "not passed (a patch block cannot carry them): the tool judges staleness by its "
            "ORIGINAL text alone, which must occur once (exactly, else line by line with whitespace-only lines equal)",
            "core": "not declared: the patch tool keeps no undo log (no rollback, no rollback_diff)",
            "edits": "each hunk becomes an ORIGINAL/UPDATED block quoting the whole lines it touches; hunks sharing "
            "a line are one block; the line break before a marker is the marker's",
        },
        alphabet=ALPHABET,
    )
