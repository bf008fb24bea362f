"""Journals: where inverse records are committed before a mutation (R1).

A journal is a stack of :class:`InverseRecord` that can refuse an append. The
buffer appends *first* and mutates only if the append returned, so a refused
append can never leave the buffer ahead of its log.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import accumulate
from struct import pack
from typing import NamedTuple
from typing import Protocol

from rollcert.model.errors import JournalError


class InverseRecord(NamedTuple):
    """What undoes one splice.

    A ``NamedTuple`` rather than a frozen dataclass: it is just as immutable and
    is built on every splice, where a frozen dataclass's ``__init__`` costs
    several times more.
    """

    #: Where the splice happened; valid because records are undone strictly LIFO.
    offset: int
    #: The bytes the splice removed, to be put back.
    removed: bytes
    #: How many bytes the splice inserted, to be taken out again.
    inserted_length: int
    #: Identity of the state this splice produced; checkpoints name it (no ABA).
    serial: int


@dataclass(frozen=True)
class BaseMeta:
    """What a journal needs to know about its horizon when it is rewritten.

    A durable journal stores it with the base snapshot, so that recovery gives
    back the same revision (never reused, S3), the same serials (so checkpoints
    taken before a restart still name the right states) and the same positions.
    """

    #: The revision of the base state; each record on top adds one.
    revision: int
    #: The next serial the buffer will hand out (above every serial ever used).
    next_serial: int
    #: Identity of the base state (what a checkpoint at depth 0 names).
    horizon_serial: int
    #: Records made since the buffer was created that are now below the horizon.
    base_position: int


class Journal(Protocol):
    """A LIFO store of inverse records that may refuse an append."""

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        """Commit ``record`` (and the redo data ``inserted``, which a durable
        journal keeps so it can rebuild the buffer) or raise
        :class:`JournalError` having stored nothing."""

    def commit_rollback(self, steps: int) -> None:
        """Commit that the newest ``steps`` records are being undone, before the
        buffer is touched; raise :class:`JournalError` having changed nothing.
        (The buffer then takes them off with :meth:`pop`.)"""

    def pop(self) -> InverseRecord: ...

    def evict_oldest(self) -> InverseRecord: ...

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        """Keep only the newest ``keep`` records; ``base`` is the state below
        them, the new horizon. All or nothing: :class:`JournalError` on failure
        (a durable journal raises :class:`OutcomeUnknownError`, a
        ``JournalError``, when it cannot tell which file a crash would keep; it
        has then changed nothing in memory either)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> InverseRecord: ...


#: Records per packed batch of :class:`InMemoryJournal`. The newest records (up to
#: twice this many) stay unpacked, so undo right after a splice never unpacks.
PACK_BATCH = 256


class _PackedBatch:
    """Consecutive records, packed: three 8-byte integers per record (offset,
    inserted length, serial) and where each record's removed bytes end, in two
    ``struct``-packed buffers, and the removed bytes of all of them in one
    ``bytes``. About 32 bytes per record besides the removed bytes themselves,
    where a tuple record holds ≈ 150 (the tuple, two int objects, a ``bytes``
    header, a deque slot). Built with C-level loops (``zip``, ``struct.pack``,
    ``accumulate``, ``join``): ≈ 0.1 µs per record, once per ``PACK_BATCH`` appends."""

    __slots__ = ("ends", "fields", "removed")

    def __init__(self, records: list[InverseRecord]) -> None:
        count = len(records)
        offsets, removed, inserted, serials = zip(*records, strict=True)
        #: offsets, then inserted lengths, then serials: ``count`` of each.
        self.fields = memoryview(pack(f"{3 * count}q", *offsets, *inserted, *serials)).cast("q")
        self.ends = memoryview(pack(f"{count}q", *accumulate(map(len, removed)))).cast("q")
        self.removed = b"".join(removed)

    def record(self, index: int) -> InverseRecord:
        fields, ends = self.fields, self.ends
        count = len(ends)
        start = ends[index - 1] if index else 0
        return tuple.__new__(
            InverseRecord,
            (
                fields[index],
                self.removed[start : ends[index]],
                fields[count + index],
                fields[2 * count + index],
            ),
        )

    def unpack(self, first: int) -> list[InverseRecord]:
        return [self.record(index) for index in range(first, len(self.ends))]


class InMemoryJournal:
    """The default journal, compact: records older than the newest ``2 * PACK_BATCH``
    are packed in batches (:class:`_PackedBatch`), so a million small splices
    hold ≈ 33 bytes of bookkeeping each instead of ≈ 153 (measured with
    tracemalloc by ``benchmarks.run``). The newest records stay tuples in a list,
    so a splice and its undo touch only that list. Packing happens once per
    ``PACK_BATCH`` appends and unpacking once per ``PACK_BATCH`` pops (the
    hysteresis of keeping up to twice a batch unpacked means a splice/undo
    pair at the boundary never packs and unpacks the same batch over and over).
    Eviction of the oldest record is O(1)."""

    __slots__ = ("_packed", "_packed_count", "_recent", "_skip")

    def __init__(self) -> None:
        #: The newest records, oldest first; never more than ``2 * PACK_BATCH``.
        self._recent: list[InverseRecord] = []
        #: Older records, oldest batch first; the first ``_skip`` records of the
        #: oldest batch have been evicted.
        self._packed: deque[_PackedBatch] = deque()
        self._packed_count = 0
        self._skip = 0

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        recent = self._recent
        recent.append(record)
        if len(recent) >= 2 * PACK_BATCH:
            self._packed.append(_PackedBatch(recent[:PACK_BATCH]))
            self._packed_count += PACK_BATCH
            del recent[:PACK_BATCH]

    def commit_rollback(self, steps: int) -> None:
        return None  # nothing to make durable

    def pop(self) -> InverseRecord:
        recent = self._recent
        if not recent:
            if not self._packed_count:
                raise IndexError("pop from an empty journal")
            batch = self._packed.pop()
            first = self._skip if not self._packed else 0
            recent.extend(batch.unpack(first))
            self._packed_count -= len(batch.ends) - first
            if not self._packed:
                self._skip = 0
        return recent.pop()

    def evict_oldest(self) -> InverseRecord:
        if not self._packed_count:
            if not self._recent:
                raise IndexError("evict from an empty journal")
            return self._recent.pop(0)
        oldest = self._packed[0]
        record = oldest.record(self._skip)
        self._skip += 1
        self._packed_count -= 1
        if self._skip == len(oldest.ends):
            self._packed.popleft()
            self._skip = 0
        return record

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        if keep == 0:
            self._recent.clear()
            self._packed.clear()
            self._packed_count = self._skip = 0
            return
        for _ in range(len(self) - keep):
            self.evict_oldest()

    def __len__(self) -> int:
        return self._packed_count + len(self._recent)

    def __getitem__(self, index: int) -> InverseRecord:
        length = self._packed_count + len(self._recent)
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError("journal index out of range")
        if index >= self._packed_count:
            return self._recent[index - self._packed_count]
        position = index + self._skip
        return self._packed[position // PACK_BATCH].record(position % PACK_BATCH)


class FaultInjectingJournal:
    """Wraps a journal and refuses chosen appends, as a full disk or I/O error would.

    Used by the certification adapter to exercise R1 on the real buffer code.
    """

    __slots__ = ("_failures_pending", "inner")

    def __init__(self, inner: Journal) -> None:
        self.inner = inner
        self._failures_pending = 0

    def fail_next_append(self) -> None:
        self._failures_pending += 1

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        if self._failures_pending:
            self._failures_pending -= 1
            raise JournalError("injected journal fault: the inverse record was not committed")
        self.inner.append(record, inserted)

    def commit_rollback(self, steps: int) -> None:
        self.inner.commit_rollback(steps)

    def pop(self) -> InverseRecord:
        return self.inner.pop()

    def evict_oldest(self) -> InverseRecord:
        return self.inner.evict_oldest()

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        self.inner.rewrite(base, meta, keep)

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: int) -> InverseRecord:
        return self.inner[index]
