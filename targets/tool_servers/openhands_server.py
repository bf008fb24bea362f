"""OpenHands' file editor as a rollcert-protocol/2.1 server (run under its own Python 3.12 venv).

    python openhands_server.py editor        # capability core: edits through str_replace, rollback = undo_edit
    python openhands_server.py str-replace   # capability diffs: an apply = str_replace calls

OpenHands (the agent platform) edits files through ``openhands-aci``'s ``OHEditor``,
the ``str_replace_editor`` tool its agents call: ``view``, ``create``,
``str_replace`` (``old_str`` must occur exactly once, else nothing is written),
``insert`` and ``undo_edit`` (the last edit of a file is undone from a per-file
history of the last 10 edits). The buffer is a real file, ``buffer.txt`` in a
temporary directory, edited by one ``OHEditor`` per buffer (the history is per
file and per editor), called as the agent calls it: ``editor(command=..., path=...)``.

**editor** (``core`` and ``bounded``: R0, R2, R6). A splice is the edit an agent
makes with ``str_replace``: ``old_str`` is the shortest text around the spliced
span that occurs exactly once in the file, overlapping copies counted (so the
tool's own uniqueness rule is met and the quote means one place), ``new_str``
the same text with the splice applied. A rollback of N is N ``undo_edit`` calls, as an agent undoes N
edits; the first ``No edit history found`` ends it (``UnreachableRollbackError``,
with the undos before it done). The history keeps the last N edits and drops the
oldest (``FileHistoryManager(max_history_per_file=N)``, 10 in the editor as
shipped): declared as a ``history_bound`` of policy ``evict_oldest``. A bounded
buffer of capacity C gets a history of C (``OHEditor`` builds its history manager
with 10; the server replaces it with one of C, the same class); an unbounded
buffer gets the shipped 10, which is the tool's real bound.

**str-replace** (``diffs``: S1). A diff (snapshot B0, hunks) becomes what an agent
sends: one ``str_replace`` per run of touched whole lines (``_blocks.edit_blocks``,
as for aider and gptme), ``old_str`` B0's text of those lines and ``new_str`` the
same lines with the hunks applied, in text order, each on the live file. A
``ToolError`` is the tool's refusal (``StaleBaseError``), the file left as the
tool left it (blocks that applied stay applied). What the tool cannot be told:
the anchor mode and the declared reads; its read-set is ``old_str``, which must
occur once — exactly, or else after stripping whitespace from both ends of
``old_str`` *and* ``new_str``.

Stdlib only at import; openhands-aci is imported when a buffer is made.
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__:
    from ._blocks import edit_blocks
    from ._wire import FileBuffer
    from ._wire import Refused
    from ._wire import Unreachable
    from ._wire import serve
else:  # run as a script under the tool's interpreter: the siblings are on sys.path
    from _blocks import edit_blocks
    from _wire import FileBuffer
    from _wire import Refused
    from _wire import Unreachable
    from _wire import serve

FILE_NAME = "buffer.txt"
#: The diff machine's letters, a line break and a space (the tool strips whitespace in its fallback).
ALPHABET = b"ab12XY\n "
#: The message ``undo_edit`` raises when the file's history is empty.
NO_HISTORY = "No edit history found"
MODES = ("editor", "str-replace")


def occurrences(text: str, needle: str) -> int:
    """How many times ``needle`` occurs in ``text``, overlapping copies counted
    (``aaa`` occurs twice in ``aaaa``). ``str_replace`` counts with ``re.finditer``,
    which skips overlapping copies: an ``old_str`` it calls unique may occur twice,
    and it edits the first copy (docs/certifications/openhands.md). The quotes
    this server makes are unique by this stricter count, as a careful agent's are,
    so a splice always means one place."""
    if not needle:
        return 1 if not text else len(text) + 1
    return sum(1 for start in range(len(text) - len(needle) + 1) if text.startswith(needle, start))


def _other_copy(text: str, start: int, width: int) -> int:
    """Where else ``text[start : start + width]`` (``width`` > 0) occurs, overlapping
    copies counted: the nearest copy to the right of ``start`` if there is one, else the
    nearest to its left, else -1 (the quote is unique). Two searches of C speed."""
    needle = text[start : start + width]
    right = text.find(needle, start + 1)
    return right if right >= 0 else text.rfind(needle, 0, start + width - 1)


def unique_window(text: str, offset: int, delete_length: int) -> tuple[int, int]:
    """The shortest span ``[start, end)`` of ``text`` holding ``[offset, offset + delete_length)``
    (touching ``offset`` for an insertion) whose text occurs exactly once in ``text``
    (:func:`occurrences`), leftmost first. The whole text always occurs once, so there
    is one; an empty text gives ``(0, 0)``.

    The starts are taken from the edit leftwards, each checked at the widest width that
    could still beat the best quote so far (uniqueness only grows with the width: a
    second copy of a quote holds a second copy of its prefix); a unique one is narrowed
    by bisection. A copy found elsewhere is carried one byte left while the bytes before
    the quote and before its copy agree, so a long periodic run (the wide draws tile a
    unit over kilobytes) costs one comparison per start, not a search; and the scan
    stops once the edit alone is wider than the best quote. The search by width then
    start, with an overlapping count each time, took minutes on a kilobyte of repeated
    text and ran into the tool server's request timeout."""
    if not text:
        return 0, 0
    length, end_of_edit = len(text), offset + delete_length
    best_start, best_width = 0, length
    copy, copied = -1, 0  # text[start : start + copied] also occurs at copy (copy != start)
    for start in range(min(offset, length - 1), -1, -1):
        if copy > 0 and copied and text[start] == text[copy - 1]:
            copy, copied = copy - 1, copied + 1  # the copy, one byte longer to the left
        else:
            copy, copied = -1, 0
        lowest = max(1, delete_length, end_of_edit - start)
        if lowest > best_width:
            break  # further left, the edit alone is wider than the best quote
        highest = min(best_width, length - start)
        if lowest > highest or copied >= highest:
            continue
        elsewhere = _other_copy(text, start, highest)
        if elsewhere >= 0:
            copy, copied = elsewhere, highest
            continue
        lowest = max(lowest, copied + 1)
        while lowest < highest:  # the narrowest unique width in [lowest, highest]
            middle = (lowest + highest) // 2
            if _other_copy(text, start, middle) < 0:
                highest = middle
            else:
                lowest = middle + 1
        if highest <= best_width:  # equal: the start further left wins
            best_start, best_width = start, highest
    return best_start, best_start + best_width


class EditedFile(FileBuffer):
    """A file one ``OHEditor`` edits; its history is the editor's."""

    def __init__(self, initial: bytes, capacity: int | None = None) -> None:
        from openhands_aci.editor import OHEditor
        from openhands_aci.editor.history import FileHistoryManager

        self.directory = Path(tempfile.mkdtemp(prefix="rollcert-openhands-"))
        super().__init__(self.directory / FILE_NAME, initial)
        self.editor = OHEditor(workspace_root=str(self.directory))
        shipped = self.editor._history_manager.max_history_per_file
        self.editor._history_manager = FileHistoryManager(
            max_history_per_file=shipped if capacity is None else capacity,
            history_dir=self.directory / "history",
        )

    def call(self, **arguments: Any) -> Any:
        return self.editor(path=str(self.file), **arguments)

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        """The edit through ``str_replace``; a ``ToolError`` (the tool refused a valid
        edit) is answered under its own class name: an undocumented outcome."""
        text = self.read().decode("utf-8")
        start, end = unique_window(text, offset, delete_length)
        new = text[start:offset] + insert.decode("utf-8") + text[offset + delete_length : end]
        self.call(command="str_replace", old_str=text[start:end], new_str=new)

    def rollback(self, steps: int) -> None:
        from openhands_aci.editor import ToolError

        for done in range(steps):
            try:
                self.call(command="undo_edit")
            except ToolError as error:
                if NO_HISTORY not in error.message:
                    raise
                raise Unreachable(f"undo_edit #{done + 1} of {steps}: {error.message}") from None

    def apply_diff(
        self,
        snapshot: bytes,
        mode: str,
        hunks: Sequence[tuple[int, int, bytes]],
        reads: list[tuple[int, int]],
    ) -> None:
        from openhands_aci.editor import ToolError

        base = snapshot.decode("utf-8")
        text_hunks = [(start, end, replacement.decode("utf-8")) for start, end, replacement in hunks]
        for old, new in edit_blocks(base, text_hunks):
            try:
                self.call(command="str_replace", old_str=old, new_str=new)
            except ToolError as error:
                raise Refused(" | ".join(error.message.strip().splitlines()[:3])) from None

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in MODES:
        print(f"usage: {Path(argv[0]).name} {{{'|'.join(MODES)}}}", file=sys.stderr)
        return 2
    from importlib.metadata import version

    import openhands_aci.editor  # noqa: F401  (imported now: its start belongs to the hello)

    logging.disable(logging.CRITICAL)  # the tool logs every read at DEBUG; stderr is for failures
    release = f"openhands-aci {version('openhands-aci')}"
    if argv[1] == "editor":
        return serve(
            "openhands-editor",
            release,
            EditedFile,
            alphabet=ALPHABET,
            capabilities=("bounded", "core"),
            history_bound={
                "policy": "evict_oldest",
                "description": "FileHistoryManager keeps the last N versions of each file (N = 10 as shipped)",
            },
        )
    return serve("openhands-str-replace", release, EditedFile, alphabet=ALPHABET)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
