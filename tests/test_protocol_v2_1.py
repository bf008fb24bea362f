"""``rollcert-protocol/2.1``: the gaps outside authors of tool servers hit, one
fake server each (``tests/fake_servers/``), with real processes.

- a one-policy history bound declared at the hello (``evict_oldest_only.py``);
- a diffs-only server that implements no ``splice`` (``diffs_only.py``);
- a slow start counted against the hello timeout, not the request timeout (``slow_hello.py``);
- ``smoke`` in the declared alphabet (``strict_alphabet.py``) and within the declared limits (``tiny_limits.py``);
- findings files that name tool writes, foreign tokens and re-reverts;
- the certificate's wording: "1 step", one block for a counterexample several properties share.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rollcert.command.smoke import EXIT_ERROR
from rollcert.command.smoke import EXIT_OK
from rollcert.command.smoke import smoke
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.reports.certificate import steps_phrase
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.adapters.subprocess_client import RemoteBuffer
from rollcert.targets.adapters.subprocess_client import subprocess_target
from rollcert.targets.findings import parse_findings
from rollcert.targets.protocol import PROTOCOL_VERSION_2
from rollcert.targets.protocol import PROTOCOL_VERSION_2_1
from rollcert.targets.protocol import ProtocolError
from rollcert.targets.protocol import Request
from rollcert.targets.protocol import decode_reply
from rollcert.targets.protocol import plain_write_op

FAKES = Path(__file__).resolve().parent / "fake_servers"


def fake(name: str, *arguments: str) -> list[str]:
    return [sys.executable, str(FAKES / f"{name}.py"), *arguments]


def smoke_lines(target: object) -> tuple[int, list[str]]:
    lines: list[str] = []
    status = smoke(target, lines.append)  # type: ignore[arg-type]
    return status, lines


# -- history_bound -------------------------------------------------------------------------


@pytest.mark.slow
def test_a_one_policy_history_is_declared_at_the_hello_and_asked_only_its_policy() -> None:
    target = subprocess_target(fake("evict_oldest_only"))
    assert target.notes["protocol"] == PROTOCOL_VERSION_2_1
    assert target.history_bound == HistoryBound("evict_oldest", "an undo stack of N entries that drops the oldest")
    assert "evict_oldest only" in target.notes["history bound"]
    assert target.buffer_config(BufferConfig(b"ab", capacity=1, policy="reject")).policy == "evict_oldest"
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    assert any(line.startswith("ok    bounded") for line in lines), lines


@pytest.mark.slow
def test_the_same_server_over_version_2_cannot_say_it_and_is_asked_both_policies() -> None:
    """The gap 2.1 closes, kept visible: version 2 has nowhere to declare the bound."""
    target = subprocess_target(fake("evict_oldest_only", "v2"))
    assert target.notes["protocol"] == PROTOCOL_VERSION_2 and target.history_bound is None
    status, lines = smoke_lines(target)
    assert status == EXIT_ERROR
    assert any(line.startswith("ERROR bounded") and "policy 'reject'" in line for line in lines), lines


def hello_reply(**result: object) -> object:
    hello = {
        "protocol": PROTOCOL_VERSION_2_1,
        "name": "x",
        "version": "1",
        "capabilities": ["core"],
        "limits": {"alphabet": None, "max_buffer_bytes": None, "max_insert_bytes": None},
        **result,
    }
    request = Request(1, "hello", {"protocol": PROTOCOL_VERSION_2_1}, PROTOCOL_VERSION_2_1)
    return decode_reply({"id": 1, "ok": True, "result": hello}, request)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"history_bound": {"policy": "evict_oldest"}}, "needs capability 'bounded'"),
        ({"capabilities": ["core", "bounded"], "history_bound": {"policy": "newest"}}, "'policy' must be one of"),
        ({"capabilities": ["core", "bounded"], "history_bound": "evict_oldest"}, "must be null or an object"),
        ({"capabilities": ["core", "bounded"], "history_bound": {"policy": "reject", "size": 3}}, "unknown field 'size'"),
        (
            {"capabilities": ["core", "bounded"], "history_bound": {"policy": "reject", "description": "a\x1b[2J"}},
            "printable text",
        ),
    ],
)
def test_a_malformed_history_bound_is_a_broken_handshake(result: dict[str, object], message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        hello_reply(**result)


def test_a_history_bound_may_be_absent_or_null() -> None:
    assert hello_reply().history_bound is None  # type: ignore[attr-defined]
    assert hello_reply(history_bound=None).history_bound is None  # type: ignore[attr-defined]
    bound = hello_reply(capabilities=["core", "bounded"], history_bound={"policy": "reject"})
    assert bound.history_bound == HistoryBound("reject", "")  # type: ignore[attr-defined]


def test_a_version_2_answer_to_the_2_1_hello_is_a_version_2_server() -> None:
    """A v2 server that never looked at the version asked keeps working."""
    request = Request(1, "hello", {"protocol": PROTOCOL_VERSION_2_1}, PROTOCOL_VERSION_2_1)
    hello = {
        "protocol": PROTOCOL_VERSION_2,
        "name": "x",
        "version": "1",
        "capabilities": ["diffs"],
        "limits": {"alphabet": None, "max_buffer_bytes": None, "max_insert_bytes": None},
        "history_bound": {"policy": "reject"},  # not a field of version 2: ignored
    }
    decoded = decode_reply({"id": 1, "ok": True, "result": hello}, request)
    assert decoded.protocol == PROTOCOL_VERSION_2 and decoded.history_bound is None  # type: ignore[attr-defined]


# -- the diffs-only set ------------------------------------------------------------------------


def test_plain_edits_go_as_write_only_to_a_2_1_server_without_core() -> None:
    diffs = frozenset({Capability.DIFFS})
    assert plain_write_op(PROTOCOL_VERSION_2_1, diffs) == "write"
    assert plain_write_op(PROTOCOL_VERSION_2, diffs) == "splice"  # version 2 servers keep getting splice
    assert plain_write_op(PROTOCOL_VERSION_2_1, diffs | {Capability.CORE}) == "splice"


def test_a_diffs_only_server_is_never_sent_splice() -> None:
    """The fake answers splice with ProtocolError, which would be an ERROR line."""
    target = subprocess_target(fake("diffs_only"))
    assert target.capabilities == frozenset({Capability.DIFFS})
    assert "write" in target.notes["plain edits"]
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    assert any(line.startswith("ok    diffs") for line in lines), lines
    buffer = target.factory(BufferConfig(b"abc"))
    assert isinstance(buffer, RemoteBuffer)
    try:
        buffer.splice(1, 1, b"XY")
        assert buffer.read() == b"aXYc"
        with pytest.raises(ValueError, match="outside the buffer"):  # the contract's refusal, nothing sent
            buffer.splice(9, 0, b"z")
        assert buffer.read() == b"aXYc"
    finally:
        buffer.close()


# -- the hello timeout ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_slow_start_counts_against_the_hello_timeout_not_the_request_timeout() -> None:
    target = subprocess_target(fake("slow_hello", "1.5"), timeout=0.5)
    assert "handshake" not in target.notes, target.notes
    assert target.notes["timeout"] == "0.5 s per request, 120 s for the hello"
    buffer = target.factory(BufferConfig(b"abc"))
    try:
        buffer.splice(0, 0, b"x")
        assert buffer.read() == b"xabc"
    finally:
        buffer.close()
    broken = subprocess_target(fake("slow_hello", "1.5"), timeout=30.0, hello_timeout=0.5)
    assert "within the 0.5 s hello timeout ($ROLLCERT_PROTOCOL_HELLO_TIMEOUT; hung?)" in broken.notes["handshake"]


def test_a_bad_hello_timeout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from rollcert.targets.adapters.subprocess_client import default_hello_timeout

    monkeypatch.setenv("ROLLCERT_PROTOCOL_HELLO_TIMEOUT", "inf")
    with pytest.raises(ValueError, match="ROLLCERT_PROTOCOL_HELLO_TIMEOUT"):
        default_hello_timeout()
    monkeypatch.setenv("ROLLCERT_PROTOCOL_HELLO_TIMEOUT", "45")
    assert default_hello_timeout() == 45.0


# -- smoke in the target's alphabet and limits ------------------------------------------------------


@pytest.mark.slow
def test_smoke_asks_a_target_in_its_declared_alphabet() -> None:
    """The fake answers an undocumented error for any byte outside x, y, z and a line break."""
    target = subprocess_target(fake("strict_alphabet"))
    assert target.alphabet == b"xyz\n"
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    assert any("alphabet" in line for line in lines)
    assert not any("insert=b'X" in line or "insert=b'a" in line for line in lines), lines


@pytest.mark.slow
def test_smoke_skips_and_names_a_step_over_the_declared_limits() -> None:
    target = subprocess_target(fake("tiny_limits"))
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    assert any("over the declared size limits" in line for line in lines), lines


# -- findings vocabulary ----------------------------------------------------------------------------

FINDINGS = """
[[finding]]
name = "other_writer_ignored"
property = "S1"
operation = "tool_write"
when = "offset == 0"
reason = "a write by another writer at the start"

[[finding]]
name = "foreign_token_taken"
property = "R3"
operation = "rollback_to_foreign"
reason = "another buffer's checkpoint is taken as this one's"

[[finding]]
name = "second_revert_fails"
property = "R3"
operation = "rollback_to"
when = "current"
reason = "a checkpoint can be reverted to once: the second revert to it fails"
"""


def test_findings_name_tool_writes_foreign_tokens_and_re_reverts() -> None:
    tool_write, foreign, re_revert = parse_findings(FINDINGS)
    diff_state = diff_step(initial_diff_state(b"abc"), TakeSnapshot()).state
    assert tool_write.applies(diff_state, ToolWrite(0, 1, b"x"))
    assert not tool_write.applies(diff_state, ToolWrite(1, 1, b"x"))
    assert not tool_write.applies(diff_state, Splice(0, 1, b"x"))  # a splice finding and a tool write one differ
    assert not tool_write.applies(diff_state, ToolWrite(0, 9, b"x"))  # invalid calls are the contract's

    state = step(initial_state(b"abc"), TakeCheckpoint()).state
    assert foreign.applies(state, RollbackToForeign()) and not foreign.applies(state, RollbackTo(0))
    edited = step(state, Splice(0, 0, b"x")).state
    assert not re_revert.applies(edited, RollbackTo(0))  # a revert that undoes something
    reverted = step(edited, RollbackTo(0)).state
    assert re_revert.applies(reverted, RollbackTo(0))  # the same checkpoint again: a re-revert
    dead = step(step(state, Rollback(0)).state, Splice(0, 0, b"y")).state
    assert not re_revert.applies(dead, RollbackTo(0))


def test_a_findings_file_sets_a_tool_write_aside_on_a_subprocess_target(tmp_path: Path) -> None:
    from rollcert.targets.findings import with_findings

    (tmp_path / "findings.toml").write_text(FINDINGS.replace("offset == 0", "offset == 5"), encoding="utf-8")
    target = with_findings(subprocess_target(fake("diffs_only")), tmp_path / "findings.toml")
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    diffs = next(line for line in lines if line.startswith("ok    diffs"))
    assert "set aside: tool writes: splice(offset=5" in diffs and "other_writer_ignored" in diffs, diffs


# -- wording ----------------------------------------------------------------------------------------


def test_a_count_of_steps_is_in_proper_english() -> None:
    assert (steps_phrase(1), steps_phrase(2), steps_phrase(0)) == ("1 step", "2 steps", "0 steps")


def test_a_counterexample_two_properties_share_is_one_block_titled_with_both() -> None:
    """A diff applier's R0 takes S1's counterexample: one block "R0 and S1", never
    "S1: the same counterexample as R0" under a block titled S1."""
    from rollcert.reports.certificate import render_markdown
    from rollcert.reports.certificate import render_text
    from rollcert.specimens import load_all
    from rollcert.stateful_tests.family import Observed
    from rollcert.stateful_tests.family import StepRecord
    from rollcert.stateful_tests.verdicts import CertificateData
    from rollcert.stateful_tests.verdicts import Counterexample
    from rollcert.stateful_tests.verdicts import PropertyResult

    target = load_all()["best_effort_log"].target
    assert target is not None
    step = StepRecord(1, Splice(0, 0, b""), b"", Observed(None, b"", 1, 1), Observed(None, b"x", 1, 1), False)
    found_by_s1 = Counterexample("S1", target.name, b"", None, "reject", (step,), "")
    results = {
        pid: PropertyResult(pid, "violated", "", counterexample=found_by_s1, reason="x") for pid in ("R0", "S1")
    }
    certificate = CertificateData(target, "quick", 0, results)
    text = render_text(certificate)
    assert text.count("Counterexample for R0 and S1 (1 step)") == 1 and "same counterexample" not in text
    assert "counterexample of 1 step (below)" in text
    markdown = render_markdown(certificate)
    assert markdown.count("## R0 and S1 counterexample") == 1 and "The same as" not in markdown
