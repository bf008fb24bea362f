"""The adapter for a ``JournaledBuffer`` on a durable file journal (R5).

The journal lives on a :class:`rollcert.impl.storage.SimulatedDisk`, so the harness can
crash the machine at any I/O call, keep any prefix of the unsynced bytes (a
torn record), flip bits in synced records and make writes fail as a full disk
does — thousands of times a second, deterministically. The same journal code
runs on real files in ``tests/test_file_journal.py`` and the SIGKILL test.

The R5 specimens reuse this adapter with one broken part swapped in: a
``JournalReader`` subclass (how recovery reads the file), a ``FileJournal``
subclass (how records are committed) or a storage without the writer lock.

Disk faults (``model.operations.DISK_FAULTS``) are real failing calls of the
simulated disk at the next splice's record: its write or its sync fails, and
with a ``..._then_cut_back`` fault the truncation that should remove the
record fails too. In batched mode a sync fault comes with the record's own
sync (the journal is told to sync it at once, as its every-N-records rule
would). ``reopen`` is a new process on the same disk without a crash: what was
written stays, synced or not, as the page cache keeps it.

Corruption comes in kinds (``model.operations.DAMAGES``): a flipped bit, and
whole records out of place — duplicated, dropped, swapped, copied in from
another journal — or a second writer appending to a journal in use. The trace
names the kind (``CorruptRecord.damage``), so a counterexample says which.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import FRAME
from rollcert.impl.file_journal import HEADER
from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import frame_spans
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import SimulatedCrash
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import JournalError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.journaled_adapter import BundledAdapter
from rollcert.targets.version import SUITE_VERSION

#: A journal of another buffer, records to copy from (built once, deterministically).
_FOREIGN_EDITS = tuple((0, 0, b"foreign %d " % number) for number in range(24))


def record_level_corruption(journal: bytes, kind: str, index: int, foreign: bytes) -> bytes | None:
    """``journal`` with its ``index``-th frame (0 = the base) moved out of place:
    ``duplicate`` (a copy right after it), ``drop`` (cut out), ``swap`` (with the
    next one), ``transplant`` (replaced by the frame at the same index of the
    ``foreign`` journal: same sequence number, another salt). ``None`` if the
    journal has no such frame (or no next one, for a swap)."""
    spans = frame_spans(journal)
    if not 0 <= index < len(spans):
        return None
    start, end = spans[index]
    frame_bytes = journal[start:end]
    if kind == "duplicate":
        return journal[:end] + frame_bytes + journal[end:]
    if kind == "drop":
        return journal[:start] + journal[end:]
    if kind == "swap":
        if index + 1 >= len(spans):
            return None
        _, next_end = spans[index + 1]
        return journal[:start] + journal[end:next_end] + frame_bytes + journal[next_end:]
    if kind == "transplant":
        foreign_spans = frame_spans(foreign)
        if index >= len(foreign_spans):
            return None
        foreign_start, foreign_end = foreign_spans[index]
        return journal[:start] + foreign[foreign_start:foreign_end] + journal[end:]
    raise ValueError(f"not a record-level corruption: {kind!r}")


def foreign_journal() -> bytes:
    """The file of another durable buffer, for transplants."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"another buffer")
    for edit in _FOREIGN_EDITS:
        buffer.splice(*edit)
    return disk.read(DEFAULT_NAME) or b""

#: What a durable SUT can be driven on (no bounded capacity: compaction bounds it).
DURABLE_CAPABILITIES = frozenset(
    {
        Capability.CORE,
        Capability.DEPTH,
        Capability.REVISIONS,
        Capability.CHECKPOINTS,
        Capability.JOURNAL_FAULTS,
        Capability.DURABILITY,
        Capability.DISK_FAULTS,
    }
)

#: What each disk fault arms on the simulated disk, in order: (call, errno, bytes written first).
_DISK_FAULT_CALLS: dict[str, tuple[tuple[str, int, int], ...]] = {
    "write": (("append", errno.EIO, 5),),
    "sync": (("sync", errno.EIO, 0),),
    "write_then_cut_back": (("append", errno.ENOSPC, 5), ("truncate", errno.EIO, 0)),
    "sync_then_cut_back": (("sync", errno.EIO, 0), ("truncate", errno.EIO, 0)),
}


def record_spans(journal: bytes) -> list[tuple[int, int]]:
    """(start, end) of every complete record in a journal file, header excluded."""
    spans, position = [], HEADER.size
    while position + FRAME.size <= len(journal):
        length = FRAME.unpack_from(journal, position)[0]
        end = position + FRAME.size + length
        if end > len(journal):
            break
        spans.append((position, end))
        position = end
    return spans


def damaged_journal(journal: bytes, damage: str) -> bytes | None:
    """``journal`` with ``damage`` (one of ``model.operations.DAMAGES`` but a second
    writer, which is an act, not bytes) done at the newest record that is not the
    last (the base if there is no other): a reader that skips it has one record
    left to replay onto the wrong bytes. None if there is no such record, or none
    this kind of damage applies to."""
    spans = record_spans(journal)
    if len(spans) < 2:
        return None
    index = len(spans) - 2
    if damage == "bit_flip":
        start, end = spans[index]
        flipped = bytearray(journal)
        flipped[start + FRAME.size + (end - start - FRAME.size) // 2] ^= 1 << 3
        return bytes(flipped)
    return record_level_corruption(journal, damage, index, foreign_journal())


#: The batched mode the R5 machine drives: a sync every 3 records (so a run
#: crosses automatic syncs as well as explicit flushes) and no timer, so that a
#: replay does the same I/O as the run that found it. The model relies only on
#: explicit flushes, which covers any sync schedule, a timed one included.
BATCHED = Durability.batched(every_records=3, every_ms=None)


def durability_of(config: BufferConfig) -> Durability:
    """The journal's durability mode for ``config``."""
    return BATCHED if config.durability == "batched" else Durability.per_operation()


class DurableAdapter(BundledAdapter):
    """The bundled adapter's forwarding, on a durable buffer that can crash, in
    the durability mode the config names."""

    def __init__(
        self,
        config: BufferConfig,
        *,
        reader: JournalReader | None = None,
        journal_class: type[FileJournal] = FileJournal,
        disk: SimulatedDisk | None = None,
    ) -> None:  # the in-memory adapter's __init__ is replaced, not extended
        self.disk = disk if disk is not None else SimulatedDisk()
        #: A machine that does not model a poisoned journal (the in-memory rules
        #: of R0, R1, R6 on this durable buffer) sees the reopen every refusal
        #: recommends done at once.
        self._reopen_after_refusal = not config.durable
        self._reader = reader
        self._journal_class = journal_class
        self._capacity, self._policy = config.capacity, config.policy
        self._durability = durability_of(config)
        self.buffer = self._open(config.initial)
        #: The journal as it was before the corruption, to put back afterwards.
        self._before_corruption: bytes | None = None
        self._fault_armed = False
        self._disk_fault: str | None = None

    def _open(self, initial: bytes = b"") -> JournaledBuffer:
        return open_durable_buffer(
            self.disk,
            initial,
            reader=self._reader,
            journal_class=self._journal_class,
            capacity=self._capacity,
            policy=self._policy,
            durability=self._durability,
        )

    def _recover(self) -> None:
        """Power the simulated machine back on and rebuild the buffer from disk.
        The old buffer object is dropped, as a crashed process's memory is."""
        self.disk.restart()
        self.buffer = self._open()

    # -- what differs from the in-memory adapter ------------------------------------------

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if self._fault_armed:
            # The model's fault hits the next splice's record (R1); here it is a
            # real failing write on the disk: a few bytes land, then ENOSPC. A
            # splice refused before it writes (bad arguments, a full journal that
            # rejects, a poisoned journal) leaves the fault armed for the next
            # one, as in the model.
            # The unused failure is withdrawn before the reopen after a refusal:
            # that reopen writes a serial floor, which must not meet it.
            def meeting_the_fault() -> None:
                self.disk.fail_next("append", errno.ENOSPC, written=5)
                try:
                    self.buffer.splice(offset, delete_length, insert)
                finally:
                    self._fault_armed = self.disk.cancel_failure()

            self._refusable(meeting_the_fault)
            return
        if self._disk_fault is not None:
            self._splice_meeting(self._disk_fault, offset, delete_length, insert)
            return
        self.buffer.splice(offset, delete_length, insert)

    def _splice_meeting(self, fault: str, offset: int, delete_length: int, insert: bytes) -> None:
        """A splice whose record meets ``fault`` on the disk (R1, R5)."""
        for call, error_number, written in _DISK_FAULT_CALLS[fault]:
            self.disk.fail_next(call, error_number, written)
        journal = self.buffer.journal
        assert isinstance(journal, FileJournal)
        durability = journal.durability
        if durability.mode == "batched" and fault.startswith("sync"):
            journal.durability = Durability.batched(every_records=1, every_ms=None)  # this record syncs now
        first_call = _DISK_FAULT_CALLS[fault][0][0]
        try:
            self.buffer.splice(offset, delete_length, insert)
        finally:
            journal.durability = durability
            if first_call not in self.disk.pending_failures():
                self._disk_fault = None  # the record met it (what follows it, the cut-back, may not have)
            self.disk.cancel_failure()

    def _refusable(self, action: Callable[[], None]) -> None:
        """Run ``action``; after a journal refusal, reopen at once if the
        machine does not model poisoning (the state is the one before: the
        refused operation is not in the journal, and the reopen shows it)."""
        try:
            action()
        except JournalError:
            if self._reopen_after_refusal:
                self.reopen()
            raise

    def arm_journal_fault(self) -> None:
        self._fault_armed = True

    def arm_disk_fault(self, fault: str) -> None:
        if fault not in _DISK_FAULT_CALLS:
            raise ValueError(f"not a disk fault: {fault!r}")
        self._disk_fault = fault

    def reopen(self) -> None:
        """The process ends without a crash (its lock goes with it; the disk
        keeps every byte written) and a new one opens the journal."""
        self.disk.close()
        self.buffer = self._open()

    # -- durability ------------------------------------------------------------------------

    def compact(self, keep: int) -> None:
        self.buffer.compact(keep)

    def run_with_crash(self, action: Callable[[], None], io_event: int, lost: int) -> bool:
        self.disk.crash_at(io_event, lost)
        interrupted = False
        try:
            action()
        except SimulatedCrash:
            interrupted = True
        finally:
            if not interrupted:
                self.disk.disarm()
                self.disk.crash()
            self._recover()
        return interrupted

    def restart(self) -> None:
        self.disk.crash()
        self._recover()

    def corrupt_committed_record(self, damage: str) -> bool:
        """Do ``damage`` to the journal; False if this journal has no record that
        kind can damage (or, for a second writer, if the writer lock refused it:
        nothing was corrupted)."""
        journal = self.disk.read(DEFAULT_NAME) or b""
        if damage == "second_writer":
            return len(record_spans(journal)) >= 2 and self._second_writer()
        corrupted = damaged_journal(journal, damage)
        if corrupted is None:
            return False
        self._before_corruption = journal
        self.disk.replace_file(DEFAULT_NAME, corrupted)
        return True

    def _second_writer(self) -> bool:
        """Another process opens the journal while this one has it and appends
        a splice. With the writer lock it is refused and nothing happens."""
        try:
            intruder = open_durable_buffer(self.disk, reader=self._reader, journal_class=self._journal_class)
        except JournalError:
            return False  # refused: the journal is in use
        self._before_corruption = self.disk.read(DEFAULT_NAME)
        intruder.splice(0, 0, b"!")
        return True

    def repair_corruption(self) -> None:
        if self._before_corruption is not None:
            self.disk.replace_file(DEFAULT_NAME, self._before_corruption)
            self._before_corruption = None
        self._recover()

    def flush(self) -> None:
        """``buffer.journal.flush()``: in batched mode, the waiting records synced."""
        journal = self.buffer.journal
        assert isinstance(journal, FileJournal)
        journal.flush()


def durable_specimen(broken_part: type[Any], config: BufferConfig) -> DurableAdapter:
    """The adapter of an R5 specimen: the bundled durable buffer with one part
    swapped for the specimen's class — how recovery reads the file (a
    ``JournalReader``), how records are committed (a ``FileJournal``) or the
    disk its storage is (a ``SimulatedDisk``)."""
    if issubclass(broken_part, JournalReader):
        return DurableAdapter(replace(config, capacity=None), reader=broken_part())
    if issubclass(broken_part, FileJournal):
        return DurableAdapter(replace(config, capacity=None), journal_class=broken_part)
    if issubclass(broken_part, SimulatedDisk):
        return DurableAdapter(replace(config, capacity=None), disk=broken_part())
    raise TypeError(f"{broken_part.__name__} is neither a JournalReader, a FileJournal nor a SimulatedDisk")


def durable_factory(config: BufferConfig) -> SystemUnderTest:
    """Always the durable journal, capacity and policy included (R6 on a durable journal)."""
    return DurableAdapter(config)


#: The bundled buffer on its durable journal for every property, per-operation
#: durability: ``rollcert certify rollcert.targets.adapters.durable:DURABLE_TARGET``.
DURABLE_TARGET = Target(
    name="bundled-durable",
    version=SUITE_VERSION,
    capabilities=DURABLE_CAPABILITIES | {Capability.BOUNDED},
    factory=durable_factory,
    description=(
        "impl.JournaledBuffer on the durable file journal (simulated disk) for every property; durability mode: "
        + Durability.per_operation().describe()
        + " (R5 also draws "
        + BATCHED.describe()
        + ")"
    ),
)
