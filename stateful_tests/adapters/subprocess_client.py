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
import os
import queue
import shlex
import subprocess
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from typing import IO, Final, NoReturn

from rollcert.model.errors import ERROR_KINDS
from rollcert.stateful_tests.adapter import (
    BufferConfig,
    HarnessError,
    SystemUnderTest,
    Target,
    UnsupportedOperations,
)
from rollcert.stateful_tests.protocol import (
    MAX_LINE_BYTES,
    PROTOCOL_ERROR_KIND,
    PROTOCOL_VERSION,
    WIRE_CAPABILITIES,
    ErrorReply,
    Hello,
    ProtocolError,
    Request,
    decode_line,
    decode_reply,
)

DEFAULT_TIMEOUT_SECONDS: Final = 10.0
#: Overrides the per-request timeout for targets built from the command line.
TIMEOUT_ENVIRONMENT_VARIABLE: Final = "ROLLCERT_PROTOCOL_TIMEOUT"
#: How long a server gets to exit after its input is closed before it is killed.
SHUTDOWN_GRACE_SECONDS: Final = 2.0
STDERR_LINES_KEPT: Final = 12


class HandshakeError(HarnessError):
    """The server could not be started, or its ``hello`` was not ``rollcert-protocol/1``."""


class ServerNotStarted(HandshakeError):
    """The server command could not be run at all (not found, not executable)."""


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


def default_timeout() -> float:
    """The per-request timeout: ``$ROLLCERT_PROTOCOL_TIMEOUT`` seconds, else 10."""
    text = os.environ.get(TIMEOUT_ENVIRONMENT_VARIABLE)
    if text is None:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ValueError(f"${TIMEOUT_ENVIRONMENT_VARIABLE} must be a positive number of seconds, got {text!r}")
    return seconds


# -- one running server ------------------------------------------------------------


_END_OF_OUTPUT: Final = b""


class ServerConnection:
    """One server process, its pipes, and the request/reply exchange with it.

    Replies are read by a thread into a queue so that waiting for one can time
    out; stderr is drained by another thread (a full stderr pipe would block
    the server) into the last few lines, for the report when the server dies.
    """

    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.broken: str | None = None
        self._next_id = 0
        self._lock = threading.Lock()
        self._replies: queue.Queue[bytes] = queue.Queue()
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as error:
            raise ServerNotStarted(f"cannot start the server {shlex.join(self.argv)}: {error}") from None
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._stdin: IO[bytes] = self.process.stdin
        self._stdout_reader = threading.Thread(
            target=_pump_lines, args=(self.process.stdout, self._replies), daemon=True
        )
        self._stderr_reader = threading.Thread(
            target=_keep_tail, args=(self.process.stderr, self._stderr_tail), daemon=True
        )
        self._stdout_reader.start()
        self._stderr_reader.start()
        # Stops the process when the connection is dropped or the interpreter exits.
        self._finalizer = weakref.finalize(self, _stop_process, self.process)
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
            try:
                self._stdin.write(request.encode())
                self._stdin.flush()
            except OSError:
                self._fail(f"could not send request {request.id} ({op}): the server closed its input")
            try:
                line = self._replies.get(timeout=self.timeout)
            except queue.Empty:
                self._fail(
                    f"no reply to request {request.id} ({op}) within the {self.timeout:g} s timeout (hung?)",
                    grace=0.0,  # it is not answering; do not wait for it to notice its input closing
                )
            if line == _END_OF_OUTPUT:
                with contextlib.suppress(subprocess.TimeoutExpired):  # let it finish dying, for its status
                    self.process.wait(timeout=SHUTDOWN_GRACE_SECONDS)
                self._fail(f"the server closed its output before replying to request {request.id} ({op})")
            try:
                return decode_reply(decode_line(line), request)
            except ProtocolError as error:
                self._fail(f"protocol violation: {error}")

    def _fail(self, what: str, grace: float = SHUTDOWN_GRACE_SECONDS) -> NoReturn:
        """Stop the server and raise the one HarnessError that says what happened."""
        self._break_quietly(what, grace)
        assert self.broken is not None
        raise HarnessError(self.broken)

    def _break_quietly(self, what: str, grace: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """Stop the server and record why, with how it ended and its last stderr lines."""
        had_exited = self.process.poll() is not None
        exit_status = _stop_process(self.process, grace)
        self._stderr_reader.join(timeout=1.0)
        details = [what]
        if exit_status is not None and exit_status < 0:
            details.append(f"it was killed (signal {-exit_status})")
        elif had_exited:
            details.append(f"it had exited with status {exit_status}")
        else:
            details.append(f"it exited with status {exit_status} when rollcert closed its input")
        if self._stderr_tail:
            details.append("its last stderr lines: " + " | ".join(self._stderr_tail))
        self.broken = "; ".join(details)

    def close(self) -> None:
        """Close the server's input and let it exit (killing it if it will not)."""
        if self.broken is None:
            self.broken = "the connection was closed"
        self._finalizer()


def _pump_lines(stream: IO[bytes], replies: queue.Queue[bytes]) -> None:
    try:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            replies.put(line)
    except (OSError, ValueError):  # the pipe was closed under us at shutdown
        pass
    replies.put(_END_OF_OUTPUT)


def _keep_tail(stream: IO[bytes], tail: deque[str]) -> None:
    try:
        for line in stream:
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                tail.append(text[:300])
    except (OSError, ValueError):
        pass


def _stop_process(process: subprocess.Popen[bytes], grace: float = SHUTDOWN_GRACE_SECONDS) -> int | None:
    """Close the server's input, wait ``grace`` seconds, then kill it; its exit status."""
    try:
        if process.stdin:
            process.stdin.close()
    except OSError:  # a dead server's pipe may refuse the final flush
        pass
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
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

    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        if not argv:
            raise ValueError("the server command is empty")
        if not timeout > 0:
            raise ValueError(f"the timeout must be a positive number of seconds, got {timeout!r}")
        self.argv = list(argv)
        self.timeout = timeout
        self.connection = ServerConnection(self.argv, timeout)
        self.hello = self.connection.hello

    def new_buffer(self, config: BufferConfig) -> SystemUnderTest:
        if config.durable:
            raise HarnessError(f"{PROTOCOL_VERSION} cannot carry durable buffers (capability durability)")
        if self.connection.broken is not None:
            self.connection = ServerConnection(self.argv, self.timeout)
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


def subprocess_target(command: str | Sequence[str], *, timeout: float | None = None) -> Target:
    """A Target served by ``command`` (a shell-style string or an argv list).

    The server is started and greeted now, because its hello says what the
    Target is. If that fails, the Target still exists: every property the
    protocol can carry is judged ``error`` with the handshake's failure as the
    reason — the server broke the protocol, which is a verdict, not a usage error.
    A command that cannot be run at all raises ``TargetError``.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    seconds = default_timeout() if timeout is None else timeout
    label = f"subprocess:{shlex.join(argv)}"
    try:
        server = SubprocessServer(argv, seconds)
    except ServerNotStarted as error:  # a mistyped command is a usage error, not a verdict
        from rollcert.stateful_tests.targets import TargetError  # late: targets imports this module lazily

        raise TargetError(str(error)) from None
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
        },
    )


__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "TIMEOUT_ENVIRONMENT_VARIABLE",
    "HandshakeError",
    "RemoteBuffer",
    "ServerConnection",
    "ServerNotStarted",
    "ServerReportedError",
    "SubprocessServer",
    "subprocess_target",
]
