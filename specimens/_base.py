"""The honest starting point every specimen is a one-bug variation of.

``NaiveJournaledBuffer`` implements rollcert's Python buffer API in the most
obvious way that is still right: a ``bytearray`` for the bytes and a Python
list of inverse records for the log. It is slow on purpose (it hashes the
whole buffer on every journaled operation) so that nothing clever can hide a
mistake; it must agree with :mod:`rollcert.model.reference` on every operation, and
``tests/test_specimens_unit.py`` checks that it does.

Each step of the work lives in its own small method (build the record, commit
it, apply the splice, undo records, notice out-of-log writes, make a token),
so that a specimen plants its bug by overriding exactly one of them and the
rest of its behaviour stays correct.

How the rules are kept:

- R1: a splice builds its inverse record, commits it with ``_append_record``
  (which may fail), and only then touches the bytes.
- R2/R3: records are undone strictly newest first, each at its recorded
  offset, which is exact under LIFO replay. ``rollback(n)`` checks every step
  it will take before taking any, so it either completes or changes nothing.
- R4: after each journaled mutation the buffer remembers the SHA-256 of its
  bytes. At the start of the next journaled operation a different digest means
  somebody wrote behind the journal's back; the current depth becomes a
  *barrier* (kept as a number, shifted by eviction) that no rollback may cross
  until ``adopt_current``.
- R6: a full journal refuses (``reject``) or drops its oldest record and moves
  the horizon (``evict_oldest``).
- Checkpoints name a state's serial (S3): a state that left the history takes
  its serial with it, so no later state can answer to an old token.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

from rollcert.model.contract import check_integer
from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.reference import POLICIES
from rollcert.model.reference import Policy

_owner_ids = itertools.count(1)


@dataclass(frozen=True)
class CheckpointToken:
    """Names one state of one buffer: the buffer's id and the state's serial."""

    owner: int
    serial: int


@dataclass(frozen=True)
class InverseRecord:
    """What undoes one splice.

    ``offset``, ``removed`` and ``inserted_length`` put the old bytes back;
    ``serial`` identifies the state the splice produced (the state this record
    undoes), which is what checkpoints refer to.
    """

    offset: int
    removed: bytes
    inserted_length: int
    serial: int


def _digest(data: bytes | bytearray) -> bytes:
    return hashlib.sha256(data).digest()


class NaiveJournaledBuffer:
    """A plain, record-based buffer that matches the reference model exactly."""

    def __init__(
        self,
        initial: bytes = b"",
        *,
        capacity: int | None = None,
        policy: str = "reject",
    ) -> None:
        if not isinstance(initial, (bytes, bytearray)):
            raise TypeError(f"initial must be bytes, got {type(initial).__name__}")
        if capacity is not None and check_integer("capacity", capacity) < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        self._bytes = bytearray(initial)
        self._records: list[InverseRecord] = []
        self._capacity = capacity
        self._policy: Policy = "reject" if policy == "reject" else "evict_oldest"
        self._owner = next(_owner_ids)
        self._serials = itertools.count(1)
        self._horizon_serial = 0
        self._revision = 0
        self._barriers: set[int] = set()
        self._fail_next_append = False
        self._sealed_digest = _digest(self._bytes)

    # ------------------------------------------------------------------ reading

    def read(self) -> bytes:
        return bytes(self._bytes)

    @property
    def depth(self) -> int:
        """How many records can be undone."""
        return len(self._records)

    @property
    def revision(self) -> int:
        """Grows by one per successful splice and per rollback step; never reused."""
        return self._revision

    # ------------------------------------------------------------------ splicing

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Replace ``delete_length`` bytes at ``offset`` with ``insert``, journaled."""
        offset, delete_length, insert = check_splice_arguments(
            len(self._bytes), offset, delete_length, insert
        )
        self._notice_out_of_log_writes()
        record = self._make_record(offset, delete_length, insert)
        self._commit_and_apply(record, insert)
        self._revision += 1
        self._seal()

    def _make_record(self, offset: int, delete_length: int, insert: bytes) -> InverseRecord:
        """The inverse of the splice about to happen (called before any change)."""
        return InverseRecord(
            offset=offset,
            removed=bytes(self._bytes[offset : offset + delete_length]),
            inserted_length=len(insert),
            serial=next(self._serials),
        )

    def _commit_and_apply(self, record: InverseRecord, insert: bytes) -> None:
        """Write-ahead: commit the inverse first; touch the bytes only if that worked."""
        self._append_record(record)
        self._apply(record, insert)

    def _apply(self, record: InverseRecord, insert: bytes) -> None:
        start = record.offset
        self._bytes[start : start + len(record.removed)] = insert

    def _append_record(self, record: InverseRecord) -> None:
        """Commit one record to the log, or raise ``JournalError`` having changed nothing."""
        full = self._capacity is not None and len(self._records) >= self._capacity
        if full and self._policy == "reject":
            raise JournalError(f"the journal is full ({self._capacity} records)")
        if self._fail_next_append:
            self._fail_next_append = False
            raise JournalError("the journal refused the inverse record (injected fault)")
        if full:
            self._append_to_full_journal(record)
        else:
            self._records.append(record)

    def _append_to_full_journal(self, record: InverseRecord) -> None:
        """Policy ``evict_oldest``: drop the oldest record, moving the horizon up."""
        evicted = self._records.pop(0)
        self._horizon_serial = evicted.serial
        self._barriers = {barrier - 1 for barrier in self._barriers if barrier >= 1}
        self._records.append(record)

    # ------------------------------------------------------------------ rolling back

    def rollback(self, steps: int = 1) -> None:
        """Undo the newest ``steps`` records, newest first; all of them or none."""
        steps = check_integer("steps", steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        self._notice_out_of_log_writes()
        if steps > len(self._records):
            raise UnreachableRollbackError(
                f"rollback({steps}) goes past the horizon (depth {len(self._records)})"
            )
        self._refuse_crossing_barriers(steps)
        self._undo_newest(steps)
        self._seal()

    def _refuse_crossing_barriers(self, steps: int) -> None:
        """R4: check every step first, so a refused rollback changes nothing."""
        depth = len(self._records)
        for record_depth in range(depth, depth - steps, -1):
            if record_depth in self._barriers:
                raise DivergenceError(f"undoing record {record_depth} would cross an out-of-log write")

    def _undo_newest(self, steps: int) -> None:
        """Undo ``steps`` records, one LIFO step at a time."""
        for _ in range(steps):
            self._undo_one(self._records[-1])
            self._records.pop()
            self._revision += 1

    def _undo_one(self, record: InverseRecord) -> None:
        """Put the removed bytes back where they were taken from."""
        start = record.offset
        self._bytes[start : start + record.inserted_length] = record.removed

    # ------------------------------------------------------------------ checkpoints

    def _live_serials(self) -> list[int]:
        return [self._horizon_serial, *(record.serial for record in self._records)]

    def checkpoint(self) -> object:
        """A token naming the current state."""
        self._notice_out_of_log_writes()
        return CheckpointToken(owner=self._owner, serial=self._live_serials()[-1])

    def rollback_to(self, token: object) -> None:
        """Roll back, LIFO, to the state ``token`` names, if it is still live."""
        if not isinstance(token, CheckpointToken):
            raise TypeError(f"not a checkpoint token: {type(token).__name__}")
        if token.owner != self._owner:
            raise UnreachableRollbackError("the checkpoint belongs to another buffer")
        live = self._live_serials()
        if token.serial not in live:
            raise UnreachableRollbackError("the checkpoint names a state that is no longer reachable")
        self.rollback(len(self._records) - live.index(token.serial))

    # ------------------------------------------------------------------ divergence

    def _seal(self) -> None:
        """Remember what the bytes look like after a journaled operation."""
        self._sealed_digest = _digest(self._bytes)

    def _notice_out_of_log_writes(self) -> None:
        """If the bytes changed since the last journaled operation, put a barrier here."""
        current = _digest(self._bytes)
        if current != self._sealed_digest:
            self._barriers.add(len(self._records))
            self._sealed_digest = current

    def adopt_current(self) -> None:
        """Accept the current bytes as the new horizon: log, barriers and checkpoints go."""
        self._records.clear()
        self._barriers.clear()
        self._horizon_serial = next(self._serials)
        self._seal()

    # ------------------------------------------------------------------ test hooks

    def fail_next_append(self) -> None:
        """Make the next journal append fail (a full disk, an I/O error)."""
        self._fail_next_append = True

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Change the bytes behind the journal's back (another process, a bug)."""
        offset, delete_length, insert = check_splice_arguments(
            len(self._bytes), offset, delete_length, insert
        )
        self._bytes[offset : offset + delete_length] = insert
