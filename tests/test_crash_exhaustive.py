"""R5 by exhaustion: crash every operation of many traces at every I/O call,
with every possible number of unsynced bytes lost, and check that recovery
always gives the model's state before or after the interrupted operation.

The Hypothesis machine (``rollcert certify --only R5``) samples crash points;
this test leaves none out for the traces it runs: every write, fsync,
truncation, rename and directory sync an operation makes, and at each one
every cut through the bytes written but not yet synced — every byte of a
torn record. The disk is :class:`rollcert.impl.storage.SimulatedDisk`; the same
journal code is crashed for real (SIGKILL) in ``tests/test_sigkill.py``.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter

import pytest
from _helpers import Seen
from _helpers import model_seen
from _helpers import perform
from _helpers import seen

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import FRAME
from rollcert.impl.file_journal import SERIAL_FLOOR
from rollcert.impl.file_journal import frame_spans
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import Checkpoint
from rollcert.impl.storage import SimulatedCrash
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.operations import Compact
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import initial_state
from rollcert.model.reference import step

TRACES = 60
OPERATIONS_PER_TRACE = 8


def random_trace(rng: random.Random) -> tuple[bytes, tuple[Operation, ...]]:
    """A trace the model accepts, drawn so that every operation writes to the journal."""
    initial = bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 6)))
    state = initial_state(initial)
    operations: list[Operation] = []
    while len(operations) < OPERATIONS_PER_TRACE:
        kind = rng.choice(["splice", "splice", "splice", "rollback", "compact", "checkpoint", "rollback_to"])
        operation: Operation
        if kind == "rollback" and state.depth:
            operation = Rollback(rng.randint(1, state.depth))
        elif kind == "compact" and state.depth:
            operation = Compact(rng.randint(0, state.depth))
        elif kind == "checkpoint":
            operation = TakeCheckpoint()
        elif kind == "rollback_to" and state.checkpoints:
            operation = RollbackTo(rng.randrange(len(state.checkpoints)))
        else:
            length = len(state.current)
            offset = rng.randint(0, length)
            operation = Splice(
                offset,
                rng.randint(0, min(3, length - offset)),
                bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 4))),
            )
        outcome = step(state, operation)
        if outcome.error is None:  # keep the trace to operations that succeed
            operations.append(operation)
            state = outcome.state
    return initial, tuple(operations)


def io_profile(disk: SimulatedDisk, operation: Operation, tokens: list[Checkpoint]) -> tuple[int, int]:
    """(I/O calls, most bytes one call can leave unsynced) of ``operation`` from
    the state on ``disk``, measured on a copy."""
    probe = disk.clone()
    buffer = open_durable_buffer(probe)
    before_calls, before_size = probe.io_events, len(probe.read(DEFAULT_NAME) or b"")
    perform(buffer, operation, list(tokens))
    after_size = len(probe.read(DEFAULT_NAME) or b"")
    written = after_size if isinstance(operation, Compact) else abs(after_size - before_size)
    return probe.io_events - before_calls, written


def crash_and_recover(
    disk: SimulatedDisk, operation: Operation, tokens: list[Checkpoint], io_event: int, lost: int
) -> tuple[Seen, bool]:
    """Crash a copy of ``disk`` during ``operation``; the recovered state, and
    whether a second crash-and-recover gives the same state again."""
    copy = disk.clone()
    buffer = open_durable_buffer(copy)
    copy.crash_at(io_event, lost)
    try:
        perform(buffer, operation, list(tokens))
    except SimulatedCrash:
        pass
    else:
        raise AssertionError(f"no crash at I/O call #{io_event} of {operation.describe()}")
    copy.restart()
    recovered = seen(open_durable_buffer(copy))
    copy.crash()
    copy.restart()
    return recovered, seen(open_durable_buffer(copy)) == recovered


@pytest.mark.slow
def test_every_crash_point_of_every_operation_recovers_before_or_after() -> None:
    rng = random.Random(20261130)
    traces = {random_trace(rng) for _ in range(TRACES * 2)}
    traces_run = sorted(traces, key=repr)[:TRACES]
    assert len(traces_run) >= 50, "need at least 50 distinct traces"
    outcomes: Counter[str] = Counter()
    bad: list[str] = []
    for initial, operations in traces_run:
        disk = SimulatedDisk()
        buffer = open_durable_buffer(disk, initial)
        tokens: list[Checkpoint] = []
        state = initial_state(initial)
        for index, operation in enumerate(operations):
            before = model_seen(state)
            after_state = step(state, operation).state
            after = model_seen(after_state)
            calls, written = io_profile(disk, operation, tokens)
            for io_event in range(calls):
                for lost in range(written + 2):  # every cut through the unsynced bytes, and none
                    recovered, stable = crash_and_recover(disk, operation, tokens, io_event, lost)
                    if recovered == before:
                        outcomes["before"] += 1
                    elif recovered == after:
                        outcomes["after"] += 1
                    else:
                        bad.append(
                            f"initial {initial!r}, operations {[op.describe() for op in operations[: index + 1]]}, "
                            f"crash at I/O call #{io_event} losing {lost} bytes: recovered {recovered}, "
                            f"expected {before} or {after}"
                        )
                    if not stable:
                        bad.append(f"recovery is not stable: a second restart changed the state ({operation})")
            perform(buffer, operation, tokens)
            state = after_state
            assert seen(buffer) == model_seen(state)
    assert not bad, f"{len(bad)} bad recoveries; first: {bad[0]}"
    # Not vacuous: both outcomes happen, many times (a torn record recovers to
    # "before", a crash after the fsync to "after").
    assert outcomes["before"] > 1000 and outcomes["after"] > 100, outcomes


def test_a_torn_record_is_cut_off_the_file() -> None:
    """After recovery from a torn final record the file ends at the last good
    record, so the next record is not appended after garbage."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    buffer.splice(1, 1, b"xyz")
    good_size = len(disk.read(DEFAULT_NAME) or b"")
    disk.crash_at(0, 3)  # the next record's write loses its last 3 bytes
    with contextlib.suppress(SimulatedCrash):
        buffer.splice(0, 0, b"hello")
    disk.restart()
    assert len(disk.read(DEFAULT_NAME) or b"") > good_size  # the torn bytes are on disk
    recovered = open_durable_buffer(disk)
    assert recovered.read() == b"axyzc" and recovered.depth == 1
    data = disk.read(DEFAULT_NAME) or b""
    floor_start, floor_end = frame_spans(data)[-1]
    # Cut back to the good size; then the open's serial floor (format 3), whole.
    assert (floor_start, floor_end) == (good_size, len(data)) and data[floor_start + FRAME.size] == SERIAL_FLOOR
    recovered.splice(0, 0, b"!")
    disk.crash()
    disk.restart()
    assert open_durable_buffer(disk).read() == b"!axyzc"


def test_every_record_of_every_trace_out_of_place_is_refused() -> None:
    """Record-level corruption (issue 12) at every record of the same traces:
    each record duplicated, dropped, swapped with the next and replaced by the
    same-numbered record of another journal. Recovery refuses each with
    RecoveryError naming a byte offset — except a drop of the final record,
    which is what a crash before its write leaves, and must recover the state
    before it (a state of the history)."""
    from rollcert.impl.file_journal import JournalReader
    from rollcert.impl.file_journal import frame_spans
    from rollcert.model.errors import RecoveryError
    from rollcert.targets.adapters.durable import foreign_journal
    from rollcert.targets.adapters.durable import record_level_corruption

    rng = random.Random(20261130)
    traces = sorted({random_trace(rng) for _ in range(TRACES * 2)}, key=repr)[:TRACES]
    foreign = foreign_journal()
    tally: Counter[str] = Counter()
    for initial, operations in traces:
        disk = SimulatedDisk()
        buffer = open_durable_buffer(disk, initial)
        tokens: list[Checkpoint] = []
        history = {(buffer.read(), buffer.revision)}
        for operation in operations:
            perform(buffer, operation, tokens)
            history.add((buffer.read(), buffer.revision))
        journal = disk.read(DEFAULT_NAME) or b""
        spans = frame_spans(journal)
        for index in range(len(spans)):
            for kind in ("duplicate", "drop", "swap", "transplant"):
                damaged = record_level_corruption(journal, kind, index, foreign)
                if damaged is None:
                    continue
                try:
                    recovered = JournalReader().read(damaged)
                except RecoveryError as error:
                    assert str(error).startswith("byte "), str(error)
                    tally[f"{kind}: refused"] += 1
                    continue
                assert kind == "drop" and index == len(spans) - 1, (
                    f"{kind} of record {index} recovered instead of being refused: {initial!r} {operations}"
                )
                assert (bytes(recovered.buffer), recovered.revision) in history
                tally["drop of the last record: an earlier state"] += 1
    assert all(tally[f"{kind}: refused"] > 200 for kind in ("duplicate", "drop", "swap", "transplant")), tally
