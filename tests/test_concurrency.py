"""The R7 machine: programs, real threads, the runner, the minimiser, verdicts.

Everything runs real threads against real buffers. Assertions that a correct
buffer *never* fails are exact; assertions that a broken one is caught rely on
many runs (each specimen fails a large share of runs of its program).
"""

from __future__ import annotations

import random
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.specimens import load_all
from rollcert.specimens._concurrent import ConcurrentPythonAdapter
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens.locked_naive_control import TARGET as LOCKED_NAIVE
from rollcert.stateful_tests import concurrency
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.concurrency import Program
from rollcert.stateful_tests.concurrency import certify_linearizability
from rollcert.stateful_tests.concurrency import history_key
from rollcert.stateful_tests.concurrency import minimise
from rollcert.stateful_tests.concurrency import program_from
from rollcert.stateful_tests.concurrency import programs
from rollcert.stateful_tests.concurrency import run_many
from rollcert.stateful_tests.concurrency import run_program
from rollcert.stateful_tests.concurrency import shrink_candidates
from rollcert.stateful_tests.concurrency import situations_reached
from rollcert.stateful_tests.concurrency import timeline
from rollcert.stateful_tests.linearizability import History
from rollcert.stateful_tests.linearizability import Observe
from rollcert.stateful_tests.linearizability import RollbackCall
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.stateful_tests.linearizability import check
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

#: The issue's example: b"abc" -> b"abc12" -> b"abc123456"; one thread rolls back
#: two steps while another looks at the length four times.
ISSUE_PROGRAM = Program(
    b"abc",
    (SpliceCall(Splice(3, 0, b"12")), SpliceCall(Splice(5, 0, b"3456"))),
    ((RollbackCall(Rollback(2)),), (Observe("length"),) * 4),
)


def specimen(name: str):  # type: ignore[no-untyped-def]
    target = load_all()[name].target
    assert target is not None
    return target


@settings(max_examples=50, database=None)
@given(programs(BUNDLED))
def test_drawn_programs_are_valid_and_shrink_to_valid_programs(program: Program) -> None:
    assert program.is_valid()
    assert 2 <= len(program.threads) <= 3
    for candidate in shrink_candidates(program):
        assert candidate.size <= program.size


def test_a_run_records_every_call_and_restores_the_switch_interval() -> None:
    before = sys.getswitchinterval()
    history = run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=True, seed=1)
    assert sys.getswitchinterval() == before
    assert [c.thread for c in history.calls] == ["prefix", "prefix", "T1", "T2", "T2", "T2", "T2"]
    assert all(c.returned is not None and c.returned >= c.called for c in history.calls)
    assert check(history).verdict == "linearizable"


def test_correct_buffers_never_fail_the_issue_program() -> None:
    for target in (BUNDLED, LOCKED_NAIVE):
        assert run_many(target, ISSUE_PROGRAM, 40, seed=0) is None, target.name


def test_unlocked_observations_fail_the_issue_program_with_a_timeline() -> None:
    failure = run_many(specimen("unlocked_observations"), ISSUE_PROGRAM, 40, seed=0)
    assert failure is not None and failure.failed >= 1
    assert failure.result.verdict == "not_linearizable"
    rows = timeline(failure.history)
    assert len(rows) == len({call.thread for call in failure.history.calls})  # one lane per thread
    assert all("[" in row and "]" in row for row in rows)
    assert sum(row.count("[#") for row in rows) == len(failure.history.calls)


def test_minimiser_keeps_a_failing_program_and_never_grows_it() -> None:
    noisy = Program(
        b"abc",
        ISSUE_PROGRAM.prefix,
        ((RollbackCall(Rollback(2)), Observe("read")), (Observe("length"),) * 4, (Observe("depth"),)),
    )
    failure = run_many(specimen("unlocked_observations"), noisy, 40, seed=3)
    assert failure is not None
    smaller = minimise(specimen("unlocked_observations"), failure, 16, seed=3)
    assert smaller.program.size <= noisy.size
    assert smaller.result.verdict == "not_linearizable"


@pytest.mark.slow
def test_r7_is_violated_on_a_specimen_with_a_timeline_counterexample() -> None:
    result = certify_linearizability(specimen("lock_per_rollback_step"), PROFILES["quick"], 0)
    assert result.verdict == "violated", result.reason
    assert "Timeline" in result.reason and "failed" in result.reason and "Could not be placed" in result.reason
    assert result.counterexample is not None and result.counterexample.history is not None
    assert result.counterexample.history.stuck and result.counterexample.history.failed >= 1


@pytest.mark.slow
def test_r7_passes_on_the_control_through_certify_with_overlap_covered() -> None:
    certificate = certify(LOCKED_NAIVE, profile="quick", seed=0, only=("R7",))
    result = certificate.results["R7"]
    assert result.verdict == "passed", result.reason
    assert all(count > 0 for count in result.coverage.values()), result.coverage
    # R7 states its world like every property: every dimension it asks reached, the rest said why not.
    assert all(result.world["dimensions"].values()), result.world
    assert "removed_past_4096" in result.world["dimensions"] and "depth_past_16" in result.world["not_exercised"]


def test_r7_is_not_assessed_without_the_concurrent_capability() -> None:
    result = certify_linearizability(specimen("fifo_replay"), PROFILES["quick"], 0)
    assert result.verdict == "not_assessed"
    assert "concurrent" in result.reason


# -- what the runner and the minimiser spend ---------------------------------------------------


def _r7_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rollcert-R7-")]


def test_runs_reuse_the_same_threads() -> None:
    run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=True, seed=1)
    first = _r7_threads()
    for seed in range(5):
        run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=seed % 2 == 0, seed=seed)
    assert first and _r7_threads() == first


class _StuckAdapter(ConcurrentPythonAdapter):
    """``length()`` waits until the test lets it go: a deadlocked SUT."""

    released = threading.Event()

    def length(self) -> int:
        self.released.wait(60)
        return super().length()


STUCK = replace(
    LOCKED_NAIVE,
    name="stuck",
    factory=lambda config: _StuckAdapter(LockedNaiveBuffer(config.initial)),
)


def test_a_hung_thread_is_a_harness_error_and_the_next_run_gets_fresh_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(concurrency, "HANG_SECONDS", 0.5)
    try:
        with pytest.raises(HarnessError, match="did not finish"):
            run_program(STUCK, ISSUE_PROGRAM, forced_yields=False, seed=0)
        history = run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=False, seed=0)
        assert check(history).verdict == "linearizable"
    finally:
        _StuckAdapter.released.set()


class _Interrupting:
    """A "done" queue whose wait is interrupted, as by Ctrl-C."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def get(self, timeout: float) -> int:
        raise KeyboardInterrupt

    def put(self, item: int) -> None:
        self.real.put(item)


def test_an_interrupted_run_retires_its_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=False, seed=0)
    pool = concurrency._pool()
    monkeypatch.setattr(pool, "_done", _Interrupting(pool._done))
    with pytest.raises(KeyboardInterrupt):
        run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=False, seed=0)
    # The interrupted jobs may still be running: the next run must not share their threads.
    assert pool.broken and concurrency._pool() is not pool
    assert check(run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=False, seed=0)).verdict == "linearizable"


class _LengthOffAtDepthTwo(ConcurrentPythonAdapter):
    """A sequential bug, so that whether a program fails does not depend on the
    interleaving: ``length()`` is one too many once two records are logged."""

    def length(self) -> int:
        return super().length() + (self.depth() >= 2)


LENGTH_OFF = replace(
    LOCKED_NAIVE,
    name="length-off",
    factory=lambda config: _LengthOffAtDepthTwo(LockedNaiveBuffer(config.initial)),
)


def test_minimiser_runs_each_candidate_once_a_single_thread_once_and_stops_at_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two equal prefix inserts: dropping either gives the same program (depth 1,
    # which passes), so a minimiser that does not remember what it tried runs it twice.
    program = Program(
        b"",
        (SpliceCall(Splice(0, 0, b"a")), SpliceCall(Splice(0, 0, b"a"))),
        ((Observe("length"),), (Observe("read"),)),
    )
    failure = run_many(LENGTH_OFF, program, 8, seed=0)
    assert failure is not None and failure.failed == 8  # every run: no interleaving needed
    runs: Counter[Program] = Counter()
    real_run_program = concurrency.run_program

    def counting_run_program(target: Target, candidate: Program, **options: Any) -> History:
        runs[candidate] += 1
        return real_run_program(target, candidate, **options)

    monkeypatch.setattr(concurrency, "run_program", counting_run_program)
    smaller = minimise(LENGTH_OFF, failure, 8, seed=0)
    assert smaller.program.threads == ((Observe("length"),),)
    assert len(smaller.program.prefix) == 2
    single = [candidate for candidate in runs if len(candidate.threads) == 1]
    assert single and all(runs[candidate] == 1 for candidate in single), runs
    # A two-thread candidate either fails in its first run (every one keeping the
    # length observation does) or is run 8 times.
    for candidate, count in runs.items():
        if len(candidate.threads) == 2:
            assert count == (1 if Observe("length") in sum(candidate.threads, ()) else 8), (candidate, count)


def test_histories_with_the_same_key_are_judged_alike_and_the_key_sees_the_order() -> None:
    history = run_program(BUNDLED, ISSUE_PROGRAM, forced_yields=True, seed=2)

    def retimed(h: History, time: Callable[[int], int]) -> History:
        return History(
            h.initial,
            tuple(replace(c, called=time(c.called), returned=time(c.returned or 0)) for c in h.calls),
        )

    stretched = retimed(history, lambda t: 3 * t + 7)  # other times, the same order of events
    assert history_key(stretched) == history_key(history)
    result, again = check(history), check(stretched)
    assert (result.verdict, result.order) == (again.verdict, again.order)
    assert situations_reached(history, result.order) == situations_reached(stretched, again.order)
    # Every call at one instant: now they all overlap, another history to the checker.
    assert history_key(retimed(history, lambda t: 0)) != history_key(history)


def test_a_program_is_a_function_of_its_word() -> None:
    # Certificates are reproducible because the drawn word alone makes the program.
    kinds = ["splice", "rollback", "read", "length", "checkpoint", "rollback_to"]
    first = [program_from(random.Random(word), kinds, True) for word in range(50)]
    assert first == [program_from(random.Random(word), kinds, True) for word in range(50)]
    assert len(set(first)) > 40 and all(program.is_valid() for program in first)
