"""The wire format of rollcert's subprocess protocol, ``rollcert-protocol/1``.

This module is the one place that defines what travels between rollcert and a
server that hosts the implementation under test in another process (another
language, or dependencies that clash with ours). Both ends of rollcert's own
code (:mod:`rollcert.stateful_tests.adapters.subprocess_client` and the reference
:mod:`rollcert.stateful_tests.protocol_server`) encode and decode through it, so they
cannot drift apart; ``docs/protocol.md`` describes the same thing for authors
of servers in other languages.

The shape, in one breath: one JSON object per line (UTF-8, ``\\n``-terminated).
The client sends ``{"id": N, "op": "...", ...}``; the server answers each
request, in order, with ``{"id": N, "ok": true, "result": ...}`` or
``{"id": N, "ok": false, "error": {"kind": "...", "message": "..."}}``. Bytes
are always base64 text. The first request is ``hello``. One server hosts many
buffers: ``new`` returns a buffer id, every buffer operation names it, and
``close`` frees it — a certification run makes thousands of buffers and must
not spawn a process for each.

Everything read from the wire is validated here; a malformed line raises
:class:`ProtocolError` with a message that says exactly what was wrong.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from rollcert.stateful_tests.adapter import Capability

PROTOCOL_VERSION: Final = "rollcert-protocol/1"

#: The capabilities this version of the protocol can carry. ``diffs`` and
#: ``durability`` need callbacks and opaque diff handles the wire does not yet
#: define; a server must not declare them.
WIRE_CAPABILITIES: Final = frozenset(
    {
        Capability.CORE,
        Capability.DEPTH,
        Capability.REVISIONS,
        Capability.CHECKPOINTS,
        Capability.JOURNAL_FAULTS,
        Capability.OUT_OF_LOG_WRITES,
        Capability.ADOPT,
        Capability.BOUNDED,
    }
)

#: The error kind a server answers when the *request* was malformed (unknown op,
#: missing field, unknown buffer id). It is not a verdict on the implementation:
#: the client reports it as a broken harness, never as the SUT's answer.
PROTOCOL_ERROR_KIND: Final = "ProtocolError"

#: Longest line either side accepts by default: far above any buffer the suite
#: generates, low enough that a runaway server cannot exhaust the client's memory.
#: The client's limit can be changed (``$ROLLCERT_PROTOCOL_MAX_LINE_BYTES``).
MAX_LINE_BYTES: Final = 16 * 1024 * 1024

#: Most digits an integer on the wire may have. Every integer of the protocol is
#: an id, an offset, a length, a depth or a revision: 100 digits is far beyond
#: any of them, and parsing a number costs time quadratic in its digits (Python
#: refuses more than 4300 with a ValueError that must not pass for an answer).
MAX_INTEGER_DIGITS: Final = 100

#: Deepest nesting of arrays and objects in a line. A message is at most three
#: deep (reply -> hello result -> capability list); a parser that recursed into
#: 100,000 nested arrays would exhaust the stack instead of saying what is wrong.
MAX_NESTING_DEPTH: Final = 32


class ProtocolError(ValueError):
    """A line broke ``rollcert-protocol/1``; the message says what and where."""


# -- the operations --------------------------------------------------------------


@dataclass(frozen=True)
class OperationSpec:
    """One operation: its request fields (name -> wire type) and its result type.

    Wire types: ``"int"`` (a JSON integer, never a boolean), ``"bytes"``
    (base64 text), ``"string"``, ``"int-or-null"``, ``"string-list"``, and
    ``"null"`` for a result that carries nothing.
    """

    fields: Mapping[str, str]
    result: str
    capability: Capability | None = None


_BUFFER = {"buffer": "string"}
_EDIT = {"buffer": "string", "offset": "int", "delete_length": "int", "insert": "bytes"}

#: Every operation of the protocol. ``hello``'s result is a :class:`Hello`.
OPERATIONS: Final[Mapping[str, OperationSpec]] = {
    "hello": OperationSpec({"protocol": "string"}, "hello"),
    "new": OperationSpec({"initial": "bytes", "capacity": "int-or-null", "policy": "string"}, "string"),
    "close": OperationSpec(_BUFFER, "null"),
    "read": OperationSpec(_BUFFER, "bytes", Capability.CORE),
    "splice": OperationSpec(_EDIT, "null", Capability.CORE),
    "rollback": OperationSpec({"buffer": "string", "steps": "int"}, "null", Capability.CORE),
    "depth": OperationSpec(_BUFFER, "int", Capability.DEPTH),
    "revision": OperationSpec(_BUFFER, "int", Capability.REVISIONS),
    "checkpoint": OperationSpec(_BUFFER, "string", Capability.CHECKPOINTS),
    "rollback_to": OperationSpec({"buffer": "string", "token": "string"}, "null", Capability.CHECKPOINTS),
    "arm_journal_fault": OperationSpec(_BUFFER, "null", Capability.JOURNAL_FAULTS),
    "write_out_of_log": OperationSpec(_EDIT, "null", Capability.OUT_OF_LOG_WRITES),
    "adopt_current": OperationSpec(_BUFFER, "null", Capability.ADOPT),
}


# -- values -------------------------------------------------------------------------


def encode_bytes(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def decode_bytes(text: object, where: str) -> bytes:
    if not isinstance(text, str):
        raise ProtocolError(f"{where} must be base64 text, got {_describe(text)}")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ProtocolError(f"{where} is not valid base64: {_clip(text)!r}") from None


def check_value(value: object, wire_type: str, where: str) -> object:
    """``value`` as the Python value of ``wire_type`` (bytes decoded), or ProtocolError."""
    if wire_type == "bytes":
        return decode_bytes(value, where)
    if wire_type == "int" and type(value) is int:
        return value
    if wire_type == "int-or-null" and (value is None or type(value) is int):
        return value
    if wire_type == "string" and isinstance(value, str):
        return value
    if wire_type == "null" and value is None:
        return None
    if wire_type == "string-list" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ProtocolError(f"{where} must be {_TYPE_NAMES[wire_type]}, got {_describe(value)}")


_TYPE_NAMES = {
    "int": "an integer",
    "int-or-null": "an integer or null",
    "string": "a string",
    "null": "null",
    "string-list": "a list of strings",
    "bytes": "base64 text",
}


def _describe(value: object) -> str:
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "object"}
    return "null" if value is None else f"{kind.get(type(value), type(value).__name__)} {_clip(json.dumps(value))}"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# -- lines ----------------------------------------------------------------------------


def encode_line(message: Mapping[str, object]) -> bytes:
    """One message as one line: compact JSON, UTF-8, ``\\n``-terminated."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def decode_line(line: bytes, max_line_bytes: int = MAX_LINE_BYTES) -> dict[str, object]:
    """Parse one line into a JSON object, or explain why it is not one.

    Whatever a hostile peer sends, the only exception is :class:`ProtocolError`:
    an overlong line, too many digits in a number or too deep a nesting is
    refused before (or instead of) the parser spending memory or stack on it.
    """
    if len(line) > max_line_bytes:
        raise ProtocolError(f"a line of {len(line)} bytes is longer than the {max_line_bytes}-byte limit")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProtocolError(f"the line is not UTF-8 ({error.reason} at byte {error.start}): {line[:80]!r}") from None
    _check_nesting(text)
    try:
        message = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except json.JSONDecodeError as error:
        raise ProtocolError(f"the line is not JSON ({error.msg}): {_clip(text.rstrip())!r}") from None
    except (ValueError, RecursionError, MemoryError) as error:  # any other way the parser can give up
        raise ProtocolError(f"the line cannot be parsed ({type(error).__name__}: {_clip(str(error))})") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"the line is JSON but not an object: {_clip(text.rstrip())!r}")
    return message


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ProtocolError(
            f"the line holds an integer of {len(digits.lstrip('-'))} digits; "
            f"the protocol allows at most {MAX_INTEGER_DIGITS}: {_clip(digits, 40)}"
        )
    return int(digits)


def _no_constant(name: str) -> object:
    raise ProtocolError(f"the line holds {name}, which is not JSON (RFC 8259) and no value of the protocol")


_STRINGS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS: Final = re.compile(r"[\[\]{}]")


def _check_nesting(text: str) -> None:
    """Refuse a line nested deeper than :data:`MAX_NESTING_DEPTH` before parsing it.

    Counting every bracket is a cheap upper bound on the depth, so a line of the
    protocol (a handful of brackets) costs two ``str.count`` calls; only a line
    with many brackets is scanned properly, outside its strings, stopping at the
    first bracket too deep.
    """
    if text.count("[") + text.count("{") <= MAX_NESTING_DEPTH:
        return
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_NESTING_DEPTH:
            raise ProtocolError(
                f"the line nests arrays or objects deeper than {MAX_NESTING_DEPTH} levels "
                f"(at character {match.start()}): {_clip(text)!r}"
            )


# -- requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """A decoded request: its id, its op, and its fields as Python values."""

    id: int
    op: str
    arguments: Mapping[str, object]

    def encode(self) -> bytes:
        spec = OPERATIONS[self.op]
        message: dict[str, object] = {"id": self.id, "op": self.op}
        for name, wire_type in spec.fields.items():
            value = self.arguments[name]
            message[name] = encode_bytes(value) if wire_type == "bytes" and isinstance(value, bytes) else value
        return encode_line(message)


def decode_request(message: Mapping[str, object]) -> Request:
    """Validate a request object (as the server reads it)."""
    request_id = message.get("id")
    if type(request_id) is not int:
        raise ProtocolError(f"request 'id' must be an integer, got {_describe(request_id)}")
    op = message.get("op")
    if not isinstance(op, str) or op not in OPERATIONS:
        raise ProtocolError(f"request {request_id}: unknown op {op!r}; known ops: {', '.join(OPERATIONS)}")
    spec = OPERATIONS[op]
    arguments: dict[str, object] = {}
    for name, wire_type in spec.fields.items():
        if name not in message:
            raise ProtocolError(f"request {request_id} ({op}): missing field {name!r}")
        arguments[name] = check_value(message[name], wire_type, f"request {request_id} ({op}) field {name!r}")
    return Request(request_id, op, arguments)


# -- replies --------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorReply:
    """The server's refusal: an error kind (a name from ``rollcert.model.errors.ERROR_KINDS``
    when the implementation refused as the rules allow) and a message."""

    kind: str
    message: str


@dataclass(frozen=True)
class Hello:
    """The handshake: which protocol, which implementation, which capabilities."""

    protocol: str
    name: str
    version: str
    capabilities: frozenset[Capability]


def success_line(request_id: int | None, result: object) -> bytes:
    if isinstance(result, bytes):
        result = encode_bytes(result)
    elif isinstance(result, Hello):
        result = {
            "protocol": result.protocol,
            "name": result.name,
            "version": result.version,
            "capabilities": sorted(c.value for c in result.capabilities),
        }
    return encode_line({"id": request_id, "ok": True, "result": result})


def error_line(request_id: int | None, kind: str, message: str) -> bytes:
    return encode_line({"id": request_id, "ok": False, "error": {"kind": kind, "message": message}})


def decode_reply(message: Mapping[str, object], request: Request) -> object:
    """The result of the reply to ``request`` (decoded to its Python type), an
    :class:`ErrorReply`, or ProtocolError if the reply is not a well-formed
    answer to exactly this request."""
    where = f"reply to request {request.id} ({request.op})"
    reply_id = message.get("id")
    if type(reply_id) is not int or reply_id != request.id:
        # Requests go one at a time with increasing ids, so a lower id is a late
        # or repeated reply and a higher one answers a request never sent.
        if type(reply_id) is int and reply_id < request.id:
            why = " (a duplicate or late reply to an earlier request: replies out of order)"
        elif type(reply_id) is int:
            why = " (a reply to a request not sent yet)"
        else:
            why = ""
        raise ProtocolError(f"{where} carries id {_describe(reply_id)}; expected {request.id}{why}")
    ok = message.get("ok")
    if ok is True:
        if "result" not in message:
            raise ProtocolError(f"{where}: 'ok' is true but there is no 'result'")
        wire_type = OPERATIONS[request.op].result
        if wire_type == "hello":
            return _decode_hello(message["result"], where)
        return check_value(message["result"], wire_type, f"{where}: result")
    if ok is False:
        error = message.get("error")
        if not isinstance(error, dict):
            raise ProtocolError(f"{where}: 'ok' is false but 'error' is {_describe(error)}, not an object")
        kind, text = error.get("kind"), error.get("message", "")
        if not isinstance(kind, str) or not kind:
            raise ProtocolError(f"{where}: error 'kind' must be a non-empty string, got {_describe(kind)}")
        if not isinstance(text, str):
            raise ProtocolError(f"{where}: error 'message' must be a string, got {_describe(text)}")
        return ErrorReply(kind, text)
    raise ProtocolError(f"{where}: 'ok' must be true or false, got {_describe(ok)}")


def _decode_hello(result: object, where: str) -> Hello:
    if not isinstance(result, dict):
        raise ProtocolError(f"{where}: the hello result must be an object, got {_describe(result)}")
    protocol = check_value(result.get("protocol"), "string", f"{where}: 'protocol'")
    if protocol != PROTOCOL_VERSION:
        raise ProtocolError(
            f"the server speaks {protocol!r}, this client speaks {PROTOCOL_VERSION!r}; "
            "upgrade whichever side is older"
        )
    name = check_value(result.get("name"), "string", f"{where}: 'name'")
    version = check_value(result.get("version"), "string", f"{where}: 'version'")
    names = check_value(result.get("capabilities"), "string-list", f"{where}: 'capabilities'")
    assert isinstance(name, str) and isinstance(version, str) and isinstance(names, list)
    if not name:
        raise ProtocolError(f"{where}: 'name' is empty")
    capabilities: set[Capability] = set()
    for capability_name in names:
        try:
            capability = Capability(capability_name)
        except ValueError:
            raise ProtocolError(
                f"the server declares capability {capability_name!r}, which does not exist; "
                f"known: {', '.join(sorted(c.value for c in WIRE_CAPABILITIES))}"
            ) from None
        if capability not in WIRE_CAPABILITIES:
            raise ProtocolError(
                f"the server declares capability {capability_name!r}, which {PROTOCOL_VERSION} cannot carry"
            )
        capabilities.add(capability)
    if Capability.CORE not in capabilities:
        raise ProtocolError("the server does not declare capability 'core' (read, splice, rollback)")
    return Hello(PROTOCOL_VERSION, name, version, frozenset(capabilities))
