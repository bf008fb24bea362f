"""The durable journal under real system-call faults (issue 26, SPEC §4 R1/R5).

``strace -e inject=SYSCALL:error=EIO|ENOSPC:when=N`` makes the N-th call of a
kind the journal makes fail in the kernel's own way, in a real process
(``tests/syscall_fault_driver.py``: open a durable buffer, splice, roll back,
flush, compact, adopt; reopen after every refusal, as the errors say to). The
calls are enumerated first (a clean run under ``strace -e trace=...``), then
every one of them is failed in turn, in both durability modes; and twice more
for every fsync, with a second fault behind it: every ftruncate failing (the
cut-back of the refused record fails too), or every later fsync failing (a
disk that stays broken). Then a clean reopen without strace. The checks:

- every step the driver reports agrees with the model (``model.reference``):
  an acknowledged operation left the state the model says; a refused one
  (JournalError, or a poisoned journal's refusal) changed nothing; one whose
  outcome is unknown (OutcomeUnknownError) changed nothing in memory;
- every reopen, the driver's and the last one, yields the last acknowledged
  state or, after an unknown outcome, the state after that operation: no
  acknowledged operation lost, no refused one recovered, nothing outside the
  history. (No crash happens: what was written is in the page cache, so a
  reopen must see even the unflushed operations of the batched mode.)

A full disk is a small tmpfs mounted for the test (root only; it skips,
saying why, where mounting is not permitted): appends until ENOSPC, and a
compaction with no room for its copy.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import error_kind
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import Compact
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import step

STRACE = shutil.which("strace")
DRIVER = Path(__file__).with_name("syscall_fault_driver.py")
#: The calls the journal can make that the matrix fails (fdatasync is listed
#: so that the enumeration would show it if the journal began to use it).
SYSCALLS = ("write", "fsync", "fdatasync", "ftruncate", "rename", "openat", "unlink")
#: Each must be met by a clean run: the driver exercises every path.
MUST_MEET = ("write", "fsync", "ftruncate", "rename", "openat", "unlink")
MODES = ("per_operation", "batched")
#: The journal the driver reopens: written before strace starts, two edits deep.
INITIAL = b"base text"
PREPARED_EDITS = ((0, 0, b"A"), (1, 0, b"B"))



def _strace_refusal() -> str | None:
    """Why strace cannot trace here (not installed, or ptrace not permitted), or None."""
    if STRACE is None:
        return "strace is not installed (Debian: apt-get install strace; .ci/run installs it)"
    probe = subprocess.run([STRACE, "-o", os.devnull, "true"], capture_output=True, text=True, check=False)
    return None if probe.returncode == 0 else f"strace cannot trace here: {probe.stderr.strip()}"


pytestmark = pytest.mark.slow
_REFUSAL = _strace_refusal()
needs_strace = pytest.mark.skipif(_REFUSAL is not None, reason=str(_REFUSAL))

Shown = tuple[bytes, int, int]


def shown_of(state: ModelState) -> Shown:
    return state.current, state.depth, state.revision


def prepare(directory: Path) -> ModelState:
    """Write the journal the driver opens; return the model of it."""
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, INITIAL)
    model = initial_state(INITIAL, durable=True)
    for edit in PREPARED_EDITS:
        buffer.splice(*edit)
        model = step(model, Splice(*edit)).state
    storage.close()
    return model


def strace_command(directory: Path, mode: str, options: list[str]) -> list[str]:
    """strace over the driver, seeing only calls on the journal's files and directory."""
    assert STRACE is not None
    paths = [directory / name for name in (DEFAULT_NAME, DEFAULT_NAME + ".new", DEFAULT_NAME + ".lock")]
    filters = [argument for path in [*paths, directory] for argument in ("-P", str(path))]
    return [
        STRACE, "-f", "-qq", "-e", "signal=none", "-e", "trace=" + ",".join(SYSCALLS), *filters, *options,
        sys.executable, str(DRIVER), str(directory), mode,
    ]  # fmt: skip


def run_driver(directory: Path, mode: str, options: list[str], log: Path) -> list[dict[str, Any]]:
    completed = subprocess.run(
        strace_command(directory, mode, ["-o", str(log), *options]),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines()]


def enumerate_calls(directory: Path, mode: str, log: Path) -> dict[str, int]:
    """How many calls of each kind a clean run makes (the fault-free trace)."""
    lines = run_driver(directory, mode, [], log)
    assert all(line["ending"] == "ok" or line["op"] == "rollback" for line in lines), lines
    counts = dict.fromkeys(SYSCALLS, 0)
    for line in log.read_text().splitlines():
        name = line.split(None, 1)[1].split("(", 1)[0] if " " in line else ""
        if name in counts:
            counts[name] += 1
    return counts


def model_operation(line: dict[str, Any]) -> Operation:
    name, arguments = line["op"], line.get("arguments", [])
    if name == "splice":
        return Splice(arguments[0], arguments[1], arguments[2].encode())
    if name == "rollback":
        return Rollback(arguments[0])
    if name == "compact":
        return Compact(arguments[0])
    if name == "adopt_current":
        return AdoptCurrent()
    if name == "flush":
        return Flush()
    raise AssertionError(f"the driver reported an unknown step: {line}")


def reported(line: dict[str, Any]) -> Shown:
    text, depth, revision = line["state"]
    return bytes.fromhex(text), depth, revision


@dataclass
class Judge:
    """The model's view of one faulted run: the last acknowledged state and,
    after an operation whose outcome was unknown, the state after it."""

    acknowledged: ModelState
    in_doubt: ModelState | None = None
    #: Whether the journal was poisoned in a way the driver saw reported
    #: (a refusal, an unknown outcome, or an open that came out poisoned).
    failure_reported: bool = False

    def allowed(self) -> list[ModelState]:
        return [self.acknowledged] + ([self.in_doubt] if self.in_doubt is not None else [])

    def reopened(self, shown: Shown, what: str) -> None:
        """A reopen yields an allowed state, which is from then on the acknowledged one."""
        matching = [state for state in self.allowed() if shown_of(state) == shown]
        assert matching, (
            f"{what} recovered {shown}, outside what was acknowledged: "
            + " or ".join(str(shown_of(state)) for state in self.allowed())
        )
        self.acknowledged = matching[0]
        self.in_doubt = None
        self.failure_reported = False

    def step(self, line: dict[str, Any]) -> None:
        operation = model_operation(line)
        ending, shown = line["ending"], reported(line)
        try:
            outcome = step(self.acknowledged, operation)
        except (ValueError, TypeError) as error:  # a bad argument after a refusal changed the depth
            assert ending == type(error).__name__, line
            assert shown == shown_of(self.acknowledged), line
            return
        expected_error = error_kind(outcome.error) if outcome.error is not None else None
        if ending == "ok":
            assert expected_error is None, f"acknowledged what the model refuses: {line}"
            assert shown == shown_of(outcome.state), f"acknowledged a state the model does not: {line}"
            self.acknowledged = outcome.state
            return
        assert shown == shown_of(self.acknowledged), f"a refusal changed the buffer: {line}"
        if ending == "poisoned":
            # The failure that poisoned the journal was reported by the
            # operation that met it (no operation reported success over it).
            assert self.failure_reported, f"poisoned by a failure no operation reported: {line}"
            return
        if ending in ("refused", "unknown"):
            self.failure_reported = True
            assert expected_error in (None, "JournalError"), line
            if ending == "unknown":
                assert self.in_doubt is None, "a second unknown outcome before a reopen"
                self.in_doubt = outcome.state
            return
        assert ending == expected_error, f"an error the model does not raise: {line}"


def judge_run(lines: list[dict[str, Any]], prepared: ModelState, directory: Path) -> dict[str, int]:
    """Check every reported step and a clean reopen; return the endings seen."""
    judge = Judge(prepared)
    endings: dict[str, int] = {}
    for line in lines:
        endings[line["ending"]] = endings.get(line["ending"], 0) + 1
        if line["op"] in ("open", "reopen"):
            if line["ending"] == "ok":
                judge.reopened(reported(line), f"the driver's {line['op']}")
                judge.failure_reported = line["poisoned"] is not None
            continue
        judge.step(line)
    storage = RealDirectory(directory)
    try:
        buffer = open_durable_buffer(storage)
        judge.reopened((buffer.read(), buffer.depth, buffer.revision), "the clean reopen after the run")
        buffer.splice(0, 0, b"!")  # and it is usable
    finally:
        storage.close()
    return endings


@dataclass(frozen=True)
class Case:
    label: str
    options: tuple[str, ...]


def cases(counts: dict[str, int], kind: str) -> Iterator[Case]:
    """The injections of one kind: every call of a syscall failed in turn
    (EIO and ENOSPC alternately), or for every fsync a second fault behind it."""
    if kind in SYSCALLS:
        for number in range(1, counts[kind] + 1):
            error = "ENOSPC" if number % 2 else "EIO"
            yield Case(f"{kind} #{number} {error}", ("-e", f"inject={kind}:error={error}:when={number}"))
    elif kind == "fsync then every ftruncate":
        for number in range(1, counts["fsync"] + 1):
            yield Case(
                f"fsync #{number}, then every ftruncate",
                ("-e", f"inject=fsync:error=EIO:when={number}", "-e", "inject=ftruncate:error=EIO"),
            )
    elif kind == "every fsync from one on":
        for number in range(1, counts["fsync"] + 1):
            yield Case(f"fsync #{number} and every later one", ("-e", f"inject=fsync:error=EIO:when={number}+"))
    else:  # pragma: no cover - the parametrisation names only the kinds above
        raise AssertionError(kind)


KINDS = (*SYSCALLS, "fsync then every ftruncate", "every fsync from one on")


@pytest.fixture(scope="module")
def call_counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int]]:
    """The clean runs' call counts, per mode (enumerated once)."""
    counts = {}
    for mode in MODES:
        directory = tmp_path_factory.mktemp(f"clean-{mode}")
        prepare(directory / "store")
        counts[mode] = enumerate_calls(directory / "store", mode, directory / "strace.log")
    return counts


@needs_strace
def test_a_clean_run_meets_every_kind_of_call(call_counts: dict[str, dict[str, int]]) -> None:
    for mode, counts in call_counts.items():
        assert all(counts[name] >= 1 for name in MUST_MEET), (mode, counts)
        assert counts["fsync"] >= 5 and counts["write"] >= 10, (mode, counts)


@needs_strace
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", MODES)
def test_every_failed_call_keeps_what_was_acknowledged_and_nothing_refused(
    tmp_path: Path, call_counts: dict[str, dict[str, int]], mode: str, kind: str
) -> None:
    seen: dict[str, int] = {}
    injected = 0
    for index, case in enumerate(cases(call_counts[mode], kind)):
        directory = tmp_path / f"case-{index}"
        prepared = prepare(directory / "store")
        log = directory / "strace.log"
        lines = run_driver(directory / "store", mode, list(case.options), log)
        injected += "(INJECTED)" in log.read_text()
        try:
            endings = judge_run(lines, prepared, directory / "store")
        except AssertionError as failure:
            raise AssertionError(f"{mode}, {case.label}: {failure}\n" + "\n".join(map(json.dumps, lines))) from None
        for ending, number in endings.items():
            seen[ending] = seen.get(ending, 0) + number
        shutil.rmtree(directory)
    if kind != "fdatasync":
        assert injected, f"no {kind} fault was ever injected"
    if kind in ("write", "fsync", "fsync then every ftruncate", "every fsync from one on"):
        assert seen.get("refused"), seen  # the faults were met, and refused
    if kind == "fsync then every ftruncate":
        assert seen.get("unknown"), seen  # the cut-back failed: the outcome was unknown at least once


# -- a real full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs, mounted for the test and unmounted after it."""
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root is needed): {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path, leave: int) -> Path:
    """A file that takes all but about ``leave`` bytes of the disk's free space."""
    filler = directory / "filler"
    free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
    with open(filler, "wb") as file:
        file.write(b"\0" * max(0, free - leave))
    return filler


def seen(buffer: JournaledBuffer) -> Shown:
    return buffer.read(), buffer.depth, buffer.revision


@pytest.mark.parametrize("mode", MODES)
def test_a_full_disk_refuses_compaction_saying_why_and_appends_until_full(small_disk: Path, mode: str) -> None:
    """A journal of about 100 KiB on a disk with about 40 KiB left: the
    compaction has no room for its copy — JournalError saying so, the
    temporary file gone, the journal usable (a splice after it is committed).
    Then splices until the disk is full: each acknowledged one is recovered,
    the refused one (a real short write, cut back, or ENOSPC) is not, and the
    journal refuses everything until it is reopened; once room is made, the
    reopened journal takes records again."""
    directory = small_disk / "store"
    durability = Durability.batched(every_records=3, every_ms=None) if mode == "batched" else None
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, b"x" * 100_000, durability=durability)
    for number in range(3):
        buffer.splice(0, 0, b"edit %d " % number)
    filler = fill(small_disk, 40_000)
    before = seen(buffer)
    with pytest.raises(JournalError, match="no room for the") as refusal:
        buffer.compact(0)
    assert type(refusal.value) is JournalError and "the old journal is intact and the buffer usable" in str(refusal.value)
    assert not (directory / (DEFAULT_NAME + ".new")).exists(), "a copy of the buffer was left behind"
    assert seen(buffer) == before
    buffer.splice(0, 0, b"after the refused compaction ")
    acknowledged = seen(buffer)

    chunk = b"y" * 3000
    with pytest.raises(JournalError, match=os.strerror(errno.ENOSPC)) as full:
        for _ in range(100):
            buffer.splice(0, 0, chunk)
            acknowledged = seen(buffer)
    assert "refused, nothing recorded" in str(full.value)
    assert seen(buffer) == acknowledged
    with pytest.raises(JournalPoisonedError):
        buffer.splice(0, 0, b"z")
    storage.close()

    filler.unlink()
    storage = RealDirectory(directory)
    reopened = open_durable_buffer(storage)
    assert seen(reopened) == acknowledged
    reopened.compact(0)
    reopened.splice(0, 0, b"room again ")
    after = seen(reopened)
    storage.close()
    storage = RealDirectory(directory)
    assert seen(open_durable_buffer(storage)) == after
    storage.close()
