"""aider's two edit appliers as a rollcert-protocol/2 server (run under aider's own venv).

    python aider_server.py search-replace   # EditBlockCoder: SEARCH/REPLACE blocks
    python aider_server.py udiff            # UnifiedDiffCoder: a unified diff

The buffer is a real file, ``buffer.txt`` in a temporary directory, edited the
way aider edits a file in the chat: an apply renders the diff into the reply an
LLM would write to aider, parses it with aider's own parser
(``find_original_update_blocks`` / ``find_diffs``) and applies the edits with
aider's own ``apply_edits`` — the method ``Coder.apply_updates`` calls — on a
minimal stand-in for the coder (the paths, aider's real ``InputOutput`` for
reading and writing the file, the default fence). Each block or hunk is read
from the live file, applied with ``do_replace``, and written back before the
next, as aider does. A failed edit is aider's ``ValueError`` (the text it would
send back to the LLM): answered as a refusal (``StaleBaseError``), with the file
left as aider left it (blocks that matched stay applied).

How a diff (snapshot B0, hunks in B0's byte offsets) becomes what an agent sends:

* **SEARCH/REPLACE** (:func:`edit_blocks`): each hunk is widened to the whole
  lines it touches — agents quote whole lines, and aider's matcher works on lines.
  An insertion at the start of a line quotes the line that starts there; an
  insertion at the end of the text quotes the last line. Hunks whose lines
  overlap share one block (a line is quoted once). SEARCH is B0's text of those
  lines, REPLACE the same lines with the hunks applied. Blocks are sent in text
  order.
* **unified diff** (:func:`unified_diff`): ``difflib.unified_diff`` of B0 -> B1
  (B1 = B0 with the hunks applied) with 3 lines of context, as ``diff -u`` makes it,
  fenced in ```` ```diff ```` with ``--- buffer.txt``/``+++ buffer.txt`` and each
  hunk headed ``@@ ... @@`` (aider's prompt asks for no line numbers; its parser
  ignores them). Context lines locate a pure insertion: aider's prompt asks for
  ``diff -U0`` with whole blocks replaced, and an insertion with no context has an
  empty before-text, which aider appends at the end of the file.

Both formats are line-based and end every line with a line break: a last line
without one is sent with one (the formats cannot say "no newline at end of file").

What cannot be told to the tool: the anchor mode and the declared reads. Its
read-set is the text it searches for (SEARCH, or a hunk's ``-`` and context lines).

Stdlib only at import (the rendering is tested without aider); aider is imported
when the server starts.
"""

from __future__ import annotations

import difflib
import shutil
import sys
import tempfile
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__:
    from ._blocks import edit_blocks
    from ._wire import FileBuffer
    from ._wire import Refused
    from ._wire import apply_hunks
    from ._wire import serve
else:  # run as a script under the tool's interpreter: _wire.py is a sibling
    from _blocks import edit_blocks
    from _wire import FileBuffer
    from _wire import Refused
    from _wire import apply_hunks
    from _wire import serve

#: The file aider edits, inside the buffer's temporary directory.
FILE_NAME = "buffer.txt"
#: The diff machine's letters, a line break (both formats are line-based) and a
#: space (so aider's leading-whitespace fallback can be reached).
ALPHABET = b"ab12XY\n "
APPLIERS = ("search-replace", "udiff")
Hunks = Sequence[tuple[int, int, bytes]]


# -- rendering (stdlib only) -------------------------------------------------------------


def _with_line_break(text: str) -> str:
    """``text`` ending in a line break: a block's lines end before its marker line."""
    return text if not text or text.endswith("\n") else text + "\n"


def search_replace_reply(blocks: Sequence[tuple[str, str]], file_name: str = FILE_NAME) -> str:
    """The reply an LLM writes to aider for ``blocks``: the file name, then each block fenced."""
    parts = []
    for search, replace in blocks:
        parts.append(
            f"{file_name}\n```\n<<<<<<< SEARCH\n{_with_line_break(search)}=======\n"
            f"{_with_line_break(replace)}>>>>>>> REPLACE\n```\n"
        )
    return "\n".join(parts)


def unified_diff(base: str, result: str, file_name: str = FILE_NAME, context: int = 3) -> str:
    """The reply an LLM writes to aider's udiff coder for B0 -> B1: one fenced ``diff``."""
    lines = [f"--- {file_name}\n", f"+++ {file_name}\n"]
    made = difflib.unified_diff(
        base.splitlines(keepends=True), result.splitlines(keepends=True), n=context, lineterm="\n"
    )
    for line in list(made)[2:]:  # difflib's own ---/+++ lines are replaced above
        lines.append("@@ ... @@\n" if line.startswith("@@") else _with_line_break(line))
    return "```diff\n" + "".join(lines) + "```\n"


def text_of(data: bytes) -> str:
    """The buffer's bytes as the text aider reads (UTF-8; the alphabet is ASCII)."""
    return data.decode("utf-8")


def text_hunks(hunks: Hunks) -> list[tuple[int, int, str]]:
    """The hunks with their replacements as text (offsets stay: the alphabet is ASCII)."""
    return [(start, end, text_of(replacement)) for start, end, replacement in hunks]


# -- the buffer --------------------------------------------------------------------------


class _Coder:
    """What aider's ``apply_edits`` reads of its coder, for one file: a stand-in for
    ``Coder`` (whose constructor needs a model and a git repository)."""

    def __init__(self, root: Path, io: Any) -> None:
        self.root = root
        self.io = io
        self.abs_fnames = {str(root / FILE_NAME)}
        self.fence = ("`" * 3, "`" * 3)

    def abs_root_path(self, path: str) -> str:
        return str(self.root / path)

    def get_rel_fname(self, path: str) -> str:
        return str(Path(path).relative_to(self.root))

    def get_inchat_relative_files(self) -> list[str]:
        return [FILE_NAME]


class AiderFile(FileBuffer):
    """A file aider edits; ``apply_edits`` is the applier's (chosen at start)."""

    def __init__(
        self, initial: bytes, applier: Callable[[_Coder, str, list[tuple[int, int, str]]], None]
    ) -> None:
        from aider.io import InputOutput

        self.directory = Path(tempfile.mkdtemp(prefix="rollcert-aider-"))
        super().__init__(self.directory / FILE_NAME, initial)
        self.coder = _Coder(self.directory, InputOutput(pretty=False, fancy_input=False, yes=True))
        self.applier = applier

    def apply_diff(self, snapshot: bytes, mode: str, hunks: Hunks, reads: list[tuple[int, int]]) -> None:
        try:
            self.applier(self.coder, text_of(snapshot), text_hunks(hunks))
        except ValueError as error:  # aider's "failed to match" text, meant for the LLM
            raise Refused(" | ".join(str(error).strip().splitlines()[:6])) from None

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def apply_search_replace(coder: _Coder, base: str, hunks: list[tuple[int, int, str]]) -> None:
    """EditBlockCoder: parse the SEARCH/REPLACE reply, then ``apply_edits`` as aider does."""
    from aider.coders.editblock_coder import EditBlockCoder
    from aider.coders.editblock_coder import find_original_update_blocks

    reply = search_replace_reply(edit_blocks(base, hunks))
    edits = [
        edit for edit in find_original_update_blocks(reply, coder.fence, [FILE_NAME]) if edit[0] is not None
    ]
    EditBlockCoder.apply_edits(coder, edits)  # type: ignore[arg-type]


def apply_udiff(coder: _Coder, base: str, hunks: list[tuple[int, int, str]]) -> None:
    """UnifiedDiffCoder: parse the fenced diff with ``find_diffs``, then ``apply_edits``."""
    from aider.coders.udiff_coder import UnifiedDiffCoder
    from aider.coders.udiff_coder import find_diffs

    result = text_of(apply_hunks(base.encode("utf-8"), [(s, e, r.encode("utf-8")) for s, e, r in hunks]))
    edits = list(find_diffs(unified_diff(base, result)))
    UnifiedDiffCoder.apply_edits(coder, edits)  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in APPLIERS:
        print(f"usage: {Path(argv[0]).name} {{{'|'.join(APPLIERS)}}}", file=sys.stderr)
        return 2
    import aider

    applier = apply_search_replace if argv[1] == "search-replace" else apply_udiff
    return serve(
        f"aider-{argv[1]}",
        f"aider-chat {aider.__version__}",
        lambda initial: AiderFile(initial, applier),
        alphabet=ALPHABET,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
