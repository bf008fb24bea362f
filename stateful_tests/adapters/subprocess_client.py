"""Certify an implementation that runs in another process, over ``rollcert-protocol/1``.

``rollcert certify 'subprocess:COMMAND ARGS...'`` starts COMMAND once, shakes
hands (the server names itself, its version and its capabilities), and then
drives every buffer of the run through that one process: a certification makes
thousands of buffers, and a process per buffer would cost more than the tests.

Whatever the server does wrong on the wire — garbage, a reply with the wrong id
or the wrong types, a hang past the per-request timeout, an exit — becomes a
:class:`~rollcert.stateful_tests.adapter.HarnessError` that says exactly what happened
(with the server's last stderr lines when it died), so the certificate says
``error``, never ``violated``, and the harness itself never crashes. A refusal
the server reports with a documented error kind is the implementation's answer
and is raised as that exception for the judge to compare; an unknown kind is
raised as an undocumented exception, which the judge treats as a wrong answer.

After a break the server is stopped; the next *new* buffer starts a fresh one
(as Bowtie restarts a crashed implementation), so one property's failure does
not decide the next property's verdict.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from collections.abc import Sequence
from typing import Final
from typing import NoReturn

from rollcert.model.errors import ERROR_KINDS
from rollcert.stateful_tests.adapter import BufferConfig
from rollcert.stateful_tests.adapter import HarnessError
from rollcert.stateful_tests.adapter import SystemUnderTest
from rollcert.stateful_tests.adapter import Target
from rollcert.stateful_tests.adapter import UnsupportedOperations
from rollcert.stateful_tests.protocol import MAX_LINE_BYTES
from rollcert.stateful_tests.protocol import PROTOCOL_ERROR_KIND
from rollcert.stateful_tests.protocol import PROTOCOL_VERSION
from rollcert.stateful_tests.protocol import WIRE_CAPABILITIES
from rollcert.stateful_tests.protocol import ErrorReply
from rollcert.stateful_tests.protocol import Hello
from rollcert.stateful_tests.protocol import ProtocolError
from rollcert.stateful_tests.protocol import Request
from rollcert.stateful_tests.protocol import decode_line
from rollcert.stateful_tests.protocol import decode_reply

DEFAULT_TIMEOUT_SECONDS: Final = 10.0
#: Overrides the per-request timeout for targets built from the command line.
TIMEOUT_ENVIRONMENT_VARIABLE: Final = "ROLLCERT_PROTOCOL_TIMEOUT"
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


class HandshakeError(HarnessError):
    """The server could not be started, or its ``hello`` was not ``rollcert-protocol/1``."""


class ServerNotStarted(HandshakeError):
    """The server command could not be run at all (not found, not executable).

    ``rollcert.stateful_tests.targets`` turns it into a ``TargetError`` (exit 3):
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
        lines = [line.strip() for line in text.splitlines() if line.strip()][-STDERR_LINES_QUOTED:]
        return " | ".join(line if len(line) <= STDERR_LINE_CHARACTERS else "…" + line[-STDERR_LINE_CHARACTERS:]
                          for line in lines)


class ServerConnection:
    """One server process, its pipes, and the request/reply exchange with it.

    Every bound a hostile server could push against is explicit here:

    - a reply line is read from the pipe in chunks of ``READ_CHUNK_BYTES`` and
      refused once it passes ``max_line_bytes`` without a newline; nothing is
      read while no reply is awaited, so endless output fills the pipe, not rollcert;
    - stderr is drained by a thread into a :class:`StderrTail`;
    - each request (sending it and receiving its reply) has ``timeout`` seconds;
      a reply slower than ``PROGRESS_AFTER_SECONDS`` is reported through ``progress``;
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
    ) -> None:
        self.argv = list(argv)
        self.timeout = check_timeout(timeout)
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        self.broken: str | None = None
        self._progress = progress
        self._next_id = 0
        self._lock = threading.Lock()
        self._pending = bytearray()  # bytes read from stdout, not yet part of a reply
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,  # its own process group, killed whole on close
            )
        except (OSError, ValueError) as error:
            raise ServerNotStarted(f"cannot start the server {shlex.join(self.argv)}: {error}") from None
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._stdin_fd = self.process.stdin.fileno()
        self._stdout_fd = self.process.stdout.fileno()
        os.set_blocking(self._stdin_fd, False)  # a server that does not read must not block the write
        self._stderr_tail = StderrTail(self.process.stderr.fileno())
        # Stops the process group when the connection is dropped or the interpreter exits.
        self._finalizer = weakref.finalize(self, _stop_process_group, self.process)
        self.hello = self._handshake()

    def _handshake(self) -> Hello:
        try:
            reply = self.request("hello", protocol=PROTOCOL_VERSION)
        except HarnessError as error:
            raise HandshakeError(f"handshake failed: {error}") from None
        if isinstance(reply, ErrorReply):
            self._break_quietly(f"the server refused the handshake: {reply.kind}: {reply.message}")
            raise HandshakeError(f"handshake failed: {self.broken}")
        assert isinstance(reply, Hello)
        return reply

    def request(self, op: str, **arguments: object) -> object:
        """Send one request and return its decoded result or :class:`ErrorReply`.

        Raises :class:`HarnessError` (and stops the server) for anything that
        is not a well-formed, timely answer to this very request.
        """
        with self._lock:
            if self.broken is not None:
                raise HarnessError(f"the server is stopped: {self.broken}")
            self._next_id += 1
            request = Request(self._next_id, op, arguments)
            what = f"request {request.id} ({op})"
            try:
                line = request.encode()
            except ValueError as error:  # e.g. an integer too long for json to write
                raise HarnessError(f"cannot encode {what}: {error}") from None
            deadline = time.monotonic() + self.timeout
            self._send(line, what, deadline)
            reply_line = self._receive_line(what, deadline)
            try:
                return decode_reply(decode_line(reply_line, self.max_line_bytes), request)
            except ProtocolError as error:
                self._fail(f"protocol violation: {error}", grace=0.0)

    def _send(self, data: bytes, what: str, deadline: float) -> None:
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._fail(f"could not send {what} within the {self.timeout:g} s timeout (it does not read its input)",
                           grace=0.0)
            try:
                _, writable, _ = select.select([], [self._stdin_fd], [], remaining)
                if writable:
                    view = view[os.write(self._stdin_fd, view):]
            except BlockingIOError:
                continue
            except OSError:
                self._fail(f"could not send {what}: the server closed its input")

    def _receive_line(self, what: str, deadline: float) -> bytes:
        """The next line of stdout, read in bounded chunks, within ``deadline``."""
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
                self._fail(f"no reply to {what} within the {self.timeout:g} s timeout (hung?)", grace=0.0)
            if now >= next_progress:
                self._progress(
                    f"rollcert: still waiting for the server's reply to {what} after {now - started:.0f} s "
                    f"(timeout {self.timeout:g} s, ${TIMEOUT_ENVIRONMENT_VARIABLE}): {shlex.join(self.argv)}"
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


class RemoteBuffer(UnsupportedOperations):
    """One buffer hosted by the server; every call is one request."""

    def __init__(self, connection: ServerConnection, buffer_id: str) -> None:
        self.connection = connection
        self.buffer_id = buffer_id
        self.closed = False

    def _call(self, op: str, **arguments: object) -> object:
        reply = self.connection.request(op, buffer=self.buffer_id, **arguments)
        if isinstance(reply, ErrorReply):
            raise _refusal(op, reply)
        return reply

    def read(self) -> bytes:
        data = self._call("read")
        assert isinstance(data, bytes)
        return data

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self._call("splice", **_edit_arguments(offset, delete_length, insert))

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

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        self._call("write_out_of_log", **_edit_arguments(offset, delete_length, insert))

    def adopt_current(self) -> None:
        self._call("adopt_current")

    def close(self) -> None:
        """Free the buffer on the server; nothing to do if the server already broke."""
        if self.closed or self.connection.broken is not None:
            return
        self.closed = True
        self._call("close")


def _refusal(op: str, reply: ErrorReply) -> Exception:
    if reply.kind == PROTOCOL_ERROR_KIND:  # the server says *we* broke the protocol
        return HarnessError(f"the server rejected the {op} request as malformed: {reply.message}")
    return exception_for_kind(reply.kind, reply.message)


def _integer(name: str, value: object) -> int:
    """Arguments the wire cannot carry faithfully are refused here, as a typed API would."""
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def _edit_arguments(offset: object, delete_length: object, insert: object) -> dict[str, object]:
    if not isinstance(insert, (bytes, bytearray, memoryview)):
        raise TypeError(f"insert must be bytes, got {type(insert).__name__}")
    return {
        "offset": _integer("offset", offset),
        "delete_length": _integer("delete_length", delete_length),
        "insert": bytes(insert),
    }


def _integer_result(value: object) -> int:
    assert type(value) is int  # decode_reply checked the wire type
    return value


# -- the target ------------------------------------------------------------------------


class SubprocessServer:
    """The server behind one Target: one process at a time, restarted after a break."""

    def __init__(self, argv: Sequence[str], timeout: float, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        if not argv:
            raise ValueError("the server command is empty")
        self.argv = list(argv)
        self.timeout = check_timeout(timeout)
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        self.connection = self._connect()
        self.hello = self.connection.hello

    def _connect(self) -> ServerConnection:
        return ServerConnection(self.argv, self.timeout, max_line_bytes=self.max_line_bytes)

    def new_buffer(self, config: BufferConfig) -> SystemUnderTest:
        if config.durable:
            raise HarnessError(f"{PROTOCOL_VERSION} cannot carry durable buffers (capability durability)")
        if self.connection.broken is not None:
            self.connection = self._connect()
            if self.connection.hello != self.hello:
                raise HarnessError(
                    f"the restarted server introduced itself differently: {self.connection.hello} "
                    f"instead of {self.hello}"
                )
        connection = self.connection
        reply = connection.request("new", initial=config.initial, capacity=config.capacity, policy=config.policy)
        if isinstance(reply, ErrorReply):
            raise _refusal("new", reply)
        assert isinstance(reply, str)
        return RemoteBuffer(connection, reply)

    def close(self) -> None:
        self.connection.close()


def subprocess_target(
    command: str | Sequence[str], *, timeout: float | None = None, max_line_bytes: int | None = None
) -> Target:
    """A Target served by ``command`` (a shell-style string or an argv list).

    ``timeout`` (seconds per request) and ``max_line_bytes`` (longest reply
    line) default to ``$ROLLCERT_PROTOCOL_TIMEOUT`` and
    ``$ROLLCERT_PROTOCOL_MAX_LINE_BYTES``, else 10 s and 16 MiB; a bad value
    raises ValueError.

    The server is started and greeted now, because its hello says what the
    Target is. If that fails, the Target still exists: every property the
    protocol can carry is judged ``error`` with the handshake's failure as the
    reason — the server broke the protocol, which is a verdict, not a usage error.
    A command that cannot be run at all raises :class:`ServerNotStarted`
    (``rollcert.stateful_tests.targets`` reports it as a target error).
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    seconds = check_timeout(default_timeout() if timeout is None else timeout)
    line_limit = check_max_line_bytes(default_max_line_bytes() if max_line_bytes is None else max_line_bytes)
    label = f"subprocess:{shlex.join(argv)}"
    try:
        server = SubprocessServer(argv, seconds, max_line_bytes=line_limit)
    except ServerNotStarted:  # a mistyped command is a usage error, not a verdict
        raise
    except HandshakeError as error:
        failure = str(error)

        def refuse(config: BufferConfig) -> SystemUnderTest:
            raise HandshakeError(failure)

        return Target(
            name=label,
            version="unknown",
            capabilities=frozenset(WIRE_CAPABILITIES),
            factory=refuse,
            description=f"a {PROTOCOL_VERSION} server whose handshake failed",
            notes={"command": shlex.join(argv), "handshake": failure},
        )
    hello = server.hello
    return Target(
        # The name is the TARGET text that resolves to this target again, so the
        # certificate's "rollcert replay" line works; the server names itself below.
        name=label,
        version=hello.version,
        capabilities=hello.capabilities,
        factory=server.new_buffer,
        description=f"{hello.name} {hello.version}, served over {PROTOCOL_VERSION}",
        notes={
            "server": hello.name,
            "command": shlex.join(argv),
            "protocol": PROTOCOL_VERSION,
            "timeout": f"{seconds:g} s",
            "max_line_bytes": str(line_limit),
        },
    )


__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_LINE_ENVIRONMENT_VARIABLE",
    "TIMEOUT_ENVIRONMENT_VARIABLE",
    "HandshakeError",
    "RemoteBuffer",
    "ServerConnection",
    "ServerNotStarted",
    "ServerReportedError",
    "StderrTail",
    "SubprocessServer",
    "check_max_line_bytes",
    "check_timeout",
    "default_max_line_bytes",
    "default_timeout",
    "subprocess_target",
]
