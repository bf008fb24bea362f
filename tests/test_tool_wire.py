"""The standard-library server loop of the edit tools' servers (``tool_servers/_wire.py``),
driven as a real subprocess with raw protocol lines.

The tool here is the simplest honest applier: it writes B1 when the live text
still equals the snapshot and refuses otherwise. What is checked is the loop:
the handshake, the input contract (the model's rules, restated), refusals,
undocumented errors and malformed lines — never a crash of the loop.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollcert.targets import tool_servers

WIRE_FOLDER = Path(tool_servers.__file__).parent

EXACT_TOOL = """
import sys
from _wire import Refused, ToolBuffer, apply_hunks, serve

class ExactBuffer(ToolBuffer):
    def apply_diff(self, snapshot, mode, hunks, reads):
        if self.content != snapshot:
            raise Refused("the text changed since it was read")
        if hunks[0][2] == b"boom":
            raise KeyError("the tool broke")
        self.content = apply_hunks(snapshot, hunks)

sys.exit(serve("exact", "1.0", ExactBuffer, alphabet=b"ab\\n", max_buffer_bytes=4096))
"""


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Session:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.ids = iter(range(1, 10_000))

    def raw(self, line: bytes) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        assert isinstance(reply, dict)
        return reply

    def call(self, op: str, **fields: object) -> dict[str, object]:
        request_id = next(self.ids)
        reply = self.raw(json.dumps({"id": request_id, "op": op, **fields}).encode() + b"\n")
        assert reply["id"] == request_id
        return reply


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    server = tmp_path / "exact_server.py"
    server.write_text(EXACT_TOOL)
    environment = {"PYTHONPATH": str(WIRE_FOLDER)}
    process = subprocess.Popen(
        [sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=environment,
    )
    yield Session(process)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=10) == 0


def new_buffer(session: Session, initial: bytes) -> str:
    reply = session.call(
        "new",
        initial=encoded(initial),
        capacity=None,
        policy="reject",
        durable=False,
        durability="per_operation",
    )
    assert reply["ok"] is True, reply
    buffer_id = reply["result"]
    assert isinstance(buffer_id, str)
    return buffer_id


def test_hello_declares_diffs_and_limits(session: Session) -> None:
    reply = session.call("hello", protocol="rollcert-protocol/2")
    assert reply["ok"] is True
    assert reply["result"] == {
        "protocol": "rollcert-protocol/2",
        "name": "exact",
        "version": "1.0",
        "capabilities": ["diffs"],
        "limits": {"alphabet": encoded(b"ab\n"), "max_buffer_bytes": 4096, "max_insert_bytes": None},
    }
    refused = session.call("hello", protocol="rollcert-protocol/1")
    assert refused["ok"] is False and refused["error"]["kind"] == "ProtocolError"  # type: ignore[index]


def test_apply_on_the_snapshot_then_refusal_on_a_moved_base(session: Session) -> None:
    buffer = new_buffer(session, b"aaaa\nbbbb\n")
    token = session.call("snapshot", buffer=buffer)["result"]
    applied = session.call(
        "apply_diff", buffer=buffer, snapshot=token, mode="content", hunks=[[0, 4, encoded(b"ab")]], reads=[]
    )
    assert applied["ok"] is True and isinstance(applied["result"], str)
    assert session.call("read", buffer=buffer)["result"] == encoded(b"ab\nbbbb\n")
    token = session.call("snapshot", buffer=buffer)["result"]
    assert (
        session.call("splice", buffer=buffer, offset=0, delete_length=0, insert=encoded(b"b"))["ok"] is True
    )
    stale = session.call(
        "apply_diff",
        buffer=buffer,
        snapshot=token,
        mode="content",
        hunks=[[0, 1, encoded(b"")]],
        reads=[[0, 1]],
    )
    assert stale["ok"] is False and stale["error"] == {
        "kind": "StaleBaseError",
        "message": "the text changed since it was read",
    }
    assert session.call("read", buffer=buffer)["result"] == encoded(b"bab\nbbbb\n")


@pytest.mark.parametrize(
    ("hunks", "reads", "mode", "why"),
    [
        ([], [], "content", "at least one hunk"),
        ([[0, 99, ""]], [], "content", "outside"),
        ([[2, 3, ""], [1, 2, ""]], [], "content", "sorted and non-overlapping"),
        ([[0, 1, ""]], [[1, 1]], "content", "non-empty"),
        ([[0, 1, ""]], [], "fuzzy", "anchor mode"),
    ],
)
def test_a_malformed_diff_is_refused_before_the_tool_runs(
    session: Session, hunks: list[list[object]], reads: list[list[int]], mode: str, why: str
) -> None:
    buffer = new_buffer(session, b"abab")
    token = session.call("snapshot", buffer=buffer)["result"]
    reply = session.call("apply_diff", buffer=buffer, snapshot=token, mode=mode, hunks=hunks, reads=reads)
    assert reply["ok"] is False
    assert reply["error"]["kind"] == "ValueError" and why in reply["error"]["message"]  # type: ignore[index]
    assert session.call("read", buffer=buffer)["result"] == encoded(b"abab")


def test_bad_splices_foreign_snapshots_and_tool_errors(session: Session) -> None:
    first, second = new_buffer(session, b"ab"), new_buffer(session, b"ba")
    out_of_range = session.call("splice", buffer=first, offset=3, delete_length=0, insert="")
    assert out_of_range["error"]["kind"] == "ValueError"  # type: ignore[index]
    token = session.call("snapshot", buffer=second)["result"]
    foreign = session.call(
        "apply_diff", buffer=first, snapshot=token, mode="content", hunks=[[0, 1, ""]], reads=[]
    )
    assert foreign["error"]["kind"] == "TypeError"  # type: ignore[index]
    token = session.call("snapshot", buffer=first)["result"]
    broken = session.call(
        "apply_diff", buffer=first, snapshot=token, mode="content", hunks=[[0, 1, encoded(b"boom")]], reads=[]
    )
    assert broken["error"]["kind"] == "builtins.KeyError"  # type: ignore[index]
    assert session.call("read", buffer=first)["ok"] is True  # the loop lives on


@pytest.mark.parametrize(
    "line",
    [
        b"not json\n",
        b"[1, 2]\n",
        b'{"id": "x", "op": "read"}\n',
        b'{"id": 5, "op": "launch"}\n',
        b'{"id": 6, "op": "read"}\n',
        b"\xff\xfe\n",
    ],
)
def test_malformed_lines_are_protocol_errors(session: Session, line: bytes) -> None:
    reply = session.raw(line)
    assert reply["ok"] is False and reply["error"]["kind"] == "ProtocolError"  # type: ignore[index]
    assert session.call("hello", protocol="rollcert-protocol/2")["ok"] is True


def test_bounded_or_durable_buffers_are_not_offered(session: Session) -> None:
    reply = session.call(
        "new", initial="", capacity=4, policy="reject", durable=False, durability="per_operation"
    )
    assert reply["error"]["kind"] == "ProtocolError"  # type: ignore[index]
    reply = session.call(
        "new", initial="", capacity=None, policy="reject", durable=True, durability="per_operation"
    )
    assert reply["error"]["kind"] == "ProtocolError"  # type: ignore[index]
