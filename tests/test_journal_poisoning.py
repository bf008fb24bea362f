"""The poisoning rule of the durable journal (issue 26), on the simulated disk:
after a failed write, sync or cut-back the journal refuses every operation,
naming the first failure, until it is reopened; the operation that met the
failure says truthfully whether anything of it is in the file; a refused
operation is never recovered, by a reopen or after a crash; in either mode.

The same rule on real files is in ``tests/test_file_journal_real.py`` and
under real syscall faults (strace) in ``tests/test_journal_syscall_faults.py``."""

from __future__ import annotations

import errno
from collections.abc import Callable

import pytest

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import OutcomeUnknownError
from rollcert.model.operations import DiskFault
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Splice
from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.specimens import load_all
from rollcert.specimens.keep_record_after_failed_sync import KeepRecordAfterFailedSync
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

#: Sync every 3 records, no timer: the third record of a run syncs by itself.
BATCHED = Durability.batched(every_records=3, every_ms=None)
MODES = {"per_operation": Durability.per_operation(), "batched": BATCHED}

Seen = tuple[bytes, int, int]


def seen(buffer: JournaledBuffer) -> Seen:
    return buffer.read(), buffer.depth, buffer.revision


def two_edits(mode: str, journal_class: type[FileJournal] = FileJournal) -> tuple[JournaledBuffer, SimulatedDisk]:
    """'base' and two splices: in batched mode the next record is the third,
    whose commit syncs by itself."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"base", durability=MODES[mode], journal_class=journal_class)
    buffer.splice(0, 0, b"A")
    buffer.splice(1, 0, b"B")
    return buffer, disk


def reopened(disk: SimulatedDisk, journal_class: type[FileJournal] = FileJournal) -> JournaledBuffer:
    """A new process on the same disk, no crash: every byte written is still there."""
    disk.close()
    return open_durable_buffer(disk, journal_class=journal_class)


def crashed(disk: SimulatedDisk) -> JournaledBuffer:
    disk.crash()
    disk.restart()
    return open_durable_buffer(disk)


LATER: dict[str, Callable[[JournaledBuffer], None]] = {
    "splice": lambda buffer: buffer.splice(0, 0, b"later"),
    "rollback": lambda buffer: buffer.rollback(1),
    "compact": lambda buffer: buffer.compact(0),
    "adopt_current": lambda buffer: buffer.adopt_current(),
    "flush": lambda buffer: buffer.journal.flush(),  # type: ignore[attr-defined]
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", ["append", "sync"])
def test_a_refused_splice_is_refused_for_good_and_the_journal_is_poisoned(mode: str, call: str) -> None:
    """The measured bug: in batched mode the sync every N records failed, the
    splice raised and the buffer was unchanged, but the record stayed in the
    file and the reopen the error recommended brought the splice back."""
    buffer, disk = two_edits(mode)
    before = seen(buffer)
    disk.fail_next(call, errno.EIO, written=5)
    with pytest.raises(JournalError, match="refused, nothing recorded") as refusal:
        buffer.splice(0, 4, b"")
    assert type(refusal.value) is JournalError
    assert not disk.pending_failures(), "the fault was never reached"
    assert seen(buffer) == before
    for name, later in LATER.items():
        with pytest.raises(JournalPoisonedError, match=r"reopened: the (write|sync) of a record failed") as poisoned:
            later(buffer)
        assert poisoned.value.first_failure in str(poisoned.value), name
        assert seen(buffer) == before, name
    assert seen(reopened(disk)) == before
    assert seen(crashed(disk)) == before  # the cut-back was synced: nothing of it survives a crash either


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", ["append", "sync"])
def test_a_failed_cut_back_says_the_outcome_is_unknown_and_the_reopen_decides(mode: str, call: str) -> None:
    """Two faults in a row: the record's write or sync fails, then the
    truncation that should remove it fails too. The error must not say
    "not committed" (the file may hold the record): it says the outcome is
    unknown; the buffer shows the state before and refuses everything; a
    reopen yields the state before or after, nothing else."""
    buffer, disk = two_edits(mode)
    before = seen(buffer)
    disk.fail_next(call, errno.EIO, written=5)
    disk.fail_next("truncate", errno.EIO)
    with pytest.raises(OutcomeUnknownError, match="outcome unknown"):
        buffer.splice(0, 4, b"")
    assert seen(buffer) == before
    with pytest.raises(JournalPoisonedError, match="cutting it back failed too"):
        buffer.splice(0, 0, b"x")
    after = (b"se", 3, before[2] + 1)
    # A failed write left part of the record (a torn tail, dropped); a failed
    # sync left all of it, which a reopen without a crash reads back.
    assert seen(reopened(disk)) == (before if call == "append" else after)


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_cut_back_whose_write_wrote_nothing_is_still_refused(mode: str) -> None:
    """The write failed before writing a byte (a full disk): there is nothing
    to cut, so a failing truncation changes nothing — refused, nothing recorded."""
    buffer, disk = two_edits(mode)
    before = seen(buffer)
    disk.fail_next("append", errno.ENOSPC, written=0)
    disk.fail_next("truncate", errno.EIO)
    with pytest.raises(JournalError, match="refused, nothing recorded"):
        buffer.splice(0, 4, b"")
    assert disk.pending_failures() == ("truncate",)
    assert seen(reopened(disk)) == before


def test_per_operation_mode_stops_acknowledging_after_a_failed_fsync() -> None:
    """Before, per-operation mode cut the record back and went on taking
    records on a file whose dirty pages the kernel may have dropped."""
    buffer, disk = two_edits("per_operation")
    disk.fail_next("sync", errno.EIO)
    with pytest.raises(JournalError):
        buffer.splice(0, 0, b"x")
    with pytest.raises(JournalPoisonedError):
        buffer.splice(0, 0, b"y")
    buffer = reopened(disk)
    buffer.splice(0, 0, b"y")
    assert buffer.read() == b"yABbase"


def test_a_failed_flush_poisons_and_the_reopen_recovers_inside_the_window() -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"", durability=BATCHED)
    buffer.splice(0, 0, b"a")
    buffer.journal.flush()  # type: ignore[attr-defined]
    buffer.splice(1, 0, b"b")
    disk.fail_next("sync", errno.EIO)
    with pytest.raises(JournalError, match="the flush failed") as failure:
        buffer.journal.flush()  # type: ignore[attr-defined]
    assert type(failure.value) is JournalError
    with pytest.raises(JournalPoisonedError, match="a flush failed"):
        buffer.splice(0, 0, b"c")
    assert crashed(disk.clone()).read() in (b"a", b"ab")
    assert reopened(disk).read() == b"ab"


@pytest.mark.parametrize("operation", ["compact", "adopt_current"])
def test_a_rewrite_reports_a_failed_directory_sync(operation: str) -> None:
    buffer, disk = two_edits("per_operation")
    before = seen(buffer)
    disk.fail_next("sync_directory", errno.EIO)
    with pytest.raises(OutcomeUnknownError, match="directory could not be synced"):
        buffer.compact(0) if operation == "compact" else buffer.adopt_current()
    assert seen(buffer) == before
    with pytest.raises(JournalPoisonedError):
        buffer.splice(0, 0, b"x")
    assert seen(reopened(disk.clone())) == (before[0], 0, before[2])  # the rename is visible
    assert seen(crashed(disk)) in (before, (before[0], 0, before[2]))


@pytest.mark.parametrize("call", ["append", "sync", "rename"])
def test_a_rewrite_that_fails_before_the_rename_leaves_the_journal_usable(call: str) -> None:
    buffer, disk = two_edits("per_operation")
    before = seen(buffer)
    disk.fail_next(call, errno.ENOSPC, written=3)
    with pytest.raises(JournalError, match="the old journal is intact and the buffer usable") as refusal:
        buffer.compact(0)
    assert type(refusal.value) is JournalError
    assert (call != "rename") == ("the disk has no room for the" in str(refusal.value))  # ENOSPC: no room
    assert disk.read(DEFAULT_NAME + ".new") is None, "a copy of the buffer was left behind"
    buffer.splice(0, 0, b"x")  # not poisoned: the journal file was never touched
    assert seen(reopened(disk)) == (b"xABbase", 3, before[2] + 1)


def test_the_specimen_keeps_the_record_and_the_bundled_journal_does_not() -> None:
    buffer, disk = two_edits("batched", KeepRecordAfterFailedSync)
    disk.fail_next("sync", errno.EIO)
    with pytest.raises(JournalError):
        buffer.splice(0, 4, b"")
    assert reopened(disk, KeepRecordAfterFailedSync).read() == b"se"  # the refused splice came back


def test_the_model_refuses_on_a_poisoned_journal_and_a_reopen_clears_it() -> None:
    state = initial_state(b"ab", durability="batched", durable=True)
    state = step(state, DiskFault("sync")).state
    refused = step(state, Splice(0, 1, b""))
    assert refused.error is JournalError and refused.state.poisoned and refused.in_doubt is None
    assert refused.state.current == b"ab" and refused.state.disk_fault is None
    again = step(refused.state, Splice(0, 0, b"x"))
    assert again.error is JournalError and again.state == refused.state
    reopened_state = step(refused.state, Reopen()).state
    assert not reopened_state.poisoned and step(reopened_state, Splice(0, 0, b"x")).error is None


def test_the_model_lets_a_reopen_yield_an_operation_whose_outcome_was_unknown() -> None:
    state = step(initial_state(b"ab", durable=True), DiskFault("sync_then_cut_back")).state
    refused = step(state, Splice(0, 1, b""))
    assert refused.error is JournalError and refused.state.in_doubt is not None
    for operation in (Reopen(), Restart()):
        outcome = step(refused.state, operation)
        assert outcome.state.current == b"ab"
        assert outcome.in_doubt is not None and outcome.in_doubt.current == b"b"


def test_disk_faults_round_trip_and_a_bad_one_is_refused() -> None:
    for operation in (DiskFault("write_then_cut_back"), Reopen()):
        assert operation_from_json(operation_to_json(operation)) == operation
    with pytest.raises(ValueError, match="must be one of"):
        operation_from_json({"op": "disk_fault", "fault": "melt"})


def test_the_specimens_counterexample_replays_and_the_bundled_journal_passes_it() -> None:
    config = BufferConfig(b"", durable=True, durability="batched")
    trace = [DiskFault("sync"), Splice(0, 0, b""), Reopen()]
    specimen = load_all()["keep_record_after_failed_sync"].target
    assert specimen is not None
    with pytest.raises(Violation, match="depth is 1, not 0"):
        replay(ROLLBACK, specimen, config, trace)
    assert all(record.ok for record in replay(ROLLBACK, BUNDLED, config, trace))
