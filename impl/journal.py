"""Journals: where inverse records are committed before a mutation (R1).

A journal is a stack of :class:`InverseRecord` that can refuse an append. The
buffer appends *first* and mutates only if the append returned, so a refused
append can never leave the buffer ahead of its log.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple, Protocol

from model.errors import JournalError


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


class Journal(Protocol):
    """A LIFO store of inverse records that may refuse an append."""

    def append(self, record: InverseRecord) -> None:
        """Commit ``record`` or raise :class:`JournalError` having stored nothing."""

    def pop(self) -> InverseRecord: ...

    def evict_oldest(self) -> InverseRecord: ...

    def clear(self) -> None: ...

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> InverseRecord: ...


class InMemoryJournal:
    """The default journal: a deque, so eviction of the oldest record is O(1)."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: deque[InverseRecord] = deque()

    def append(self, record: InverseRecord) -> None:
        self._records.append(record)

    def pop(self) -> InverseRecord:
        return self._records.pop()

    def evict_oldest(self) -> InverseRecord:
        return self._records.popleft()

    def clear(self) -> None:
        self._records.clear()

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

    def append(self, record: InverseRecord) -> None:
        if self._failures_pending:
            self._failures_pending -= 1
            raise JournalError("injected journal fault: the inverse record was not committed")
        self.inner.append(record)

    def pop(self) -> InverseRecord:
        return self.inner.pop()

    def evict_oldest(self) -> InverseRecord:
        return self.inner.evict_oldest()

    def clear(self) -> None:
        self.inner.clear()

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: int) -> InverseRecord:
        return self.inner[index]
