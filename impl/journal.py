"""Journals: where inverse records are committed before a mutation (R1).

A journal is a stack of :class:`InverseRecord` that can refuse an append. The
buffer appends *first* and mutates only if the append returned, so a refused
append can never leave the buffer ahead of its log.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple, Protocol

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
        them, the new horizon. All or nothing: :class:`JournalError` on failure."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> InverseRecord: ...


class InMemoryJournal:
    """The default journal: a deque, so eviction of the oldest record is O(1)."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: deque[InverseRecord] = deque()

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        self._records.append(record)

    def commit_rollback(self, steps: int) -> None:
        return None  # nothing to make durable

    def pop(self) -> InverseRecord:
        return self._records.pop()

    def evict_oldest(self) -> InverseRecord:
        return self._records.popleft()

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        for _ in range(len(self._records) - keep):
            self._records.popleft()

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> InverseRecord:
        return self._records[index]


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
