"""R5 in batched durability mode (issue 12): the model's window, hand-checked,
and the judge on replays of batched traces — a recovery to an older state
inside the window is accepted, one outside it is a violation, and the
certificate names the mode."""

from __future__ import annotations

import json

import pytest

from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Compact
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import LOST_SERIAL
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.model.reference import initial_state
from rollcert.model.reference import recovery_window
from rollcert.model.reference import step
from rollcert.reports.certificate import format_counterexample
from rollcert.reports.certificate import to_json
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import BEFORE_THE_CRASH_POINT
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.durable import DURABLE_TARGET

Seen = tuple[bytes, int, int]


def run(state: ModelState, *operations: Operation) -> ModelState:
    for operation in operations:
        outcome = step(state, operation)
        assert outcome.error is None, (operation, outcome.message)
        state = outcome.state
    return state


def seen(states: tuple[ModelState, ...]) -> list[Seen]:
    return [(state.current, state.depth, state.revision) for state in states]


# -- the model ------------------------------------------------------------------------------------


def test_per_operation_mode_recovers_only_the_current_state_and_a_flush_changes_nothing() -> None:
    state = run(initial_state(b"ab"), Splice(0, 0, b"x"), Splice(3, 0, b"y"))
    assert recovery_window(state) == (state,)
    assert step(state, Flush()).state == state
    assert step(state, Restart()) == Outcome(state)  # no window, no error


def test_the_batched_window_runs_from_the_last_flush_to_the_crash_point() -> None:
    state = run(initial_state(b"", durability="batched"), Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"), Splice(2, 0, b"c"))
    assert seen(recovery_window(state)) == [(b"a", 1, 1), (b"ab", 2, 2), (b"abc", 3, 3)]
    # An idle crash: the current state first, then every earlier state of the window, each durable now.
    outcome = step(state, Restart())
    assert outcome.error is None
    assert seen((outcome.state,)) == [(b"abc", 3, 3)]
    assert seen(outcome.window) == [(b"a", 1, 1), (b"ab", 2, 2)]
    assert all(s.since_flush == () for s in (outcome.state, *outcome.window))
    # A flush closes the window; so does a compaction (it rewrites the journal, synced).
    assert recovery_window(run(state, Flush())) == (run(state, Flush()),)
    assert len(recovery_window(run(state, Compact(1)))) == 1


def test_a_multi_step_rollback_is_one_record_so_its_middle_states_are_not_in_the_window() -> None:
    state = run(initial_state(b"", durability="batched"), Splice(0, 0, b"a"), Splice(1, 0, b"b"), Splice(2, 0, b"c"), Flush())
    state = run(state, Rollback(2))
    # Revision 5: three splices and a two-step rollback; a recovery gives each state its own revision.
    assert seen(recovery_window(state)) == [(b"abc", 3, 3), (b"a", 1, 5)]


def test_a_refused_operation_leaves_the_window_as_it_was() -> None:
    state = run(initial_state(b"q", durability="batched"), Splice(0, 0, b"a"), ArmJournalFault())
    outcome = step(state, Splice(0, 0, b"b"))
    assert outcome.error is not None
    assert seen(recovery_window(outcome.state)) == seen(recovery_window(state))


def test_a_crash_during_an_operation_in_batched_mode_allows_after_before_and_every_unflushed_state() -> None:
    state = run(initial_state(b"", durability="batched"), Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"))
    outcome = step(state, CrashDuring(Splice(2, 0, b"c"), 0, 1))
    assert outcome.also_acceptable is not None
    assert seen((outcome.state, outcome.also_acceptable, *outcome.window)) == [
        (b"abc", 3, 3),  # after
        (b"ab", 2, 2),  # before (the crash point)
        (b"a", 1, 1),  # the last flush
    ]
    readings = ROLLBACK.predict(state, CrashDuring(Splice(2, 0, b"c"), 0, 1)).readings
    assert [r.note for r in readings][2:] == [BEFORE_THE_CRASH_POINT]


def test_a_checkpoint_of_a_lost_state_names_nothing_even_when_its_serial_comes_back() -> None:
    state = run(initial_state(b"", durability="batched"), Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"), TakeCheckpoint())
    lost_serial = state.checkpoints[0][0]
    older = step(state, Restart()).window[0]
    assert older.current == b"a" and older.checkpoints == ((LOST_SERIAL, 2),)
    again = run(older, Splice(1, 0, b"b"))
    assert again.serials[-1] == lost_serial  # the journal hands the serial out again ...
    assert step(again, RollbackTo(0)).error is UnreachableRollbackError  # ... the checkpoint stays dead


def test_flush_has_a_codec_entry_and_a_bad_mode_is_refused() -> None:
    assert operation_from_json(operation_to_json(Flush())) == Flush()
    assert Flush().describe() == "flush()"
    with pytest.raises(ValueError):
        initial_state(b"", durability="sometimes")  # type: ignore[arg-type]


# -- replays, traces, certificates -------------------------------------------------------------

BATCHED = BufferConfig(b"", durable=True, durability="batched")


def test_a_batched_journal_that_recovers_an_older_state_inside_the_window_is_accepted() -> None:
    # Nothing syncs between the flush and the crash (the adapter's journal syncs
    # every 3 records): the idle crash loses the second splice.
    steps = replay(ROLLBACK, DURABLE_TARGET, BATCHED, [Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"), Restart()])
    last = steps[-1]
    assert last.ok and (last.actual.buffer, last.actual.depth) == (b"a", 1)
    assert last.note == BEFORE_THE_CRASH_POINT


def test_the_same_trace_in_per_operation_mode_loses_nothing() -> None:
    config = BufferConfig(b"", durable=True)
    steps = replay(ROLLBACK, DURABLE_TARGET, config, [Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"), Restart()])
    assert (steps[-1].actual.buffer, steps[-1].note) == (b"ab", "")


def test_a_recovery_from_before_the_last_flush_is_a_violation() -> None:
    target = load_all()["flush_without_sync"].target
    assert target is not None
    with pytest.raises(Violation) as raised:
        replay(ROLLBACK, target, BATCHED, [Splice(0, 0, b"a"), Flush(), Restart()])
    last = raised.value.steps[-1]
    assert (last.actual.buffer, last.expected.buffer) == (b"", b"a")


def test_a_trace_carries_the_mode_and_refuses_a_bad_one() -> None:
    record = trace_json(ROLLBACK, BATCHED, [Flush()])
    assert record["durability"] == "batched"
    _, config, operations = parse_trace(json.dumps(record))
    assert (config, operations) == (BATCHED, [Flush()])
    for bad in ({**record, "durability": "sometimes"}, {**record, "durable": False}):
        with pytest.raises(ValueError, match="durability"):
            parse_trace(json.dumps(bad))


@pytest.mark.slow
def test_the_certificate_names_the_batched_mode_of_a_counterexample() -> None:
    target = load_all()["flush_without_sync"].target
    assert target is not None
    certificate = certify(target, only=("R5",), seed=0)
    counterexample = certificate.results["R5"].counterexample
    assert counterexample is not None and counterexample.durability == "batched"
    assert "on a durable journal (batched)" in format_counterexample(counterexample)
    record = to_json(certificate)["properties"]["R5"]["counterexample"]
    assert record["durability"] == "batched" and record["trace"]["durability"] == "batched"


def test_a_checkpoint_of_a_state_a_batched_crash_lost_stays_dead_on_the_journal() -> None:
    """The lost-checkpoint ABA, fixed: the journal used to hand the lost serial
    out again after the recovery, so the token of the lost state b'ab' was
    accepted and landed on b'ac', a state it never named. A reopened journal
    now starts a new block of serials, so the token names nothing and is refused."""
    trace = [Splice(0, 0, b"a"), Flush(), Splice(1, 0, b"b"), TakeCheckpoint(), Restart(), Splice(1, 0, b"c"), Splice(2, 0, b"d")]
    steps = replay(ROLLBACK, DURABLE_TARGET, BATCHED, [*trace, RollbackTo(0)])
    assert steps[4].note == BEFORE_THE_CRASH_POINT  # the crash did lose the checkpointed state
    last = steps[-1]
    assert last.ok and last.actual.error == "UnreachableRollbackError"
    assert (last.actual.buffer, last.actual.depth) == (b"acd", 3)  # nothing changed


def test_serials_of_a_lost_state_are_never_handed_out_again_in_either_mode() -> None:
    """On the journal itself, across crashes that lose what was not synced and
    reopenings in either mode: no serial handed out before a crash comes back
    (each reopening's floor survives the crashes after it)."""
    from rollcert.impl.file_journal import Durability
    from rollcert.impl.file_journal import FileJournal
    from rollcert.impl.file_journal import open_durable_buffer
    from rollcert.impl.storage import SimulatedDisk

    disk = SimulatedDisk()
    unsynced = Durability.batched(every_records=None, every_ms=None)
    buffer = open_durable_buffer(disk, b"", durability=unsynced)
    handed_out = {buffer.checkpoint().serial}
    losses = 0
    for durability in (unsynced, unsynced, Durability.per_operation(), unsynced, Durability.per_operation()):
        for number in range(3):
            buffer.splice(0, 0, b"%d" % number)
            serial = buffer.checkpoint().serial
            assert serial not in handed_out
            handed_out.add(serial)
        journal = buffer.journal
        assert isinstance(journal, FileJournal)
        before_crash = buffer.read()
        disk.crash()
        disk.restart()
        buffer = open_durable_buffer(disk, durability=durability)
        losses += buffer.read() != before_crash
    assert losses >= 2  # the batched sessions did lose records (and their serials)


def test_a_crash_during_an_operation_refused_for_its_arguments_still_crashes() -> None:
    """A shrunk trace can crash an operation that is valid on the model's first
    reading but not on the one the journal followed: here the first crash
    recovers 'aaa' at depth 1 (a state of the window), the rollback makes it
    'aa', and splice(2, 1) runs past the end. The adapter crashes the machine
    after the refusal all the same, losing the unsynced rollback; a model that
    predicted the refusal alone called the bundled journal's correct recovery a
    lost acknowledged state (the minimiser kept it as an R5 counterexample)."""
    batched = BufferConfig(b"aa", durable=True, durability="batched")
    operations = [
        Splice(0, 0, b"a"),
        Splice(0, 0, b""),
        Rollback(1),
        CrashDuring(Splice(0, 0, b""), 1, 0),
        Rollback(1),
        CrashDuring(Splice(2, 1, b""), 0, 0),
    ]
    steps = replay(ROLLBACK, DURABLE_TARGET, batched, operations)
    assert steps[-1].actual.error == "ValueError" and steps[-1].actual.buffer == b"aaa"
