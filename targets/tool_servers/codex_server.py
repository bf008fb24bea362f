"""Codex's ``apply_patch`` as a rollcert-protocol/2.1 server (standard library only).

    python codex_server.py /path/to/codex

Codex (npm ``@openai/codex``, a coding agent) edits files with its ``apply_patch``
tool: the model writes a patch in Codex's own format and the CLI applies it. The
npm package ships the CLI as a native binary (``@openai/codex-linux-x64`` and its
siblings, an optional dependency per platform); the binary runs the tool by
itself when called as ``codex --codex-run-as-apply-patch PATCH`` (the way the
agent's sandbox runs it), in the directory the patch's paths are relative to.
The buffer is a real file, ``buffer.txt`` in a temporary directory; an apply
renders the diff as the patch a model writes and runs the binary there. Exit
status 0 is an apply; any other is a refusal (``StaleBaseError``) with the
tool's message, the file as the tool left it.

How a diff (snapshot B0, hunks) becomes the patch (:func:`codex_patch`)::

    *** Begin Patch
    *** Update File: buffer.txt
    @@
     context line
    -old line
    +new line
    *** End Patch

one ``@@`` chunk per hunk of ``difflib.unified_diff`` of B0 -> B1 with 3 lines of
context (Codex's prompt asks for 3 lines above and below each change), each line
prefixed by a space, ``-`` or ``+``. The format is line-based: a last line without
a line break cannot be said.

What cannot be told to the tool: the anchor mode and the declared reads. Its
read-set is each chunk's context and ``-`` lines, which it seeks in the file in
order (exactly, then ignoring trailing whitespace, then ignoring surrounding
whitespace, then with some punctuation normalised).
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if __package__:
    from ._wire import FileBuffer
    from ._wire import Refused
    from ._wire import apply_hunks
    from ._wire import serve
else:  # run as a script: the siblings are on sys.path
    from _wire import FileBuffer
    from _wire import Refused
    from _wire import apply_hunks
    from _wire import serve

FILE_NAME = "buffer.txt"
#: The diff machine's letters, a line break (the format is line-based) and a space
#: (so the whitespace-tolerant seeks can be reached).
ALPHABET = b"ab12XY\n "
#: How long one apply may take (the binary starts in well under a second).
APPLY_TIMEOUT_SECONDS = 60


def codex_patch(base: str, result: str, file_name: str = FILE_NAME, context: int = 3) -> str:
    """The ``apply_patch`` input a model writes for B0 -> B1."""
    lines = ["*** Begin Patch", f"*** Update File: {file_name}"]
    made = difflib.unified_diff(base.splitlines(keepends=True), result.splitlines(keepends=True), n=context)
    for line in list(made)[2:]:  # difflib's ---/+++ header: the Update File line says it
        lines.append("@@" if line.startswith("@@") else line.rstrip("\n"))
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


class PatchedFile(FileBuffer):
    """A file Codex's ``apply_patch`` edits."""

    def __init__(self, initial: bytes, codex: str) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="rollcert-codex-"))
        super().__init__(self.directory / FILE_NAME, initial)
        self.codex = codex

    def apply_diff(
        self,
        snapshot: bytes,
        mode: str,
        hunks: Sequence[tuple[int, int, bytes]],
        reads: list[tuple[int, int]],
    ) -> None:
        base = snapshot.decode("utf-8")
        result = apply_hunks(snapshot, hunks).decode("utf-8")
        done = subprocess.run(
            [self.codex, "--codex-run-as-apply-patch", codex_patch(base, result)],
            cwd=self.directory,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=APPLY_TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()[:4]
            raise Refused(" | ".join(said) or f"apply_patch exited with status {done.returncode}")

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {Path(argv[0]).name} /path/to/codex", file=sys.stderr)
        return 2
    codex = argv[1]
    version = subprocess.run([codex, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if not version:
        print(f"{codex} --version printed nothing: not the Codex CLI binary", file=sys.stderr)
        return 2
    return serve("codex-apply-patch", version, lambda initial: PatchedFile(initial, codex), alphabet=ALPHABET)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
