"""A target's declared size limits (protocol version 2 ``limits``, or
``Target.limits`` in process) are preconditions, not findings.

Found by a hostile probe: a version 2 server that declared a 2-byte insert limit
and a 6-byte buffer limit, and refused bigger edits with ``ValueError`` as the
protocol allows, was certified **violated** on R0, R1, R3, R5, R6 and S1 (exit
status 1): the machines sent 3-byte inserts and grew buffers past 6 bytes, and the
judge called each documented refusal a bug. The limits were recorded in the
certificate's notes and otherwise ignored. Now an operation over a limit is not
asked (``SizeLimits.exceeded_by``, through ``Target.sets_aside``), an initial
buffer over the buffer limit is cut to it, and a bug inside the limits is still
found.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rollcert.model.contract import Hunk
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.stateful_tests.certify import certify
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SizeLimits
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapters.bundled import TARGET
from rollcert.targets.adapters.bundled import bundled_factory
from rollcert.targets.adapters.subprocess_client import subprocess_target

FAKES = Path(__file__).parent / "fake_servers"
LIMITS = SizeLimits(max_buffer_bytes=6, max_insert_bytes=2)


# -- which operations are over the limits -------------------------------------------------


def test_an_insert_over_the_insert_limit_is_over() -> None:
    state = initial_state(b"ab")
    assert LIMITS.exceeded_by(state, Splice(0, 0, b"xyz"))
    assert not LIMITS.exceeded_by(state, Splice(0, 0, b"xy"))


def test_a_result_over_the_buffer_limit_is_over_and_one_at_it_is_not() -> None:
    state = initial_state(b"abcde")
    assert not LIMITS.exceeded_by(state, Splice(5, 0, b"f"))  # 6 bytes: at the limit
    assert LIMITS.exceeded_by(state, Splice(5, 0, b"fg"))  # 7 bytes
    assert not LIMITS.exceeded_by(state, Splice(0, 2, b"xy"))  # same length


def test_an_edit_the_model_refuses_for_another_reason_counts_by_its_size() -> None:
    """A server may check its limits first: ValueError where the model says
    JournalError is no bug when the edit was over the limits."""
    full = initial_state(b"abcdef")
    armed = step(full, ArmJournalFault()).state
    assert LIMITS.exceeded_by(armed, Splice(0, 0, b"a"))


def test_a_crash_counts_by_the_operation_it_interrupts() -> None:
    state = initial_state(b"")
    assert LIMITS.exceeded_by(state, CrashDuring(Splice(0, 0, b"aaa"), io_event=1, lost=0))
    assert not LIMITS.exceeded_by(state, CrashDuring(Splice(0, 0, b"aa"), io_event=1, lost=0))


def test_invalid_arguments_and_rollbacks_within_the_history_are_never_over() -> None:
    state = initial_state(b"abcdef")
    assert not LIMITS.exceeded_by(state, Splice(99, 0, b"x"))  # the target must refuse it anyway
    shrunk = step(state, Splice(0, 6, b"")).state
    assert not LIMITS.exceeded_by(shrunk, Rollback(1))  # back to 6 bytes


def test_a_diff_counts_by_its_replacements_and_its_result() -> None:
    state = diff_step(initial_diff_state(b"abcd"), TakeSnapshot()).state
    assert LIMITS.exceeded_by(state, ApplyDiff(0, "positional", (Hunk(0, 1, b"xyz"),)))
    assert LIMITS.exceeded_by(state, ApplyDiff(0, "positional", (Hunk(0, 0, b"xy"), Hunk(1, 1, b"zw"))))
    assert not LIMITS.exceeded_by(state, ApplyDiff(0, "positional", (Hunk(0, 1, b"xy"),)))


def test_no_limit_means_nothing_is_over() -> None:
    assert not SizeLimits().exceeded_by(initial_state(b""), Splice(0, 0, b"x" * 1000))


@pytest.mark.parametrize("value", [-1, 1.5, "6", True])
def test_a_limit_that_is_not_a_byte_count_is_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="max_buffer_bytes"):
        SizeLimits(max_buffer_bytes=value)


def test_an_initial_buffer_over_the_limit_is_cut_to_it() -> None:
    limited = replace(TARGET, limits=LIMITS)
    assert limited.buffer_config(BufferConfig(initial=b"abcdefgh")).initial == b"abcdef"
    assert limited.buffer_config(BufferConfig(initial=b"abc")).initial == b"abc"


# -- certification: refusals over the limits are no violations; bugs inside still are ------


class _Refusing:
    """The bundled buffer, refusing with ValueError whatever is over ``LIMITS``, as
    the protocol lets a server with limits do."""

    def __init__(self, config: BufferConfig) -> None:
        if len(config.initial) > 6:
            raise ValueError("an initial buffer over the declared 6 bytes")
        self.inner = bundled_factory(config)

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) > 2 or len(self.inner.read()) - delete_length + len(insert) > 6:
            raise ValueError("over the declared limits")
        self.inner.splice(offset, delete_length, insert)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def refusing_factory(config: BufferConfig) -> SystemUnderTest:
    return _Refusing(config)  # type: ignore[return-value]


@pytest.mark.slow
def test_an_in_process_target_refusing_over_its_limits_is_not_violated() -> None:
    # Its wrapper checks the limits before the buffer checks the types (a list insert gets
    # ValueError): it does not declare it checks arguments as model.contract does.
    target = replace(TARGET, name="bundled-limited", factory=refusing_factory, limits=LIMITS, checks_arguments=False)
    certificate = certify(target, only=("R0", "R1", "R6"))
    assert {pid: r.verdict for pid, r in certificate.results.items()} == {pid: "passed" for pid in ("R0", "R1", "R6")}


def test_without_its_declared_limits_the_same_target_is_judged_on_every_edit() -> None:
    """The control: the refusals are what the limits excuse (this was every
    limited target's certificate before the fix)."""
    target = replace(TARGET, name="bundled-undeclared", factory=refusing_factory)
    assert certify(target, only=("R0",)).results["R0"].verdict == "violated"


def _server(*arguments: str) -> Any:
    return subprocess_target([sys.executable, str(FAKES / "tiny_limits.py"), *arguments], timeout=20.0)


@pytest.mark.slow
def test_a_server_that_keeps_its_declared_limits_is_not_violated() -> None:
    target = _server()
    assert target.limits == LIMITS
    certificate = certify(target, only=("R0", "R6", "S1"))
    verdicts = {pid: r.verdict for pid, r in certificate.results.items()}
    assert "violated" not in verdicts.values(), verdicts
    assert verdicts["R0"] == "passed"


def test_the_limits_do_not_hide_a_bug_within_them() -> None:
    result = certify(_server("lying"), only=("R0",)).results["R0"]
    assert result.verdict == "violated"
    assert result.counterexample is not None
    assert all(len(getattr(s.operation, "insert", b"")) <= 2 for s in result.counterexample.steps)
