"""OpenHands' file editor (``openhands-aci``'s ``OHEditor``, the ``str_replace_editor``
tool), certified two ways (``rollcert certify openhands-editor`` / ``openhands-str-replace``).

Every release of ``openhands-aci`` requires Python 3.12 or later and rollcert runs on
3.11, so the tool lives in a venv built with Python 3.12
(:func:`rollcert.targets.tool_envs.python_environment` with ``python_version``; the
interpreter is found on PATH or in pyenv) and is driven by a rollcert-protocol/2.1
tool server run under that venv's Python, ``targets/tool_servers/openhands_server.py``
(its docstring says how a splice, a rollback and a diff become editor calls):

- ``openhands-editor``: capability ``core`` and ``bounded`` — a splice is a
  ``str_replace`` through the tool, a rollback of N is N ``undo_edit`` calls, and the
  history keeps the last N versions of each file (declared at the hello as a
  ``history_bound`` of policy ``evict_oldest``): R0, R2 and R6 are assessed.
- ``openhands-str-replace``: capability ``diffs`` — an apply is one ``str_replace``
  per run of touched whole lines: S1 is assessed.

An unbounded buffer gets the history ``OHEditor`` ships, the last 10 versions of a
file; the long histories every run now reaches go past it, and there the eleventh
undo fails with "No edit history found" where an unbounded log undoes it (a finding,
``DEFAULT_HISTORY_CAPPED``, which the focused target sets aside, as textual's
``DEFAULT_HISTORY_CAPPED`` for its 50 batches).
"""

from __future__ import annotations

from pathlib import Path

from rollcert.targets import tool_servers
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import history_capped

#: The PyPI distribution and the exact version certified (docs/certifications/openhands.md).
REQUIREMENT = "openhands-aci==0.3.3"
#: Every release needs this Python; the venv is built with it.
PYTHON_VERSION = "3.12"
#: The tool environment's folder name (under $ROLLCERT_TOOL_ENVS).
ENVIRONMENT = "openhands-aci"
#: The tool server's letters (the same as the server file's ALPHABET, checked by a test).
ALPHABET = b"ab12XY\n "
SERVER = Path(tool_servers.__file__).resolve().parent / "openhands_server.py"
MODES = ("editor", "str-replace")
#: How many versions of a file ``OHEditor``'s own ``FileHistoryManager`` keeps.
SHIPPED_HISTORY = 10


#: What an unbounded buffer of ``openhands-editor`` does past the editor's shipped history.
DEFAULT_HISTORY_CAPPED = history_capped(
    SHIPPED_HISTORY,
    f"an unbounded buffer keeps the editor's shipped history of {SHIPPED_HISTORY} versions: "
    "an edit past it drops the oldest, and undoing every edit fails at the one it dropped",
    unreachable=("depth_past_16", "depth_past_64"),
)


def server_command(python: Path, mode: str) -> list[str]:
    """The tool server's command line under the tool's own interpreter."""
    return [str(python), str(SERVER), mode]


NOTES = {
    "editor": {
        "edits": "a splice is one str_replace: old_str is the shortest text around the spliced span that occurs "
        "exactly once in the file, overlapping copies counted, new_str the same text spliced",
        "rollback": "rollback(N) is N undo_edit calls, as an agent undoes N edits; the first 'No edit history "
        "found' ends it (UnreachableRollbackError), the undos before it done",
        "bound": "the editor's FileHistoryManager keeps the last N versions of a file (10 as shipped) and drops "
        "the oldest; a bounded buffer of capacity C gets a FileHistoryManager of C, an unbounded one the shipped 10",
        "not declared": "depth, revisions, checkpoints (the tool has none of them); diffs: see openhands-str-replace",
    },
    "str-replace": {
        "mode and reads": "not passed (a str_replace call cannot carry them): the tool judges staleness by old_str "
        "alone, which must occur exactly once, or else once after stripping whitespace from both ends of old_str "
        "and new_str",
        "core": "not declared here (see openhands-editor for undo_edit): no rollback, no rollback_diff",
        "edits": "each hunk becomes a str_replace quoting the whole lines it touches; hunks sharing a line are "
        "one call; calls go in text order, each on the live file",
    },
}


def _build(mode: str) -> Target:
    from rollcert.targets.tool_envs import python_environment
    from rollcert.targets.tool_envs import served_tool_target

    python = python_environment(ENVIRONMENT, [REQUIREMENT], python_version=PYTHON_VERSION)
    return served_tool_target(
        server_command(python, mode),
        name=f"openhands-{mode}",
        description=(
            "OHEditor str_replace and undo_edit on a file" if mode == "editor" else "OHEditor str_replace on a file"
        ),
        notes=NOTES[mode],
        alphabet=ALPHABET,
    )


def build_editor_target() -> Target:
    """The registered ``openhands-editor`` target: makes the tool's Python 3.12 venv on first use."""
    return _build("editor")


def build_str_replace_target() -> Target:
    """The registered ``openhands-str-replace`` target: makes the tool's Python 3.12 venv on first use."""
    return _build("str-replace")
