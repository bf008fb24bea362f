"""The durable journal on real files: round trips, permissions, bad files, torn
tails, real I/O errors and a real unprivileged process (R5, SPEC §8).

Everything here goes through ``RealDirectory``: real ``os.write``, real
``fsync``, real ``rename`` and real permission checks by the kernel. The
simulated disk finds crash points faster; these tests show that the same code
keeps its promises on the file system the journal will actually live on.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import resource
import signal
import stat
import struct
import zlib
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import Seen
from _helpers import model_seen
from _helpers import perform
from _helpers import seen

from rollcert.impl.file_journal import FRAME
from rollcert.impl.file_journal import HEADER
from rollcert.impl.file_journal import SERIAL_FLOOR
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import chain_after
from rollcert.impl.file_journal import frame_spans
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.file_journal import rollback_payload
from rollcert.impl.file_journal import splice_payload
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import Checkpoint
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import OutcomeUnknownError
from rollcert.model.errors import RecoveryError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.errors import error_kind
from rollcert.model.operations import Compact
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import initial_state
from rollcert.model.reference import step

INITIAL = b"the quick brown fox"
JOURNAL = "journal"
#: The unprivileged user the permission tests run as ("nobody" on most systems).
NOBODY = 65534

def reopen(directory: Path) -> tuple[JournaledBuffer, RealDirectory]:
    """A new process's view: a fresh ``RealDirectory`` and a recovery from the file."""
    storage = RealDirectory(directory)
    return open_durable_buffer(storage, b"initial is ignored when the journal exists"), storage


def recovered_snapshot(directory: Path) -> Seen:
    buffer, storage = reopen(directory)
    try:
        return seen(buffer)
    finally:
        storage.close()


def before_the_open(data: bytes) -> bytes:
    """A journal file as it was before ``open_durable_buffer`` appended the
    serial floor of the next block (format 3): the file minus its last frame,
    which must be that floor, whole."""
    start, end = frame_spans(data)[-1]
    assert end == len(data) and data[start + FRAME.size] == SERIAL_FLOOR, "expected the floor of the open last"
    return data[:start]


def peeked_snapshot(directory: Path) -> Seen:
    """What a recovery would give, read straight from the file while its writer
    still holds the lock (recovery proper would be refused: one writer)."""
    recovered = JournalReader().read((directory / JOURNAL).read_bytes())
    return bytes(recovered.buffer), len(recovered.records), recovered.revision


def record_starts(data: bytes) -> list[int]:
    """Byte offset of every complete record in a journal file (the header excluded)."""
    starts, position = [], HEADER.size
    while position + FRAME.size <= len(data):
        length = FRAME.unpack_from(data, position)[0]
        if position + FRAME.size + length > len(data):
            break
        starts.append(position)
        position += FRAME.size + length
    assert position == len(data), "the helper only parses whole journals"
    return starts


def write_history(directory: Path) -> Seen:
    """A journal with a base, splices and a rollback; its last record is a splice."""
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, INITIAL)
    buffer.splice(4, 5, b"slow")
    buffer.splice(0, 0, b">> ")
    buffer.rollback(1)
    buffer.splice(18, 0, b" jumps")
    buffer.splice(0, 3, b"A")
    state = seen(buffer)
    storage.close()
    return state


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A directory holding a healthy journal (see :func:`write_history`)."""
    directory = tmp_path / "store"
    write_history(directory)
    return directory


def refuse_recovery(directory: Path) -> str:
    """Open a damaged journal: it must raise ``RecoveryError`` and leave the
    directory exactly as it was (same names, same bytes). Returns the message."""

    def contents() -> dict[str, bytes | None]:
        return {
            name: None if (directory / name).is_dir() else (directory / name).read_bytes()
            for name in sorted(os.listdir(directory))
        }

    before = contents()
    storage = RealDirectory(directory)
    try:
        with pytest.raises(RecoveryError) as info:
            open_durable_buffer(storage, INITIAL)
    finally:
        storage.close()
    assert contents() == before, "a failed recovery changed the directory"
    return str(info.value)


# -- round trip ----------------------------------------------------------------------------


def test_round_trip_keeps_bytes_depth_revision_and_checkpoints(tmp_path: Path) -> None:
    """What a process committed is what the next process recovers: the bytes,
    the depth, the revision and the identity of every state, so a checkpoint
    taken before the restart still rolls back to its state afterwards, and one
    whose state was rolled away (or compacted away) is refused."""
    directory = tmp_path / "store"
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, INITIAL)
    model = initial_state(INITIAL)
    tokens = []

    def do(operation: Operation) -> None:
        nonlocal model
        perform(buffer, operation, tokens)
        outcome = step(model, operation)
        assert outcome.error is None
        model = outcome.state
        assert seen(buffer) == model_seen(model), operation

    do(TakeCheckpoint())  # #0: the initial state, compacted away below
    do(Splice(4, 5, b"slow"))
    do(Splice(0, 0, b">> "))
    do(TakeCheckpoint())  # #1: depth 2, survives everything
    do(Splice(3, 0, b"\x00\xff"))
    do(Splice(10, 4, b""))
    do(Rollback(1))
    do(TakeCheckpoint())  # #2: depth 3, rolled away below
    do(Rollback(1))
    do(Splice(5, 1, b"new state at the same depth"))
    do(Compact(2))  # the horizon moves to depth 1; checkpoint #0 dies
    do(Splice(0, 0, b"after compaction "))
    do(Rollback(1))
    do(Splice(len(model.current), 0, b" <end>"))
    committed = seen(buffer)
    del buffer
    storage.close()
    assert sorted(os.listdir(directory)) == [JOURNAL, JOURNAL + ".lock"], "compaction left a temporary file behind"

    buffer, storage = reopen(directory)
    assert seen(buffer) == committed
    for dead in (0, 2):
        with pytest.raises(UnreachableRollbackError):
            buffer.rollback_to(tokens[dead])
        assert step(model, RollbackTo(dead)).error is UnreachableRollbackError
        assert seen(buffer) == committed, "a refused rollback_to changed the buffer"
    buffer.rollback_to(tokens[1])
    model = step(model, RollbackTo(1)).state
    assert seen(buffer) == model_seen(model)
    storage.close()

    # The rollback_to itself was committed: a third process sees it too.
    assert recovered_snapshot(directory) == model_seen(model)


def test_journal_file_and_directory_are_owner_only(tmp_path: Path) -> None:
    """A journal holds everything ever written to the buffer, so the file is
    0600 and the directory 0700, also after a compaction has replaced the file.
    The umask is set to the common 022 for the test, so that a restrictive
    umask in the environment cannot produce these modes on the code's behalf."""
    previous = os.umask(0o022)
    try:
        directory = tmp_path / "private"
        storage = RealDirectory(directory)
        buffer = open_durable_buffer(storage, b"secret")
        buffer.splice(0, 0, b"more ")
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(directory / JOURNAL).st_mode) == 0o600
        buffer.compact(0)
        assert stat.S_IMODE(os.stat(directory / JOURNAL).st_mode) == 0o600
        storage.close()
    finally:
        os.umask(previous)


# -- one clear error for each kind of bad file ------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 10, HEADER.size - 1])
def test_truncated_header_is_refused(history: Path, size: int) -> None:
    """A file shorter than the header cannot be a torn tail (the header is
    written with the base, atomically, by a rename): it is refused."""
    path = history / JOURNAL
    path.write_bytes(path.read_bytes()[:size])
    message = refuse_recovery(history)
    assert message.startswith("byte 0:")
    assert f"expected {HEADER.size} bytes, the file has {size}" in message


def test_missing_base_record_is_refused(history: Path) -> None:
    """A header whose base record is cut off holds no state at all: it is refused
    rather than guessed to be an empty buffer."""
    path = history / JOURNAL
    path.write_bytes(path.read_bytes()[: HEADER.size + 5])
    message = refuse_recovery(history)
    assert message.startswith(f"byte {HEADER.size}:")
    assert "base record" in message


@pytest.mark.slow
def test_a_flipped_bit_in_any_record_but_the_last_is_refused_naming_its_offset(history: Path) -> None:
    """A bit flip in a committed record that is not the last cannot be a torn
    write: wherever it lands (length, checksums or payload of any record), the
    recovery names the byte offset of the damaged record and changes nothing."""
    path = history / JOURNAL
    healthy = path.read_bytes()
    starts = record_starts(healthy)
    assert len(starts) == 6
    checked = 0
    for start, end in itertools.pairwise(starts):  # every record but the last
        for offset in range(start, end):
            damaged = bytearray(healthy)
            damaged[offset] ^= 1 << (offset % 8)
            path.write_bytes(damaged)
            message = refuse_recovery(history)
            assert message.startswith(f"byte {start}:"), (offset, message)
            checked += 1
    assert checked == starts[-1] - HEADER.size


@pytest.mark.parametrize("version", [0, 4, 0xFFFFFFFF])
def test_another_format_version_is_refused_saying_which(history: Path, version: int) -> None:
    """A journal written by another format version is refused with a message
    naming that version. The header checksum is recomputed, so the version is
    the only thing wrong with the file."""
    path = history / JOURNAL
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, version)
    struct.pack_into("<I", data, HEADER.size - 4, zlib.crc32(data[: HEADER.size - 4]))
    path.write_bytes(data)
    message = refuse_recovery(history)
    assert message.startswith("byte 8:")
    assert f"version {version};" in message


def test_a_damaged_header_is_refused(history: Path) -> None:
    """One flipped bit in the buffer id: the header checksum catches it."""
    path = history / JOURNAL
    data = bytearray(path.read_bytes())
    data[12] ^= 0x10
    path.write_bytes(data)
    message = refuse_recovery(history)
    assert message.startswith("byte 0:")
    assert "header checksum" in message


@pytest.mark.parametrize(
    "content",
    [b"NOTAJRNL" + bytes(100), b"hello, this is a text file and not a journal at all\n"],
    ids=["wrong magic", "text file"],
)
def test_a_file_that_is_not_a_journal_is_refused(history: Path, content: bytes) -> None:
    """Something else stored under the journal's name is not read as a journal
    (and not overwritten by a new one)."""
    (history / JOURNAL).write_bytes(content)
    message = refuse_recovery(history)
    assert message.startswith("byte 0:")
    assert "not a rollcert journal" in message


@pytest.mark.parametrize(
    "record",
    [
        splice_payload(InverseRecord(0, b"zz", 1, 99), b"q"),
        rollback_payload(50),
        rollback_payload(0),
        splice_payload(InverseRecord(10_000, b"", 1, 99), b"q"),
        splice_payload(InverseRecord(0, b"", 1, 1), b"q"),
        splice_payload(InverseRecord(0, b"", 1, 99), b"q", evicts=True),
        bytes([9]) + bytes(8),
        bytes([2, 1]),
    ],
    ids=[
        "splice removing bytes that are not there",
        "rollback past the live records",
        "rollback of nothing",
        "splice past the end",
        "splice reusing a serial",
        "eviction in an unbounded journal",
        "unknown type",
        "truncated splice fields",
    ],
)
def test_a_record_that_does_not_fit_is_refused(history: Path, record: bytes) -> None:
    """A record with good checksums, in sequence and chained, that cannot have
    followed the state before it (crafted, or written by a buggy build) is
    refused at its offset, even as the last record, rather than applied,
    dropped as torn, or allowed to raise anything but RecoveryError."""
    path = history / JOURNAL
    data = path.read_bytes()
    size = len(data)
    framed, _ = chain_after(data).frame(record)
    with path.open("ab") as file:
        file.write(framed)
    message = refuse_recovery(history)
    assert message.startswith(f"byte {size}:")


def test_an_unreadable_journal_is_refused(history: Path) -> None:
    """A directory where the journal file should be: reading fails with an
    OSError, which recovery reports as a RecoveryError naming the journal, and
    nothing is created or removed."""
    path = history / JOURNAL
    path.unlink()
    path.mkdir()
    (path / "inside").write_bytes(b"left alone")
    message = refuse_recovery(history)
    assert f"cannot read the journal {JOURNAL!r}" in message
    assert (path / "inside").read_bytes() == b"left alone"


# -- torn tails ------------------------------------------------------------------------------


LAST_OPERATIONS: list[tuple[str, Callable[[JournaledBuffer, Checkpoint], None]]] = [
    ("splice", lambda buffer, _: buffer.splice(2, 7, b"a longer insertion at the end")),
    ("rollback", lambda buffer, _: buffer.rollback(2)),
    ("rollback_to", lambda buffer, token: buffer.rollback_to(token)),
]


@pytest.mark.parametrize("name, last", LAST_OPERATIONS, ids=[name for name, _ in LAST_OPERATIONS])
def test_a_torn_last_record_is_cut_off_at_every_byte(
    tmp_path: Path, name: str, last: Callable[[JournaledBuffer, Checkpoint], None]
) -> None:
    """Cut the file inside the last record, at every byte: recovery gives the
    state before the last operation and cuts the file back to exactly the size
    it had before that operation; the next record then lands where it belongs,
    so a further reopen sees it. The uncut file gives the state after."""
    directory = tmp_path / "store"
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, INITIAL)
    buffer.splice(0, 1, b"one ")
    token = buffer.checkpoint()  # depth 1: rollback_to undoes three records
    for offset, insert in [(4, b"two "), (8, b"three "), (0, b"four ")]:
        buffer.splice(offset, 1, insert)
    before, size_before = seen(buffer), (directory / JOURNAL).stat().st_size
    last(buffer, token)
    after, full = seen(buffer), (directory / JOURNAL).read_bytes()
    storage.close()
    assert after != before and len(full) > size_before

    path = directory / JOURNAL
    for cut in range(size_before + 1, len(full)):
        path.write_bytes(full[:cut])
        buffer, storage = reopen(directory)
        assert seen(buffer) == before, cut
        assert before_the_open(path.read_bytes()) == full[:size_before], cut
        buffer.splice(0, 0, b"next")
        expected = seen(buffer)
        storage.close()
        assert recovered_snapshot(directory) == expected, cut
    path.write_bytes(full)
    assert recovered_snapshot(directory) == after
    assert before_the_open(path.read_bytes()) == full


# -- real I/O errors through the storage interface ----------------------------------------------


class FaultyDirectory(RealDirectory):
    """A real directory whose next ``append``, ``sync``, ``truncate``,
    ``rename`` or ``sync_directory`` fails with an ``OSError``; a failing
    append first writes a prefix of its data for real, as a short write to a
    full disk does."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.armed: dict[str, tuple[int, int | None]] = {}

    def fail_next(self, call: str, error_number: int, written: int | None = 0) -> None:
        """``written=None`` writes the whole record before failing."""
        self.armed[call] = (error_number, written)

    def _fault(self, call: str) -> tuple[int, int | None] | None:
        return self.armed.pop(call, None)

    def append(self, name: str, data: bytes) -> None:
        fault = self._fault("append")
        if fault is None:
            return super().append(name, data)
        error_number, written = fault
        super().append(name, data if written is None else data[:written])
        raise OSError(error_number, os.strerror(error_number))

    def sync(self, name: str) -> None:
        fault = self._fault("sync")
        if fault is not None:
            raise OSError(fault[0], os.strerror(fault[0]))
        super().sync(name)

    def truncate(self, name: str, size: int) -> None:
        fault = self._fault("truncate")
        if fault is not None:
            raise OSError(fault[0], os.strerror(fault[0]))
        super().truncate(name, size)

    def rename(self, source: str, destination: str) -> None:
        fault = self._fault("rename")
        if fault is not None:
            raise OSError(fault[0], os.strerror(fault[0]))
        super().rename(source, destination)

    def sync_directory(self) -> None:
        fault = self._fault("sync_directory")
        if fault is not None:
            raise OSError(fault[0], os.strerror(fault[0]))
        super().sync_directory()


ORIGINS = ["created", "reopened", "compacted"]


def faulty_history(directory: Path, origin: str = "created") -> tuple[JournaledBuffer, FaultyDirectory]:
    """A buffer at depth 3 (or 2) on a journal this process ``created``, or
    ``reopened`` after another process wrote it, or ``compacted`` and then
    appended to. The three reach the file through differently opened handles."""
    storage = FaultyDirectory(directory)
    buffer = open_durable_buffer(storage, INITIAL)
    buffer.splice(4, 5, b"slow")
    buffer.splice(0, 0, b">> ")
    buffer.splice(7, 2, b"")
    if origin == "reopened":
        storage.close()
        storage = FaultyDirectory(directory)
        buffer = open_durable_buffer(storage, b"ignored")
    elif origin == "compacted":
        buffer.compact(1)
        buffer.splice(0, 0, b"on top ")
    return buffer, storage


#: Regression (found by these tests in session 2): the handle ``write_new``
#: opened, which creation and compaction rename into place as the journal's,
#: lacked O_APPEND; after a failed commit was cut back with ftruncate, the next
#: record landed past a hole of zeros and every later recovery failed there.

FAULTS = [
    ("append", errno.ENOSPC, 0),
    ("append", errno.ENOSPC, 7),
    ("append", errno.EIO, 13),
    ("append", errno.EIO, None),
    ("sync", errno.EIO, 0),
    ("sync", errno.ENOSPC, 0),
]
MUTATIONS: list[tuple[str, Callable[[JournaledBuffer], None]]] = [
    ("splice", lambda buffer: buffer.splice(3, 4, b"replacement")),
    ("rollback", lambda buffer: buffer.rollback(2)),
]


def fault_cases() -> Iterator[Any]:
    for origin in ORIGINS:
        for call, error_number, written in FAULTS:
            marks: list[Any] = []
            label = f"{origin}-{call}-{errno.errorcode[error_number]}-wrote-{'all' if written is None else written}"
            yield pytest.param(origin, call, error_number, written, marks=marks, id=label)


@pytest.mark.parametrize("origin, call, error_number, written", list(fault_cases()))
@pytest.mark.parametrize("name, mutation", MUTATIONS, ids=[name for name, _ in MUTATIONS])
def test_a_failed_write_or_fsync_changes_nothing_in_memory_or_on_disk(
    tmp_path: Path,
    name: str,
    mutation: Callable[[JournaledBuffer], None],
    origin: str,
    call: str,
    error_number: int,
    written: int | None,
) -> None:
    """A full disk or an I/O error while committing a record: the operation
    raises JournalError saying it was refused and nothing recorded, the
    buffer, depth and revision are unchanged, the partly written record is
    cut off the real file (same bytes as before), a recovery from disk
    agrees. The journal is poisoned: every later operation is refused naming
    the first failure, until it is reopened; the reopened buffer works and
    its next record is recovered too."""
    directory = tmp_path / "store"
    buffer, storage = faulty_history(directory, origin)
    before, on_disk = seen(buffer), (directory / JOURNAL).read_bytes()
    storage.fail_next(call, error_number, written)
    with pytest.raises(JournalError, match=os.strerror(error_number)) as refusal:
        mutation(buffer)
    assert type(refusal.value) is JournalError and "refused, nothing recorded" in str(refusal.value)
    assert not storage.armed, "the fault was never reached"
    assert seen(buffer) == before
    assert (directory / JOURNAL).read_bytes() == on_disk
    assert peeked_snapshot(directory) == before  # the writer still holds the lock: read, do not open
    for later in (lambda: mutation(buffer), lambda: buffer.compact(0), buffer.journal.flush):
        with pytest.raises(JournalPoisonedError, match=os.strerror(error_number)):
            later()
    assert seen(buffer) == before
    assert (directory / JOURNAL).read_bytes() == on_disk
    storage.close()

    buffer, storage = reopen(directory)
    assert seen(buffer) == before
    mutation(buffer)
    after = seen(buffer)
    assert after != before
    storage.close()
    assert recovered_snapshot(directory) == after


@pytest.mark.parametrize("name, mutation", MUTATIONS, ids=[name for name, _ in MUTATIONS])
def test_a_record_that_cannot_be_cut_back_leaves_a_torn_tail_for_recovery(
    tmp_path: Path, name: str, mutation: Callable[[JournaledBuffer], None]
) -> None:
    """A short write, then the truncation that should remove it fails too: the
    operation raises OutcomeUnknownError (the file holds part of the record)
    having changed nothing in memory, the journal refuses further records (it
    can no longer vouch for the file), and a recovery from disk drops the
    partial record as a torn tail and gives the state before."""
    directory = tmp_path / "store"
    buffer, storage = faulty_history(directory)
    before, on_disk = seen(buffer), (directory / JOURNAL).read_bytes()
    storage.fail_next("append", errno.ENOSPC, 5)
    storage.fail_next("truncate", errno.EIO)
    with pytest.raises(OutcomeUnknownError, match="outcome unknown"):
        mutation(buffer)
    assert seen(buffer) == before
    with pytest.raises(JournalPoisonedError, match="cutting it back failed too"):
        buffer.splice(0, 0, b"refused: the journal is broken")
    assert seen(buffer) == before
    storage.close()
    assert (directory / JOURNAL).read_bytes() != on_disk, "the partial record should still be there"
    assert recovered_snapshot(directory) == before
    assert before_the_open((directory / JOURNAL).read_bytes()) == on_disk


@pytest.mark.parametrize("operation", ["compact", "adopt_current"])
def test_a_rewrite_whose_directory_sync_fails_reports_it_and_stops_further_commits(
    tmp_path: Path, operation: str
) -> None:
    """Once the rename has replaced the journal but the directory sync failed,
    a crash could bring back either file (the same bytes, the old or the new
    horizon): the compaction or adoption raises OutcomeUnknownError instead
    of reporting success, the buffer shows the state before, every later
    operation is refused, and a new process (no crash: the rename is
    visible) recovers the rewritten state."""
    directory = tmp_path / "store"
    buffer, storage = faulty_history(directory)
    before = seen(buffer)
    storage.fail_next("sync_directory", errno.EIO, 10)
    with pytest.raises(OutcomeUnknownError, match="directory could not be synced"):
        getattr(buffer, operation)(*([0] if operation == "compact" else []))
    assert seen(buffer) == before
    with pytest.raises(JournalPoisonedError, match="directory could not be synced"):
        buffer.splice(0, 0, b"refused")
    assert seen(buffer) == before
    storage.close()
    assert recovered_snapshot(directory) == (before[0], 0, before[2])


@pytest.mark.parametrize(
    "call, error_number",
    [
        ("append", errno.ENOSPC),
        ("sync", errno.EIO),
        ("rename", errno.EIO),
    ],
)
def test_a_failed_compaction_changes_nothing(tmp_path: Path, call: str, error_number: int) -> None:
    """Compaction writes a new file and renames it over the journal; if any of
    that fails, JournalError, the buffer and its horizon are unchanged (every
    record can still be rolled back), the journal file is untouched, and that
    rollback is recovered by the next process."""
    directory = tmp_path / "store"
    buffer, storage = faulty_history(directory)
    before, on_disk = seen(buffer), (directory / JOURNAL).read_bytes()
    storage.fail_next(call, error_number, 10)
    with pytest.raises(JournalError, match="the old journal is intact and the buffer usable") as refusal:
        buffer.compact(0)
    assert type(refusal.value) is JournalError
    if error_number == errno.ENOSPC:
        assert "no room for the" in str(refusal.value)
    assert not storage.armed
    assert seen(buffer) == before
    assert (directory / JOURNAL).read_bytes() == on_disk
    assert peeked_snapshot(directory) == before
    buffer.rollback(before[1])
    assert buffer.read() == INITIAL
    after = seen(buffer)
    storage.close()
    assert recovered_snapshot(directory) == after


@pytest.mark.parametrize("origin", ["created", "reopened"])
def test_a_real_file_size_limit_cuts_a_record_short_and_changes_nothing(tmp_path: Path, origin: str) -> None:
    """A fault made by the kernel, not by a test double: in a child process,
    RLIMIT_FSIZE lets the next record be written only in part, then the write
    fails (EFBIG). The splice raises JournalError and changes nothing, the
    file is cut back to its old size; the journal is poisoned, and once it is
    reopened with the limit lifted, the next splice is committed and a new
    process recovers exactly that state."""
    directory = tmp_path / "store"
    directory.mkdir(mode=0o700)
    if origin == "reopened":
        write_history(directory)

    def child() -> dict[str, Any]:
        buffer = open_durable_buffer(RealDirectory("."), INITIAL)
        if origin == "created":
            buffer.splice(4, 5, b"slow")
        size = os.path.getsize(JOURNAL)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, hard))
        before = seen(buffer)
        error = attempt(lambda: buffer.splice(0, 0, b"x" * 40))
        report: dict[str, Any] = {
            "error": error,
            "unchanged": seen(buffer) == before,
            "cut_back": os.path.getsize(JOURNAL) == size,
        }
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        report["poisoned"] = attempt(lambda: buffer.splice(0, 0, b"y"))
        storage = buffer.journal.storage  # type: ignore[attr-defined]
        storage.close()
        buffer = open_durable_buffer(RealDirectory("."))
        buffer.splice(0, 0, b"y")
        after = seen(buffer)
        report["after"] = [after[0].hex(), after[1], after[2]]
        return report

    report = in_child(directory, child)
    assert report["error"].startswith("JournalError: ")
    assert os.strerror(errno.EFBIG) in report["error"]
    assert report["unchanged"] is True
    assert report["cut_back"] is True
    assert report["poisoned"].startswith("JournalError: the journal refuses every operation until it is reopened")
    text, depth, revision = recovered_snapshot(directory)
    assert [text.hex(), depth, revision] == report["after"]


# -- a real unprivileged process ----------------------------------------------------------


def in_child(
    directory: Path, action: Callable[[], dict[str, Any]], *, user: int | None = None
) -> dict[str, Any]:
    """Run ``action`` in a forked child, inside ``directory``, having dropped
    root for uid/gid ``user`` if given; return what it reports (JSON).

    A fork rather than a new interpreter, because the interpreter lives under
    /root, which ``nobody`` cannot enter; the child changes into the directory
    before giving up root, because pytest's temporary directories sit under a
    0700 root-owned parent, and it opens the journal by a relative path. The
    kernel, not this test, then decides what the child may read and write."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(read_end)
            os.chdir(directory)
            if user is not None:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
            report = action()
            report["uid"] = os.getuid()
            os.write(write_end, json.dumps(report).encode())
            status = 0
        except BaseException as error:  # reported to the parent, which fails the test
            with contextlib.suppress(BaseException):
                os.write(write_end, json.dumps({"crashed": repr(error)}).encode())
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        output = pipe.read()
    _, status = os.waitpid(pid, 0)
    report: dict[str, Any] = json.loads(output)
    assert os.waitstatus_to_exitcode(status) == 0, report
    assert report["uid"] == (os.getuid() if user is None else user)
    return report


def as_nobody(directory: Path, action: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return in_child(directory, action, user=NOBODY)


def attempt(call: Callable[[], object]) -> str | None:
    """The wire name of the error ``call`` raised, or None if it returned."""
    try:
        call()
    except Exception as error:
        return f"{error_kind(error)}: {error}"
    return None


def share(directory: Path, *, file_mode: int, file_owner: int = 0) -> bytes:
    """Make a healthy journal's directory root-owned 0755 and give the file the
    given mode and owner. Returns the file's bytes."""
    os.chmod(directory, 0o755)
    path = directory / JOURNAL
    os.chmod(path, file_mode)
    os.chown(path, file_owner, file_owner)
    # The writer lock needs only a readable lock file (flock on a read-only
    # descriptor), so the journal's own permissions are what these tests try.
    lock = directory / (JOURNAL + ".lock")
    os.chmod(lock, 0o644)
    os.chown(lock, file_owner, file_owner)
    return path.read_bytes()


def test_a_read_only_journal_file_refuses_splices_and_rollbacks(tmp_path: Path) -> None:
    """Another user may read the journal (0644, owned by root) but not write it:
    it recovers the state, and every mutation raises JournalError leaving the
    buffer, depth and revision as they were. The file is unchanged."""
    directory = tmp_path / "shared"
    committed = write_history(directory)
    on_disk = share(directory, file_mode=0o644)

    def child() -> dict[str, Any]:
        buffer = open_durable_buffer(RealDirectory("."), b"")
        before = seen(buffer)
        return {
            "before": [before[0].hex(), before[1], before[2]],
            "splice": attempt(lambda: buffer.splice(0, 0, b"not allowed")),
            "rollback": attempt(lambda: buffer.rollback(1)),
            "unchanged": seen(buffer) == before,
            "can_write": os.access(JOURNAL, os.W_OK),
        }

    report = as_nobody(directory, child)
    assert report["can_write"] is False
    assert report["before"] == [committed[0].hex(), committed[1], committed[2]]
    assert report["splice"].startswith("JournalError: ")
    assert report["rollback"].startswith("JournalError: ")
    assert report["unchanged"] is True
    assert (directory / JOURNAL).read_bytes() == on_disk
    assert recovered_snapshot(directory) == committed


def test_a_read_only_directory_refuses_compaction_but_not_splices(tmp_path: Path) -> None:
    """The journal file is the user's own, the directory is not writable: a
    splice (an append to the file) works, a compaction (a new file and a
    rename) raises JournalError and changes nothing, and nothing is left in the
    directory."""
    directory = tmp_path / "shared"
    write_history(directory)
    share(directory, file_mode=0o600, file_owner=NOBODY)

    def child() -> dict[str, Any]:
        buffer = open_durable_buffer(RealDirectory("."), b"")
        spliced = attempt(lambda: buffer.splice(0, 0, b"allowed "))
        after_splice = seen(buffer)
        return {
            "splice": spliced,
            "compact": attempt(lambda: buffer.compact(0)),
            "unchanged": seen(buffer) == after_splice,
            "after": [after_splice[0].hex(), after_splice[1], after_splice[2]],
        }

    report = as_nobody(directory, child)
    assert report["splice"] is None
    assert report["compact"].startswith("JournalError: ")
    assert report["unchanged"] is True
    assert sorted(os.listdir(directory)) == [JOURNAL, JOURNAL + ".lock"]
    text, depth, revision = recovered_snapshot(directory)
    assert [text.hex(), depth, revision] == report["after"]


def test_a_journal_the_user_cannot_read_is_refused(tmp_path: Path) -> None:
    """A journal owned by root with mode 0600: another user's recovery raises a
    RecoveryError saying it cannot read it (never a fresh empty buffer that
    would then overwrite it), and the file is unchanged."""
    directory = tmp_path / "shared"
    committed = write_history(directory)
    on_disk = share(directory, file_mode=0o600)

    report = as_nobody(
        directory, lambda: {"open": attempt(lambda: open_durable_buffer(RealDirectory("."), b""))}
    )
    assert report["open"].startswith(f"RecoveryError: cannot read the journal {JOURNAL!r}")
    assert os.strerror(errno.EACCES) in report["open"]
    assert (directory / JOURNAL).read_bytes() == on_disk
    assert sorted(os.listdir(directory)) == [JOURNAL, JOURNAL + ".lock"]
    assert recovered_snapshot(directory) == committed


def test_a_new_journal_in_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    """No journal yet and a directory the user cannot write: creating one raises
    JournalError, and nothing is left behind."""
    directory = tmp_path / "shared"
    directory.mkdir()
    os.chmod(directory, 0o755)

    report = as_nobody(
        directory, lambda: {"open": attempt(lambda: open_durable_buffer(RealDirectory("."), b"x"))}
    )
    # The writer lock comes first, and its file cannot be created either.
    assert report["open"].startswith("JournalError: cannot take the writer lock")
    assert os.listdir(directory) == []
