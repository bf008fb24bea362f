"""The durable journal: an append-only file of checksummed records (R5).

The file is a header, a *base* record (the horizon state), and one record per
mutation since: a splice record holds both the undo data (offset, removed
bytes, inserted length) and the redo data (inserted bytes), so recovery can
rebuild the buffer from the base forwards, and each rollback is a record too.
Rollbacks are appended rather than cut out of the file, so that every change
is a single append — the one kind of write a crash can only tear at the end —
and so the file remembers every serial and revision ever handed out (S3).
Compaction (``JournaledBuffer.compact``) and adoption rewrite the file into a
temporary one, sync it, rename it over the journal and sync the directory:
either the old file or the new one survives a crash, never a mixture.

Every record is written and synced *before* the buffer is touched. Recovery
rebuilds exactly the last committed state: a torn final record (incomplete, or
failing its checksum at the very end of the file) is dropped and the file cut
back to the last good record; anything else wrong — a bad checksum earlier, a
record that does not fit the buffer it follows, a wrong version, a truncated
header — raises :class:`RecoveryError` naming the byte offset and what was
expected. Nothing is skipped or guessed.

The format (all integers little-endian) is documented in the README's
"Durable journal file format" table.
"""

from __future__ import annotations

import contextlib
import secrets
import struct
import zlib
from collections import deque
from dataclasses import dataclass, field

from rollcert.impl.journal import BaseMeta, InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import Storage
from rollcert.model.errors import JournalError, RecoveryError

MAGIC = b"RCJOURNL"
FORMAT_VERSION = 1
#: magic, format version, buffer id, CRC-32 of the preceding 20 bytes.
HEADER = struct.Struct("<8sIQI")
#: payload length, CRC-32 of the 4 length bytes, CRC-32 of the payload.
FRAME = struct.Struct("<III")

BASE, SPLICE, ROLLBACK = 1, 2, 3
#: type, revision, next serial, horizon serial, base position; then the base bytes.
BASE_FIELDS = struct.Struct("<BQQQQ")
#: type, serial, offset, removed length; then the removed bytes, then the inserted bytes.
SPLICE_FIELDS = struct.Struct("<BQQQ")
#: type, steps.
ROLLBACK_FIELDS = struct.Struct("<BQ")

DEFAULT_NAME = "journal"


def _crc(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def frame(payload: bytes) -> bytes:
    """One record as written: length, the length's checksum, the payload's checksum, payload."""
    length = len(payload)
    return FRAME.pack(length, _crc(length.to_bytes(4, "little")), _crc(payload)) + payload


def encode_header(buffer_id: int) -> bytes:
    head = struct.pack("<8sIQ", MAGIC, FORMAT_VERSION, buffer_id)
    return head + _crc(head).to_bytes(4, "little")


def encode_base(base: bytes, meta: BaseMeta) -> bytes:
    return frame(
        BASE_FIELDS.pack(BASE, meta.revision, meta.next_serial, meta.horizon_serial, meta.base_position) + base
    )


def encode_splice(record: InverseRecord, inserted: bytes) -> bytes:
    offset, removed, _inserted_length, serial = record
    return frame(SPLICE_FIELDS.pack(SPLICE, serial, offset, len(removed)) + removed + inserted)


def encode_rollback(steps: int) -> bytes:
    return frame(ROLLBACK_FIELDS.pack(ROLLBACK, steps))


@dataclass
class Recovered:
    """The last committed state, as rebuilt from a journal file."""

    buffer_id: int
    meta: BaseMeta
    buffer: bytearray
    #: Live records, oldest first, each with its redo data.
    records: list[tuple[InverseRecord, bytes]] = field(default_factory=list)
    revision: int = 0
    next_serial: int = 1
    #: Where the last good record ends; a torn tail beyond it is cut off.
    good_length: int = 0
    torn_tail: bool = False


class JournalReader:
    """Reads a journal file back into the last committed state.

    The two decisions a recovery can get wrong are methods, so that the
    deliberately broken specimens can override exactly one of them:
    :meth:`torn_tail` (what to do with an incomplete final record: drop it) and
    :meth:`corrupt_record` (a checksum failure before the end: refuse).
    """

    def read(self, data: bytes) -> Recovered:
        if len(data) < HEADER.size:
            raise RecoveryError(
                f"byte 0: the header is truncated: expected {HEADER.size} bytes, the file has {len(data)}"
            )
        magic, version, buffer_id, check = HEADER.unpack_from(data, 0)
        if magic != MAGIC:
            raise RecoveryError(f"byte 0: expected the magic {MAGIC!r}, found {magic!r}: not a rollcert journal")
        if _crc(data[: HEADER.size - 4]) != check:
            raise RecoveryError(f"byte 0: the header checksum does not match (expected {check:#010x})")
        if version != FORMAT_VERSION:
            raise RecoveryError(
                f"byte 8: journal format version {version}; this build reads version {FORMAT_VERSION}"
            )
        state: Recovered | None = None
        position = HEADER.size
        while position < len(data):
            if len(data) - position < FRAME.size:
                return self._finish(state, position, torn=True)
            length, length_check, payload_check = FRAME.unpack_from(data, position)
            if _crc(length.to_bytes(4, "little")) != length_check:
                raise RecoveryError(
                    f"byte {position}: the record's length field is corrupt "
                    f"(checksum {length_check:#010x} does not match length {length})"
                )
            end = position + FRAME.size + length
            payload = data[position + FRAME.size : end]
            if end > len(data):
                state = self.torn_tail(state, position, payload)
                return self._finish(state, position, torn=True)
            if _crc(payload) != payload_check:
                if end == len(data):  # the final record: a torn write, not corruption
                    return self._finish(state, position, torn=True)
                if self.corrupt_record(position, payload_check, _crc(payload)):
                    position = end
                    continue
            state = self.apply(state, payload, position, buffer_id)
            position = end
        return self._finish(state, position, torn=False)

    def _finish(self, state: Recovered | None, position: int, *, torn: bool) -> Recovered:
        if state is None:
            raise RecoveryError(
                f"byte {HEADER.size}: expected the base record, found "
                + ("a torn record" if torn else "the end of the file")
            )
        state.good_length, state.torn_tail = position, torn
        return state

    # -- the two decisions -------------------------------------------------------------

    def torn_tail(self, state: Recovered | None, position: int, partial_payload: bytes) -> Recovered | None:
        """An incomplete final record was never committed: drop it."""
        return state

    def corrupt_record(self, position: int, expected: int, found: int) -> bool:
        """A checksum failure before the end of the file is corruption: refuse.
        (Returning ``True`` would skip the record — the ``skip_bad_record`` bug.)"""
        raise RecoveryError(
            f"byte {position}: record checksum mismatch (expected {expected:#010x}, found {found:#010x}) "
            "in a record that is not the last: the journal is corrupt"
        )

    # -- replay -----------------------------------------------------------------------------

    def apply(self, state: Recovered | None, payload: bytes, position: int, buffer_id: int) -> Recovered:
        """Replay one record onto the state rebuilt so far, checking it fits."""
        kind = payload[0] if payload else None
        if state is None:
            if kind != BASE or len(payload) < BASE_FIELDS.size:
                raise RecoveryError(f"byte {position}: expected the base record, found record type {kind}")
            _, revision, next_serial, horizon_serial, base_position = BASE_FIELDS.unpack_from(payload)
            meta = BaseMeta(revision, next_serial, horizon_serial, base_position)
            return Recovered(
                buffer_id, meta, bytearray(payload[BASE_FIELDS.size :]), revision=revision, next_serial=next_serial
            )
        if kind == SPLICE and len(payload) >= SPLICE_FIELDS.size:
            _, serial, offset, removed_length = SPLICE_FIELDS.unpack_from(payload)
            removed = payload[SPLICE_FIELDS.size : SPLICE_FIELDS.size + removed_length]
            inserted = payload[SPLICE_FIELDS.size + removed_length :]
            if len(removed) != removed_length or bytes(state.buffer[offset : offset + removed_length]) != removed:
                raise RecoveryError(
                    f"byte {position}: the splice record (serial {serial}) does not fit the buffer it follows: "
                    f"expected {removed!r} at offset {offset}"
                )
            state.buffer[offset : offset + removed_length] = inserted
            state.records.append((InverseRecord(offset, removed, len(inserted), serial), inserted))
            state.revision += 1
            state.next_serial = max(state.next_serial, serial + 1)
            return state
        if kind == ROLLBACK and len(payload) == ROLLBACK_FIELDS.size:
            _, steps = ROLLBACK_FIELDS.unpack_from(payload)
            if steps > len(state.records):
                raise RecoveryError(
                    f"byte {position}: a rollback of {steps} records, but only {len(state.records)} are live"
                )
            for _ in range(steps):
                (offset, removed, inserted_length, _serial), _ = state.records.pop()
                state.buffer[offset : offset + inserted_length] = removed
            state.revision += steps
            return state
        raise RecoveryError(f"byte {position}: unknown or malformed record (type {kind}, {len(payload)} bytes)")


class FileJournal:
    """A :class:`rollcert.impl.journal.Journal` that is durable: every commit is one
    framed record appended and synced through a :class:`Storage`."""

    #: Evicting one record at a time would need a rewrite of the base; a
    #: durable journal is bounded by :meth:`JournaledBuffer.compact` instead.
    supports_eviction = False

    def __init__(
        self,
        storage: Storage,
        name: str,
        buffer_id: int,
        records: list[tuple[InverseRecord, bytes]],
        size: int,
    ) -> None:
        self.storage = storage
        self.name = name
        self.buffer_id = buffer_id
        self._records: deque[InverseRecord] = deque(record for record, _ in records)
        self._inserted: deque[bytes] = deque(inserted for _, inserted in records)
        self._size = size
        #: Set when an I/O error left the file in a state we could not restore.
        self._broken: str | None = None

    @classmethod
    def create(cls, storage: Storage, name: str, initial: bytes, buffer_id: int) -> FileJournal:
        """Write a new journal atomically: temporary file, sync, rename, directory sync."""
        content = encode_header(buffer_id) + encode_base(initial, BaseMeta(0, 1, 0, 0))
        temporary = name + ".new"
        try:
            storage.write_new(temporary, content)
            storage.sync(temporary)
            storage.rename(temporary, name)
            storage.sync_directory()
        except OSError as error:
            raise JournalError(f"cannot create the journal {name!r}: {error}") from error
        return cls(storage, name, buffer_id, [], len(content))

    # -- the Journal protocol -----------------------------------------------------------

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        self._commit(encode_splice(record, inserted))
        self._records.append(record)
        self._inserted.append(inserted)

    def commit_rollback(self, steps: int) -> None:
        self._commit(encode_rollback(steps))

    def pop(self) -> InverseRecord:
        self._inserted.pop()
        return self._records.pop()

    def evict_oldest(self) -> InverseRecord:
        raise JournalError("a durable journal does not evict; use compact()")

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        kept = list(zip(self._records, self._inserted, strict=True))[len(self._records) - keep :]
        content = (
            encode_header(self.buffer_id)
            + encode_base(base, meta)
            + b"".join(encode_splice(record, inserted) for record, inserted in kept)
        )
        if self._broken is not None:
            raise JournalError(self._broken)
        temporary = self.name + ".new"
        try:
            self.storage.write_new(temporary, content)
            self.storage.sync(temporary)
            self.storage.rename(temporary, self.name)
        except OSError as error:
            with contextlib.suppress(OSError):
                self.storage.remove(temporary)  # it holds buffer contents: leave no copy behind
            raise JournalError(f"cannot rewrite the journal: {error}; the old journal is intact") from error
        # The new journal is in place: from here on the compaction has happened.
        for _ in range(len(self._records) - keep):
            self._records.popleft()
            self._inserted.popleft()
        self._size = len(content)
        try:
            self.storage.sync_directory()
        except OSError as error:
            # A crash could still bring back the old file (the same buffer, an
            # older horizon: the state before the compaction), so refuse every
            # later commit rather than build on a file that may vanish.
            self._broken = (
                f"the journal was compacted but the directory could not be synced ({error}); "
                "reopen it to continue"
            )

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> InverseRecord:
        return self._records[index]

    # -- internals ---------------------------------------------------------------------------

    def _commit(self, data: bytes) -> None:
        """Append and sync one record, or raise JournalError with the file as it was."""
        if self._broken is not None:
            raise JournalError(self._broken)
        try:
            self.storage.append(self.name, data)
            self.storage.sync(self.name)
        except OSError as error:
            self._restore_size()
            raise JournalError(f"the record was not committed: {error}") from error
        self._size += len(data)

    def _restore_size(self) -> None:
        """After a failed write or sync, cut the file back to its last committed
        record, so a half-written record can never be read as committed."""
        try:
            self.storage.truncate(self.name, self._size)
            self.storage.sync(self.name)
        except OSError as error:
            self._broken = (
                f"the journal could not be cut back after an I/O error ({error}): the refused "
                "record may still be on disk; reopen it to recover whatever was committed"
            )


def open_durable_buffer(
    storage: Storage,
    initial: bytes = b"",
    *,
    name: str = DEFAULT_NAME,
    reader: JournalReader | None = None,
    journal_class: type[FileJournal] = FileJournal,
) -> JournaledBuffer:
    """Open the buffer journaled in ``storage``: recover it if the journal exists
    (``initial`` is then ignored), else create it from ``initial``.

    Recovery cuts a torn final record off the file; any other damage raises
    :class:`RecoveryError` and leaves the file untouched.
    """
    if not isinstance(initial, (bytes, bytearray)):
        raise TypeError(f"initial must be bytes, got {type(initial).__name__}")
    try:
        data = storage.read(name)
    except OSError as error:
        raise RecoveryError(f"cannot read the journal {name!r}: {error}") from error
    if data is None:
        buffer_id = secrets.randbits(62) | (1 << 62)  # never equal to an in-memory buffer's small id
        journal = journal_class.create(storage, name, bytes(initial), buffer_id)
        return JournaledBuffer._restore(
            bytes(initial), journal, buffer_id=buffer_id, meta=BaseMeta(0, 1, 0, 0), revision=0, next_serial=1
        )
    recovered = (reader or JournalReader()).read(data)
    if recovered.torn_tail:
        try:
            storage.truncate(name, recovered.good_length)
            storage.sync(name)
        except OSError as error:
            raise RecoveryError(f"cannot cut the torn tail off the journal: {error}") from error
    journal = journal_class(storage, name, recovered.buffer_id, recovered.records, recovered.good_length)
    return JournaledBuffer._restore(
        bytes(recovered.buffer),
        journal,
        buffer_id=recovered.buffer_id,
        meta=recovered.meta,
        revision=recovered.revision,
        next_serial=recovered.next_serial,
    )
