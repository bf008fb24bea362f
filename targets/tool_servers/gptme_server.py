"""gptme's ``patch`` tool as a rollcert-protocol/2 server (run under gptme's own venv).

    python gptme_server.py

gptme (PyPI ``gptme``) is a terminal agent; its ``patch`` tool takes a code
block of ORIGINAL/UPDATED conflict-marker blocks and edits a file. The buffer is a
real file, ``buffer.txt`` in a temporary directory; an apply renders the diff as
the code block an agent writes and calls ``gptme.tools.patch.execute_patch_impl``
— the function the tool's ``execute`` runs after the user's confirmation — with
the file's path. Its ``ValueError`` ("Patch failed: …", the text the agent gets
back) is a refusal (``StaleBaseError``); the tool writes the file only when
every block matched.

How a diff (snapshot B0, hunks) becomes the code block: the hunks are widened to
whole-line blocks as for aider (``_blocks.edit_blocks``: the lines each hunk
touches, hunks sharing a line in one block). In gptme's format the line break
before ``=======`` and before ``>>>>>>> UPDATED`` belongs to the markers, so a
block whose two sides both end in a line break is sent without it (``a`` for the
line ``a\\n``), as an agent writes it; a block whose sides do not both end in one
(a deletion of whole lines, whose replacement is empty, or the last line of the
text) is sent whole — its ORIGINAL then ends in an empty line.

What cannot be told to the tool: the anchor mode and the declared reads. Its
read-set is the ORIGINAL text, searched as a substring of the file (it must occur
once), then line by line with whitespace-only lines treated as equal (again once).

Stdlib only at import (the rendering is tested without gptme); gptme is imported
when the server starts.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if __package__:
    from ._blocks import edit_blocks
    from ._wire import FileBuffer
    from ._wire import Refused
    from ._wire import serve
else:  # run as a script under the tool's interpreter: the siblings are on sys.path
    from _blocks import edit_blocks
    from _wire import FileBuffer
    from _wire import Refused
    from _wire import serve

FILE_NAME = "buffer.txt"
#: The diff machine's letters, a line break and a space (whitespace-only lines match loosely).
ALPHABET = b"ab12XY\n "


def patch_blocks(base: str, hunks: Sequence[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """The (ORIGINAL, UPDATED) texts an agent writes for ``hunks`` on ``base``."""
    blocks = []
    for search, replace in edit_blocks(base, hunks):
        if search.endswith("\n") and replace.endswith("\n"):
            search, replace = search[:-1], replace[:-1]
        blocks.append((search, replace))
    return blocks


def patch_codeblock(blocks: Sequence[tuple[str, str]]) -> str:
    """The ``patch`` tool's code block: one conflict-marker block per edit."""
    return "\n".join(
        f"<<<<<<< ORIGINAL\n{original}\n=======\n{updated}\n>>>>>>> UPDATED" for original, updated in blocks
    )


class PatchedFile(FileBuffer):
    """A file gptme's ``patch`` tool edits."""

    def __init__(self, initial: bytes) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="rollcert-gptme-"))
        super().__init__(self.directory / FILE_NAME, initial)

    def apply_diff(
        self,
        snapshot: bytes,
        mode: str,
        hunks: Sequence[tuple[int, int, bytes]],
        reads: list[tuple[int, int]],
    ) -> None:
        from gptme.tools.patch import execute_patch_impl

        base = snapshot.decode("utf-8")
        text_hunks = [(start, end, replacement.decode("utf-8")) for start, end, replacement in hunks]
        codeblock = patch_codeblock(patch_blocks(base, text_hunks))
        try:
            for _message in execute_patch_impl(codeblock, self.file):
                pass
        except ValueError as error:  # "Patch failed: ...", the tool's answer to the agent
            raise Refused(" | ".join(str(error).strip().splitlines()[:4])) from None

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: {Path(argv[0]).name}", file=sys.stderr)
        return 2
    from importlib.metadata import version

    return serve("gptme-patch", f"gptme {version('gptme')}", PatchedFile, alphabet=ALPHABET)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
