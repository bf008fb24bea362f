"""The subprocess protocol (``rollcert-protocol/1`` and ``/2``), end to end with real processes.

The reference server must certify as the in-process bundled target does; each
fake misbehaving server (``tests/fake_servers``) must give the verdict ``error``
with a reason naming its misbehaviour — never ``violated``, never a crash of the
harness — while a server that answers well-formed but wrong replies is judged
``violated``: protocol errors and wrong answers are told apart.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.command.cli import main
from rollcert.model.errors import JournalError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.stateful_tests.certify import certify
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapters.bundled import TARGET as BUNDLED
from rollcert.targets.adapters.subprocess_client import HandshakeError
from rollcert.targets.adapters.subprocess_client import RemoteBuffer
from rollcert.targets.adapters.subprocess_client import ServerConnection
from rollcert.targets.adapters.subprocess_client import ServerReportedError
from rollcert.targets.adapters.subprocess_client import SubprocessServer
from rollcert.targets.adapters.subprocess_client import exception_for_kind
from rollcert.targets.adapters.subprocess_client import subprocess_target
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1
from rollcert.targets.protocol import WIRE_CAPABILITIES
from rollcert.targets.protocol import WIRE_CAPABILITIES_V2
from rollcert.targets.protocol import ErrorReply
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol import Request
from rollcert.targets.protocol import decode_line
from rollcert.targets.protocol import decode_reply
from rollcert.targets.protocol import decode_request

FAKES = Path(__file__).parent / "fake_servers"
REFERENCE = [sys.executable, "-m", "rollcert.targets.protocol_server"]
REFERENCE_TEXT = f"subprocess:{sys.executable} -m rollcert.targets.protocol_server"
#: Short, so the hanging fake is cut quickly; ample for a local server that answers.
TIMEOUT = 1.0


def fake(name: str) -> list[str]:
    return [sys.executable, str(FAKES / f"{name}.py")]


# -- the reference server --------------------------------------------------------------


@pytest.mark.slow
def test_reference_server_certifies_like_the_in_process_bundled_target() -> None:
    chosen = ("R0", "R2", "R3")
    remote = certify(subprocess_target(REFERENCE), only=chosen)
    local = certify(BUNDLED, only=chosen)
    remote_verdicts = {pid: result.verdict for pid, result in remote.results.items()}
    assert remote_verdicts == {pid: result.verdict for pid, result in local.results.items()}
    assert remote_verdicts == {pid: "passed" for pid in chosen}
    for result in remote.results.values():
        assert result.steps > 0 and all(count > 0 for count in result.coverage.values()), result
    assert remote.exit_status == 0


def test_reference_server_declares_what_the_wire_carries() -> None:
    target = subprocess_target(REFERENCE)
    assert target.capabilities == WIRE_CAPABILITIES_V2  # with the state directory the client gives it: durability
    assert target.name == f"subprocess:{shlex.join(REFERENCE)}"  # the TARGET text, so replay lines work
    assert target.notes["server"] == "rollcert-journaled-buffer"
    assert target.notes["protocol"] == PROTOCOL_VERSION_2_1 and "SIGKILL" in target.notes["crashes"]


def test_a_version_1_server_declares_what_version_1_carries() -> None:
    target = subprocess_target(fake("v1_only"))
    assert target.capabilities == WIRE_CAPABILITIES and target.notes["protocol"] == PROTOCOL_VERSION


#: A fault armed, a crash at the first I/O call of the splice it waits for: the
#: crash may come before the write the fault would fail, so the fault may still
#: be armed after the recovery (the server's) or spent (the in-process disk's).
#: Both are correct; the model allowed only the second, and blamed R5 on the server.
ARMED_FAULT_ACROSS_CRASHES = {
    "schema": "rollcert-trace/2",
    "family": "rollback",
    "initial": "YQ==",
    "capacity": None,
    "policy": "reject",
    "durable": True,
    "operations": [
        {"op": "arm_journal_fault"},
        {"op": "splice", "offset": 0, "delete_length": 0, "insert": ""},
        {"op": "arm_journal_fault"},
        *[
            {
                "op": "crash_during",
                "operation": {"op": "splice", "offset": 0, "delete_length": delete_length, "insert": ""},
                "io_event": io_event,
                "lost": 0,
            }
            for delete_length, io_event in ((0, 0), (0, 0), (1, 1))
        ],
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("target", [REFERENCE_TEXT, "bundled"])
def test_a_fault_armed_across_a_crash_is_not_blamed(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", target, "--trace", json.dumps(ARMED_FAULT_ACROSS_CRASHES), "--in-process"]) == 0
    assert "all 6 steps agree with the model" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_certify_and_smoke_over_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", REFERENCE_TEXT, "--only", "R1"]) == 0
    assert "R1        passed" in capsys.readouterr().out
    assert main(["smoke", REFERENCE_TEXT]) == 0
    report = capsys.readouterr().out
    # diffs, durability: v2; disk faults and length(): not declared by the reference server
    assert "13 ok, 0 failed, 0 errors, 2 skipped" in report and "FAIL" not in report
    assert "skip  disk_faults" in report and "skip  length" in report


def test_one_server_hosts_many_buffers_and_their_checkpoints() -> None:
    server = SubprocessServer(REFERENCE, TIMEOUT)
    try:
        first, second = server.new_buffer(BufferConfig(b"abc")), server.new_buffer(BufferConfig(b"xyz"))
        assert isinstance(first, RemoteBuffer) and isinstance(second, RemoteBuffer)
        assert first.connection is second.connection and first.buffer_id != second.buffer_id
        token = first.checkpoint()
        first.splice(1, 1, b"QQ")
        second.splice(0, 3, b"")
        assert (first.read(), second.read(), first.depth(), first.revision()) == (b"aQQc", b"", 1, 1)
        with pytest.raises(UnreachableRollbackError):  # another buffer's checkpoint, refused by kind
            second.rollback_to(token)
        first.rollback_to(token)
        assert first.read() == b"abc"
        with pytest.raises(UnreachableRollbackError):
            first.rollback(1)
        with pytest.raises(TypeError):  # refused before the wire: JSON cannot tell True from 1 faithfully
            first.splice(True, 0, b"x")
        with pytest.raises(TypeError):
            first.rollback_to(object())
        first.close()
        assert second.read() == b""  # the connection survived the refusals and the close
    finally:
        server.close()
    assert server.connection.process.returncode == 0  # closing stdin let it exit cleanly


def test_a_broken_server_is_restarted_for_the_next_buffer() -> None:
    server = SubprocessServer(fake("exits_mid_run"), TIMEOUT)
    try:
        buffer = server.new_buffer(BufferConfig(b"ab"))
        buffer.splice(0, 0, b"x")
        first_process = server.connection.process
        with pytest.raises(HarnessError, match=r"status 70.*out of memory"):
            buffer.rollback(1)
        with pytest.raises(HarnessError, match="stopped"):
            buffer.read()
        buffer.close()  # nothing to close on a dead server; must not hide the first error
        again = server.new_buffer(BufferConfig(b"cd"))
        assert again.read() == b"cd" and server.connection.process is not first_process
    finally:
        server.close()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.slow
def test_the_javascript_example_server_is_certified_on_what_it_declares() -> None:
    script = Path(__file__).parent.parent / "examples" / "protocol" / "buffer_server.js"
    certificate = certify(subprocess_target(["node", str(script)]), only=("R0", "R1", "R2", "R3"))
    verdicts = {pid: result.verdict for pid, result in certificate.results.items()}
    assert verdicts == {"R0": "passed", "R1": "not_assessed", "R2": "passed", "R3": "passed"}, certificate.results
    assert certificate.exit_status == 0


# -- fake misbehaving servers ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("garbage", "not JSON (Expecting value): 'Segmentation fault"),
        ("hang", f"no reply to request {{}} (rollback) within the {TIMEOUT:g} s timeout"),
        ("exits_mid_run", "exited with status 70; its last stderr lines: fake server: out of memory"),
        ("wrong_types", "(read): result must be base64 text, got integer 42"),
        ("wrong_id", "(splice) carries id integer"),
        ("wrong_version", "the server speaks 'rollcert-protocol/99'"),
        ("junk_before_hello", "handshake failed: protocol violation: the line is not JSON"),
    ],
)
def test_a_misbehaving_server_is_an_error_never_a_violation(script: str, reason: str) -> None:
    certificate = certify(subprocess_target(fake(script), timeout=TIMEOUT), only=("R0",))
    result = certificate.results["R0"]
    assert result.verdict == "error", result.reason
    before, _, after = reason.partition("{}")
    assert before in result.reason and after in result.reason, result.reason
    assert certificate.exit_status == 2


def test_a_bad_handshake_is_refused_with_a_typed_error() -> None:
    with pytest.raises(HandshakeError, match=r"rollcert-protocol/99.*speaks 'rollcert-protocol/2\.1'"):
        ServerConnection(fake("wrong_version"), TIMEOUT)


@pytest.mark.slow
def test_a_documented_kind_given_wrongly_is_a_violation_not_an_error() -> None:
    result = certify(subprocess_target(fake("journal_error_splice"), timeout=TIMEOUT), only=("R0",)).results["R0"]
    assert result.verdict == "violated", result.reason
    assert result.counterexample is not None
    last = result.counterexample.steps[-1]
    assert (last.expected.error, last.actual.error) == (None, "JournalError")


@pytest.mark.slow  # starts a protocol server: 1.45 s in a CI run
def test_an_undocumented_kind_is_a_wrong_answer() -> None:
    result = certify(subprocess_target(fake("undocumented_kind"), timeout=TIMEOUT), only=("R0",)).results["R0"]
    assert result.verdict == "violated" and "undocumented:Panic" in result.reason, result.reason


def test_error_kinds_map_to_the_documented_exceptions() -> None:
    assert type(exception_for_kind("JournalError", "full")) is JournalError
    panic = exception_for_kind("Panic", "boom")
    assert isinstance(panic, ServerReportedError) and type(panic).__name__ == "Panic"
    assert type(exception_for_kind("Panic", "again")) is type(panic)


def test_smoke_reports_a_broken_handshake_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", f"subprocess:{sys.executable} {FAKES / 'wrong_version.py'}"]) == 2  # error, not violated
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("ERROR") for line in lines) == 1 and not any(line.startswith("FAIL") for line in lines)
    assert "rollcert-protocol/99" in next(line for line in lines if line.startswith("ERROR"))


@pytest.mark.parametrize("target", ["subprocess:", "subprocess:'unterminated", "subprocess:no-such-server-xyz"])
def test_unusable_server_commands_are_target_errors(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", target]) == 3
    error = capsys.readouterr().err
    assert error.startswith("rollcert: ") and "Traceback" not in error


# -- the reference server's side of the wire ---------------------------------------------


def test_server_answers_malformed_requests_with_protocol_errors_and_keeps_serving() -> None:
    lines = [
        "this is not json",
        json.dumps({"id": 1, "op": "fly"}),
        json.dumps({"id": 2, "op": "hello", "protocol": PROTOCOL_VERSION}),
        json.dumps({"id": 3, "op": "new", "initial": "YWJj", "capacity": None, "policy": "reject"}),
        json.dumps({"id": 4, "op": "splice", "buffer": "b1", "offset": True, "delete_length": 0, "insert": ""}),
        json.dumps({"id": 5, "op": "read", "buffer": "b99"}),
        json.dumps({"id": 6, "op": "splice", "buffer": "b1", "offset": 9, "delete_length": 0, "insert": "eA=="}),
        json.dumps({"id": 7, "op": "read", "buffer": "b1"}),
    ]
    completed = subprocess.run(
        REFERENCE, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60, check=True
    )
    replies = [json.loads(line) for line in completed.stdout.splitlines()]
    assert len(replies) == len(lines)
    kinds = [reply["error"]["kind"] if not reply["ok"] else None for reply in replies]
    assert kinds == ["ProtocolError", "ProtocolError", None, None, "ProtocolError", "ProtocolError", "ValueError", None]
    assert [reply["id"] for reply in replies] == [None, 1, 2, 3, 4, 5, 6, 7]
    assert replies[2]["result"]["protocol"] == PROTOCOL_VERSION
    assert replies[7]["result"] == "YWJj"  # the refused splice changed nothing


# -- the wire format's validation ---------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "reply", "complaint"),
    [
        ("depth", {"id": 7, "ok": True, "result": True}, "must be an integer, got boolean true"),
        ("depth", {"id": 8, "ok": True, "result": 1}, "carries id integer 8; expected 7"),
        ("read", {"id": 7, "ok": True, "result": "***"}, "not valid base64"),
        ("read", {"id": 7, "ok": True}, "no 'result'"),
        ("read", {"id": 7, "ok": "yes", "result": ""}, "'ok' must be true or false"),
        ("splice", {"id": 7, "ok": False, "error": "bad"}, "not an object"),
        ("splice", {"id": 7, "ok": False, "error": {"kind": 3}}, "'kind' must be a non-empty string"),
        ("splice", {"id": 7, "ok": True, "result": 0}, "result must be null"),
    ],
)
def test_malformed_replies_are_explained(op: str, reply: dict[str, object], complaint: str) -> None:
    arguments = {"buffer": "b1", "offset": 0, "delete_length": 0, "insert": b""} if op == "splice" else {"buffer": "b1"}
    with pytest.raises(ProtocolError, match=re.escape(complaint)):
        decode_reply(reply, Request(7, op, arguments))


def test_hello_must_declare_core_and_only_capabilities_the_wire_carries() -> None:
    request = Request(1, "hello", {"protocol": PROTOCOL_VERSION})

    def hello(capabilities: list[str]) -> dict[str, object]:
        result = {"protocol": PROTOCOL_VERSION, "name": "x", "version": "1", "capabilities": capabilities}
        return {"id": 1, "ok": True, "result": result}

    with pytest.raises(ProtocolError, match="cannot carry"):
        decode_reply(hello(["core", Capability.DIFFS.value]), request)
    with pytest.raises(ProtocolError, match="does not exist"):
        decode_reply(hello(["core", "teleport"]), request)
    with pytest.raises(ProtocolError, match="'core'"):
        decode_reply(hello(["depth"]), request)
    assert decode_reply({"id": 1, "ok": False, "error": {"kind": "X", "message": "m"}}, request) == ErrorReply("X", "m")


def test_requests_are_validated_and_round_trip() -> None:
    request = Request(3, "splice", {"buffer": "b1", "offset": 2, "delete_length": 1, "insert": b"\x00\xff"})
    assert decode_request(decode_line(request.encode())) == request
    with pytest.raises(ProtocolError, match="missing field 'insert'"):
        decode_request({"id": 1, "op": "splice", "buffer": "b1", "offset": 0, "delete_length": 0})
    with pytest.raises(ProtocolError, match="'id' must be an integer"):
        decode_request({"id": "1", "op": "read", "buffer": "b1"})
    with pytest.raises(ProtocolError, match="not an object"):
        decode_line(b"[1, 2]\n")
    with pytest.raises(ProtocolError, match="not UTF-8"):
        decode_line(b"\xff\xfe\n")


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (b'{"id": 1, "result": ' + b"9" * 5000 + b"}\n", "integer of 5000 digits"),
        (b'{"id": 1, "result": -' + b"1" * 101 + b"}\n", "integer of 101 digits"),
        (b'{"id": 1, "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "deeper than 32 levels"),
        (b'{"id": 1, "result": ' + b"[" * 33 + b"]" * 33 + b"}\n", "deeper than 32 levels"),
        (b'{"id": 1, "result": NaN}\n', "holds NaN"),
        (b'{"id": 1, "result": "' + b"x" * 200 + b'"}\n', "longer than the 100-byte limit"),
    ],
)
def test_lines_beyond_the_bounds_are_protocol_errors(line: bytes, complaint: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(complaint)):
        decode_line(line, max_line_bytes=100 if b"x" * 200 in line else 1 << 24)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = '"' + "[" * 40 + '\\"{{{' + "]" * 40 + '"'
    assert decode_line(f'{{"id": 1, "result": [{text}, [[1]]]}}\n'.encode()) == {
        "id": 1,
        "result": [json.loads(text), [[1]]],
    }
    assert decode_line(b'{"id": ' + b"9" * 100 + b"}\n")["id"] == int("9" * 100)  # 100 digits: allowed
