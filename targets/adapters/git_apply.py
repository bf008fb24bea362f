"""``git apply`` as a diff applier, plain and with ``--3way``
(``rollcert certify git-apply`` / ``git-apply-3way``).

The buffer is a file in a temporary git repository (``git init``; nothing of
the project's own repository is touched). The patch is what a git user gets:
``git diff --no-index --full-index`` of B0 and B1 (B0 with the hunks
applied) in a scratch folder, 3 lines of context, with the ``index`` line
naming both blobs. The snapshot stores B0 as a blob (``git hash-object -w``),
as a commit or ``git stash`` of the author's working state would, so that
``--3way`` can find the preimage.

- ``git-apply``: ``git apply -p3 buffer.txt.patch``. The context must match
  exactly (no fuzz), but a hunk whose context is found at another line is
  applied there (an offset); all-or-nothing per file, so a refused patch
  changes nothing.
- ``git-apply-3way``: the live file is staged first (``--3way`` implies
  ``--index``, which needs the working tree to match the index), then
  ``git apply --3way``. Git merges B0 -> B1 into the live file (git 2.39,
  used here, merges first: it never says "Falling back to three-way merge");
  a clean merge applies, a conflict exits non-zero and **leaves the file with
  conflict markers** — a refused apply that changed the buffer, which the
  certificate reports.

Exit status 0 is an accepted diff; anything else a refusal, reported as
``StaleBaseError`` with git's message; the file is left as git left it.
``mode`` and ``reads`` cannot be passed to git (see ``gnu_patch``): git judges
by context lines (plain) or by a line merge (``--3way``). Line-based, so the
alphabet adds ``\\n``; no ``\\r``; bytes are written untouched (no attributes,
no autocrlf: the repository has no config but ``core.autocrlf=false``).
No undo log: capability ``core`` is not declared (S2, S3 not assessed).
"""

from __future__ import annotations

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.diff_applier import applier_target
from rollcert.targets.adapters.gnu_patch import FILE_NAME
from rollcert.targets.adapters.gnu_patch import LINE_ALPHABET
from rollcert.targets.adapters.gnu_patch import AppliedPatch
from rollcert.targets.adapters.gnu_patch import FileDiffApplier
from rollcert.targets.adapters.gnu_patch import FileSnapshot
from rollcert.targets.adapters.gnu_patch import require_tool

PATCH_NAME = f"{FILE_NAME}.patch"


class GitApplyAdapter(FileDiffApplier):
    """The buffer as a file in a fresh git repository; ``three_way`` picks ``--3way``."""

    def __init__(self, config: BufferConfig, three_way: bool) -> None:
        super().__init__(config)
        self.three_way = three_way
        self.git("init", "--quiet")
        self.git("config", "core.autocrlf", "false")

    def git(self, *arguments: str, stdin: bytes = b"") -> bytes:
        """Run a git command that must succeed (setup, hashing, diffing) and return its output."""
        result = self.run_tool(["git", *arguments], self.directory, stdin)
        if result.returncode != 0:
            raise HarnessError(
                f"git {arguments[0]} failed: {result.stderr.decode('utf-8', 'replace').strip()}"
            )
        return result.stdout

    def snapshot(self) -> object:
        content = self.read()
        blob = self.git("hash-object", "-w", "--stdin", stdin=content).decode("ascii").strip()
        return FileSnapshot(content, blob)

    def git_diff(self, base: bytes, result: bytes) -> bytes:
        """``git diff --no-index`` of B0 and B1 as scratch/old and scratch/new (stripped by ``-p3``)."""
        for side, content in (("old", base), ("new", result)):
            folder = self.scratch / side
            folder.mkdir(exist_ok=True)
            (folder / FILE_NAME).write_bytes(content)
        made = self.run_tool(
            [
                "git",
                "diff",
                "--no-index",
                "--full-index",
                "--no-color",
                "--no-ext-diff",
                f"scratch/old/{FILE_NAME}",
                f"scratch/new/{FILE_NAME}",
            ],
            self.directory,
        )
        return self.patch_made(made, "git diff")

    def apply_file(self, base: bytes, result: bytes) -> object:
        patch = self.git_diff(base, result)
        patch_file = self.scratch / PATCH_NAME
        patch_file.write_bytes(patch)
        command = ["git", "apply", "-p3"]
        if self.three_way:
            self.git("add", "--", FILE_NAME)  # --3way implies --index: the index must match the file
            command.append("--3way")
        applied = self.run_tool([*command, f"scratch/{PATCH_NAME}"], self.directory)
        if applied.returncode != 0:
            raise self.refuse("git apply", applied)  # the file stays as git left it
        return AppliedPatch(patch)


def _build(name: str, three_way: bool, description: str) -> Target:
    return applier_target(
        name,
        require_tool("git"),
        lambda config: GitApplyAdapter(config, three_way),
        description,
        patch="git diff",
        judged="git judges staleness by context lines" + (" or a three-way line merge" if three_way else ""),
        keeper="git apply",
        alphabet=LINE_ALPHABET,
    )


def build_target() -> Target:
    """``git-apply``: exact context, offsets allowed, all or nothing."""
    return _build("git-apply", False, "git apply of a git diff (3 lines of context, no fuzz) to a file")


def build_three_way_target() -> Target:
    """``git-apply-3way``: a three-way merge from the stored preimage blob."""
    return _build(
        "git-apply-3way", True, "git apply --3way of a git diff whose preimage blob is in the repository"
    )

