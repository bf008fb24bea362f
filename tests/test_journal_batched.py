"""Batched durability (issue 12): R5's batched variant, checked at every crash point.

In batched mode a record is written before the buffer changes but synced only
on ``flush()``, every N records or every T ms. The promise
(``rollcert.model.properties.R5_BATCHED``): after a crash, recovery yields a
state of the history at or after the last completed flush and at or before the
crash point. Here every I/O call of every operation of many random batched
traces is crashed, with every number of unsynced bytes lost, on the simulated
disk, and the recovered state is checked against the model's window
(``rollcert.model.reference.recovery_window`` of a batched model, plus the
state after the interrupted operation). Real files follow: a
child process in batched mode killed with SIGKILL, and the sync triggers.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journal import BaseMeta
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import RealDirectory
from rollcert.impl.storage import SimulatedCrash
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.operations import Compact
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import recovery_window
from rollcert.model.reference import step

TRACES = 25
OPERATIONS_PER_TRACE = 10
#: Small enough that traces cross several automatic syncs.
EVERY_RECORDS = 3

Seen = tuple[bytes, int, int]


def seen(buffer: JournaledBuffer) -> Seen:
    return buffer.read(), buffer.depth, buffer.revision


def model_seen(state: ModelState) -> Seen:
    return state.current, state.depth, state.revision


def journal_of(buffer: JournaledBuffer) -> FileJournal:
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    return journal


def random_trace(rng: random.Random) -> tuple[bytes, list[Operation | None]]:
    """Operations the model accepts; ``None`` is an explicit flush()."""
    initial = bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 5)))
    state = initial_state(initial)
    operations: list[Operation | None] = []
    while len(operations) < OPERATIONS_PER_TRACE:
        roll = rng.random()
        operation: Operation | None
        if roll < 0.1:
            operation = None
        elif state.depth and roll < 0.25:
            operation = Rollback(rng.randint(1, state.depth))
        elif state.depth and roll < 0.3:
            operation = Compact(rng.randint(0, state.depth))
        else:
            length = len(state.current)
            offset = rng.randint(0, length)
            operation = Splice(
                offset, rng.randint(0, min(2, length - offset)), bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 3)))
            )
        if operation is not None:
            state = step(state, operation).state
        operations.append(operation)
    return initial, operations


def perform(buffer: JournaledBuffer, operation: Operation | None) -> None:
    if operation is None:
        journal_of(buffer).flush()
    elif isinstance(operation, Splice):
        buffer.splice(operation.offset, operation.delete_length, operation.insert)
    elif isinstance(operation, Rollback):
        buffer.rollback(operation.steps)
    elif isinstance(operation, Compact):
        buffer.compact(operation.keep)


def open_batched(disk: SimulatedDisk, initial: bytes = b"") -> JournaledBuffer:
    return open_durable_buffer(disk, initial, durability=Durability.batched(every_records=EVERY_RECORDS, every_ms=None))


@pytest.mark.slow
def test_every_crash_point_of_batched_traces_recovers_inside_the_window() -> None:
    rng = random.Random(2026_12)
    outcomes: Counter[str] = Counter()
    bad: list[str] = []
    for _ in range(TRACES):
        initial, operations = random_trace(rng)
        disk = SimulatedDisk()
        buffer = open_batched(disk, initial)
        model = initial_state(initial, durability="batched")  # the journal is created synced
        for index, operation in enumerate(operations):
            after = step(model, Flush() if operation is None else operation).state
            window = {model_seen(s) for s in recovery_window(model) + (after,)}
            # Every I/O call the operation makes, and one past them (a crash while idle after it).
            probe = disk.clone()
            probe_buffer = open_batched(probe)
            calls_before = probe.io_events
            perform(probe_buffer, operation)
            calls = probe.io_events - calls_before
            del probe_buffer
            unsynced = len(disk.read(DEFAULT_NAME) or b"") - len(disk.durable_bytes(DEFAULT_NAME) or b"")
            for io_event in range(calls + 1):
                for lost in range(0, unsynced + 64, 1 if unsynced < 200 else 7):
                    copy = disk.clone()
                    copy._locks.add(DEFAULT_NAME)  # the live writer's lock, as on the real disk
                    live = _twin(buffer, copy)
                    copy.crash_at(io_event, lost)
                    try:
                        perform(live, operation)
                    except SimulatedCrash:
                        pass
                    else:
                        copy.disarm()
                        copy.crash()
                    copy.restart()
                    recovered = seen(open_batched(copy))
                    if recovered in window:
                        outcomes["lost some" if recovered != model_seen(after) else "kept all"] += 1
                    else:
                        bad.append(f"{initial!r} {operations[: index + 1]}: crash #{io_event} lost {lost}: {recovered}")
            perform(buffer, operation)
            model = after
            assert seen(buffer) == model_seen(after)
            if journal_of(buffer).unsynced_records == 0:
                # The test sees the automatic syncs the machine cannot: telling
                # the model about them as flushes checks a tighter window.
                model = step(model, Flush()).state
    assert not bad, f"{len(bad)} recoveries outside the window; first: {bad[0]}"
    # Not vacuous: crashes lost unflushed operations, and kept them, many times.
    assert outcomes["lost some"] > 500 and outcomes["kept all"] > 500, outcomes


def _twin(buffer: JournaledBuffer, disk: SimulatedDisk) -> JournaledBuffer:
    """The live buffer, with its in-memory journal, writing to ``disk`` (a clone
    of its disk): a crash on the clone sees the same unsynced records."""
    journal = journal_of(buffer)
    twin_journal = FileJournal(
        disk,
        journal.name,
        journal.buffer_id,
        list(zip(journal._records, journal._inserted, strict=True)),
        journal._size,
        chain=journal._chain,
        durability=journal.durability,
        serial_limit=journal._serial_limit,
    )
    twin_journal._unsynced = journal._unsynced
    twin = JournaledBuffer._restore(
        buffer.read(),
        twin_journal,
        buffer_id=buffer._id,
        meta=_meta(buffer),
        revision=buffer.revision,
        next_serial=buffer._peek_next_serial(),
    )
    return twin


def _meta(buffer: JournaledBuffer) -> BaseMeta:
    return BaseMeta(buffer.revision - buffer.depth, buffer._peek_next_serial(), buffer._horizon_serial, buffer._base_position)


# -- the triggers -------------------------------------------------------------------------------


def test_records_wait_for_a_flush_and_a_flush_makes_them_durable() -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc", durability=Durability.batched(every_records=None, every_ms=None))
    for number in range(5):
        buffer.splice(0, 0, b"%d" % number)
    assert journal_of(buffer).unsynced_records == 5
    journal_of(buffer).flush()
    assert journal_of(buffer).unsynced_records == 0
    buffer.splice(0, 0, b"lost")
    disk.crash()
    disk.restart()
    recovered = open_durable_buffer(disk)
    assert (recovered.read(), recovered.depth) == (b"43210abc", 5)


def test_every_n_records_syncs_by_itself() -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"", durability=Durability.batched(every_records=4, every_ms=None))
    for number in range(10):
        buffer.splice(len(buffer), 0, b"%d" % number)
    assert journal_of(buffer).unsynced_records == 2
    disk.crash()
    disk.restart()
    assert open_durable_buffer(disk).read() == b"01234567"


def test_every_t_milliseconds_syncs_at_the_next_commit() -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"", durability=Durability.batched(every_records=None, every_ms=20))
    buffer.splice(0, 0, b"a")
    assert journal_of(buffer).unsynced_records == 1
    time.sleep(0.03)
    buffer.splice(1, 0, b"b")  # more than 20 ms since the last sync: this commit syncs
    assert journal_of(buffer).unsynced_records == 0


def test_the_per_operation_mode_never_leaves_a_record_unsynced() -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"x")
    buffer.splice(0, 0, b"y")
    assert journal_of(buffer).unsynced_records == 0
    disk.crash()
    disk.restart()
    assert open_durable_buffer(disk).read() == b"yx"


@pytest.mark.parametrize(
    "arguments",
    [dict(mode="sometimes"), dict(mode="batched", every_records=0), dict(mode="batched", every_ms=-1),
     dict(mode="per_operation", every_records=4)],
)
def test_a_bad_durability_is_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Durability(**arguments)  # type: ignore[arg-type]


# -- real files, SIGKILL -------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from rollcert.impl.file_journal import Durability, open_durable_buffer
    from rollcert.impl.storage import RealDirectory

    buffer = open_durable_buffer(RealDirectory(sys.argv[1]), b"", durability=Durability.batched(every_records=7))
    number = 0
    while True:
        buffer.splice(len(buffer), 0, b"%d," % number)
        number += 1
        if number % 5 == 0:
            buffer.journal.flush()
            print(number, flush=True)  # every splice up to here is durable
    """
)


@pytest.mark.slow
def test_a_batched_writer_killed_with_sigkill_recovers_inside_the_window(tmp_path: Path) -> None:
    """The history is "0,", "0,1,", ...: recovery must be a prefix at or after the
    last flush the child reported, and nothing else."""
    for attempt in range(5):
        directory = tmp_path / f"store{attempt}"
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(directory)], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        flushed = 0
        for _ in range(3 + 4 * attempt):
            flushed = int(child.stdout.readline())
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        storage = RealDirectory(directory)
        recovered = open_durable_buffer(storage).read()
        storage.close()
        numbers = [int(n) for n in recovered.decode().split(",") if n]
        assert numbers == list(range(len(numbers))), recovered  # a prefix of the history
        assert len(numbers) >= flushed, (len(numbers), flushed)  # at or after the last flush
