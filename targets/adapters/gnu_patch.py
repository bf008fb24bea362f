"""GNU ``patch`` as a diff applier (``rollcert certify gnu-patch``).

The buffer is a real file in a temporary directory. ``splice`` rewrites the
file (the tool's or the agent's plain write between a snapshot and an apply);
``snapshot`` keeps the file's bytes B0. ``apply_diff`` does what a user of the
tool does: it writes B0 and B1 (B0 with the hunks applied) to two scratch
files, makes a unified diff of them with GNU ``diff -u`` (3 lines of context),
and runs ``patch`` on the live file with it. Exit status 0 is an accepted
diff; any other status is a refusal, reported as ``StaleBaseError`` with the
tool's own message, and the file is left **as the tool left it** — if ``patch``
applied some hunks and refused others, the partial result stays, and the
certificate shows it (S1: a diff applies all its hunks or none).

What cannot be passed to the tool, and therefore is not honoured: the anchor
``mode`` and the declared ``reads``. A unified diff carries line numbers *and*
context lines, and ``patch`` decides by the context alone: it looks for it at
the recorded line, then at any offset, then with up to 2 context lines
ignored (``fuzz``). So a positional diff applies on a moved base, and a diff
whose declared read changed applies as long as its context is intact — S1
violations the certificate is expected to find; they are the finding.

Options: ``--force`` (never ask, never assume a reversed patch — the
interactive default would ask on the terminal), ``--no-backup-if-mismatch``
and ``--reject-file=-`` (no ``.orig``/``.rej`` files next to the buffer).
Fuzz and offset search keep their defaults: that is the tool users get.

Line-based: without line breaks the whole buffer is one line and every diff
replaces it, so the target's alphabet adds ``\\n`` to every writer's letters
(``Target.alphabet``; see ``diff_machine.diff_alphabets``). The hunks are byte
ranges; ``diff`` turns B0 -> B1 into whole-line edits, as it would for any
user. ``\\r`` is never generated (no line-ending conversion is exercised).
Bytes go to the files untouched, so the adapter is byte-transparent.

The tools keep no undo log: ``rollback`` and ``rollback_diff`` are not
offered (capability ``core`` is not declared), so S2 and S3 are *not
assessed*, and so are the R properties.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import StaleBaseError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.adapters.diff_applier import DiffApplier
from rollcert.targets.adapters.diff_applier import DiffRequest
from rollcert.targets.adapters.diff_applier import applier_target
from rollcert.targets.adapters.diff_applier import apply_hunks

#: The bytes this world of line-based patches is certified over: a few letters of
#: each role the diff machine gives letters (the author's text, the second writer's,
#: the hunks') plus a line break (see the module docstring). The adapter declares
#: them; it does not read them from the engine's strategies, which sit a room above.
LINE_ALPHABET = b"ab" + b"12" + b"XY" + b"\n"
#: Seconds one tool run may take before the adapter calls it hung.
TOOL_TIMEOUT = 30.0
#: The name of the buffer's file inside the temporary directory.
FILE_NAME = "buffer.txt"


@dataclass(frozen=True)
class FileSnapshot:
    """B0: the file's bytes when the snapshot was taken (``blob``: its git object id, if stored)."""

    content: bytes
    blob: str | None = None


@dataclass(frozen=True)
class AppliedPatch:
    """The handle of an accepted apply: the patch text the tool was given."""

    patch: bytes


def tool_environment(home: Path) -> dict[str, str]:
    """A fixed environment: C locale (stable messages), no user or system git config."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }


def require_tool(name: str) -> str:
    """The first line of ``name --version``, after checking the tool is on PATH."""

    path = shutil.which(name)
    if path is None:
        raise TargetError(f"{name} is not installed (not on PATH); install it, e.g. apt-get install {name}")
    result = subprocess.run([path, "--version"], capture_output=True, timeout=TOOL_TIMEOUT, check=False)
    return result.stdout.decode("utf-8", "replace").splitlines()[0].strip()


class FileDiffApplier(DiffApplier):
    """The buffer as a file in a temporary directory; subclasses run one tool on it.

    :meth:`apply` hands the tool's own step, :meth:`apply_file`, B0 and B1
    (the snapshot with the hunks applied).
    """

    snapshot_type = FileSnapshot

    def __init__(self, config: BufferConfig) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="rollcert-diff-"))
        self.file = self.directory / FILE_NAME
        self.scratch = self.directory / "scratch"
        self.scratch.mkdir()
        self.environment = tool_environment(self.directory)
        self.file.write_bytes(bytes(config.initial))

    def run_tool(
        self, arguments: list[str], cwd: Path, stdin: bytes = b""
    ) -> subprocess.CompletedProcess[bytes]:
        """Run one tool; a hang or a missing program is a harness error, not a verdict."""
        try:
            return subprocess.run(
                arguments,
                cwd=cwd,
                input=stdin,
                capture_output=True,
                env=self.environment,
                timeout=TOOL_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise HarnessError(f"{arguments[0]} did not run to completion: {error}") from None

    def read(self) -> bytes:
        if not self.file.exists():
            raise HarnessError(f"the tool removed the buffer's file {FILE_NAME}")
        return self.file.read_bytes()

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        current = self.read()
        offset, delete_length, data = check_splice_arguments(len(current), offset, delete_length, insert)
        self.file.write_bytes(current[:offset] + data + current[offset + delete_length :])

    def rollback(self, steps: int) -> None:
        """Not offered: the tools keep no undo log (capability ``core`` is not declared)."""
        raise CapabilityMissing("core: a diff applier keeps no undo log, so it cannot roll back")

    def snapshot(self) -> object:
        return FileSnapshot(self.read())

    def base(self, snapshot: FileSnapshot) -> bytes:
        return snapshot.content

    def apply(self, request: DiffRequest) -> object:
        base = request.snapshot.content
        return self.apply_file(base, apply_hunks(base, request.hunks, bytes))

    def apply_file(self, base: bytes, result: bytes) -> object:
        """The tool's step: make a patch from ``base`` (B0) to ``result`` (B1) and apply it to the file."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply_file()")

    def patch_made(self, made: subprocess.CompletedProcess[bytes], tool: str) -> bytes:
        """The patch a diff tool printed (status 0: no difference, 1: a diff); else a harness error."""
        if made.returncode not in (0, 1):
            raise HarnessError(f"{tool} failed: {made.stderr.decode('utf-8', 'replace').strip()}")
        return made.stdout

    def refuse(self, tool: str, result: subprocess.CompletedProcess[bytes]) -> StaleBaseError:
        """The tool's refusal as the protocol's error, with its own words."""
        said = (result.stdout + result.stderr).decode("utf-8", "replace").strip().replace("\n", " | ")
        return StaleBaseError(f"{tool} exited with status {result.returncode}: {said}")

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class GnuPatchAdapter(FileDiffApplier):
    """``diff -u`` makes the patch from B0 to B1; ``patch`` applies it to the live file."""

    def unified_diff(self, base: bytes, result: bytes) -> bytes:
        old, new = self.scratch / "old", self.scratch / "new"
        old.write_bytes(base)
        new.write_bytes(result)
        made = self.run_tool(
            ["diff", "-u", "--label", f"a/{FILE_NAME}", "--label", f"b/{FILE_NAME}", "old", "new"],
            self.scratch,
        )
        return self.patch_made(made, "diff")

    def apply_file(self, base: bytes, result: bytes) -> object:
        patch = self.unified_diff(base, result)
        applied = self.run_tool(
            ["patch", "--force", "--no-backup-if-mismatch", "--reject-file=-", FILE_NAME],
            self.directory,
            patch,
        )
        if applied.returncode != 0:
            raise self.refuse("patch", applied)  # the file stays as patch left it
        return AppliedPatch(patch)


def build_target() -> Target:
    """The registered ``gnu-patch`` target; needs ``diff`` and ``patch`` on PATH."""
    require_tool("diff")
    return applier_target(
        "gnu-patch",
        require_tool("patch"),
        GnuPatchAdapter,
        "GNU patch applying a diff -u patch (3 lines of context, default fuzz 2) to a file",
        patch="unified diff",
        judged="patch judges staleness by context lines",
        keeper="patch",
        alphabet=LINE_ALPHABET,
    )
