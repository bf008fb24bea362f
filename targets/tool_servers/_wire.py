"""A ``rollcert-protocol/2.1`` (and ``/2``) server loop for edit tools, in the standard library alone.

Why a second server loop beside :mod:`rollcert.targets.protocol_server`:
a tool server runs under the *tool's* interpreter (a virtual environment that
has aider, or a Python that talks to a node process), where rollcert and its
dependencies are not installed. So this file imports nothing but the standard
library, and each tool server beside it imports it as a sibling module
(``python /path/to/tool_servers/aider_server.py`` puts this folder on
``sys.path``)::

    from _wire import Refused, ToolBuffer, serve

A tool server hosts diff appliers that keep no undo log: it declares capability
``diffs`` alone (like the in-process ``applier_target``), so S1 is assessed and
S2, S3 and the R properties are *not assessed*. A tool with an undo of its own
(OpenHands' ``undo_edit``) declares ``core`` instead: its ``splice`` is an edit
made through the tool and its ``rollback`` the tool's undo (and ``bounded``
with a ``history_bound`` when the undo keeps the last N edits). The wire format is
``docs/protocol.md``'s; ``tests/test_tool_wire.py`` checks this loop against
rollcert's own decoder and the JSON Schemas.

The rules this loop enforces before a tool runs are the model's (SPEC §2 and
the diff authoring rule of ``rollcert.model.contract``), restated here because
the model cannot be imported in the tool's environment. They are the *input
contract*, not the property under test: a malformed request is refused with
``ValueError``/``TypeError`` exactly as the in-process adapters refuse it, so a
certificate never blames a tool for rollcert's own bad input.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from collections.abc import Callable
from collections.abc import Iterable
from itertools import count
from pathlib import Path
from typing import IO
from typing import Any

PROTOCOL_VERSION = "rollcert-protocol/2.1"
#: The versions this loop answers, newest first: 2.1 sends a diffs-only server
#: ``write`` for the plain edits; a client of version 2 sends ``splice``.
PROTOCOL_VERSIONS = (PROTOCOL_VERSION, "rollcert-protocol/2")
#: Longest request line read; far above anything the suite generates.
MAX_LINE_BYTES = 64 * 1024 * 1024
ANCHOR_MODES = ("positional", "content")
Hunks = list[tuple[int, int, bytes]]
Reads = list[tuple[int, int]]


class Refused(Exception):
    """The tool refused the edit; its own words are the message.

    Answered as error kind ``StaleBaseError``: the documented way for a diff
    applier to say "the base moved under this diff" (S1 allows it whenever the
    base changed).
    """


class Unreachable(Exception):
    """The tool's undo cannot go back that far; answered as ``UnreachableRollbackError``."""


class BadRequest(Exception):
    """The request does not follow the protocol (answered as ``ProtocolError``)."""


class ToolBuffer:
    """One buffer of a tool. The defaults keep the text in ``self.content``;
    a tool that edits files builds on :class:`FileBuffer`."""

    def __init__(self, initial: bytes) -> None:
        self.content = initial

    def read(self) -> bytes:
        return self.content

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        """The agent's own plain write between a snapshot and an apply (already validated)."""
        current = self.read()
        self.write(current[:offset] + insert + current[offset + delete_length :])

    def write(self, content: bytes) -> None:
        """A plain write of the whole text (version 2.1's ``write``): an agent's own, another writer's."""
        self.content = content

    def snapshot(self) -> bytes:
        """B0: the text the agent read and authors its diff against."""
        return self.read()

    def apply_diff(self, snapshot: bytes, mode: str, hunks: Hunks, reads: Reads) -> None:
        """The tool's step: apply the diff authored on ``snapshot`` to the live text, or raise :class:`Refused`."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply_diff")

    def rollback(self, steps: int) -> None:
        """Undo the last ``steps`` edits (a server that declares ``core``), or raise :class:`Unreachable`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no undo log")

    def close(self) -> None:
        return None


class FileBuffer(ToolBuffer):
    """A buffer that is a real file, as the tools edit them: the file is the text,
    so a tool that reads and writes it itself sees every plain write."""

    def __init__(self, file: Path, initial: bytes) -> None:
        self.file = file
        file.write_bytes(initial)

    def read(self) -> bytes:
        return self.file.read_bytes()

    def write(self, content: bytes) -> None:
        self.file.write_bytes(content)


def apply_hunks(base: bytes, hunks: Iterable[tuple[int, int, bytes]]) -> bytes:
    """B1: ``base`` with each hunk's span replaced (from the last hunk to the first,
    so the earlier offsets stay valid) — the text the agent wants."""
    result = base
    for start, end, replacement in sorted(hunks, reverse=True):
        result = result[:start] + replacement + result[end:]
    return result


# -- the input contract (the model's rules, restated) ---------------------------------


def check_splice(length: int, offset: int, delete_length: int) -> None:
    if not 0 <= offset <= length:
        raise ValueError(f"offset {offset} outside the buffer [0, {length}]")
    if not 0 <= delete_length <= length - offset:
        raise ValueError(
            f"delete_length {delete_length} at offset {offset} runs past the end of a {length}-byte buffer"
        )


def check_diff(base_length: int, mode: str, hunks: Hunks, reads: Reads) -> None:
    """Hunks inside the base, strictly increasing starts, non-overlapping; reads
    non-empty and inside the base; a known anchor mode."""
    if mode not in ANCHOR_MODES:
        raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
    if not hunks:
        raise ValueError("a diff needs at least one hunk")
    previous: tuple[int, int] | None = None
    for start, end, _ in hunks:
        if not 0 <= start <= end <= base_length:
            raise ValueError(f"hunk [{start}, {end}) lies outside the {base_length}-byte base")
        if previous is not None and not (previous[0] < start and previous[1] <= start):
            raise ValueError(
                f"hunks must be sorted and non-overlapping: [{previous[0]}, {previous[1]}) then [{start}, {end})"
            )
        previous = (start, end)
    for start, end in reads:
        if not 0 <= start < end <= base_length:
            raise ValueError(
                f"read region [{start}, {end}) must be non-empty and inside the {base_length}-byte base"
            )


# -- decoding fields ------------------------------------------------------------------


def _field(message: dict[str, Any], name: str) -> Any:
    if name not in message:
        raise BadRequest(f"missing field {name!r}")
    return message[name]


def _integer(value: Any, name: str) -> int:
    if type(value) is not int:
        raise BadRequest(f"field {name!r} must be an integer")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"field {name!r} must be a string")
    return value


def _bytes(value: Any, name: str) -> bytes:
    try:
        return base64.b64decode(_text(value, name).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise BadRequest(f"field {name!r} is not valid base64") from None


def _hunks(value: Any) -> Hunks:
    if not isinstance(value, list):
        raise BadRequest("field 'hunks' must be a list of [start, end, base64] triples")
    hunks: Hunks = []
    for item in value:
        if not isinstance(item, list) or len(item) != 3:
            raise BadRequest("each hunk must be a [start, end, base64] triple")
        hunks.append(
            (
                _integer(item[0], "hunk start"),
                _integer(item[1], "hunk end"),
                _bytes(item[2], "hunk replacement"),
            )
        )
    return hunks


def _reads(value: Any) -> Reads:
    if not isinstance(value, list):
        raise BadRequest("field 'reads' must be a list of [start, end] pairs")
    reads: Reads = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise BadRequest("each read region must be a [start, end] pair")
        reads.append((_integer(item[0], "region start"), _integer(item[1], "region end")))
    return reads


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# -- the server -------------------------------------------------------------------------


class ToolServer:
    """Answers requests for any number of one tool's buffers."""

    def __init__(
        self,
        name: str,
        version: str,
        make_buffer: Callable[..., ToolBuffer],
        limits: dict[str, Any],
        capabilities: tuple[str, ...] = ("diffs",),
        history_bound: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        #: ``make_buffer(initial)``; with ``bounded`` declared, ``make_buffer(initial, capacity)``.
        self.make_buffer = make_buffer
        self.limits = limits
        #: ``("diffs",)`` for a diff applier; a tool with an undo log adds ``core`` (and ``bounded``).
        self.capabilities = capabilities
        #: Version 2.1's ``history_bound`` (``{"policy": ..., "description": ...}``), with ``bounded``.
        self.history_bound = history_bound
        self.buffers: dict[str, ToolBuffer] = {}
        #: token -> (buffer id, B0); a snapshot of another buffer is refused.
        self.snapshots: dict[str, tuple[str, bytes]] = {}
        self.applied: dict[str, str] = {}
        self._numbers = count(1)

    def answer(self, line: bytes) -> dict[str, Any]:
        """The one reply to one request line, whatever the line holds."""
        request_id: Any = None
        try:
            try:
                message = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise BadRequest("the line is not a UTF-8 JSON object") from None
            if not isinstance(message, dict):
                raise BadRequest("the line is not a JSON object")
            request_id = message.get("id")
            if type(request_id) is not int:
                request_id = None
                raise BadRequest("request 'id' must be an integer")
            operation = _text(message.get("op"), "op")
            handler = getattr(self, f"do_{operation}", None)
            if handler is None:
                raise BadRequest(f"unknown op {operation!r}")
            result = handler(message)
        except BadRequest as error:
            return {"id": request_id, "ok": False, "error": {"kind": "ProtocolError", "message": str(error)}}
        except Refused as error:
            return {"id": request_id, "ok": False, "error": {"kind": "StaleBaseError", "message": str(error)}}
        except Unreachable as error:
            return {"id": request_id, "ok": False, "error": {"kind": "UnreachableRollbackError", "message": str(error)}}
        except (ValueError, TypeError) as error:
            return {
                "id": request_id,
                "ok": False,
                "error": {"kind": type(error).__name__, "message": str(error)},
            }
        except Exception as error:  # the tool broke in an undocumented way: its class name is the outcome
            kind = f"{type(error).__module__}.{type(error).__qualname__}"
            return {"id": request_id, "ok": False, "error": {"kind": kind, "message": str(error)}}
        return {"id": request_id, "ok": True, "result": result}

    # -- one method per op ------------------------------------------------------------

    def do_hello(self, message: dict[str, Any]) -> dict[str, Any]:
        protocol = _text(_field(message, "protocol"), "protocol")
        if protocol not in PROTOCOL_VERSIONS:
            raise BadRequest(f"this server speaks {' and '.join(map(repr, PROTOCOL_VERSIONS))}, not {protocol!r}")
        hello = {
            "protocol": protocol,
            "name": self.name,
            "version": self.version,
            "capabilities": list(self.capabilities),
            "limits": self.limits,
        }
        if protocol == PROTOCOL_VERSION:
            hello["history_bound"] = self.history_bound
        return hello

    def do_new(self, message: dict[str, Any]) -> str:
        initial = _bytes(_field(message, "initial"), "initial")
        capacity = _field(message, "capacity")
        if message.get("durable") is True:
            raise BadRequest("this server does not declare 'durability'")
        buffer_id = f"b{next(self._numbers)}"
        if "bounded" in self.capabilities:
            if capacity is not None and (type(capacity) is not int or capacity < 1):
                raise ValueError(f"capacity must be a positive integer or null, got {capacity!r}")
            self.buffers[buffer_id] = self.make_buffer(initial, capacity)
        elif capacity is not None:
            raise BadRequest("this server does not declare 'bounded'")
        else:
            self.buffers[buffer_id] = self.make_buffer(initial)
        return buffer_id

    def do_close(self, message: dict[str, Any]) -> None:
        buffer_id = _text(_field(message, "buffer"), "buffer")
        buffer = self._buffer(buffer_id)
        del self.buffers[buffer_id]
        self.snapshots = {token: kept for token, kept in self.snapshots.items() if kept[0] != buffer_id}
        buffer.close()

    def do_read(self, message: dict[str, Any]) -> str:
        return _encode(self._buffer(_text(_field(message, "buffer"), "buffer")).read())

    def do_splice(self, message: dict[str, Any]) -> None:
        buffer = self._buffer(_text(_field(message, "buffer"), "buffer"))
        offset = _integer(_field(message, "offset"), "offset")
        delete_length = _integer(_field(message, "delete_length"), "delete_length")
        insert = _bytes(_field(message, "insert"), "insert")
        check_splice(len(buffer.read()), offset, delete_length)
        buffer.splice(offset, delete_length, insert)

    def do_rollback(self, message: dict[str, Any]) -> None:
        if "core" not in self.capabilities:
            raise BadRequest("this server does not declare 'core'")
        buffer = self._buffer(_text(_field(message, "buffer"), "buffer"))
        steps = _integer(_field(message, "steps"), "steps")
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        buffer.rollback(steps)

    def do_write(self, message: dict[str, Any]) -> None:
        buffer = self._buffer(_text(_field(message, "buffer"), "buffer"))
        buffer.write(_bytes(_field(message, "content"), "content"))

    def do_snapshot(self, message: dict[str, Any]) -> str:
        buffer_id = _text(_field(message, "buffer"), "buffer")
        token = f"{buffer_id}.s{next(self._numbers)}"
        self.snapshots[token] = (buffer_id, self._buffer(buffer_id).snapshot())
        return token

    def do_apply_diff(self, message: dict[str, Any]) -> str:
        buffer_id = _text(_field(message, "buffer"), "buffer")
        buffer = self._buffer(buffer_id)
        token = _text(_field(message, "snapshot"), "snapshot")
        mode = _text(_field(message, "mode"), "mode")
        hunks = _hunks(_field(message, "hunks"))
        reads = _reads(_field(message, "reads"))
        owner, base = self.snapshots.get(token, (None, b""))
        if owner != buffer_id:
            raise TypeError(f"{token!r} is not a snapshot of buffer {buffer_id!r}")
        check_diff(len(base), mode, hunks, reads)
        buffer.apply_diff(base, mode, hunks, reads)
        handle = f"{buffer_id}.a{next(self._numbers)}"
        self.applied[handle] = buffer_id
        return handle

    def _buffer(self, buffer_id: str) -> ToolBuffer:
        buffer = self.buffers.get(buffer_id)
        if buffer is None:
            raise BadRequest(f"no open buffer {buffer_id!r}")
        return buffer

    # -- the loop ---------------------------------------------------------------------

    def serve(self, requests: IO[bytes], replies: IO[bytes]) -> None:
        while True:
            line = requests.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES:
                reply: dict[str, Any] = {
                    "id": None,
                    "ok": False,
                    "error": {
                        "kind": "ProtocolError",
                        "message": f"a line longer than {MAX_LINE_BYTES} bytes",
                    },
                }
                while line and not line.endswith(b"\n"):  # skip the rest of the overlong line
                    line = requests.readline(MAX_LINE_BYTES)
            else:
                reply = self.answer(line)
            replies.write(json.dumps(reply, separators=(",", ":")).encode("utf-8") + b"\n")
            replies.flush()
        for buffer in self.buffers.values():
            buffer.close()


def serve(
    name: str,
    version: str,
    make_buffer: Callable[..., ToolBuffer],
    *,
    alphabet: bytes | None = None,
    max_buffer_bytes: int | None = None,
    max_insert_bytes: int | None = None,
    capabilities: tuple[str, ...] = ("diffs",),
    history_bound: dict[str, str] | None = None,
) -> int:
    """Serve stdin to stdout until stdin closes. Anything the tool prints goes to
    stderr: stdout belongs to the protocol."""
    limits = {
        "alphabet": None if alphabet is None else _encode(alphabet),
        "max_buffer_bytes": max_buffer_bytes,
        "max_insert_bytes": max_insert_bytes,
    }
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr
    ToolServer(name, version, make_buffer, limits, capabilities, history_bound).serve(sys.stdin.buffer, replies)
    return 0
