"""The wire format of rollcert's subprocess protocol, ``rollcert-protocol/2.1``, ``/2`` and ``/1``.

This module is the one place that defines what travels between rollcert and a
server that hosts the implementation under test in another process (another
language, or dependencies that clash with ours). Both ends of rollcert's own
code (:mod:`rollcert.targets.adapters.subprocess_client` and the reference
:mod:`rollcert.targets.protocol_server`) encode and decode through it, so they
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

Version 2 carries everything the in-process adapter protocol does: diffs
(``snapshot``, ``apply_diff``, ``rollback_diff``), durability (``compact``,
``flush``, ``corrupt_committed_record``, ``repair_corruption``, ``reopen`` after
a real crash of the server process) and limits declared at the handshake. A
client offers version 2 first and says hello again in version 1 when the
server refuses; each version has its own table of operations
(:data:`OPERATIONS_BY_VERSION`) and of capabilities
(:data:`CAPABILITIES_BY_VERSION`), so a version 1 exchange is decoded exactly
as before.

Version 2.1 adds what outside authors of tool servers kept needing a Python
wrapper for: a hello may declare the one policy of a real bounded history
(``history_bound``, as ``Target.history_bound``), and a server that declares
``diffs`` without ``core`` (a diff applier: no undo log) is sent ``write`` (the
whole new text) for every plain edit instead of ``splice``, which belongs to
``core``. A version 2 server is unchanged: it refuses the 2.1 hello and is
driven as before.

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

from rollcert.model.reference import POLICIES
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.adapter import visible

#: Version 1: the rollback capabilities only (kept, so version 1 servers keep working).
PROTOCOL_VERSION: Final = "rollcert-protocol/1"
#: Version 2: version 1 plus diffs, durability (real crashes) and limits.
PROTOCOL_VERSION_2: Final = "rollcert-protocol/2"
#: Version 2.1: version 2 plus a declared history bound and the diffs-only set
#: (``write`` instead of ``splice`` for a server without ``core``).
PROTOCOL_VERSION_2_1: Final = "rollcert-protocol/2.1"
#: Every version this module decodes, newest first: the order a client offers them in.
PROTOCOL_VERSIONS: Final = (PROTOCOL_VERSION_2_1, PROTOCOL_VERSION_2, PROTOCOL_VERSION)
#: The longest ``name`` or ``version`` a server may give at the handshake.
HELLO_TEXT_LIMIT: Final = 200

#: The capabilities version 1 can carry. ``diffs`` and ``durability`` need
#: opaque diff handles and a crash the wire of version 1 does not define.
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

#: The capabilities version 2 can carry: version 1's, diffs and durability. ``concurrent``
#: (R7) is not carried: one request at a time cannot race two calls.
WIRE_CAPABILITIES_V2: Final = WIRE_CAPABILITIES | frozenset({Capability.DIFFS, Capability.DURABILITY})

#: What each version can carry.
CAPABILITIES_BY_VERSION: Final[Mapping[str, frozenset[Capability]]] = {
    PROTOCOL_VERSION: WIRE_CAPABILITIES,
    PROTOCOL_VERSION_2: WIRE_CAPABILITIES_V2,
    PROTOCOL_VERSION_2_1: WIRE_CAPABILITIES_V2,
}

#: The durability modes a version 2 ``new`` may ask for (``BufferConfig.durability``).
DURABILITY_MODES: Final = ("per_operation", "batched")

#: The environment variable that names a durable server's state directory: the
#: client sets it, to the same directory on every start of the same server.
STATE_DIR_VARIABLE: Final = "ROLLCERT_STATE_DIR"

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
#: deep (reply -> hello result -> capability list; request -> hunk list -> hunk
#: in version 2); a parser that recursed into
#: 100,000 nested arrays would exhaust the stack instead of saying what is wrong.
MAX_NESTING_DEPTH: Final = 32


class ProtocolError(ValueError):
    """A line broke ``rollcert-protocol``; the message says what and where."""


# -- the operations --------------------------------------------------------------


@dataclass(frozen=True)
class OperationSpec:
    """One operation: its request fields (name -> wire type) and its result type.

    Wire types: ``"int"`` (a JSON integer, never a boolean), ``"bytes"``
    (base64 text), ``"string"``, ``"int-or-null"``, ``"string-list"``,
    ``"null"`` for a result that carries nothing, and in version 2 ``"bool"``,
    ``"durability"`` (one of :data:`DURABILITY_MODES`), ``"hunks"`` (a list of
    ``[start, end, base64]``) and ``"regions"`` (a list of ``[start, end]``).
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

#: Every operation of version 2: version 1's (``new`` with two more fields) and
#: the diff and durability operations. Coordinates of ``apply_diff`` are byte
#: offsets in the snapshot, as ``SystemUnderTest.apply_diff`` takes them.
OPERATIONS_V2: Final[Mapping[str, OperationSpec]] = {
    **OPERATIONS,
    "new": OperationSpec(
        {
            "initial": "bytes",
            "capacity": "int-or-null",
            "policy": "string",
            "durable": "bool",
            "durability": "durability",
        },
        "string",
    ),
    "snapshot": OperationSpec(_BUFFER, "string", Capability.DIFFS),
    "apply_diff": OperationSpec(
        {"buffer": "string", "snapshot": "string", "mode": "string", "hunks": "hunks", "reads": "regions"},
        "string",
        Capability.DIFFS,
    ),
    "rollback_diff": OperationSpec({"buffer": "string", "applied": "string"}, "null", Capability.DIFFS),
    "compact": OperationSpec({"buffer": "string", "keep": "int"}, "null", Capability.DURABILITY),
    "flush": OperationSpec(_BUFFER, "null", Capability.DURABILITY),
    "corrupt_committed_record": OperationSpec({"buffer": "string", "damage": "string"}, "bool", Capability.DURABILITY),
    "repair_corruption": OperationSpec(_BUFFER, "null", Capability.DURABILITY),
    "reopen": OperationSpec(_BUFFER, "null", Capability.DURABILITY),
}

#: Every operation of version 2.1: version 2's and ``write``, the plain edit of a
#: diffs-only server (the whole new text: a file tool writes it as the file). It
#: is sent only to a server that declares ``diffs`` without ``core``, and then
#: always instead of ``splice``: such a server need not implement ``splice``.
OPERATIONS_V2_1: Final[Mapping[str, OperationSpec]] = {
    **OPERATIONS_V2,
    "write": OperationSpec({"buffer": "string", "content": "bytes"}, "null", Capability.DIFFS),
}

#: The operations of each version.
OPERATIONS_BY_VERSION: Final[Mapping[str, Mapping[str, OperationSpec]]] = {
    PROTOCOL_VERSION: OPERATIONS,
    PROTOCOL_VERSION_2: OPERATIONS_V2,
    PROTOCOL_VERSION_2_1: OPERATIONS_V2_1,
}


def plain_write_op(protocol: str, capabilities: frozenset[Capability]) -> str:
    """The op that carries a plain edit (an agent's own write, another writer's)
    to a server: ``write`` for a version 2.1 server without ``core``, else ``splice``."""
    if protocol == PROTOCOL_VERSION_2_1 and Capability.CORE not in capabilities:
        return "write"
    return "splice"


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


def encode_value(value: object, wire_type: str) -> object:
    """A Python value as the wire carries it: bytes (alone or in hunks) as base64,
    tuples as lists; everything else as it is (a wrong type is sent as it is, for
    the server to refuse, as a typed API would be called wrongly)."""
    if wire_type == "bytes" and isinstance(value, (bytes, bytearray)):
        return encode_bytes(bytes(value))
    if wire_type == "hunks" and isinstance(value, (list, tuple)):
        return [
            [hunk[0], hunk[1], encode_bytes(bytes(hunk[2]))]
            if isinstance(hunk, (list, tuple)) and len(hunk) == 3 and isinstance(hunk[2], (bytes, bytearray))
            else hunk
            for hunk in value
        ]
    if wire_type == "regions" and isinstance(value, (list, tuple)):
        return [list(region) if isinstance(region, tuple) else region for region in value]
    return value


def check_value(value: object, wire_type: str, where: str) -> object:
    """``value`` as the Python value of ``wire_type`` (bytes decoded), or ProtocolError."""
    if wire_type == "bytes":
        return decode_bytes(value, where)
    if wire_type == "bool" and isinstance(value, bool):
        return value
    if wire_type == "durability" and value in DURABILITY_MODES:
        return value
    if wire_type == "hunks" and isinstance(value, list):
        return [_check_hunk(hunk, f"{where} hunk {index}") for index, hunk in enumerate(value)]
    if wire_type == "regions" and isinstance(value, list):
        return [_check_region(region, f"{where} region {index}") for index, region in enumerate(value)]
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


def _check_hunk(hunk: object, where: str) -> tuple[int, int, bytes]:
    if not (isinstance(hunk, list) and len(hunk) == 3 and type(hunk[0]) is int and type(hunk[1]) is int):
        raise ProtocolError(f"{where} must be [start, end, base64 replacement], got {_describe(hunk)}")
    return hunk[0], hunk[1], decode_bytes(hunk[2], f"{where} replacement")


def _check_region(region: object, where: str) -> tuple[int, int]:
    if not (isinstance(region, list) and len(region) == 2 and all(type(end) is int for end in region)):
        raise ProtocolError(f"{where} must be [start, end] (two integers), got {_describe(region)}")
    return region[0], region[1]


_TYPE_NAMES = {
    "bool": "true or false",
    "durability": f"one of {', '.join(DURABILITY_MODES)}",
    "hunks": "a list of [start, end, base64] hunks",
    "regions": "a list of [start, end] regions",
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
    """A decoded request: its id, its op, its fields as Python values, and the
    protocol version it belongs to (which table of operations it is read by)."""

    id: int
    op: str
    arguments: Mapping[str, object]
    protocol: str = PROTOCOL_VERSION

    def encode(self) -> bytes:
        spec = OPERATIONS_BY_VERSION[self.protocol][self.op]
        message: dict[str, object] = {"id": self.id, "op": self.op}
        for name, wire_type in spec.fields.items():
            message[name] = encode_value(self.arguments[name], wire_type)
        return encode_line(message)


def decode_request(message: Mapping[str, object], protocol: str = PROTOCOL_VERSION) -> Request:
    """Validate a request object (as the server reads it) by the operations of ``protocol``."""
    operations = OPERATIONS_BY_VERSION[protocol]
    request_id = message.get("id")
    if type(request_id) is not int:
        raise ProtocolError(f"request 'id' must be an integer, got {_describe(request_id)}")
    op = message.get("op")
    if not isinstance(op, str) or op not in operations:
        raise ProtocolError(
            f"request {request_id}: unknown op {op!r} in {protocol}; known ops: {', '.join(operations)}"
        )
    spec = operations[op]
    arguments: dict[str, object] = {}
    for name, wire_type in spec.fields.items():
        if name not in message:
            raise ProtocolError(f"request {request_id} ({op}): missing field {name!r}")
        arguments[name] = check_value(message[name], wire_type, f"request {request_id} ({op}) field {name!r}")
    return Request(request_id, op, arguments, protocol)


# -- replies --------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorReply:
    """The server's refusal: an error kind (a name from ``rollcert.model.errors.ERROR_KINDS``
    when the implementation refused as the rules allow) and a message."""

    kind: str
    message: str


@dataclass(frozen=True)
class Limits:
    """What a version 2 server declares it can take (``hello`` result ``limits``).

    ``alphabet``: the bytes it is honest on (the generated buffers and inserts
    are made of them: ``Target.alphabet``); ``max_buffer_bytes`` and
    ``max_insert_bytes``: the largest buffer and insert it takes (it may refuse
    bigger ones with ``ValueError``). ``None`` for no limit.
    """

    alphabet: bytes | None = None
    max_buffer_bytes: int | None = None
    max_insert_bytes: int | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "alphabet": None if self.alphabet is None else encode_bytes(self.alphabet),
            "max_buffer_bytes": self.max_buffer_bytes,
            "max_insert_bytes": self.max_insert_bytes,
        }


@dataclass(frozen=True)
class Hello:
    """The handshake: which protocol, which implementation, which capabilities
    (in version 2, which limits; in version 2.1, which history bound)."""

    protocol: str
    name: str
    version: str
    capabilities: frozenset[Capability]
    limits: Limits = Limits()
    #: Version 2.1: the one policy of the server's bounded history (with ``bounded``).
    history_bound: HistoryBound | None = None


def hello_result(hello: Hello) -> dict[str, object]:
    """A hello as its reply's ``result`` (version 1 has no ``limits``, before 2.1 no ``history_bound``)."""
    result: dict[str, object] = {
        "protocol": hello.protocol,
        "name": hello.name,
        "version": hello.version,
        "capabilities": sorted(c.value for c in hello.capabilities),
    }
    if hello.protocol != PROTOCOL_VERSION:
        result["limits"] = hello.limits.to_wire()
    if hello.protocol == PROTOCOL_VERSION_2_1:
        bound = hello.history_bound
        result["history_bound"] = (
            None if bound is None else {"policy": bound.policy, "description": bound.description}
        )
    return result


def success_line(request_id: int | None, result: object) -> bytes:
    if isinstance(result, bytes):
        result = encode_bytes(result)
    elif isinstance(result, Hello):
        result = hello_result(result)
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
        wire_type = OPERATIONS_BY_VERSION[request.protocol][request.op].result
        if wire_type == "hello":
            return _decode_hello(message["result"], where, str(request.arguments.get("protocol")))
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


def _decode_hello(result: object, where: str, asked: str = PROTOCOL_VERSION) -> Hello:
    """The hello result of a server asked for protocol ``asked``: it must answer in
    exactly that version, with capabilities that version carries."""
    if not isinstance(result, dict):
        raise ProtocolError(f"{where}: the hello result must be an object, got {_describe(result)}")
    protocol = check_value(result.get("protocol"), "string", f"{where}: 'protocol'")
    if asked == PROTOCOL_VERSION_2_1 and protocol == PROTOCOL_VERSION_2:
        # A version 2 server that answers every hello in version 2 (it never looked
        # at the version asked) is a version 2 server: 2.1 only adds to 2.
        asked = PROTOCOL_VERSION_2
    if protocol != asked:
        raise ProtocolError(
            f"the server speaks {protocol!r}, this client speaks {asked!r}; upgrade whichever side is older"
        )
    carried = CAPABILITIES_BY_VERSION[asked]
    name = check_value(result.get("name"), "string", f"{where}: 'name'")
    version = check_value(result.get("version"), "string", f"{where}: 'version'")
    names = check_value(result.get("capabilities"), "string-list", f"{where}: 'capabilities'")
    assert isinstance(name, str) and isinstance(version, str) and isinstance(names, list)
    if not name:
        raise ProtocolError(f"{where}: 'name' is empty")
    for field_name, text in (("name", name), ("version", version)):
        # Both reach the user's terminal and every certificate: no escape sequences,
        # no line breaks, no bidirectional overrides, no floods.
        if len(text) > HELLO_TEXT_LIMIT or not text.isprintable():
            raise ProtocolError(
                f"{where}: {field_name!r} must be printable text of at most {HELLO_TEXT_LIMIT} characters, "
                f"got {len(text)} characters starting '{visible(text[:40])}'"
            )
    capabilities: set[Capability] = set()
    for capability_name in names:
        try:
            capability = Capability(capability_name)
        except ValueError:
            raise ProtocolError(
                f"the server declares capability {capability_name!r}, which does not exist; "
                f"known: {', '.join(sorted(c.value for c in carried))}"
            ) from None
        if capability not in carried:
            raise ProtocolError(f"the server declares capability {capability_name!r}, which {asked} cannot carry")
        capabilities.add(capability)
    if asked == PROTOCOL_VERSION:
        if Capability.CORE not in capabilities:
            raise ProtocolError("the server does not declare capability 'core' (read, splice, rollback)")
        return Hello(asked, name, version, frozenset(capabilities))
    if not capabilities & {Capability.CORE, Capability.DIFFS}:
        raise ProtocolError(
            "the server declares neither 'core' (read, splice, rollback) nor 'diffs' (snapshot, apply_diff)"
        )
    limits = _decode_limits(result.get("limits"), where)
    bound = _decode_history_bound(result.get("history_bound"), where) if asked == PROTOCOL_VERSION_2_1 else None
    if bound is not None and Capability.BOUNDED not in capabilities:
        raise ProtocolError(f"{where}: 'history_bound' needs capability 'bounded' (the server does not declare it)")
    return Hello(asked, name, version, frozenset(capabilities), limits, bound)


def _decode_history_bound(bound: object, where: str) -> HistoryBound | None:
    """Version 2.1's ``history_bound``: absent or null (both policies honoured, as
    ``bounded`` promises), or ``{"policy": ..., "description": ...}``."""
    if bound is None:
        return None
    if not isinstance(bound, dict):
        raise ProtocolError(f"{where}: 'history_bound' must be null or an object, got {_describe(bound)}")
    unknown = sorted(set(bound) - {"policy", "description"})
    if unknown:
        raise ProtocolError(f"{where}: 'history_bound' has unknown field {unknown[0]!r} (policy, description)")
    policy = bound.get("policy")
    if policy not in POLICIES:
        raise ProtocolError(
            f"{where}: history_bound 'policy' must be one of {', '.join(POLICIES)}, got {_describe(policy)}"
        )
    description = check_value(bound.get("description", ""), "string", f"{where}: history_bound 'description'")
    assert isinstance(description, str)
    if len(description) > HELLO_TEXT_LIMIT or not description.isprintable():
        raise ProtocolError(
            f"{where}: history_bound 'description' must be printable text of at most {HELLO_TEXT_LIMIT} "
            f"characters, got {len(description)} characters starting '{visible(description[:40])}'"
        )
    return HistoryBound(next(known for known in POLICIES if known == policy), description)


def _decode_limits(limits: object, where: str) -> Limits:
    if not isinstance(limits, dict):
        raise ProtocolError(f"{where}: 'limits' must be an object, got {_describe(limits)}")
    alphabet: bytes | None = None
    if limits.get("alphabet") is not None:
        alphabet = decode_bytes(limits["alphabet"], f"{where}: limits 'alphabet'")
        if not alphabet:
            raise ProtocolError(f"{where}: limits 'alphabet' is empty (null means: any byte)")
    sizes: list[int | None] = []
    for field_name in ("max_buffer_bytes", "max_insert_bytes"):
        if field_name not in limits:
            raise ProtocolError(f"{where}: limits has no {field_name!r} (null means: no limit)")
        value = check_value(limits[field_name], "int-or-null", f"{where}: limits {field_name!r}")
        assert value is None or isinstance(value, int)
        if value is not None and value < 1:
            raise ProtocolError(f"{where}: limits {field_name!r} must be at least 1 or null, got {value}")
        sizes.append(value)
    if "alphabet" not in limits:
        raise ProtocolError(f"{where}: limits has no 'alphabet' (null means: any byte)")
    return Limits(alphabet, sizes[0], sizes[1])
