"""``rollcert-protocol/2`` with real processes, fast: the handshake and its
fallback to version 1, diffs, limits, bad version 2 messages, and real SIGKILLs
of a durable server with the recovered state checked (R5: the state before or
after the interrupted operation, never a mixture, and nothing that returned
lost). The certification runs are in ``tests/test_protocol_v2_certify.py`` (slow)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.impl.file_journal import FileJournal
from rollcert.model.errors import JournalError
from rollcert.model.errors import RecoveryError
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapters.durable import BATCHED
from rollcert.targets.adapters.subprocess_client import RemoteBuffer
from rollcert.targets.adapters.subprocess_client import ServerKilled
from rollcert.targets.adapters.subprocess_client import SubprocessServer
from rollcert.targets.adapters.subprocess_client import subprocess_target
from rollcert.targets.protocol import PROTOCOL_VERSION
from rollcert.targets.protocol import PROTOCOL_VERSION_2
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1
from rollcert.targets.protocol import WIRE_CAPABILITIES
from rollcert.targets.protocol import WIRE_CAPABILITIES_V2
from rollcert.targets.protocol_server import _durability

FAKES = Path(__file__).parent / "fake_servers"
REFERENCE = [sys.executable, "-m", "rollcert.targets.protocol_server"]
TIMEOUT = 10.0


def fake(name: str, *arguments: str) -> list[str]:
    return [sys.executable, str(FAKES / f"{name}.py"), *arguments]


@pytest.fixture
def reference() -> object:
    server = SubprocessServer(REFERENCE, TIMEOUT)
    yield server
    server.close()


def remote(server: SubprocessServer, config: BufferConfig) -> RemoteBuffer:
    buffer = server.new_buffer(config)
    assert isinstance(buffer, RemoteBuffer)
    return buffer


# -- the handshake -------------------------------------------------------------------------


def test_the_reference_server_speaks_version_2_1(reference: SubprocessServer) -> None:
    assert reference.hello.protocol == PROTOCOL_VERSION_2_1 == reference.connection.protocol
    assert reference.hello.capabilities == WIRE_CAPABILITIES_V2


def test_a_version_1_server_is_greeted_again_in_version_1_and_driven_as_before() -> None:
    server = SubprocessServer(fake("v1_only"), TIMEOUT)
    try:
        assert server.hello.protocol == PROTOCOL_VERSION and server.hello.capabilities == WIRE_CAPABILITIES
        buffer = remote(server, BufferConfig(b"abc"))
        token = buffer.checkpoint()
        buffer.splice(1, 1, b"XY")
        buffer.rollback_to(token)
        assert (buffer.read(), buffer.depth()) == (b"abc", 0)
        with pytest.raises(CapabilityMissing):  # never sent: version 1 has no such op
            buffer.snapshot()
        with pytest.raises(HarnessError, match="durability"):
            server.new_buffer(BufferConfig(b"", durable=True))
    finally:
        server.close()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_example_a_version_1_server_not_ours_falls_back_too() -> None:
    script = Path(__file__).parent.parent / "examples" / "protocol" / "buffer_server.js"
    server = SubprocessServer(["node", str(script)], TIMEOUT)
    try:
        assert server.hello.protocol == PROTOCOL_VERSION
        buffer = remote(server, BufferConfig(b"ab"))
        buffer.splice(2, 0, b"c")
        buffer.rollback(1)
        assert buffer.read() == b"ab"
    finally:
        server.close()


def test_a_server_that_answers_in_another_version_is_a_handshake_error_not_a_fallback() -> None:
    target = subprocess_target(fake("wrong_version"))
    assert "rollcert-protocol/99" in target.notes["handshake"]


# -- diffs ---------------------------------------------------------------------------------


def test_diffs_round_trip_with_handles_bound_to_their_buffer(reference: SubprocessServer) -> None:
    buffer, other = remote(reference, BufferConfig(b"abcdef")), remote(reference, BufferConfig(b"xyz"))
    snapshot = buffer.snapshot()
    buffer.splice(0, 0, b"12")  # the base moves
    applied = buffer.apply_diff(snapshot, "content", [(2, 3, b"C")], [(1, 4)])
    assert buffer.read() == b"12abCdef"
    with pytest.raises(StaleBaseError):  # positional on a moved base: refused, nothing changed
        buffer.apply_diff(snapshot, "positional", [(0, 1, b"A")], [])
    assert buffer.read() == b"12abCdef"
    buffer.splice(0, 0, b"!")
    buffer.rollback_diff(applied)  # back to the live base it was applied to (S2), not the snapshot
    assert buffer.read() == b"12abcdef"
    with pytest.raises(UnreachableRollbackError):  # its state was rolled away
        buffer.rollback_diff(applied)
    # Handles of another buffer, and things that are no handles, are refused as in-process.
    with pytest.raises(ValueError, match="another buffer"):
        other.apply_diff(buffer.snapshot(), "content", [(0, 1, b"q")], [])
    with pytest.raises(UnreachableRollbackError, match="another buffer"):
        other.rollback_diff(buffer.apply_diff(buffer.snapshot(), "content", [(0, 1, b"q")], []))
    with pytest.raises(TypeError):
        buffer.apply_diff("b1.s1", "content", [], [])
    with pytest.raises(TypeError):
        buffer.rollback_diff(object())
    # A malformed diff is the implementation's to refuse (ValueError), not a protocol error.
    with pytest.raises(ValueError):
        buffer.apply_diff(buffer.snapshot(), "content", [(3, 1, b"")], [])
    with pytest.raises(ValueError):
        buffer.apply_diff(buffer.snapshot(), "sideways", [(0, 1, b"")], [])
    assert other.read() == b"xyz" and reference.connection.broken is None


# -- limits --------------------------------------------------------------------------------


def test_limits_become_the_targets_alphabet_and_notes() -> None:
    target = subprocess_target(fake("limited"))
    assert target.alphabet == b"ab\n"
    assert "max buffer 64 bytes" in target.notes["limits"] and "max insert 8 bytes" in target.notes["limits"]
    buffer = target.factory(BufferConfig(b"ab"))
    with pytest.raises(ValueError, match="more than the declared 8"):
        buffer.splice(0, 0, b"a" * 9)
    assert buffer.read() == b"ab"


# -- bad version 2 messages ----------------------------------------------------------------------


@pytest.mark.slow
def test_bad_version_2_requests_are_protocol_errors_and_the_server_keeps_serving() -> None:
    lines = [
        {"id": 1, "op": "snapshot", "buffer": "b1"},  # a v2 op before a v2 hello: v1 has no such op
        {"id": 2, "op": "hello", "protocol": PROTOCOL_VERSION_2},
        {"id": 3, "op": "new", "initial": "YWJj", "capacity": None, "policy": "reject"},  # no durable/durability
        {"id": 4, "op": "new", "initial": "YWJj", "capacity": None, "policy": "reject", "durable": False,
         "durability": "per_operation"},
        {"id": 5, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s9", "mode": "content",
         "hunks": [[0, 1]], "reads": []},
        {"id": 6, "op": "new", "initial": "", "capacity": None, "policy": "reject", "durable": True,
         "durability": "per_operation"},  # durable without a state directory
        {"id": 7, "op": "reopen", "buffer": "b1"},
        {"id": 8, "op": "apply_diff", "buffer": "b1", "snapshot": "b1.s9", "mode": "content",
         "hunks": [[0, 1, "eA=="]], "reads": []},  # well formed, unknown snapshot: the implementation's ValueError
        {"id": 9, "op": "corrupt_committed_record", "buffer": "b1", "damage": "bit_flip"},
        {"id": 10, "op": "read", "buffer": "b1"},
    ]
    environment = {key: value for key, value in __import__("os").environ.items() if key != "ROLLCERT_STATE_DIR"}
    completed = subprocess.run(
        REFERENCE, input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
        timeout=60, check=True, env=environment,
    )
    replies = [json.loads(line) for line in completed.stdout.splitlines()]
    kinds = [None if reply["ok"] else reply["error"]["kind"] for reply in replies]
    assert kinds == [
        "ProtocolError", None, "ProtocolError", None, "ProtocolError", "ProtocolError", "ProtocolError",
        "ValueError", None, None,
    ], replies
    assert "durability" not in replies[1]["result"]["capabilities"]  # no state directory: not declared
    assert replies[8]["result"] is False and replies[9]["result"] == "YWJj"


def test_the_servers_batched_journal_syncs_as_the_in_process_adapters() -> None:
    assert _durability("batched") == BATCHED


# -- real crashes ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_sigkill_while_idle_loses_nothing_that_returned(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc", durable=True))
    other = remote(reference, BufferConfig(b"xyz", durable=True))
    buffer.splice(0, 1, b"Q")
    token = buffer.checkpoint()
    buffer.splice(3, 0, b"!")
    killed = buffer.connection.process
    buffer.restart()
    assert killed.returncode == -signal.SIGKILL and buffer.connection.process is not killed
    assert (buffer.read(), buffer.depth(), buffer.revision()) == (b"Qbc!", 2, 2)
    assert other.read() == b"xyz" and other.connection is buffer.connection  # every open buffer was reopened
    buffer.rollback_to(token)  # a checkpoint taken before the crash names the same state after it
    assert buffer.read() == b"Qbc"
    with pytest.raises(UnreachableRollbackError):
        other.rollback_to(token)


@pytest.mark.slow
def test_a_kill_before_the_request_is_sent_interrupts_it(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc", durable=True))
    assert buffer.run_with_crash(lambda: buffer.splice(0, 0, b"x"), 0, 0) is True
    assert (buffer.read(), buffer.depth()) == (b"abc", 0)


@pytest.mark.slow
def test_a_kill_after_the_reply_keeps_the_operation(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc", durable=True))
    assert buffer.run_with_crash(lambda: buffer.splice(0, 0, b"x"), 64, 0) is False  # 64 ms: the reply comes first
    assert (buffer.read(), buffer.depth()) == (b"xabc", 1)


@pytest.mark.parametrize(("where", "expected"), [("before-sync", b"abc"), ("after-sync", b"xabc")])
@pytest.mark.slow
def test_a_sigkill_inside_a_durable_splice_recovers_the_state_before_or_after(where: str, expected: bytes) -> None:
    """The server pauses before (or after) the fsync of the splice's record; the
    kill, 4 ms into the request, lands in the pause: an unsynced record is lost
    (the state before), a synced one is kept (the state after)."""
    server = SubprocessServer(fake("slow_durable", where), TIMEOUT)
    try:
        buffer = remote(server, BufferConfig(b"abc", durable=True))
        killed = buffer.connection.process
        outcome: list[str] = []

        def splice() -> None:
            try:
                buffer.splice(0, 0, b"x")
            except Exception as refusal:  # as the machine's action does: a refusal is kept, the kill passes
                outcome.append(repr(refusal))

        assert buffer.run_with_crash(splice, 4, 0) is True and outcome == []
        assert killed.returncode == -signal.SIGKILL
        assert buffer.read() == expected and buffer.depth() == len(expected) - 3
        buffer.splice(0, 0, b"y")  # the recovered journal takes new records
        assert buffer.read() == b"y" + expected
    finally:
        server.close()


def test_the_crash_signal_is_a_base_exception() -> None:
    assert issubclass(ServerKilled, BaseException) and not issubclass(ServerKilled, Exception)


@pytest.mark.slow
def test_a_corrupt_journal_is_refused_after_a_real_restart_and_repaired(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc", durable=True))
    for insert in (b"1", b"2", b"3"):
        buffer.splice(0, 0, insert)
    assert buffer.corrupt_committed_record("swap") is True
    with pytest.raises(RecoveryError, match="out of order"):
        buffer.restart()
    buffer.repair_corruption()
    assert (buffer.read(), buffer.depth()) == (b"321abc", 3)
    assert buffer.corrupt_committed_record("second_writer") is False  # the writer lock refused the intruder


@pytest.mark.slow
def test_an_armed_fault_survives_a_restart_and_refuses_the_next_splice(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc", durable=True))
    buffer.arm_journal_fault()
    buffer.restart()
    with pytest.raises(JournalError, match="No space left"):
        buffer.splice(0, 0, b"f")
    with pytest.raises(JournalError, match="refuses every operation until it is reopened"):
        buffer.splice(0, 0, b"g")  # the failed write poisoned the journal
    buffer.restart()
    buffer.splice(0, 0, b"g")  # the fault was spent, and the new process's journal is clean
    assert buffer.read() == b"gabc"


@pytest.mark.slow
def test_batched_mode_loses_what_was_not_flushed_on_a_real_kill(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"", durable=True, durability="batched"))
    buffer.splice(0, 0, b"a")
    buffer.flush()
    buffer.splice(1, 0, b"b")  # one record waiting: fewer than the journal syncs by itself
    buffer.restart()
    assert buffer.read() == b"a"


def test_the_capability_durability_needs_a_durable_buffer(reference: SubprocessServer) -> None:
    buffer = remote(reference, BufferConfig(b"abc"))
    with pytest.raises(HarnessError, match="durable buffer"):
        buffer.restart()
    assert Capability.DURABILITY in reference.hello.capabilities and isinstance(FileJournal, type)
