"""The production buffer: journaled in-place splices with sound rollback.

How each property is kept, and at what cost:

- R1 write-ahead: the inverse record is appended to the journal *before* the
  storage is touched; if the append raises, nothing has changed.
- R2 offsets: records are undone strictly LIFO at their recorded offsets, which
  are exact under LIFO; there is no content search, so repeated text cannot
  mislead it.
- R3 ordering: ``rollback(n)`` and ``rollback_to`` run n single LIFO steps,
  after checking the whole range first, so they either complete or change
  nothing. Checkpoints name a state's serial, not a depth (no ABA).
- R4 strict divergence detection at O(1): the storage counts every write made
  through any path (``ChunkedText.version``); the buffer remembers the count it
  left behind, so a different count means an out-of-log write, recorded as a
  barrier at the depth where it happened.
- R6 bounded log: reject before appending, or evict the oldest record after
  the append succeeded (a refused append must not move the horizon).
- R5 durability: with a durable journal (``rollcert.impl.file_journal``) every
  mutation — splice, rollback, compaction, adoption — is committed to the
  journal before the buffer is touched, so a crash at any point recovers the
  state before or after the operation.

All public methods take one lock, so concurrent callers see whole operations.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

from rollcert.impl.chunked_text import ChunkedText
from rollcert.impl.journal import BaseMeta
from rollcert.impl.journal import InMemoryJournal
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journal import Journal
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.reference import POLICIES
from rollcert.model.reference import Policy

_buffer_ids = itertools.count(1)


@dataclass(frozen=True)
class Checkpoint:
    """An opaque token naming one state of one buffer.

    ``position`` counts records since the buffer was created (so eviction does
    not shift it); ``serial`` is the identity of the state, so a token from a
    rolled-away state can never name the different state now at that depth.
    """

    buffer_id: int
    position: int
    serial: int


class JournaledBuffer:
    """A byte buffer with journaled splices, LIFO rollback and checkpoints.

    ``chunk_size`` is the storage's chunk (:class:`ChunkedText`'s own when None):
    a certifier asks for a few bytes per chunk, so that the storage's paths over
    many chunks and groups of chunks are run on buffers of a few hundred bytes.
    """

    def __init__(
        self,
        initial: bytes = b"",
        *,
        capacity: int | None = None,
        policy: Policy = "reject",
        journal: Journal | None = None,
        start_revision: int = 0,
        chunk_size: int | None = None,
    ) -> None:
        if type(start_revision) is not int or start_revision < 0:
            raise ValueError(f"start_revision must be an int >= 0, got {start_revision!r}")
        if not isinstance(initial, (bytes, bytearray, memoryview)):
            raise TypeError(f"initial must be bytes, got {type(initial).__name__}")
        if capacity is not None:
            if type(capacity) is not int:
                raise TypeError(f"capacity must be an int or None, got {type(capacity).__name__}")
            if capacity < 1:
                raise ValueError(f"capacity must be at least 1, got {capacity}")
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if capacity is not None and not getattr(journal, "supports_eviction", True):
            raise ValueError("this journal cannot evict records; bound it with compact() instead of a capacity")
        self._storage = ChunkedText(bytes(initial), chunk_size=chunk_size)
        self._journal: Journal = journal if journal is not None else InMemoryJournal()
        if len(self._journal):
            raise ValueError("the journal must start empty")
        #: Live records, kept here so the hot path does not ask the journal.
        self._depth = 0
        self._capacity = capacity
        self._policy = policy
        self._lock = threading.Lock()
        self._id = next(_buffer_ids)
        self._serials = itertools.count(1)
        self._horizon_serial = 0
        #: Records evicted or adopted away since creation: position = this + depth.
        self._base_position = 0
        #: A buffer may start at any revision (a certifier reaching high revisions
        #: cheaply; a buffer resumed from elsewhere): revisions only grow from it.
        self._revision = start_revision
        #: The storage version this buffer's own last write left behind.
        self._expected_version = self._storage.version
        #: Position of the newest out-of-log write seen, or -1 (R4).
        self._barrier_position = -1
        #: The serial of the newest same-length splice's record, or -1, set by that
        #: splice and reset by every other write that adds a record; the bytes it
        #: wrote are at ``_undo_at`` (chunk, offset in it). While it matches the newest
        #: record and the storage version is ours, nothing has written since (a
        #: rollback pops the record, and serials are never reused), so the undo
        #: writes back there without a lookup (see ``rollback``).
        self._undo_serial = -1
        self._undo_at: tuple[bytearray, int] = (bytearray(), 0)

    # -- observation ---------------------------------------------------------

    def read(self) -> bytes:
        with self._lock:
            return self._storage.read()

    # The observations take the lock too (R7): a rollback changes the bytes one
    # step at a time and updates depth and revision at the end, so a reader that
    # looked without the lock could see a length that is neither before nor
    # after (5 bytes at depth 2 on the way from 9 back to 3).

    def __len__(self) -> int:
        with self._lock:
            return len(self._storage)

    @property
    def depth(self) -> int:
        """Number of live (undoable) records; 0 is the horizon."""
        with self._lock:
            return self._depth

    @property
    def revision(self) -> int:
        """Grows by one on every splice and every rollback step; never reused."""
        with self._lock:
            return self._revision

    @property
    def storage(self) -> ChunkedText:
        """The raw bytes. Writing to them directly is an out-of-log write: it will
        be detected, and no rollback will cross it until ``adopt_current()``."""
        return self._storage

    @property
    def journal(self) -> Journal:
        return self._journal

    # -- mutation --------------------------------------------------------------

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Replace ``delete_length`` bytes at ``offset`` with ``insert``.

        Raises ``JournalError`` (nothing changed) if the inverse record cannot
        be committed, ``ValueError``/``TypeError`` for bad arguments.
        """
        if type(offset) is not int or type(delete_length) is not int:
            raise TypeError("offset and delete_length must be ints")
        if type(insert) is not bytes:
            if not isinstance(insert, (bytearray, memoryview)):
                raise TypeError(f"insert must be bytes, got {type(insert).__name__}")
            insert = bytes(insert)
        with self._lock:
            storage = self._storage
            length = storage.length
            if not (0 <= offset <= length and 0 <= delete_length <= length - offset):
                if not 0 <= offset <= length:
                    raise ValueError(f"offset {offset} outside the buffer [0, {length}]")
                raise ValueError(
                    f"delete_length {delete_length} at offset {offset} runs past the end "
                    f"of a {length}-byte buffer"
                )
            if storage.version != self._expected_version:
                self._note_out_of_log_write()
            full = self._capacity is not None and self._depth >= self._capacity
            if full and self._policy == "reject":
                raise JournalError(f"journal full ({self._capacity} records) and policy is reject")
            serial = next(self._serials)
            if delete_length == len(insert):
                # Same-length fast path: one lookup for the read of the removed bytes
                # and the write over them, the record committed in between (R1).
                found = storage.locate(offset, delete_length)
                if found is not None:
                    chunk, local = found
                    end = local + delete_length
                    self._journal.append(
                        tuple.__new__(InverseRecord, (offset, bytes(chunk[local:end]), delete_length, serial)),
                        insert,
                    )
                    if full:
                        self._evict_oldest()
                    else:
                        self._depth += 1
                    chunk[local:end] = insert
                    version = storage.version + 1
                    storage.version = self._expected_version = version
                    self._revision += 1
                    self._undo_serial = serial
                    self._undo_at = found
                    return
            self._undo_serial = -1
            # tuple.__new__ builds the same InverseRecord as InverseRecord(...) without
            # the Python-level __new__ of a NamedTuple: this is the hot path.
            self._journal.append(
                tuple.__new__(
                    InverseRecord,
                    (offset, storage.read_range(offset, offset + delete_length), len(insert), serial),
                ),
                insert,
            )
            # The record is committed; only now is the buffer touched (R1).
            if full:
                self._evict_oldest()
            else:
                self._depth += 1
            storage.replace(offset, delete_length, insert)
            self._expected_version = storage.version
            self._revision += 1

    def rollback(self, steps: int = 1) -> None:
        """Undo the newest ``steps`` records, newest first, or change nothing.

        Raises ``UnreachableRollbackError`` past the horizon and
        ``DivergenceError`` if an out-of-log write lies in the way.
        """
        if type(steps) is not int:
            raise TypeError(f"steps must be an int, got {type(steps).__name__}")
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        with self._lock:
            storage, depth = self._storage, self._depth
            if (
                steps == 1
                and depth
                and storage.version == self._expected_version
                and self._barrier_position - self._base_position != depth
            ):
                # The common case without _rollback_locked's generality: one step, no
                # out-of-log write since our last write (the versions match) and no
                # barrier at this depth. The same commit-then-undo order (R5).
                journal = self._journal
                if type(journal) is not InMemoryJournal:  # whose commit_rollback is a no-op
                    journal.commit_rollback(1)
                offset, removed, inserted_length, serial = journal.pop()
                if serial == self._undo_serial:
                    # Undoing the same-length splice just made (nothing has written
                    # since, so its chunk still holds its bytes): no lookup.
                    chunk, local = self._undo_at
                    chunk[local : local + inserted_length] = removed
                    version = storage.version + 1
                    storage.version = version
                else:
                    storage.replace(offset, inserted_length, removed)
                    version = storage.version
                self._expected_version = version
                self._depth = depth - 1
                self._revision += 1
                return
            self._rollback_locked(steps)

    def checkpoint(self) -> Checkpoint:
        """A token for the current state; it dies when a rollback or an eviction passes it."""
        with self._lock:
            depth = self._depth
            serial = self._journal[-1].serial if depth else self._horizon_serial
            return Checkpoint(self._id, self._base_position + depth, serial)

    def rollback_to(self, token: Checkpoint) -> None:
        """Roll back, step by step, to the state ``token`` names; or change nothing."""
        if not isinstance(token, Checkpoint):
            raise TypeError(f"expected a Checkpoint, got {type(token).__name__}")
        with self._lock:
            if token.buffer_id != self._id:
                raise UnreachableRollbackError("the checkpoint belongs to another buffer")
            depth = token.position - self._base_position
            if not 0 <= depth <= self._depth or self._serial_at(depth) != token.serial:
                raise UnreachableRollbackError(
                    "the checkpoint is dead: its state was rolled back past, evicted or adopted away"
                )
            self._rollback_locked(self._depth - depth)

    def adopt_current(self) -> None:
        """Make the current buffer the new horizon, discarding the log on purpose.

        The only way past a divergence. Every checkpoint dies.
        """
        with self._lock:
            horizon_serial = next(self._serials)
            meta = BaseMeta(self._revision, horizon_serial + 1, horizon_serial, self._base_position + self._depth)
            self._journal.rewrite(self._storage.read(), meta, 0)
            self._undo_serial = -1
            self._base_position += self._depth
            self._depth = 0
            self._horizon_serial = horizon_serial
            self._barrier_position = -1
            self._expected_version = self._storage.version

    def compact(self, keep: int) -> None:
        """Fold all but the newest ``keep`` records into a new base snapshot.

        The buffer and revision are unchanged; the horizon moves up to depth
        ``depth - keep`` and checkpoints below it die. This is how a durable
        journal is kept bounded. Raises ``DivergenceError`` if an out-of-log
        write lies among the kept records (the base could not be computed
        truthfully) and ``JournalError`` if the journal cannot be rewritten;
        either way nothing changes.
        """
        if type(keep) is not int:
            raise TypeError(f"keep must be an int, got {type(keep).__name__}")
        with self._lock:
            depth = self._depth
            if not 0 <= keep <= depth:
                raise ValueError(f"keep must be in [0, {depth}] (the depth), got {keep}")
            if self._storage.version != self._expected_version:
                self._note_out_of_log_write()
            dropped = depth - keep
            barrier_depth = self._barrier_position - self._base_position
            if keep and dropped < barrier_depth <= depth:
                raise DivergenceError(
                    f"an out-of-log write at depth {barrier_depth} lies among the {keep} records to keep"
                )
            base = bytearray(self._storage.read())
            for index in range(depth - 1, dropped - 1, -1):
                offset, removed, inserted_length, _serial = self._journal[index]
                base[offset : offset + inserted_length] = removed
            meta = BaseMeta(
                self._revision - keep,
                self._peek_next_serial(),
                self._serial_at(dropped),
                self._base_position + dropped,
            )
            self._journal.rewrite(bytes(base), meta, keep)
            self._horizon_serial = meta.horizon_serial
            self._base_position = meta.base_position
            self._depth = keep

    @classmethod
    def _restore(
        cls,
        current: bytes,
        journal: Journal,
        *,
        buffer_id: int,
        meta: BaseMeta,
        revision: int,
        next_serial: int,
    ) -> JournaledBuffer:
        """A buffer rebuilt by recovery from a durable journal whose live records
        are already in ``journal``. Keeps the buffer id, serials and revision,
        so checkpoints from before the restart stay valid and nothing is reused."""
        buffer = cls(b"")
        buffer._storage = ChunkedText(current)
        buffer._journal = journal
        buffer._depth = len(journal)
        buffer._id = buffer_id
        buffer._serials = itertools.count(next_serial)
        buffer._horizon_serial = meta.horizon_serial
        buffer._base_position = meta.base_position
        buffer._revision = revision
        buffer._expected_version = buffer._storage.version
        return buffer

    # -- internals ---------------------------------------------------------------

    def _peek_next_serial(self) -> int:
        """The serial the next record will get, without using it up."""
        upcoming = next(self._serials)
        self._serials = itertools.count(upcoming)
        return upcoming

    def _serial_at(self, depth: int) -> int:
        return self._journal[depth - 1].serial if depth else self._horizon_serial

    def _note_out_of_log_write(self) -> None:
        """Somebody wrote behind the journal's back at the current depth (R4)."""
        self._barrier_position = self._base_position + self._depth
        self._expected_version = self._storage.version

    def _evict_oldest(self) -> None:
        evicted = self._journal.evict_oldest()
        self._horizon_serial = evicted.serial
        self._base_position += 1

    def _rollback_locked(self, steps: int) -> None:
        self._undo_serial = -1
        storage, journal = self._storage, self._journal
        depth = self._depth
        if steps > depth:
            raise UnreachableRollbackError(f"rollback({steps}) goes past the horizon (depth {depth})")
        if storage.version != self._expected_version:
            self._note_out_of_log_write()
        barrier_depth = self._barrier_position - self._base_position
        if steps and depth - steps < barrier_depth <= depth:
            raise DivergenceError(
                f"an out-of-log write at depth {barrier_depth} lies in the way of rollback({steps}) "
                f"from depth {depth}; adopt_current() to accept the buffer as it is"
            )
        if steps:
            journal.commit_rollback(steps)  # durable before the buffer is touched (R5)
        for _ in range(steps):
            offset, removed, inserted_length, _serial = journal.pop()
            storage.replace(offset, inserted_length, removed)
        self._depth = depth - steps
        self._revision += steps
        self._expected_version = storage.version
