"""Where the durable journal's bytes live: a real directory, or a simulated disk.

Every byte the file journal reads or writes goes through :class:`Storage`, a
handful of calls with explicit durability (``sync`` of a file, ``sync_directory``
for renames and creations). Two implementations:

- :class:`RealDirectory`: real files, ``os.write`` and ``os.fsync``; files are
  created owner-only (0600) in an owner-only directory, because a journal holds
  everything that was ever written to the buffer. Every file is opened without
  following a symlink (``O_NOFOLLOW``) and checked to be a regular file
  (``fstat``), without blocking on a FIFO; temporary files are created
  exclusively (``O_EXCL``), so a link planted in the directory can never make
  the journal write outside it, and a FIFO or device can never hang or flood
  recovery. The writer lock is ``flock`` on ``NAME.lock``.
- :class:`SimulatedDisk`: an in-memory disk for tests that keeps synced and
  unsynced bytes apart and, at a chosen I/O call, *crashes*: unsynced data is
  lost except for a chosen prefix (a torn record), and renames not yet made
  durable by a directory sync may be lost. It also injects I/O errors (a full
  disk) and flips bits in synced data. It is added on top of the real-file
  tests, not instead of them.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import os
import stat
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol

from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalInUseError


class Storage(Protocol):
    """Named byte files in one directory, with explicit durability."""

    def read(self, name: str) -> bytes | None:
        """The file's bytes, or ``None`` if it does not exist."""

    def append(self, name: str, data: bytes) -> None:
        """Add ``data`` at the end of the file, creating it (0600) if missing."""

    def sync(self, name: str) -> None:
        """Make the file's bytes durable (fsync)."""

    def truncate(self, name: str, size: int) -> None:
        """Cut the file to ``size`` bytes (durable only after :meth:`sync`)."""

    def write_new(self, name: str, data: bytes) -> None:
        """Create or overwrite the file with ``data`` (durable only after :meth:`sync`)."""

    def rename(self, source: str, destination: str) -> None:
        """Atomically replace ``destination`` by ``source`` (durable only after
        :meth:`sync_directory`)."""

    def sync_directory(self) -> None:
        """Make creations and renames durable (fsync of the directory)."""

    def remove(self, name: str) -> None:
        """Delete the file if it exists."""

    def lock(self, name: str) -> None:
        """Take the exclusive writer lock of the journal ``name`` for this
        storage, or raise :class:`JournalInUseError` (naming the holder where
        known). Held until :meth:`unlock` or :meth:`close`, or until the
        process (the simulated machine) dies."""

    def unlock(self, name: str) -> None:
        """Release the writer lock of ``name`` if this storage holds it."""

    def close(self) -> None:
        """Release open handles and locks; the files stay."""


class NotARegularFile(OSError):
    """A name in the journal directory is a symlink, FIFO, device or directory."""


#: Every journal file is opened with these: never through a symlink, never
#: blocking on a FIFO (its type is checked right after).
_SAFE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class RealDirectory:
    """:class:`Storage` over a real directory. Handles stay open between calls,
    so a durable commit costs one ``write`` and one ``fsync``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        os.makedirs(self.path, mode=0o700, exist_ok=True)
        self._handles: dict[str, int] = {}
        #: Lock file descriptors by journal name (the flock lives as long as they do).
        self._locks: dict[str, int] = {}

    def _file(self, name: str) -> str:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        return os.path.join(self.path, name)

    def _open(self, name: str, flags: int) -> int:
        """Open ``name`` in the directory, refusing anything but a regular file:
        a symlink fails (``O_NOFOLLOW``: ELOOP), a FIFO or device is opened
        without blocking and refused after ``fstat``."""
        path = self._file(name)
        try:
            handle = os.open(path, flags | _SAFE_FLAGS, 0o600)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise NotARegularFile(
                    errno.ELOOP, f"{path} is a symbolic link; a journal file must be a regular file"
                ) from None
            raise
        try:
            mode = os.fstat(handle).st_mode
            if not stat.S_ISREG(mode):
                kind = (
                    "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a directory" if stat.S_ISDIR(mode)
                    else "a socket" if stat.S_ISSOCK(mode)
                    else "not a regular file"
                )
                raise NotARegularFile(errno.EINVAL, f"{path} is {kind}; a journal file must be a regular file")
            # Writes and reads are ordinary blocking calls on a regular file.
            os.set_blocking(handle, True)
        except BaseException:
            os.close(handle)
            raise
        return handle

    def _handle(self, name: str) -> int:
        handle = self._handles.get(name)
        if handle is None:
            handle = self._open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            self._handles[name] = handle
        return handle

    def _forget(self, name: str) -> None:
        handle = self._handles.pop(name, None)
        if handle is not None:
            os.close(handle)

    def read(self, name: str) -> bytes | None:
        try:
            handle = self._open(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with open(handle, "rb", closefd=True) as file:
            return file.read()

    def append(self, name: str, data: bytes) -> None:
        handle = self._handle(name)
        view = memoryview(data)
        while view:
            written = os.write(handle, view)
            view = view[written:]

    def sync(self, name: str) -> None:
        os.fsync(self._handle(name))

    def truncate(self, name: str, size: int) -> None:
        os.ftruncate(self._handle(name), size)

    def write_new(self, name: str, data: bytes) -> None:
        self._forget(name)
        # Whatever sits at the name — a temporary file left by a crash, or a
        # symlink someone planted — is unlinked (which never follows a link),
        # and the file is created exclusively: it is ours and in the directory.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._file(name))
        # O_APPEND like every other handle: after a failed write is cut back with
        # ftruncate, the next write must land at the new end, not past a hole.
        handle = self._open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND)
        self._handles[name] = handle
        self.append(name, data)

    def rename(self, source: str, destination: str) -> None:
        os.replace(self._file(source), self._file(destination))
        self._forget(destination)
        handle = self._handles.pop(source, None)
        if handle is not None:
            self._handles[destination] = handle  # the same open file, now under its new name

    def sync_directory(self) -> None:
        handle = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)

    def remove(self, name: str) -> None:
        self._forget(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._file(name))

    def lock(self, name: str) -> None:
        if name in self._locks:
            raise JournalInUseError(f"the journal {name!r} is already open through this storage")
        lock_name = name + ".lock"
        try:
            handle = self._open(lock_name, os.O_RDWR | os.O_CREAT)
        except PermissionError:
            # flock needs only a readable descriptor: a user who may not write
            # the lock file can still hold the lock (but cannot leave its pid).
            try:
                handle = self._open(lock_name, os.O_RDONLY)
            except OSError as error:
                raise JournalError(
                    f"cannot take the writer lock: cannot open {self._file(lock_name)}: {error}"
                ) from error
        except OSError as error:
            raise JournalError(f"cannot take the writer lock: cannot open {self._file(lock_name)}: {error}") from error
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(handle)
            os.close(handle)
            by = f"process {holder}" if holder is not None else "another writer"
            raise JournalInUseError(
                f"the journal {self._file(name)} is in use by {by} (it holds {self._file(lock_name)}); "
                "one writer at a time",
                holder_pid=holder,
            ) from None
        except BaseException:
            os.close(handle)
            raise
        # The holder's pid, for the next opener's error message (advice only:
        # the lock itself is the flock, released by the kernel if we die).
        with contextlib.suppress(OSError):
            os.ftruncate(handle, 0)
            os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
        self._locks[name] = handle

    def unlock(self, name: str) -> None:
        handle = self._locks.pop(name, None)
        if handle is not None:
            os.close(handle)  # closing the descriptor releases the flock

    def close(self) -> None:
        for name in list(self._handles):
            self._forget(name)
        for name in list(self._locks):
            self.unlock(name)

    def __del__(self) -> None:
        # A storage dropped without close() must not keep its journal locked.
        with contextlib.suppress(Exception):
            self.close()


def _read_pid(handle: int) -> int | None:
    try:
        text = os.pread(handle, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


#: The calls :meth:`SimulatedDisk.fail_next` can make fail.
FAILABLE_CALLS = ("append", "sync", "truncate", "rename", "sync_directory")


class SimulatedCrash(BaseException):
    """The simulated machine lost power. A ``BaseException``, so that code which
    handles I/O errors cannot mistake it for one and carry on."""


@dataclass
class _SimulatedFile:
    #: What the file holds now, as a running process would read it.
    current: bytearray = field(default_factory=bytearray)
    #: What survives a crash: the bytes as of the last sync.
    durable: bytes = b""


@dataclass
class _Crash:
    io_event: int
    lost: int


class SimulatedDisk:
    """:class:`Storage` in memory, with crashes, I/O errors and bit flips on demand.

    A crash keeps, for each file, its durable bytes; if the file has only grown
    since its last sync, the file being written at the crash also keeps its
    unsynced bytes but the last ``lost`` (a torn record when the cut falls
    inside one). Creations and renames survive only if the directory was synced
    after them — or, at a crash *during* a rename or directory sync, if
    ``lost == 0`` (the rename reached the disk).
    """

    def __init__(self) -> None:
        self._files: dict[str, _SimulatedFile] = {}
        self._durable_names: dict[str, _SimulatedFile] = {}
        #: I/O calls made so far (writes, syncs, truncations, renames, directory syncs).
        self.io_events = 0
        self._crash: _Crash | None = None
        #: Armed failures, (call, errno, bytes written first), each taken by the next such call.
        self._failures: list[tuple[str, int, int]] = []
        self.crashed = False
        #: Journals whose writer lock is held; a crash (the process dies) releases them.
        self._locks: set[str] = set()

    # -- test controls ---------------------------------------------------------------

    def crash_at(self, io_event: int, lost: int) -> None:
        """Crash when the ``io_event``-th I/O call from now is made (0 = the next)."""
        if io_event < 0 or lost < 0:
            raise ValueError("io_event and lost must be >= 0")
        self._crash = _Crash(self.io_events + io_event, lost)

    def disarm(self) -> None:
        self._crash = None

    def fail_next(self, call: str, error_number: int = errno.ENOSPC, written: int = 0) -> None:
        """Make the next ``call`` (one of :data:`FAILABLE_CALLS`) raise
        ``OSError(error_number)`` without doing anything; an append (or the
        write of ``write_new``) first writes ``written`` bytes, as a short write
        to a full disk does. Failures of different calls can be armed together
        (a failed sync, then a failed cut-back)."""
        if call not in FAILABLE_CALLS:
            raise ValueError(f"can only fail one of {', '.join(FAILABLE_CALLS)}, not {call!r}")
        self._failures.append((call, error_number, written))

    def pending_failures(self) -> tuple[str, ...]:
        """The calls armed to fail that no call has taken yet, in arming order."""
        return tuple(call for call, _, _ in self._failures)

    def cancel_failure(self) -> bool:
        """Withdraw every failure armed by :meth:`fail_next` that no call has
        taken; True if there was one."""
        pending, self._failures = bool(self._failures), []
        return pending

    def crash(self) -> None:
        """Lose power now: every unsynced byte and directory change is lost."""
        self._power_off(None, 0, directory_survives=False)

    def restart(self) -> None:
        """Power on again after a crash: the files are what survived."""
        self.crashed = False
        self._crash = None

    def flip_bit(self, name: str, offset: int, bit: int = 0) -> None:
        """Corrupt one bit of a file, synced and current alike (a bad sector)."""
        file = self._files[name]
        file.current[offset] ^= 1 << bit
        durable = bytearray(file.durable)
        if offset < len(durable):
            durable[offset] ^= 1 << bit
            file.durable = bytes(durable)

    def durable_bytes(self, name: str) -> bytes | None:
        file = self._durable_names.get(name)
        return None if file is None else file.durable

    def clone(self) -> SimulatedDisk:
        """The same files, seen by a fresh process: no locks held."""
        twin = copy.deepcopy(self)
        twin._locks = set()
        return twin

    def replace_file(self, name: str, data: bytes) -> None:
        """Make ``name`` hold ``data``, synced and current (a test's hand on the
        disk: to plant or to undo a corruption). Not an I/O event."""
        file = self._files.setdefault(name, _SimulatedFile())
        file.current, file.durable = bytearray(data), bytes(data)
        self._durable_names[name] = file

    # -- the Storage interface -----------------------------------------------------------

    def _event(self, name: str | None, directory: bool = False) -> None:
        """Count one I/O call; crash here if this is the armed one."""
        if self.crashed:
            raise SimulatedCrash("the simulated machine is down")
        event = self.io_events
        self.io_events += 1
        if self._crash is not None and event == self._crash.io_event:
            lost = self._crash.lost
            self._power_off(name, lost, directory_survives=directory and lost == 0)
            raise SimulatedCrash(f"crashed at I/O call #{event}, losing the last {lost} unsynced bytes")

    def _power_off(self, writing: str | None, lost: int, *, directory_survives: bool) -> None:
        if directory_survives:
            self._durable_names = dict(self._files)
        for name, file in list(self._durable_names.items()):
            grown_only = bytes(file.current[: len(file.durable)]) == file.durable
            unsynced = len(file.current) - len(file.durable)
            keep = max(0, unsynced - lost) if name == writing and grown_only else 0
            survived = file.durable + bytes(file.current[len(file.durable) : len(file.durable) + keep])
            file.current, file.durable = bytearray(survived), survived
        self._files = dict(self._durable_names)
        self.crashed = True
        self._crash = None
        self._locks = set()  # the process died with its locks

    def _take_failure(self, call: str) -> tuple[int, int] | None:
        """(errno, bytes written first) if ``call`` is the one armed to fail."""
        for index, (armed, error_number, written) in enumerate(self._failures):
            if armed == call:
                del self._failures[index]
                return error_number, written
        return None

    def read(self, name: str) -> bytes | None:
        if self.crashed:
            raise SimulatedCrash("the simulated machine is down")
        file = self._files.get(name)
        return None if file is None else bytes(file.current)

    def append(self, name: str, data: bytes) -> None:
        file = self._files.setdefault(name, _SimulatedFile())
        failure = self._take_failure("append")
        if failure is not None:
            error_number, written = failure
            file.current += data[:written]
            raise OSError(error_number, f"{os.strerror(error_number)} (simulated)")
        file.current += data
        self._event(name)

    def sync(self, name: str) -> None:
        self._event(name)
        failure = self._take_failure("sync")
        if failure is not None:
            raise OSError(failure[0], f"{os.strerror(failure[0])} (simulated fsync failure)")
        file = self._files[name]
        file.durable = bytes(file.current)

    def truncate(self, name: str, size: int) -> None:
        self._event(name)
        failure = self._take_failure("truncate")
        if failure is not None:
            raise OSError(failure[0], f"{os.strerror(failure[0])} (simulated ftruncate failure)")
        del self._files[name].current[size:]

    def write_new(self, name: str, data: bytes) -> None:
        self._files[name] = _SimulatedFile()
        self.append(name, data)

    def rename(self, source: str, destination: str) -> None:
        self._event(None, directory=True)
        failure = self._take_failure("rename")
        if failure is not None:
            raise OSError(failure[0], f"{os.strerror(failure[0])} (simulated rename failure)")
        self._files[destination] = self._files.pop(source)

    def sync_directory(self) -> None:
        self._event(None, directory=True)
        failure = self._take_failure("sync_directory")
        if failure is not None:
            raise OSError(failure[0], f"{os.strerror(failure[0])} (simulated directory fsync failure)")
        self._durable_names = dict(self._files)

    def remove(self, name: str) -> None:
        self._event(None, directory=True)
        self._files.pop(name, None)

    def lock(self, name: str) -> None:
        if name in self._locks:
            raise JournalInUseError(f"the journal {name!r} is in use by another writer (simulated disk)")
        self._locks.add(name)

    def unlock(self, name: str) -> None:
        self._locks.discard(name)

    def close(self) -> None:
        self._locks = set()
