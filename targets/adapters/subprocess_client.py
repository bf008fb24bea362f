"""Certify an implementation that runs in another process, over ``rollcert-protocol``.

``rollcert certify 'subprocess:COMMAND ARGS...'`` starts COMMAND once, shakes
hands (the server names itself, its version and its capabilities), and then
drives every buffer of the run through that one process: a certification makes
thousands of buffers, and a process per buffer would cost more than the tests.

Whatever the server does wrong on the wire — garbage, a reply with the wrong id
or the wrong types, a hang past the per-request timeout, an exit — becomes a
:class:`~rollcert.targets.adapter.HarnessError` that says exactly what happened
(with the server's last stderr lines when it died), so the certificate says
``error``, never ``violated``, and the harness itself never crashes. A refusal
the server reports with a documented error kind is the implementation's answer
and is raised as that exception for the judge to compare; an unknown kind is
raised as an undocumented exception, which the judge treats as a wrong answer.

After a break the server is stopped; the next *new* buffer starts a fresh one
(as Bowtie restarts a crashed implementation), so one property's failure does
not decide the next property's verdict.

The client offers ``rollcert-protocol/2`` first and, if the server refuses that
hello, says hello again in version 1 on the same connection and drives it as a
version 1 server. Version 2 carries diffs (snapshot and applied-diff handles
are client-side objects wrapping the server's strings, bound to their buffer),
durability and limits (the alphabet becomes ``Target.alphabet``).

**Real crashes.** Durable buffers live in a second process of the same command,
started with ``$ROLLCERT_STATE_DIR`` naming a directory the client owns.
``restart()`` kills that process's group with SIGKILL while it is idle, starts
the command again on the same directory, says hello and ``reopen``s every open
durable buffer; ``run_with_crash`` kills it before the request is sent
(``io_event`` 0) or ``io_event`` × :data:`KILL_DELAY_UNIT_SECONDS` after it is on
the wire (unless the reply came first), then does the same.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from typing import NoReturn

from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import ERROR_KINDS
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.reference import splice_bytes
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import HunkTriples
from rollcert.targets.adapter import ReadPairs
from rollcert.targets.adapter import SizeLimits
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations
from rollcert.targets.adapter import visible
from rollcert.targets.protocol import MAX_LINE_BYTES
from rollcert.targets.protocol import OPERATIONS_BY_VERSION
from rollcert.targets.protocol import PROTOCOL_ERROR_KIND
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSIONS
from rollcert.targets.protocol import STATE_DIR_VARIABLE
from rollcert.targets.protocol import WIRE_CAPABILITIES_V2
from rollcert.targets.protocol import ErrorReply
from rollcert.targets.protocol import Hello
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol import Request
from rollcert.targets.protocol import decode_line
from rollcert.targets.protocol import decode_reply
from rollcert.targets.protocol import plain_write_op

#: Called with the process group of every server started (each leads its own).
#: A worker process of ``rollcert`` registers one that tells its parent, so that a
#: worker killed at its deadline does not leave its servers running.
SERVER_STARTED: list[Callable[[int], None]] = []

DEFAULT_TIMEOUT_SECONDS: Final = 10.0
#: Overrides the per-request timeout for targets built from the command line.
TIMEOUT_ENVIRONMENT_VARIABLE: Final = "ROLLCERT_PROTOCOL_TIMEOUT"
#: How long a server gets to answer its hello: the start of an interpreter and
#: the tool's imports (a 6 s import is ordinary, and slower while parallel
#: workers start their servers together on a loaded machine). It is not the
#: request timeout, which bounds one operation of a running server.
DEFAULT_HELLO_TIMEOUT_SECONDS: Final = 120.0
#: Overrides the hello timeout.
HELLO_TIMEOUT_ENVIRONMENT_VARIABLE: Final = "ROLLCERT_PROTOCOL_HELLO_TIMEOUT"
#: Overrides the longest reply line accepted (default ``protocol.MAX_LINE_BYTES``, 16 MiB).
MAX_LINE_ENVIRONMENT_VARIABLE: Final = "ROLLCERT_PROTOCOL_MAX_LINE_BYTES"
#: How long a server gets to exit after its input is closed before it is killed.
SHUTDOWN_GRACE_SECONDS: Final = 2.0
#: How much of the server's stderr is kept (its end), to quote when it breaks.
STDERR_TAIL_BYTES: Final = 64 * 1024
#: How many of the kept stderr lines the error message quotes, and how much of each.
STDERR_LINES_QUOTED: Final = 12
STDERR_LINE_CHARACTERS: Final = 300
#: Pipes are read this much at a time: memory grows by chunks, never by a whole line.
READ_CHUNK_BYTES: Final = 64 * 1024
#: A reply slower than this gets a line on stderr saying what rollcert waits for,
#: repeated every PROGRESS_EVERY_SECONDS, so a slow server never looks like a hung rollcert.
PROGRESS_AFTER_SECONDS: Final = 2.0
PROGRESS_EVERY_SECONDS: Final = 10.0
#: The crash nemesis kills ``io_event`` of these after a request is on the wire,
#: unless the reply comes first. About one fsync of a real disk: a server that
#: syncs to one is killed inside its operations. A server much faster than this
#: (the reference server on a page cache answers in well under a millisecond)
#: is killed after its reply nearly always, so a run's kills land the same way
#: each time: the machines draw from the state the server recovered, and kills
#: that land by a coin toss make Hypothesis see a test that is not repeatable.
KILL_DELAY_UNIT_SECONDS: Final = 0.005


class HandshakeError(HarnessError):
    """The server could not be started, or its ``hello`` was in no version this client speaks."""


class ServerKilled(BaseException):
    """The crash nemesis killed the server while a request was in flight (or
    before it was sent). A ``BaseException``: the machine's action catches
    ``Exception`` (the SUT's refusals), and this must pass through it to
    ``run_with_crash``, as the ``SystemUnderTest`` protocol requires."""


class ServerNotStarted(HandshakeError):
    """The server command could not be run at all (not found, not executable).

    ``rollcert.targets.resolve`` turns it into a ``TargetError`` (exit 3):
    a mistyped command is a usage error, not a verdict.
    """


class ServerReportedError(Exception):
    """Base of the exceptions made for error kinds that ``rollcert.model.errors`` does not
    document. Each kind gets a subclass named after it, so the certificate reads
    ``undocumented:<kind>`` — the judge counts it as a wrong answer."""


_UNDOCUMENTED_KINDS: dict[str, type[ServerReportedError]] = {}


def exception_for_kind(kind: str, message: str) -> Exception:
    """The exception a reply's error kind stands for (documented or not)."""
    documented = ERROR_KINDS.get(kind)
    if documented is not None:
        return documented(message)
    if kind not in _UNDOCUMENTED_KINDS:
        _UNDOCUMENTED_KINDS[kind] = type(kind[:60], (ServerReportedError,), {})
    return _UNDOCUMENTED_KINDS[kind](message)


def check_timeout(seconds: object, source: str = "the timeout") -> float:
    """``seconds`` if it is a finite positive number, else a ValueError naming ``source``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ValueError(f"{source} must be a number of seconds, got {seconds!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{source} must be a finite positive number of seconds, got {seconds!r}")
    return float(seconds)


def check_max_line_bytes(value: object, source: str = "the maximum line length") -> int:
    """``value`` if it is a positive whole number of bytes, else a ValueError naming ``source``."""
    if type(value) is not int or value < 1:
        raise ValueError(f"{source} must be a positive whole number of bytes, got {value!r}")
    return value


def default_timeout() -> float:
    """The per-request timeout: ``$ROLLCERT_PROTOCOL_TIMEOUT`` seconds, else 10.

    Not a number, nan, inf, zero or negative is refused (a ValueError the CLI
    reports as a usage error): an infinite timeout would let a hung server hang
    rollcert, and nan would make every comparison with the clock false.
    """
    text = os.environ.get(TIMEOUT_ENVIRONMENT_VARIABLE)
    if text is None:
        return DEFAULT_TIMEOUT_SECONDS
    source = f"${TIMEOUT_ENVIRONMENT_VARIABLE}"
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"{source} must be a finite positive number of seconds, got {text!r}") from None
    return check_timeout(seconds, source)


def default_hello_timeout() -> float:
    """How long a server gets to answer its hello: ``$ROLLCERT_PROTOCOL_HELLO_TIMEOUT``
    seconds, else 120 (refused as :func:`default_timeout` refuses)."""
    text = os.environ.get(HELLO_TIMEOUT_ENVIRONMENT_VARIABLE)
    if text is None:
        return DEFAULT_HELLO_TIMEOUT_SECONDS
    source = f"${HELLO_TIMEOUT_ENVIRONMENT_VARIABLE}"
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"{source} must be a finite positive number of seconds, got {text!r}") from None
    return check_timeout(seconds, source)


def default_max_line_bytes() -> int:
    """The longest reply line accepted: ``$ROLLCERT_PROTOCOL_MAX_LINE_BYTES``, else 16 MiB."""
    text = os.environ.get(MAX_LINE_ENVIRONMENT_VARIABLE)
    if text is None:
        return MAX_LINE_BYTES
    source = f"${MAX_LINE_ENVIRONMENT_VARIABLE}"
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{source} must be a positive whole number of bytes, got {text!r}") from None
    return check_max_line_bytes(value, source)


def _report_progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- one running server ------------------------------------------------------------


class StderrTail:
    """The last ``limit`` bytes a server wrote on stderr, drained by a thread.

    The pipe must be drained (a full stderr pipe blocks the server), but a
    server may write gigabytes, with or without newlines: only the tail is kept,
    read in chunks, so memory stays within ``limit`` plus one chunk.
    """

    def __init__(self, fd: int, limit: int = STDERR_TAIL_BYTES) -> None:
        self._fd = fd
        self._limit = limit
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="rollcert-server-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, READ_CHUNK_BYTES):
                with self._lock:
                    self._data += chunk
                    if len(self._data) > self._limit:
                        del self._data[: len(self._data) - self._limit]
        except OSError:  # the pipe was closed under us at shutdown
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def quoted(self) -> str:
        """The last few non-empty lines, each clipped to its end, joined by `` | ``."""
        with self._lock:
            text = self._data.decode("utf-8", "replace")
        lines = [visible(line.strip()) for line in text.splitlines() if line.strip()][-STDERR_LINES_QUOTED:]
        return " | ".join(line if len(line) <= STDERR_LINE_CHARACTERS else "…" + line[-STDERR_LINE_CHARACTERS:]
                          for line in lines)


class ServerConnection:
    """One server process, its pipes, and the request/reply exchange with it.

    Every bound a hostile server could push against is explicit here:

    - a reply line is read from the pipe in chunks of ``READ_CHUNK_BYTES`` and
      refused once it passes ``max_line_bytes`` without a newline; nothing is
      read while no reply is awaited, so endless output fills the pipe, not rollcert;
    - stderr is drained by a thread into a :class:`StderrTail`;
    - each request (sending it and receiving its reply) has ``timeout`` seconds,
      but a ``hello`` has ``hello_timeout`` (the server's start and imports are
      not an operation); a reply slower than ``PROGRESS_AFTER_SECONDS`` is
      reported through ``progress``;
    - the reply line is parsed with bounds on digits and nesting (``protocol.decode_line``);
    - the server runs in its own process group (a new session), and the whole
      group is killed when the connection is closed, broken, dropped or when
      rollcert exits, so a child it forked does not outlive rollcert.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        progress: Callable[[str], None] = _report_progress,
        environment: Mapping[str, str] | None = None,
        protocols: Sequence[str] = PROTOCOL_VERSIONS,
        greet: bool = True,
        hello_timeout: float | None = None,
    ) -> None:
        self.argv = list(argv)
        self.timeout = check_timeout(timeout)
        self.hello_timeout = check_timeout(DEFAULT_HELLO_TIMEOUT_SECONDS if hello_timeout is None else hello_timeout)
        #: The timeout of the request in flight (the hello's or the request timeout).
        self._seconds = self.timeout
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        self.broken: str | None = None
        #: The version the handshake settled on (requests are encoded by its table).
        self.protocol = PROTOCOL_VERSION
        self._protocols = tuple(protocols)
        self._progress = progress
        self._next_id = 0
        self._lock = threading.Lock()
        self._pending = bytearray()  # bytes read from stdout, not yet part of a reply
        #: Seconds after the next request is sent at which the crash nemesis kills (0: before).
        self._kill_after: float | None = None
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,  # its own process group, killed whole on close
                env=None if environment is None else {**os.environ, **environment},
                preexec_fn=_death_signal_for_this_thread(),
            )
        except (OSError, ValueError) as error:
            raise ServerNotStarted(f"cannot start the server {shlex.join(self.argv)}: {error}") from None
        for listener in SERVER_STARTED:  # a worker tells its parent, which may have to kill the group
            with contextlib.suppress(Exception):
                listener(self.process.pid)
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._stdin_fd = self.process.stdin.fileno()
        self._stdout_fd = self.process.stdout.fileno()
        os.set_blocking(self._stdin_fd, False)  # a server that does not read must not block the write
        self._stderr_tail = StderrTail(self.process.stderr.fileno())
        # Stops the process group when the connection is dropped or the interpreter exits.
        self._finalizer = weakref.finalize(self, _stop_process_group, self.process)
        self._hello: Hello | None = self._handshake() if greet else None

    @property
    def hello(self) -> Hello:
        """The server's hello (said now if the connection was made without it)."""
        if self._hello is None:
            self._hello = self._handshake()
        return self._hello

    def _handshake(self) -> Hello:
        """Hello in each offered version, newest first: a server that refuses one
        (an error reply) is asked in the next; any other misstep ends it."""
        refusals: list[str] = []
        for protocol in self._protocols:
            try:
                reply = self.request("hello", protocol=protocol)
            except HarnessError as error:
                raise HandshakeError(f"handshake failed: {error}") from None
            if isinstance(reply, Hello):
                self.protocol = reply.protocol
                return reply
            assert isinstance(reply, ErrorReply)
            refusals.append(f"{protocol}: {reply.kind}: {reply.message}")
        self._break_quietly("the server refused the handshake (" + "; ".join(refusals) + ")")
        raise HandshakeError(f"handshake failed: {self.broken}")

    # -- the crash nemesis ------------------------------------------------------------------

    def arm_kill(self, delay: float) -> None:
        """Kill the server during the next request: before sending it (``delay`` 0),
        or ``delay`` seconds after it is on the wire if no reply has come by then."""
        self._kill_after = delay

    def disarm_kill(self) -> None:
        self._kill_after = None

    def kill(self, why: str) -> None:
        """SIGKILL the server's process group now and reap it (no grace, no EOF first).

        The signal takes effect when the process leaves the kernel: one inside a
        slow ``fsync`` dies only after it. The next process must not start
        before (the dying one still holds its journals' writer locks), so the
        wait is the request timeout, and a process that outlives it is an error.
        """
        self._kill_after = None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._pending.clear()
        if self.broken is None:
            self.broken = why
        try:
            self.process.wait(timeout=max(self.timeout, SHUTDOWN_GRACE_SECONDS))
        except subprocess.TimeoutExpired:
            self.broken = f"{self.broken}; it did not die within {self.timeout:g} s of SIGKILL"
            raise HarnessError(self.broken) from None
        finally:
            self._finalizer()  # closes the pipes

    def request(self, op: str, **arguments: object) -> object:
        """Send one request and return its decoded result or :class:`ErrorReply`.

        Raises :class:`HarnessError` (and stops the server) for anything that
        is not a well-formed, timely answer to this very request.
        """
        with self._lock:
            if self.broken is not None:
                raise HarnessError(f"the server is stopped: {self.broken}")
            self._next_id += 1
            asked = arguments.get("protocol") if op == "hello" else self.protocol
            request = Request(self._next_id, op, arguments, asked if isinstance(asked, str) else self.protocol)
            what = f"request {request.id} ({op})"
            try:
                line = request.encode()
            except ValueError as error:  # e.g. an integer too long for json to write
                raise HarnessError(f"cannot encode {what}: {error}") from None
            kill_after, self._kill_after = self._kill_after, None
            if kill_after is not None and kill_after <= 0:
                self.kill(f"killed by the crash nemesis before {what} was sent")
                raise ServerKilled(self.broken)
            seconds = self.hello_timeout if op == "hello" else self.timeout
            self._seconds = seconds  # for the messages of _send and _receive_line
            deadline = time.monotonic() + seconds
            self._send(line, what, deadline)
            if kill_after is not None and not self._reply_arrives(min(deadline, time.monotonic() + kill_after)):
                self.kill(f"killed by the crash nemesis {kill_after * 1000:g} ms into {what}")
                raise ServerKilled(self.broken)
            reply_line = self._receive_line(what, deadline)
            try:
                return decode_reply(decode_line(reply_line, self.max_line_bytes), request)
            except ProtocolError as error:
                self._fail(f"protocol violation: {error}", grace=0.0)

    def _send(self, data: bytes, what: str, deadline: float) -> None:
        seconds = self._seconds
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(f"could not send {what} within the {seconds:g} s timeout (it does not read its input)",
                           grace=0.0)
            try:
                _, writable, _ = select.select([], [self._stdin_fd], [], remaining)
                if writable:
                    view = view[os.write(self._stdin_fd, view):]
            except BlockingIOError:
                continue
            except OSError:
                self._fail(f"could not send {what}: the server closed its input")

    def _reply_arrives(self, until: float) -> bool:
        """Whether a whole reply line (or the end of the output, or more than a line
        may hold) is there before ``until``; what was read stays pending."""
        while b"\n" not in self._pending and len(self._pending) <= self.max_line_bytes:
            remaining = until - time.monotonic()
            if remaining <= 0:
                return False
            try:
                readable, _, _ = select.select([self._stdout_fd], [], [], remaining)
                chunk = os.read(self._stdout_fd, READ_CHUNK_BYTES) if readable else None
            except OSError:
                return True  # _receive_line says what went wrong
            if chunk == b"":
                return True
            if chunk:
                self._pending += chunk
        return True

    def _receive_line(self, what: str, deadline: float) -> bytes:
        """The next line of stdout, read in bounded chunks, within ``deadline``."""
        seconds = self._seconds
        started = time.monotonic()
        next_progress = started + PROGRESS_AFTER_SECONDS
        scanned = 0  # bytes of _pending already known to hold no newline
        while True:
            newline = self._pending.find(b"\n", scanned)
            if newline >= 0:
                line = bytes(self._pending[: newline + 1])
                del self._pending[: newline + 1]
                return line
            scanned = len(self._pending)
            if scanned > self.max_line_bytes:
                self._pending.clear()
                self._fail(
                    f"protocol violation: the reply to {what} is longer than the {self.max_line_bytes}-byte "
                    f"line limit (${MAX_LINE_ENVIRONMENT_VARIABLE}); no newline in its first {scanned} bytes",
                    grace=0.0,
                )
            now = time.monotonic()
            if now >= deadline:
                self._fail(
                    f"no reply to {what} within the {seconds:g} s {_timeout_name(what)} "
                    f"(${_timeout_variable(what)}; hung?)",
                    grace=0.0,
                )
            if now >= next_progress:
                self._progress(
                    f"rollcert: still waiting for the server's reply to {what} after {now - started:.0f} s "
                    f"({_timeout_name(what)} {seconds:g} s, ${_timeout_variable(what)}): {shlex.join(self.argv)}"
                )
                next_progress = now + PROGRESS_EVERY_SECONDS
            try:
                readable, _, _ = select.select([self._stdout_fd], [], [], min(deadline, next_progress) - now)
                chunk = os.read(self._stdout_fd, READ_CHUNK_BYTES) if readable else None
            except OSError as error:
                self._fail(f"could not read the reply to {what}: {error}")
            if chunk == b"":
                with contextlib.suppress(subprocess.TimeoutExpired):  # let it finish dying, for its status
                    self.process.wait(timeout=SHUTDOWN_GRACE_SECONDS)
                self._fail(f"the server closed its output before replying to {what}")
            if chunk:
                self._pending += chunk

    def _fail(self, what: str, grace: float = SHUTDOWN_GRACE_SECONDS) -> NoReturn:
        """Stop the server and raise the one HarnessError that says what happened."""
        self._break_quietly(what, grace)
        assert self.broken is not None
        raise HarnessError(self.broken)

    def _break_quietly(self, what: str, grace: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Stop the server and record why, with how it ended and its last stderr lines."""
        had_exited = _has_exited(self.process)
        exit_status = _stop_process_group(self.process, grace)
        self._pending.clear()
        self._stderr_tail.join(timeout=1.0)
        details = [what]
        if exit_status is not None and exit_status < 0 and not had_exited:
            details.append("it was killed by rollcert")
        elif exit_status is not None and exit_status < 0:
            details.append(f"it was killed (signal {-exit_status})")
        elif had_exited:
            details.append(f"it had exited with status {exit_status}")
        else:
            details.append(f"it exited with status {exit_status} when rollcert closed its input")
        quoted = self._stderr_tail.quoted()
        if quoted:
            details.append("its last stderr lines: " + quoted)
        self.broken = "; ".join(details)

    def close(self) -> None:
        """Close the server's input and let it exit (killing its group if it will not)."""
        if self.broken is None:
            self.broken = "the connection was closed"
        self._pending.clear()
        self._finalizer()


def _timeout_name(what: str) -> str:
    """Which timeout bounds a request: the hello's or the request timeout."""
    return "hello timeout" if what.endswith("(hello)") else "timeout"


def _timeout_variable(what: str) -> str:
    """The environment variable that sets the timeout bounding a request."""
    return HELLO_TIMEOUT_ENVIRONMENT_VARIABLE if what.endswith("(hello)") else TIMEOUT_ENVIRONMENT_VARIABLE


def _has_exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the server has exited, *without* reaping it: while it is an
    unreaped zombie its process-group id cannot be reused, so killing the
    group afterwards cannot hit a stranger."""
    if process.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped elsewhere
        return True


#: Linux's ``prctl`` option that sends a process a signal when its parent dies.
_PR_SET_PDEATHSIG: Final = 1


def _death_signal_for_this_thread() -> Callable[[], None] | None:
    """What the server runs between fork and exec so that the kernel SIGKILLs it
    when rollcert dies (Linux), or ``None``.

    ``kill -KILL`` of rollcert runs no finalizer: a server that does not exit when
    its stdin closes ran on for ever, holding its port or files. The kernel's death
    signal fires when the *thread* that forked the server ends, not the process, so
    it is asked for only from the main thread: a server started by a short-lived
    thread would be killed in the middle of the run. ``prctl`` is looked up here,
    in the parent: the child between fork and exec must not load libraries."""
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # rollcert died before the prctl: no signal will come now
            os.kill(os.getpid(), signal.SIGKILL)

    return set_death_signal


def _stop_process_group(process: subprocess.Popen[bytes], grace: float = SHUTDOWN_GRACE_SECONDS) -> int | None:
    """Close the server's input, give it ``grace`` seconds to exit, then kill its
    whole process group (what it forked included) and reap it; its exit status."""
    with contextlib.suppress(OSError):  # a dead server's pipe may refuse the final flush
        if process.stdin:
            process.stdin.close()
    give_up = time.monotonic() + grace
    while not _has_exited(process) and time.monotonic() < give_up:
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # pgid == pid: start_new_session made it the leader
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=SHUTDOWN_GRACE_SECONDS)
    with contextlib.suppress(OSError):
        if process.stdout:
            process.stdout.close()
    return process.returncode


# -- buffers ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RemoteSnapshot:
    """A snapshot token of the server, bound to the buffer it was taken of."""

    buffer: RemoteBuffer
    token: str


@dataclass(frozen=True, eq=False)
class RemoteAppliedDiff:
    """An applied-diff handle of the server, bound to the buffer it was applied to."""

    buffer: RemoteBuffer
    token: str


class RemoteBuffer(UnsupportedOperations):
    """One buffer hosted by the server; every call is one request.

    A durable buffer belongs to a :class:`DurableHost`, which moves it to the
    new process when the crash nemesis restarts the server.
    """

    def __init__(self, connection: ServerConnection, buffer_id: str, host: DurableHost | None = None) -> None:
        self.connection = connection
        self.buffer_id = buffer_id
        self.host = host
        self.closed = False
        #: A journal fault was armed and no splice has been answered since (see run_with_crash).
        self._fault_maybe_armed = False

    def _call(self, op: str, **arguments: object) -> object:
        if op not in OPERATIONS_BY_VERSION[self.connection.protocol]:
            raise CapabilityMissing(f"{op} is not an operation of {self.connection.protocol}")
        reply = self.connection.request(op, buffer=self.buffer_id, **arguments)
        if isinstance(reply, ErrorReply):
            raise _refusal(op, reply)
        return reply

    def read(self) -> bytes:
        data = self._call("read")
        assert isinstance(data, bytes)
        return data

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        arguments = _edit_arguments(offset, delete_length, insert)
        hello = self.connection.hello
        if plain_write_op(hello.protocol, hello.capabilities) == "write":
            self._write(**arguments)
            return
        try:
            self._call("splice", **arguments)
        except (ValueError, TypeError):  # refused before it wrote: an armed fault stays armed
            raise
        except Exception:
            self._fault_maybe_armed = False
            raise
        self._fault_maybe_armed = False

    def _write(self, offset: int, delete_length: int, insert: bytes) -> None:
        """A plain edit of a diffs-only version 2.1 server: the whole new text,
        made here from a read. The arguments are checked here, against the text
        read, by the model's own contract: the edit is the harness's (an agent's
        own write, another writer's), not the tool's, so its refusal must not
        depend on the server."""
        current = self.read()
        offset, delete_length, insert = check_splice_arguments(len(current), offset, delete_length, insert)
        self._call("write", content=splice_bytes(current, offset, delete_length, insert))

    def rollback(self, steps: int) -> None:
        self._call("rollback", steps=_integer("steps", steps))

    def depth(self) -> int:
        return _integer_result(self._call("depth"))

    def revision(self) -> int:
        return _integer_result(self._call("revision"))

    def checkpoint(self) -> object:
        return self._call("checkpoint")

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, str):  # tokens are the server's strings; anything else is a bad argument
            raise TypeError(f"expected a checkpoint token (a string), got {type(token).__name__}")
        self._call("rollback_to", token=token)

    def arm_journal_fault(self) -> None:
        self._call("arm_journal_fault")
        self._fault_maybe_armed = True

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        self._call("write_out_of_log", **_edit_arguments(offset, delete_length, insert))

    def adopt_current(self) -> None:
        self._call("adopt_current")

    # -- capability DIFFS (version 2) -------------------------------------------------------

    def snapshot(self) -> object:
        token = self._call("snapshot")
        assert isinstance(token, str)
        return RemoteSnapshot(self, token)

    def apply_diff(self, snapshot: object, mode: str, hunks: HunkTriples, reads: ReadPairs) -> object:
        """Refused here as the in-process adapters refuse: a token that is no
        snapshot is a TypeError, another buffer's snapshot a ValueError (as
        ``DiffableBuffer.apply_diff`` says); the rest is the server's to judge."""
        if not isinstance(snapshot, RemoteSnapshot):
            raise TypeError(f"not a snapshot of this server: {type(snapshot).__name__}")
        if snapshot.buffer is not self:
            raise ValueError("the diff was authored on a snapshot of another buffer")
        if not isinstance(mode, str):
            raise TypeError(f"mode must be a string, got {type(mode).__name__}")
        wire_hunks = [_hunk(hunk) for hunk in hunks]
        wire_reads = [_region(region) for region in reads]
        token = self._call("apply_diff", snapshot=snapshot.token, mode=mode, hunks=wire_hunks, reads=wire_reads)
        assert isinstance(token, str)
        return RemoteAppliedDiff(self, token)

    def rollback_diff(self, applied: object) -> None:
        if not isinstance(applied, RemoteAppliedDiff):
            raise TypeError(f"not an applied diff of this server: {type(applied).__name__}")
        if applied.buffer is not self:
            raise UnreachableRollbackError("the diff was applied to another buffer")
        self._call("rollback_diff", applied=applied.token)

    # -- capability DURABILITY (version 2) ----------------------------------------------------

    def compact(self, keep: int) -> None:
        self._call("compact", keep=_integer("keep", keep))

    def flush(self) -> None:
        self._call("flush")

    def corrupt_committed_record(self, damage: str) -> bool:
        result = self._call("corrupt_committed_record", damage=damage)
        assert isinstance(result, bool)
        return result

    def repair_corruption(self) -> None:
        self._call("repair_corruption")

    def restart(self) -> None:
        """A real crash while idle: SIGKILL the server, start it again on the same
        state directory, reopen every open durable buffer (this one's refusal,
        a ``RecoveryError`` say, is raised)."""
        self._durable_host().restart(self)

    def run_with_crash(self, action: Callable[[], None], io_event: int, lost: int) -> bool:
        """Run ``action`` with a real SIGKILL of the server armed: before the
        request is sent (``io_event`` 0), or ``io_event`` ×
        :data:`KILL_DELAY_UNIT_SECONDS` after it is on the wire unless its reply
        came first; then (killing it now if it is still alive) restart and
        reopen. True if the kill interrupted the action (its reply was never read).

        ``lost`` cannot be honoured: a kill cannot choose which unsynced bytes
        the process loses (a server loses what it kept in its own memory, as
        the reference server's state directory does; the kernel keeps the rest).

        While a journal fault is armed the kill waits for the action's reply:
        the model (as the simulated disk, whose failing write comes before any
        I/O call it counts) lets the armed fault refuse the splice first, and a
        kill before the request reached the server would leave it armed.
        """
        host = self._durable_host()
        _integer("io_event", io_event)
        if not self._fault_maybe_armed:
            host.connection.arm_kill(io_event * KILL_DELAY_UNIT_SECONDS)
        interrupted = False
        try:
            action()
        except ServerKilled:
            interrupted = True
        finally:
            host.connection.disarm_kill()
            host.restart(self)
        return interrupted

    def _durable_host(self) -> DurableHost:
        if self.host is None:
            raise HarnessError("a crash needs a durable buffer (BufferConfig.durable); this one is in memory")
        return self.host

    def close(self) -> None:
        """Free the buffer on the server; nothing to do if the server already broke."""
        if self.host is not None:
            self.host.forget(self)
        if self.closed or self.connection.broken is not None:
            return
        self.closed = True
        self._call("close")


def _refusal(op: str, reply: ErrorReply) -> Exception:
    if reply.kind == PROTOCOL_ERROR_KIND:  # the server says *we* broke the protocol
        return HarnessError(f"the server rejected the {op} request as malformed: {reply.message}")
    return exception_for_kind(reply.kind, reply.message)


def _integer(name: str, value: object) -> int:
    """Arguments the wire cannot carry faithfully are refused here, as a typed API
    would, with the kind the model predicts: the protocol's ``int`` is a JSON
    integer, so a bool, float, string or null sent as one would be a malformed
    request (ProtocolError, a harness error), not a question to the server.
    Hence ``Target.typed_wire``: R0 draws no such argument for a server."""
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def _bytes(name: str, value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {type(value).__name__}")
    return bytes(value)


def _hunk(hunk: object) -> tuple[int, int, bytes]:
    if not (isinstance(hunk, (tuple, list)) and len(hunk) == 3):
        raise TypeError(f"a hunk must be (start, end, replacement), got {hunk!r}")
    return _integer("a hunk's start", hunk[0]), _integer("a hunk's end", hunk[1]), _bytes("a replacement", hunk[2])


def _region(region: object) -> tuple[int, int]:
    if not (isinstance(region, (tuple, list)) and len(region) == 2):
        raise TypeError(f"a read region must be (start, end), got {region!r}")
    return _integer("a region's start", region[0]), _integer("a region's end", region[1])


def _edit_arguments(offset: object, delete_length: object, insert: object) -> dict[str, object]:
    return {
        "offset": _integer("offset", offset),
        "delete_length": _integer("delete_length", delete_length),
        "insert": _bytes("insert", insert),
    }


def _integer_result(value: object) -> int:
    assert type(value) is int  # decode_reply checked the wire type
    return value


# -- the target ------------------------------------------------------------------------


class DurableHost:
    """The process that hosts the durable buffers: the same command, started with
    ``$ROLLCERT_STATE_DIR`` naming one directory (the same on every start).

    It is separate from the process of the in-memory buffers, so that a kill
    loses nothing a test did not ask to crash. The crash nemesis kills it;
    :meth:`restart` starts it again and moves every open durable buffer to the
    new process with ``reopen``.
    """

    def __init__(self, start: Callable[[bool], ServerConnection], hello: Hello) -> None:
        self._start = start
        self.hello = hello
        self._spare: ServerConnection | None = None
        self.connection = self._connect()
        self.buffers: list[RemoteBuffer] = []

    def _connect(self) -> ServerConnection:
        """The next process, greeted. It was started ahead (the spare), so that a
        restart costs a kill and the reopens rather than an interpreter start:
        a spare has read nothing but its command line and opens nothing before
        its hello and the reopens, so it is the process a restart would start."""
        connection = self._spare if self._spare is not None else self._start(True)
        self._spare = self._start(False)
        if connection.hello != self.hello:
            connection.close()
            raise HarnessError(
                f"the server started on its state directory introduced itself differently: {connection.hello} "
                f"instead of {self.hello}"
            )
        return connection

    def new_buffer(self, config: BufferConfig) -> RemoteBuffer:
        if self.connection.broken is not None:  # a break, not a kill: a fresh start (the old buffers stay broken)
            self.connection = self._connect()
        reply = self.connection.request(
            "new",
            initial=config.initial,
            capacity=config.capacity,
            policy=config.policy,
            durable=True,
            durability=config.durability,
        )
        if isinstance(reply, ErrorReply):
            raise _refusal("new", reply)
        assert isinstance(reply, str)
        buffer = RemoteBuffer(self.connection, reply, self)
        self.buffers.append(buffer)
        return buffer

    def close(self) -> None:
        self.connection.close()
        if self._spare is not None:
            self._spare.close()

    def forget(self, buffer: RemoteBuffer) -> None:
        with contextlib.suppress(ValueError):
            self.buffers.remove(buffer)

    def restart(self, requester: RemoteBuffer) -> None:
        """SIGKILL the server (if the nemesis has not already), start it again and
        reopen every durable buffer that lived in it. ``requester``'s refusal to
        reopen (recovery refused a corrupt journal) is raised; the buffer then
        stays closed until ``repair_corruption`` opens it."""
        old = requester.connection
        if old is not self.connection:
            raise HarnessError(f"buffer {requester.buffer_id} lives in a server that broke earlier: {old.broken}")
        old.kill("killed by the crash nemesis (restart)")
        self.connection = self._connect()
        failure: Exception | None = None
        others: list[str] = []
        for buffer in list(self.buffers):
            if buffer.connection is not old:
                continue
            buffer.connection = self.connection
            reply = self.connection.request("reopen", buffer=buffer.buffer_id)
            if isinstance(reply, ErrorReply):
                if buffer is requester:
                    failure = _refusal("reopen", reply)
                else:  # nothing was done to it: failing to recover it is the harness's trouble
                    others.append(f"{buffer.buffer_id}: {reply.kind}: {reply.message}")
        if others:
            raise HarnessError("after a restart, durable buffers could not be reopened: " + "; ".join(others))
        if failure is not None:
            raise failure


class SubprocessServer:
    """The server behind one Target: one process at a time for the in-memory
    buffers, restarted after a break, and (version 2, capability durability)
    a second one for the durable buffers, which the crash nemesis kills."""

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        hello_timeout: float = DEFAULT_HELLO_TIMEOUT_SECONDS,
    ) -> None:
        if not argv:
            raise ValueError("the server command is empty")
        self.argv = list(argv)
        self.timeout = check_timeout(timeout)
        self.hello_timeout = check_timeout(hello_timeout)
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        #: The state directories this client owns (one per process), removed with it.
        self.state_root = tempfile.mkdtemp(prefix="rollcert-state-")
        self._remove_state = weakref.finalize(self, shutil.rmtree, self.state_root, True)
        try:
            self.connection = self._connect()
        except BaseException:
            self._remove_state()
            raise
        self.hello = self.connection.hello
        self._durable: DurableHost | None = None

    def _connect(self, directory: str = "memory", greet: bool = True) -> ServerConnection:
        state_dir = os.path.join(self.state_root, directory)
        os.makedirs(state_dir, exist_ok=True)
        return ServerConnection(
            self.argv,
            self.timeout,
            max_line_bytes=self.max_line_bytes,
            environment={STATE_DIR_VARIABLE: state_dir},
            greet=greet,
            hello_timeout=self.hello_timeout,
        )

    def new_buffer(self, config: BufferConfig) -> SystemUnderTest:
        if config.durable:
            if Capability.DURABILITY not in self.hello.capabilities:
                raise HarnessError(f"the server does not declare capability durability ({self.hello.protocol})")
            if self._durable is None:
                self._durable = DurableHost(lambda greet: self._connect("durable", greet), self.hello)
            return self._durable.new_buffer(config)
        if self.connection.broken is not None:
            self.connection = self._connect()
            if self.connection.hello != self.hello:
                raise HarnessError(
                    f"the restarted server introduced itself differently: {self.connection.hello} "
                    f"instead of {self.hello}"
                )
        connection = self.connection
        arguments: dict[str, object] = {"initial": config.initial, "capacity": config.capacity, "policy": config.policy}
        if connection.protocol != PROTOCOL_VERSION:  # version 2 and 2.1
            arguments.update(durable=False, durability=config.durability)
        reply = connection.request("new", **arguments)
        if isinstance(reply, ErrorReply):
            raise _refusal("new", reply)
        assert isinstance(reply, str)
        return RemoteBuffer(connection, reply)

    def close(self) -> None:
        self.connection.close()
        if self._durable is not None:
            self._durable.close()
        self._remove_state()


def subprocess_target(
    command: str | Sequence[str],
    *,
    timeout: float | None = None,
    max_line_bytes: int | None = None,
    hello_timeout: float | None = None,
) -> Target:
    """A Target served by ``command`` (a shell-style string or an argv list).

    ``timeout`` (seconds per request), ``hello_timeout`` (seconds for the
    handshake: the server's start and imports) and ``max_line_bytes`` (longest
    reply line) default to ``$ROLLCERT_PROTOCOL_TIMEOUT``,
    ``$ROLLCERT_PROTOCOL_HELLO_TIMEOUT`` and ``$ROLLCERT_PROTOCOL_MAX_LINE_BYTES``,
    else 10 s, 120 s and 16 MiB; a bad value raises ValueError.

    The server is started and greeted now, because its hello says what the
    Target is: its capabilities and (version 2) its alphabet. If that fails,
    the Target still exists: every property the protocol can carry is judged
    ``error`` with the handshake's failure as the reason — the server broke the
    protocol, which is a verdict, not a usage error. A command that cannot be
    run at all raises :class:`ServerNotStarted` (``rollcert.targets.resolve``
    reports it as a target error).
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    seconds = check_timeout(default_timeout() if timeout is None else timeout)
    hello_seconds = check_timeout(default_hello_timeout() if hello_timeout is None else hello_timeout)
    line_limit = check_max_line_bytes(default_max_line_bytes() if max_line_bytes is None else max_line_bytes)
    label = f"subprocess:{shlex.join(argv)}"
    try:
        server = SubprocessServer(argv, seconds, max_line_bytes=line_limit, hello_timeout=hello_seconds)
    except ServerNotStarted:  # a mistyped command is a usage error, not a verdict
        raise
    except HandshakeError as error:
        failure = str(error)

        def refuse(config: BufferConfig) -> SystemUnderTest:
            raise HandshakeError(failure)

        return Target(
            name=label,
            version="unknown",
            capabilities=frozenset(WIRE_CAPABILITIES_V2),
            factory=refuse,
            description="a rollcert-protocol server whose handshake failed",
            notes={"command": shlex.join(argv), "handshake": failure},
            typed_wire=True,
        )
    hello = server.hello
    notes = {
        "server": hello.name,
        "command": shlex.join(argv),
        "protocol": hello.protocol,
        "timeout": f"{seconds:g} s per request, {hello_seconds:g} s for the hello",
        "max_line_bytes": str(line_limit),
    }
    if hello.protocol != PROTOCOL_VERSION:
        limits = hello.limits
        notes["limits"] = (
            f"alphabet {'any byte' if limits.alphabet is None else repr(limits.alphabet)}, "
            f"max buffer {limits.max_buffer_bytes or 'unbounded'} bytes, "
            f"max insert {limits.max_insert_bytes or 'unbounded'} bytes "
            "(the alphabet is the generated text's; an operation over a maximum is not asked, since "
            "the server may refuse it, and an initial buffer over the buffer maximum is cut to it)"
        )
    if hello.history_bound is not None:
        notes["history bound"] = (
            f"{hello.history_bound.policy} only ({hello.history_bound.description or 'declared at the hello'}): "
            "bounded buffers are asked with this policy, and R6 only for the situations it can reach"
        )
    if plain_write_op(hello.protocol, hello.capabilities) == "write":
        notes["plain edits"] = (
            "sent as 'write' (the whole new text, made from a read): a diffs-only server of "
            f"{hello.protocol} implements no 'splice'"
        )
    if Capability.DURABILITY in hello.capabilities:
        notes["crashes"] = (
            "real: SIGKILL of the server's process group (before a request, or "
            f"io_event x {KILL_DELAY_UNIT_SECONDS * 1000:g} ms after it is sent), restart on the same "
            f"${STATE_DIR_VARIABLE}, reopen; the trace's 'lost bytes' cannot be chosen by a kill and are ignored"
        )
    return Target(
        # The name is the TARGET text that resolves to this target again, so the
        # certificate's "rollcert replay" line works; the server names itself below.
        name=label,
        version=hello.version,
        capabilities=hello.capabilities,
        factory=server.new_buffer,
        description=f"{hello.name} {hello.version}, served over {hello.protocol}",
        notes=notes,
        alphabet=hello.limits.alphabet,
        history_bound=hello.history_bound,
        typed_wire=True,  # the client refuses arguments of another type (_integer, _bytes)
        limits=(
            None
            if hello.limits.max_buffer_bytes is None and hello.limits.max_insert_bytes is None
            else SizeLimits(hello.limits.max_buffer_bytes, hello.limits.max_insert_bytes)
        ),
    )


__all__ = [
    "DEFAULT_HELLO_TIMEOUT_SECONDS",
    "DEFAULT_TIMEOUT_SECONDS",
    "HELLO_TIMEOUT_ENVIRONMENT_VARIABLE",
    "KILL_DELAY_UNIT_SECONDS",
    "MAX_LINE_ENVIRONMENT_VARIABLE",
    "TIMEOUT_ENVIRONMENT_VARIABLE",
    "DurableHost",
    "HandshakeError",
    "RemoteAppliedDiff",
    "RemoteBuffer",
    "RemoteSnapshot",
    "ServerConnection",
    "ServerKilled",
    "ServerNotStarted",
    "ServerReportedError",
    "StderrTail",
    "SubprocessServer",
    "check_max_line_bytes",
    "check_timeout",
    "default_hello_timeout",
    "default_max_line_bytes",
    "default_timeout",
    "subprocess_target",
]
