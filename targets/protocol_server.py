"""The reference ``rollcert-protocol`` server: rollcert's own ``JournaledBuffer``
served over stdin/stdout, in version 2 (and version 1 to a version 1 client).

    python -m rollcert.targets.protocol_server
    rollcert certify 'subprocess:python -m rollcert.targets.protocol_server'

It exists for two reasons. It certifies the subprocess path end to end (its
certificate must match the in-process ``bundled`` target's), and it is the
example an author ports to Rust, Go or JavaScript: it knows only the wire
format (:mod:`rollcert.targets.protocol`) and the implementation it
hosts. The hooks it uses for fault injection and out-of-log writes are the same
as ``targets/adapters/bundled.py``'s; its diffs go through
``rollcert.impl.diffs.DiffableBuffer`` as ``adapters/bundled_diffs.py`` does.

**Durable mode.** When ``$ROLLCERT_STATE_DIR`` names a directory, the server
declares capability ``durability`` and a ``new`` that asks ``durable`` gets a
buffer on rollcert's real file journal (``impl.file_journal.FileJournal``) in
a file of that directory, with real ``write`` and ``fsync``. The client kills
the process with SIGKILL, starts it again on the same directory and sends
``reopen`` for each buffer: recovery reads the file back. Buffer ids are
unique within the directory (a restarted server numbers on from the files it
finds), and checkpoint tokens name their state (position and serial), so a
token taken before a crash means the same after it.

A SIGKILL does not lose what the process wrote but did not sync (the kernel
keeps it), so it could not tell a journal that syncs from one that does not.
The durable journal's directory therefore keeps unsynced bytes *in the
process* (:class:`StateDirectory`) and hands them to the kernel only at
``fsync``: a kill then loses exactly what a power cut would, and R5 judges the
sync discipline through a real kill.

The loop: read a line, answer it with exactly one line, flush; exit when stdin
closes. One process hosts many buffers, named by ids the server chooses;
checkpoint, snapshot and applied-diff tokens are opaque strings it chooses too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from itertools import count
from typing import IO

from rollcert.impl import Checkpoint
from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import DiffSnapshot
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import JournalError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.errors import error_kind
from rollcert.model.reference import POLICIES
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.protocol import PROTOCOL_ERROR_KIND
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSIONS
from rollcert.targets.protocol import STATE_DIR_VARIABLE
from rollcert.targets.protocol import WIRE_CAPABILITIES
from rollcert.targets.protocol import Hello
from rollcert.targets.protocol import Limits
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol import Request
from rollcert.targets.protocol import decode_line
from rollcert.targets.protocol import decode_request
from rollcert.targets.protocol import error_line
from rollcert.targets.protocol import success_line
from rollcert.targets.version import SUITE_VERSION

#: The file names a durable buffer ``ID`` owns in the state directory.
JOURNAL_SUFFIX = ".journal"
MODE_SUFFIX = ".mode"  # its durability mode, written once at creation
FAULT_SUFFIX = ".fault"  # present while a journal fault is armed (it outlives a crash, as in the model)
BEFORE_CORRUPTION_SUFFIX = ".before-corruption"  # the journal as it was, to repair after a refusal
#: Bytes of the record that land before an armed fault's ENOSPC (as ``adapters/durable.py``'s disk does).
FAULT_WRITTEN_BYTES = 5

_BUFFER_FILE = re.compile(r"^b(\d+)\.")


class StateDirectory(RealDirectory):
    """The state directory as the durable journals see it: real files, real
    ``fsync``, with two differences that make a SIGKILL a fair crash.

    - Appended bytes stay in the process until the file is synced (or read,
      truncated or replaced, when they are handed to the kernel first): a kill
      loses what was not synced, as a power cut would. The kernel's page cache
      would otherwise keep them, and no kill could catch a journal that
      forgets to sync.
    - :meth:`fail_next` makes the next append to one file write a few bytes
      and fail with ENOSPC (a full disk), for ``arm_journal_fault``.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._unsynced: dict[str, bytearray] = {}
        self._failures: dict[str, int] = {}

    def fail_next(self, name: str, written: int) -> None:
        self._failures[name] = written

    def cancel_failure(self, name: str) -> bool:
        """Withdraw an armed failure no append has taken; True if there was one."""
        return self._failures.pop(name, None) is not None

    def _hand_over(self, name: str) -> None:
        pending = self._unsynced.pop(name, None)
        if pending:
            super().append(name, bytes(pending))

    def append(self, name: str, data: bytes) -> None:
        written = self._failures.pop(name, None)
        if written is not None:
            self._hand_over(name)
            super().append(name, bytes(data[:written]))
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (armed journal fault)")
        self._unsynced.setdefault(name, bytearray()).extend(data)

    def sync(self, name: str) -> None:
        self._hand_over(name)
        super().sync(name)

    def read(self, name: str) -> bytes | None:
        self._hand_over(name)
        return super().read(name)

    def truncate(self, name: str, size: int) -> None:
        self._hand_over(name)
        super().truncate(name, size)

    def write_new(self, name: str, data: bytes) -> None:
        self._unsynced.pop(name, None)
        super().write_new(name, data)

    def rename(self, source: str, destination: str) -> None:
        self._hand_over(source)
        self._unsynced.pop(destination, None)
        super().rename(source, destination)

    def remove(self, name: str) -> None:
        self._unsynced.pop(name, None)
        super().remove(name)


@dataclass
class DurableFiles:
    """Where a durable buffer lives: the state directory and its journal's name."""

    directory: StateDirectory
    buffer_id: str

    @property
    def journal_name(self) -> str:
        return self.buffer_id + JOURNAL_SUFFIX

    def path(self, suffix: str) -> str:
        return os.path.join(self.directory.path, self.buffer_id + suffix)


@dataclass
class HostedBuffer:
    """One buffer, the diff layer every mutation goes through, and what it needs
    for faults (an in-memory fault-injecting journal, or its durable files)."""

    buffer: JournaledBuffer
    journal: FaultInjectingJournal | None = None
    durable: DurableFiles | None = None
    fault_armed: bool = False
    diffs: DiffableBuffer = field(init=False)
    snapshots: dict[str, DiffSnapshot] = field(default_factory=dict)
    applied: dict[str, AppliedDiff] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.diffs = DiffableBuffer(self.buffer)


class JournaledBufferServer:
    """Answers requests for any number of ``JournaledBuffer``s.

    Subclasses (the fake misbehaving servers of ``tests/fake_servers``) override
    :meth:`reply` to misbehave on one operation, ``protocols`` to speak fewer
    versions, or ``limits`` to declare limits.
    """

    name = "rollcert-journaled-buffer"
    version = SUITE_VERSION
    #: The versions this server speaks (a client's hello in another is refused).
    protocols: tuple[str, ...] = PROTOCOL_VERSIONS
    #: What version 2's hello declares.
    limits = Limits()
    #: What version 2.1's hello declares: the one policy of a bounded history, if it has one.
    history_bound: HistoryBound | None = None
    #: The journal class of durable buffers (a broken fake server swaps it).
    journal_class: type[FileJournal] = FileJournal

    def __init__(self, state_dir: str | None = None) -> None:
        if state_dir is None:
            state_dir = os.environ.get(STATE_DIR_VARIABLE) or None
        self.buffers: dict[str, HostedBuffer] = {}
        self.protocol = PROTOCOL_VERSION
        self.directory = StateDirectory(state_dir) if state_dir is not None else None
        self._buffer_numbers: Iterator[int] | None = None
        self._token_numbers = count(1)

    def _next_buffer_id(self) -> str:
        """Buffer ids are unique within the state directory: a server numbers on
        from the files it finds there at its first ``new`` (not at its start: a
        client may start the next process before it kills this one)."""
        if self._buffer_numbers is None:
            first = 1
            if self.directory is not None:
                files = os.listdir(self.directory.path)
                first = max((int(m.group(1)) for name in files if (m := _BUFFER_FILE.match(name))), default=0) + 1
            self._buffer_numbers = count(first)
        return f"b{next(self._buffer_numbers)}"

    # -- the loop -------------------------------------------------------------------

    def serve(self, requests: Iterable[bytes], replies: IO[bytes]) -> None:
        for line in requests:
            answer = self.answer(line)
            replies.write(answer)
            replies.flush()

    def answer(self, line: bytes) -> bytes:
        """The one reply line to one request line, whatever the line holds."""
        try:
            message = decode_line(line)
        except ProtocolError as error:
            return error_line(None, PROTOCOL_ERROR_KIND, str(error))
        try:
            request = decode_request(message, self.protocol)
        except ProtocolError as error:
            raw_id = message.get("id")
            return error_line(raw_id if type(raw_id) is int else None, PROTOCOL_ERROR_KIND, str(error))
        return self.reply(request)

    def reply(self, request: Request) -> bytes:
        handler = getattr(self, f"do_{request.op}", None)
        if handler is None:  # e.g. version 2.1's write, which only a diffs-only server is sent
            return error_line(request.id, PROTOCOL_ERROR_KIND, f"this server does not implement {request.op!r}")
        try:
            result = handler(**request.arguments)
        except ProtocolError as error:
            return error_line(request.id, PROTOCOL_ERROR_KIND, str(error))
        except Exception as error:  # the implementation's refusal, reported by kind
            kind = error_kind(error).removeprefix("undocumented:")
            return error_line(request.id, kind, str(error))
        return success_line(request.id, result)

    # -- the handshake ------------------------------------------------------------------

    def capabilities(self, protocol: str) -> frozenset[Capability]:
        if protocol == PROTOCOL_VERSION:
            return WIRE_CAPABILITIES
        durability = {Capability.DURABILITY} if self.directory is not None else set()
        return WIRE_CAPABILITIES | {Capability.DIFFS} | durability

    def do_hello(self, protocol: str) -> Hello:
        if protocol not in self.protocols:
            raise ProtocolError(f"this server speaks {' and '.join(map(repr, self.protocols))}, not {protocol!r}")
        self.protocol = protocol
        return Hello(protocol, self.name, self.version, self.capabilities(protocol), self.limits, self.history_bound)

    # -- buffers ---------------------------------------------------------------------------

    def do_new(
        self,
        initial: bytes,
        capacity: int | None,
        policy: str,
        durable: bool = False,
        durability: str = "per_operation",
    ) -> str:
        if policy not in POLICIES:
            raise ProtocolError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        buffer_id = self._next_buffer_id()
        if durable:
            if self.directory is None:
                raise ProtocolError(f"a durable buffer needs a state directory (${STATE_DIR_VARIABLE} is not set)")
            files = DurableFiles(self.directory, buffer_id)
            _write_synced(files.path(MODE_SUFFIX), durability.encode())
            try:
                buffer = open_durable_buffer(
                    self.directory,
                    initial,
                    name=files.journal_name,
                    journal_class=self.journal_class,
                    durability=_durability(durability),
                    capacity=capacity,
                    policy=policy,
                )
            except BaseException:
                _remove_files(files)
                raise
            self.buffers[buffer_id] = HostedBuffer(buffer, durable=files)
            return buffer_id
        journal = FaultInjectingJournal(InMemoryJournal())
        buffer = JournaledBuffer(initial, capacity=capacity, policy=policy, journal=journal)
        self.buffers[buffer_id] = HostedBuffer(buffer, journal=journal)
        return buffer_id

    def do_close(self, buffer: str) -> None:
        hosted = self._hosted(buffer)
        del self.buffers[buffer]
        if hosted.durable is not None:
            with contextlib.suppress(JournalError, OSError):
                hosted.buffer.journal.close()  # type: ignore[attr-defined]
            _remove_files(hosted.durable)

    def do_reopen(self, buffer: str) -> None:
        """Recover durable buffer ``buffer`` from its journal (after the process was killed)."""
        if self.directory is None:
            raise ProtocolError(f"no state directory (${STATE_DIR_VARIABLE} is not set): nothing to reopen")
        if not _BUFFER_FILE.match(buffer + ".") or "/" in buffer:
            raise ProtocolError(f"{buffer!r} is not a buffer id of this server")
        files = DurableFiles(self.directory, buffer)
        if not os.path.exists(files.path(MODE_SUFFIX)):
            raise ProtocolError(f"no durable buffer {buffer!r} in the state directory")
        self._open_durable(files)

    def _open_durable(self, files: DurableFiles) -> None:
        """Open (recover) the journal of ``files``, replacing the buffer if it is open."""
        old = self.buffers.pop(files.buffer_id, None)
        if old is not None:
            with contextlib.suppress(JournalError, OSError):
                old.buffer.journal.close()  # type: ignore[attr-defined]
        with open(files.path(MODE_SUFFIX), "rb") as mode_file:
            mode = mode_file.read().decode()
        buffer = open_durable_buffer(
            files.directory, name=files.journal_name, journal_class=self.journal_class, durability=_durability(mode)
        )
        self.buffers[files.buffer_id] = HostedBuffer(
            buffer, durable=files, fault_armed=os.path.exists(files.path(FAULT_SUFFIX))
        )

    # -- the rollback operations -------------------------------------------------------------

    def do_read(self, buffer: str) -> bytes:
        return self._hosted(buffer).buffer.read()

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        hosted = self._hosted(buffer)
        if hosted.durable is None or not hosted.fault_armed:
            hosted.diffs.splice(offset, delete_length, insert)
            return
        # The armed fault hits the next splice's record: a real failing write, a few
        # bytes then ENOSPC. A splice refused before it writes leaves it armed.
        files = hosted.durable
        files.directory.fail_next(files.journal_name, FAULT_WRITTEN_BYTES)
        try:
            hosted.diffs.splice(offset, delete_length, insert)
        finally:
            hosted.fault_armed = files.directory.cancel_failure(files.journal_name)
            if not hosted.fault_armed:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(files.path(FAULT_SUFFIX))

    def do_rollback(self, buffer: str, steps: int) -> None:
        self._hosted(buffer).diffs.rollback(steps)

    def do_depth(self, buffer: str) -> int:
        return self._hosted(buffer).buffer.depth

    def do_revision(self, buffer: str) -> int:
        return self._hosted(buffer).buffer.revision

    def do_checkpoint(self, buffer: str) -> str:
        """A token that names the state by its position and serial: it survives a restart."""
        checkpoint = self._hosted(buffer).buffer.checkpoint()
        return f"{buffer}.c{checkpoint.position}.{checkpoint.serial}"

    def do_rollback_to(self, buffer: str, token: str) -> None:
        hosted = self._hosted(buffer)
        owner, _, state = token.rpartition(".c")
        position, _, serial = state.partition(".")
        if owner != buffer:
            raise UnreachableRollbackError(f"{token!r} is not a checkpoint of buffer {buffer!r}")
        if not (position.isdigit() and serial.isdigit() and len(position) < 30 and len(serial) < 30):
            raise UnreachableRollbackError(f"{token!r} names no checkpoint of this server")
        own = hosted.buffer.checkpoint().buffer_id
        hosted.diffs.rollback_to(Checkpoint(own, int(position), int(serial)))

    def do_arm_journal_fault(self, buffer: str) -> None:
        hosted = self._hosted(buffer)
        if hosted.durable is None:
            assert hosted.journal is not None
            hosted.journal.fail_next_append()
            return
        hosted.fault_armed = True
        _write_synced(hosted.durable.path(FAULT_SUFFIX), b"armed")

    def do_write_out_of_log(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        target = self._hosted(buffer).buffer
        offset, delete_length, insert = check_splice_arguments(len(target.storage), offset, delete_length, insert)
        target.storage.replace(offset, delete_length, insert)  # bypasses the journal, as a stray writer would

    def do_adopt_current(self, buffer: str) -> None:
        self._hosted(buffer).diffs.adopt_current()

    # -- diffs (version 2) -----------------------------------------------------------------

    def do_snapshot(self, buffer: str) -> str:
        hosted = self._hosted(buffer)
        token = f"{buffer}.s{next(self._token_numbers)}"
        hosted.snapshots[token] = hosted.diffs.snapshot()
        return token

    def do_apply_diff(
        self,
        buffer: str,
        snapshot: str,
        mode: str,
        hunks: list[tuple[int, int, bytes]],
        reads: list[tuple[int, int]],
    ) -> str:
        hosted = self._hosted(buffer)
        base = hosted.snapshots.get(snapshot)
        if base is None:  # another buffer's, or one taken before a restart: as a foreign snapshot in-process
            raise ValueError(f"{snapshot!r} is not a snapshot of buffer {buffer!r} in this process")
        diff = hosted.diffs.author_diff(
            base,
            mode,  # type: ignore[arg-type]  # a bad mode must raise ValueError
            [Hunk(start, end, replacement) for start, end, replacement in hunks],
            [Region(start, end) for start, end in reads],
        )
        applied = hosted.diffs.apply_diff(diff)
        token = f"{buffer}.a{next(self._token_numbers)}"
        hosted.applied[token] = applied
        return token

    def do_rollback_diff(self, buffer: str, applied: str) -> None:
        hosted = self._hosted(buffer)
        handle = hosted.applied.get(applied)
        if handle is None:
            raise UnreachableRollbackError(f"{applied!r} is not a diff applied to buffer {buffer!r} in this process")
        hosted.diffs.rollback_diff(handle)

    # -- durability (version 2) ----------------------------------------------------------------

    def do_compact(self, buffer: str, keep: int) -> None:
        self._hosted(buffer).diffs.compact(keep)

    def do_flush(self, buffer: str) -> None:
        journal = self._hosted(buffer).buffer.journal
        if isinstance(journal, FileJournal):
            journal.flush()

    def do_corrupt_committed_record(self, buffer: str, damage: str) -> bool:
        """Do ``damage`` to the journal file (as ``adapters/durable.py`` does to its
        simulated disk) at the newest record that is not the last; False if there
        is none it can damage, or if a second writer was refused."""
        # Imported here: a restart after a kill starts this module again, and
        # the adapters package is not needed until something is damaged.
        from rollcert.targets.adapters.durable import damaged_journal
        from rollcert.targets.adapters.durable import record_spans

        hosted = self._hosted(buffer)
        files = hosted.durable
        if files is None:
            return False
        journal = files.directory.read(files.journal_name) or b""
        if damage == "second_writer":
            return len(record_spans(journal)) >= 2 and self._second_writer(files)
        corrupted = damaged_journal(journal, damage)
        if corrupted is None:
            return False
        _write_synced(files.path(BEFORE_CORRUPTION_SUFFIX), journal)
        _write_synced(files.path(JOURNAL_SUFFIX), corrupted)
        return True

    def _second_writer(self, files: DurableFiles) -> bool:
        """Another writer (its own handles on the same directory) opens the journal
        in use and appends a splice. The writer lock refuses it: nothing happens."""
        other = StateDirectory(files.directory.path)
        try:
            intruder = open_durable_buffer(other, name=files.journal_name, journal_class=self.journal_class)
        except JournalError:
            other.close()
            return False
        _write_synced(files.path(BEFORE_CORRUPTION_SUFFIX), files.directory.read(files.journal_name) or b"")
        intruder.splice(0, 0, b"!")
        intruder.journal.close()  # type: ignore[attr-defined]
        other.close()
        return True

    def do_repair_corruption(self, buffer: str) -> None:
        """Put the journal back as it was before the damage, and recover it again."""
        if self.directory is None:
            raise ProtocolError(f"no state directory (${STATE_DIR_VARIABLE} is not set): nothing to repair")
        files = DurableFiles(self.directory, buffer)
        hosted = self.buffers.get(buffer)
        if hosted is not None and hosted.durable is None:
            return
        if not os.path.exists(files.path(MODE_SUFFIX)):
            raise ProtocolError(f"no durable buffer {buffer!r} in the state directory")
        if hosted is not None:
            with contextlib.suppress(JournalError, OSError):
                hosted.buffer.journal.close()  # type: ignore[attr-defined]
            del self.buffers[buffer]
        before = files.path(BEFORE_CORRUPTION_SUFFIX)
        if os.path.exists(before):
            with open(before, "rb") as saved:
                _write_synced(files.path(JOURNAL_SUFFIX), saved.read())
            os.remove(before)
        self._open_durable(files)

    def _hosted(self, buffer_id: str) -> HostedBuffer:
        hosted = self.buffers.get(buffer_id)
        if hosted is None:
            raise ProtocolError(f"no open buffer {buffer_id!r}")
        return hosted


def _durability(mode: str) -> Durability:
    """The journal's durability: the batched mode syncs as ``adapters/durable.py``'s does
    (every 3 records, no timer: a replay does the same I/O as the run)."""
    if mode == "batched":
        return Durability.batched(every_records=3, every_ms=None)
    if mode == "per_operation":
        return Durability.per_operation()
    raise ProtocolError(f"durability must be per_operation or batched, got {mode!r}")


def _write_synced(path: str, data: bytes) -> None:
    """Replace a small file's content and fsync it (sidecar files, and the damage)."""
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _remove_files(files: DurableFiles) -> None:
    for suffix in (JOURNAL_SUFFIX, JOURNAL_SUFFIX + ".lock", MODE_SUFFIX, FAULT_SUFFIX, BEFORE_CORRUPTION_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            os.remove(files.path(suffix))


def main(server: JournaledBufferServer | None = None) -> int:
    """Serve stdin to stdout until stdin closes. Anything else that prints goes to
    stderr: stdout belongs to the protocol."""
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr
    (server or JournaledBufferServer()).serve(sys.stdin.buffer, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
