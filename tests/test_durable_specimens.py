"""The R5 specimens, each on the one scenario its story tells, next to the
bundled journal on the same scenario: the bug is where the story says, and the
correct code handles the very same bytes on disk."""

from __future__ import annotations

import pytest

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import SimulatedCrash
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import JournalInUseError
from rollcert.model.errors import RecoveryError
from rollcert.specimens.crc_only import CrcOnly
from rollcert.specimens.flush_without_sync import FlushWithoutSync
from rollcert.specimens.mutate_before_fsync import MutateBeforeFsync
from rollcert.specimens.no_writer_lock import NoWriterLock
from rollcert.specimens.skip_bad_record import SkipBadRecord
from rollcert.specimens.torn_tail_applied import TornTailApplied
from rollcert.targets.adapters.durable import record_spans


def torn_insert_disk() -> SimulatedDisk:
    """'abc', then a crash while the record of an insertion of 'XYZ' at 1 is
    being written: the last byte of the record (the 'Z') never reaches the disk."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    disk.crash_at(0, 1)
    with pytest.raises(SimulatedCrash):
        buffer.splice(1, 0, b"XYZ")
    disk.restart()
    return disk


def test_torn_tail_applied_recovers_half_an_insertion() -> None:
    recovered = open_durable_buffer(torn_insert_disk(), reader=TornTailApplied())
    assert recovered.read() == b"aXYbc"  # neither b"abc" nor b"aXYZbc"


def test_the_bundled_reader_drops_the_torn_record() -> None:
    recovered = open_durable_buffer(torn_insert_disk(), reader=JournalReader())
    assert (recovered.read(), recovered.depth) == (b"abc", 0)


def corrupted_disk() -> SimulatedDisk:
    """'abc' + two insertions; then a bad sector flips a bit in the first one's record."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    buffer.splice(0, 0, b"1")
    buffer.splice(2, 0, b"2")
    disk.crash()  # the writer's process ends (and with it its lock); its records were synced
    disk.restart()
    _start, end = record_spans(disk.read(DEFAULT_NAME) or b"")[1]
    disk.flip_bit(DEFAULT_NAME, end - 1, 0)  # the inserted '1' becomes '0'
    return disk


def test_skip_bad_record_comes_back_missing_an_edit() -> None:
    recovered = open_durable_buffer(corrupted_disk(), reader=SkipBadRecord())
    assert recovered.read() == b"ab2c"  # the '1' is gone and the '2' moved: a state that never existed


def test_the_bundled_reader_refuses_a_corrupt_middle_record_and_changes_nothing() -> None:
    disk = corrupted_disk()
    on_disk = disk.read(DEFAULT_NAME)
    with pytest.raises(RecoveryError, match="checksum"):
        open_durable_buffer(disk)
    assert disk.read(DEFAULT_NAME) == on_disk


@pytest.mark.parametrize(("journal_class", "survives"), [(MutateBeforeFsync, False), (FileJournal, True)])
def test_a_returned_splice_survives_a_crash_only_if_it_was_synced(
    journal_class: type[FileJournal], survives: bool
) -> None:
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc", journal_class=journal_class)
    buffer.splice(3, 0, b"!")  # returned: the caller was told it happened
    disk.crash()
    disk.restart()
    recovered = open_durable_buffer(disk)
    assert (recovered.read() == b"abc!") is survives


def transplanted_disk() -> SimulatedDisk:
    """'abc' + one splice; then another journal's base record, intact, replaces ours."""
    from rollcert.targets.adapters.durable import foreign_journal
    from rollcert.targets.adapters.durable import record_level_corruption

    disk = SimulatedDisk()
    open_durable_buffer(disk, b"abc").splice(3, 0, b"!")
    disk.crash()
    disk.restart()
    damaged = record_level_corruption(disk.read(DEFAULT_NAME) or b"", "transplant", 0, foreign_journal())
    assert damaged is not None
    disk.replace_file(DEFAULT_NAME, damaged)
    return disk


def test_crc_only_recovers_another_buffer() -> None:
    recovered = open_durable_buffer(transplanted_disk(), reader=CrcOnly())
    assert recovered.read() == b"ano!ther buffer"  # our splice on another buffer's base: never a state of ours


def test_the_bundled_reader_refuses_the_transplanted_record() -> None:
    with pytest.raises(RecoveryError, match="does not chain"):
        open_durable_buffer(transplanted_disk())


@pytest.mark.parametrize(("disk_class", "refused"), [(NoWriterLock, False), (SimulatedDisk, True)])
def test_a_second_writer_is_refused_only_with_the_lock(disk_class: type[SimulatedDisk], refused: bool) -> None:
    disk = disk_class()
    first = open_durable_buffer(disk, b"abc")
    first.splice(3, 0, b"1")
    if refused:
        with pytest.raises(JournalInUseError):
            open_durable_buffer(disk)
        return
    second = open_durable_buffer(disk)
    second.splice(0, 0, b"2")  # the second writer's record, chained onto the first's
    first.splice(4, 0, b"3")  # the first writer carries on, unaware
    disk.crash()
    disk.restart()
    with pytest.raises(RecoveryError):  # two records claim the same place in the chain
        open_durable_buffer(disk)


@pytest.mark.parametrize(("journal_class", "survives"), [(FlushWithoutSync, False), (FileJournal, True)])
def test_a_flushed_splice_survives_a_batched_crash_only_if_the_flush_synced(
    journal_class: type[FileJournal], survives: bool
) -> None:
    disk = SimulatedDisk()
    batched = Durability.batched(every_records=None, every_ms=None)
    buffer = open_durable_buffer(disk, b"abc", journal_class=journal_class, durability=batched)
    buffer.splice(3, 0, b"!")
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    journal.flush()  # returned: the caller may rely on the edit now
    disk.crash()
    disk.restart()
    recovered = open_durable_buffer(disk)
    assert (recovered.read() == b"abc!") is survives
