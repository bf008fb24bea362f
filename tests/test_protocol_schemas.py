"""The JSON Schemas of ``rollcert-protocol`` (``targets/protocol_schemas``).

- the shipped files are what the operation tables build (no drift), and each
  is a valid draft 2020-12 schema;
- every line rollcert's client encodes and every line the reference server
  answers, in real sessions of both versions (smoke runs every capability,
  durability and its real restart included), validates;
- hand-written bad messages fail;
- the schemas and the Python validator (``protocol.decode_request`` /
  ``decode_reply``) agree on a set of good and bad messages.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from rollcert.command.cli import main
from rollcert.model.errors import RecoveryError
from rollcert.targets import protocol_schemas
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.subprocess_client import ServerConnection
from rollcert.targets.adapters.subprocess_client import SubprocessServer
from rollcert.targets.protocol import OPERATIONS_BY_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION_2
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol import Request
from rollcert.targets.protocol import decode_reply
from rollcert.targets.protocol import decode_request
from rollcert.targets.protocol_schemas import build_schemas
from rollcert.targets.protocol_schemas import load_schema
from rollcert.targets.protocol_schemas import render

FAKES = Path(__file__).parent / "fake_servers"
REFERENCE = f"subprocess:{sys.executable} -m rollcert.targets.protocol_server"
V1_ONLY = f"subprocess:{sys.executable} {FAKES / 'v1_only.py'}"


def validator(protocol: str, op: str, kind: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(protocol, op, kind))


@pytest.mark.slow
def test_the_shipped_schemas_are_what_the_operation_tables_build() -> None:
    folder = Path(protocol_schemas.__file__).parent
    built = build_schemas()
    shipped = {path.name for path in folder.glob("*.json")}
    assert shipped == set(built), "rewrite them: python -m rollcert.targets.protocol_schemas"
    for name, schema in built.items():
        assert (folder / name).read_text(encoding="utf-8") == render(schema), name
        Draft202012Validator.check_schema(schema)
    expected = {
        protocol_schemas.schema_name(protocol, op, kind)
        for protocol, operations in OPERATIONS_BY_VERSION.items()
        for op in operations
        for kind in protocol_schemas.KINDS
    }
    assert expected == set(built) and len(built) == 2 * (13 + 21 + 22)  # v1, v2, v2.1 (v2 and write)


# -- real sessions ---------------------------------------------------------------------------


def record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bytes, bytes]]:
    """From now on, every request line a client sends and the reply line it
    reads, as (protocol, request, reply)."""
    exchanges: list[tuple[str, bytes, bytes]] = []
    sent: dict[int, tuple[str, bytes]] = {}
    original_send, original_receive = ServerConnection._send, ServerConnection._receive_line

    def send(self: ServerConnection, data: bytes, what: str, deadline: float) -> None:
        message = json.loads(data)
        protocol = message["protocol"] if message["op"] == "hello" else self.protocol
        sent[id(self)] = (protocol, data)
        original_send(self, data, what, deadline)

    def receive(self: ServerConnection, what: str, deadline: float) -> bytes:
        line = original_receive(self, what, deadline)
        protocol, request = sent.pop(id(self))
        exchanges.append((protocol, request, line))
        return line

    monkeypatch.setattr(ServerConnection, "_send", send)
    monkeypatch.setattr(ServerConnection, "_receive_line", receive)
    return exchanges


def recorded_session(monkeypatch: pytest.MonkeyPatch, target: str) -> list[tuple[str, bytes, bytes]]:
    """``rollcert smoke TARGET``, recorded (``--in-process``: the recorder is patched into this process)."""
    exchanges = record(monkeypatch)
    assert main(["smoke", target, "--in-process"]) == 0
    return exchanges


@pytest.mark.slow
@pytest.mark.parametrize("target", [REFERENCE, V1_ONLY])
def test_every_line_of_a_real_session_validates(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    exchanges = recorded_session(monkeypatch, target)
    capsys.readouterr()
    ops: set[tuple[str, str]] = set()
    for protocol, request_line, reply_line in exchanges:
        request, reply = json.loads(request_line), json.loads(reply_line)
        op = request["op"]
        ops.add((protocol, op))
        assert not list(validator(protocol, op, "request").iter_errors(request)), request
        if op == "hello" and not reply["ok"]:  # the v1 server refusing the v2 hello: an error reply
            protocol = PROTOCOL_VERSION
        errors = [error.message for error in validator(protocol, op, "reply").iter_errors(reply)]
        assert not errors, (reply, errors)
    if target == REFERENCE:
        used = {op for protocol, op in ops if protocol == PROTOCOL_VERSION_2_1}
        assert {"new", "splice", "snapshot", "apply_diff", "rollback_diff", "reopen", "checkpoint"} <= used
    else:  # the fallback: a refused v2 hello, then everything in v1
        assert (PROTOCOL_VERSION_2, "hello") in ops and (PROTOCOL_VERSION, "splice") in ops
        assert {protocol for protocol, op in ops if op != "hello"} == {PROTOCOL_VERSION}


@pytest.mark.slow
def test_the_durability_operations_validate_in_a_real_exchange(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ops smoke does not send (flush, compact, corruption, repair), sent by
    the client to the reference server on its state directory."""
    server = SubprocessServer([sys.executable, "-m", "rollcert.targets.protocol_server"], 10.0)
    exchanges = record(monkeypatch)
    try:
        buffer = server.new_buffer(BufferConfig(b"abc", durable=True, durability="batched"))
        for insert in (b"1", b"2", b"3"):
            buffer.splice(0, 0, insert)
        buffer.flush()
        buffer.compact(1)
        buffer.splice(0, 0, b"4")
        assert buffer.corrupt_committed_record("bit_flip") is True
        with pytest.raises(RecoveryError, match="corrupt"):
            buffer.restart()
        buffer.repair_corruption()
        assert buffer.read() == b"4321abc"
        buffer.close()
    finally:
        server.close()
    seen = set()
    for protocol, request_line, reply_line in exchanges:
        request = json.loads(request_line)
        seen.add(request["op"])
        assert not list(validator(protocol, request["op"], "request").iter_errors(request))
        assert not list(validator(protocol, request["op"], "reply").iter_errors(json.loads(reply_line)))
    assert {"flush", "compact", "corrupt_committed_record", "repair_corruption", "reopen", "close"} <= seen


# -- bad messages, and agreement with the Python validator ---------------------------------------

V2 = PROTOCOL_VERSION_2
V1 = PROTOCOL_VERSION
HELLO_V2 = {
    "protocol": V2,
    "name": "x",
    "version": "1",
    "capabilities": ["core", "diffs"],
    "limits": {"alphabet": None, "max_buffer_bytes": None, "max_insert_bytes": None},
}

#: (protocol, op, request, valid?)
REQUESTS: list[tuple[str, str, dict[str, Any], bool]] = [
    (V2, "new", {"id": 1, "op": "new", "initial": "YWI=", "capacity": None, "policy": "reject",
                 "durable": True, "durability": "batched"}, True),
    (V2, "new", {"id": 1, "op": "new", "initial": "YWI=", "capacity": None, "policy": "reject"}, False),
    (V1, "new", {"id": 1, "op": "new", "initial": "YWI=", "capacity": None, "policy": "reject"}, True),
    (V2, "new", {"id": 1, "op": "new", "initial": "YWI=", "capacity": 2, "policy": "reject",
                 "durable": "yes", "durability": "batched"}, False),
    (V2, "new", {"id": 1, "op": "new", "initial": "YWI=", "capacity": 2, "policy": "reject",
                 "durable": False, "durability": "sometimes"}, False),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "content",
                        "hunks": [[0, 1, "eA=="]], "reads": [[0, 2]]}, True),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "sideways",
                        "hunks": [[3, 1, ""]], "reads": []}, True),  # malformed diff: the implementation's to refuse
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "content",
                        "hunks": [[0, 1]], "reads": []}, False),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "content",
                        "hunks": [[0, 1, "not base64!"]], "reads": []}, False),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "content",
                        "hunks": [[0, True, "eA=="]], "reads": []}, False),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s1", "mode": "content",
                        "hunks": [], "reads": [[0, 1, 2]]}, False),
    (V2, "apply_diff", {"id": 2, "op": "apply_diff", "buffer": "b1", "snapshot": 7, "mode": "content",
                        "hunks": [], "reads": []}, False),
    (V2, "rollback_diff", {"id": 3, "op": "rollback_diff", "buffer": "b1", "applied": "b1.a2"}, True),
    (V2, "rollback_diff", {"id": 3, "op": "rollback_diff", "buffer": "b1"}, False),
    (V2, "compact", {"id": 4, "op": "compact", "buffer": "b1", "keep": 0}, True),
    (V2, "compact", {"id": 4, "op": "compact", "buffer": "b1", "keep": "0"}, False),
    (V2, "corrupt_committed_record", {"id": 5, "op": "corrupt_committed_record", "buffer": "b1",
                                      "damage": "bit_flip"}, True),
    (V2, "reopen", {"id": 6, "op": "reopen", "buffer": "b1"}, True),
    (V2, "reopen", {"id": "6", "op": "reopen", "buffer": "b1"}, False),
    (V2, "splice", {"id": 7, "op": "splice", "buffer": "b1", "offset": 0, "delete_length": 0, "insert": "YQ"}, False),
]

#: (protocol, op, reply, valid?) -- replies to a request of id 9.
REPLIES: list[tuple[str, str, dict[str, Any], bool]] = [
    (V2, "hello", {"id": 9, "ok": True, "result": HELLO_V2}, True),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "capabilities": ["diffs"]}}, True),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "capabilities": ["depth"]}}, False),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "capabilities": ["core", "concurrent"]}}, False),
    (V2, "hello", {"id": 9, "ok": True, "result": {k: v for k, v in HELLO_V2.items() if k != "limits"}}, False),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "limits": {"alphabet": "YWI=",
                                                                         "max_buffer_bytes": 64,
                                                                         "max_insert_bytes": None}}}, True),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "limits": {"alphabet": "",
                                                                         "max_buffer_bytes": None,
                                                                         "max_insert_bytes": None}}}, False),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "limits": {"alphabet": None,
                                                                         "max_buffer_bytes": 0,
                                                                         "max_insert_bytes": None}}}, False),
    (V2, "hello", {"id": 9, "ok": True, "result": {**HELLO_V2, "protocol": V1}}, False),
    (V1, "hello", {"id": 9, "ok": True, "result": {"protocol": V1, "name": "x", "version": "1",
                                                  "capabilities": ["core", "diffs"]}}, False),
    (V1, "hello", {"id": 9, "ok": True, "result": {"protocol": V1, "name": "x", "version": "1",
                                                  "capabilities": ["core"]}}, True),
    (V2, "corrupt_committed_record", {"id": 9, "ok": True, "result": True}, True),
    (V2, "corrupt_committed_record", {"id": 9, "ok": True, "result": 1}, False),
    (V2, "snapshot", {"id": 9, "ok": True, "result": "b1.s3"}, True),
    (V2, "snapshot", {"id": 9, "ok": True, "result": None}, False),
    (V2, "apply_diff", {"id": 9, "ok": False, "error": {"kind": "StaleBaseError", "message": "moved"}}, True),
    (V2, "apply_diff", {"id": 9, "ok": False, "error": {"kind": "", "message": "moved"}}, False),
    (V2, "apply_diff", {"id": 9, "ok": False, "error": {"kind": "StaleBaseError", "message": 3}}, False),
    (V2, "rollback_diff", {"id": 9, "ok": True, "result": None}, True),
    (V2, "rollback_diff", {"id": 9, "ok": True}, False),
    (V2, "reopen", {"id": 9, "ok": "true", "result": None}, False),
    (V2, "flush", {"id": 9, "ok": True, "result": 0}, False),
    (V2, "read", {"id": 9, "ok": True, "result": "YWJj"}, True),
    (V2, "read", {"id": 9, "ok": True, "result": "YWJ"}, False),
]


def _cases() -> Iterator[Any]:
    for protocol, op, message, valid in REQUESTS:
        yield pytest.param("request", protocol, op, message, valid, id=f"request-{op}-{message}")
    for protocol, op, message, valid in REPLIES:
        yield pytest.param("reply", protocol, op, message, valid, id=f"reply-{op}-{message}")


def _python_accepts(kind: str, protocol: str, op: str, message: dict[str, Any]) -> bool:
    try:
        if kind == "request":
            decode_request(message, protocol)
        else:
            arguments = {"protocol": protocol} if op == "hello" else {}
            decode_reply(message, Request(9, op, arguments, protocol))
    except ProtocolError:
        return False
    return True


@pytest.mark.parametrize(("kind", "protocol", "op", "message", "valid"), list(_cases()))
def test_schemas_and_the_python_validator_agree(
    kind: str, protocol: str, op: str, message: dict[str, Any], valid: bool
) -> None:
    schema_accepts = validator(protocol, op, kind).is_valid(message)
    assert schema_accepts is valid, list(validator(protocol, op, kind).iter_errors(message))
    assert _python_accepts(kind, protocol, op, message) is valid


def test_an_error_to_an_unreadable_line_carries_a_null_id() -> None:
    reply = {"id": None, "ok": False, "error": {"kind": "ProtocolError", "message": "not JSON"}}
    assert validator(V2, "read", "reply").is_valid(reply)
    assert not validator(V2, "read", "reply").is_valid({**reply, "ok": True, "result": "YWJj"})
