"""The adapter for a ``JournaledBuffer`` on a durable file journal (R5).

The journal lives on a :class:`rollcert.impl.storage.SimulatedDisk`, so the harness can
crash the machine at any I/O call, keep any prefix of the unsynced bytes (a
torn record), flip bits in synced records and make writes fail as a full disk
does — thousands of times a second, deterministically. The same journal code
runs on real files in ``tests/test_file_journal.py`` and the SIGKILL test.

The R5 specimens reuse this adapter with one broken part swapped in: a
``JournalReader`` subclass (how recovery reads the file) or a ``FileJournal``
subclass (how records are committed).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rollcert.impl.file_journal import (
    DEFAULT_NAME,
    FRAME,
    HEADER,
    FileJournal,
    JournalReader,
    open_durable_buffer,
)
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import SimulatedCrash, SimulatedDisk
from rollcert.stateful_tests.adapter import BufferConfig, Capability
from rollcert.stateful_tests.adapters.bundled import BundledAdapter

#: What a durable SUT can be driven on (no bounded capacity: compaction bounds it).
DURABLE_CAPABILITIES = frozenset(
    {
        Capability.CORE,
        Capability.DEPTH,
        Capability.REVISIONS,
        Capability.CHECKPOINTS,
        Capability.JOURNAL_FAULTS,
        Capability.DURABILITY,
    }
)


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


class DurableAdapter(BundledAdapter):
    """The bundled adapter's forwarding, on a durable buffer that can crash."""

    def __init__(
        self,
        config: BufferConfig,
        *,
        reader: JournalReader | None = None,
        journal_class: type[FileJournal] = FileJournal,
    ) -> None:  # the in-memory adapter's __init__ is replaced, not extended
        if config.capacity is not None:
            raise ValueError("a durable journal is bounded by compaction, not by a capacity")
        self.disk = SimulatedDisk()
        self._reader = reader
        self._journal_class = journal_class
        self.buffer = self._open(config.initial)
        self._flipped: tuple[int, int] | None = None
        self._fault_armed = False

    def _open(self, initial: bytes = b"") -> JournaledBuffer:
        return open_durable_buffer(self.disk, initial, reader=self._reader, journal_class=self._journal_class)

    def _recover(self) -> None:
        """Power the simulated machine back on and rebuild the buffer from disk.
        The old buffer object is dropped, as a crashed process's memory is."""
        self.disk.restart()
        self.buffer = self._open()

    # -- what differs from the in-memory adapter ------------------------------------------

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if self._fault_armed:
            # The model's fault hits the next splice's record (R1); here it is a
            # real failing write on the disk: a few bytes land, then ENOSPC.
            self._fault_armed = False
            self.disk.fail_next("append", errno.ENOSPC, written=5)
        self.buffer.splice(offset, delete_length, insert)

    def arm_journal_fault(self) -> None:
        self._fault_armed = True

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

    def corrupt_committed_record(self) -> bool:
        journal = self.disk.read(DEFAULT_NAME) or b""
        spans = record_spans(journal)
        if len(spans) < 2:
            return False
        # The oldest record after the base if it is not the last, else the base.
        start, end = spans[1] if len(spans) >= 3 else spans[0]
        target = start + FRAME.size + (end - start - FRAME.size) // 2
        self.disk.flip_bit(DEFAULT_NAME, target, 3)
        self._flipped = (target, 3)
        return True

    def repair_corruption(self) -> None:
        if self._flipped is not None:
            self.disk.flip_bit(DEFAULT_NAME, *self._flipped)
            self._flipped = None
        self._recover()


def durable_specimen(broken_part: type[Any], config: BufferConfig) -> DurableAdapter:
    """The adapter of an R5 specimen: the bundled durable buffer with one part
    swapped for the specimen's class — how recovery reads the file (a
    ``JournalReader``) or how records are committed (a ``FileJournal``)."""
    if issubclass(broken_part, JournalReader):
        return DurableAdapter(replace(config, capacity=None), reader=broken_part())
    if issubclass(broken_part, FileJournal):
        return DurableAdapter(replace(config, capacity=None), journal_class=broken_part)
    raise TypeError(f"{broken_part.__name__} is neither a JournalReader nor a FileJournal")
