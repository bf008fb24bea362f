"""The durable journal: an append-only file of chained, checksummed records (R5).

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

**Chained frames (format version 2).** A per-frame checksum only says that a
record is intact, not that it is in its place: a record appended twice, two
records swapped, a middle record dropped or a record copied from another
journal are all intact, and replaying them builds a state that never existed.
So each frame carries its sequence number, and a checksum that covers the
previous frame's checksum and a random salt kept in the header (the technique
of SQLite's WAL). A frame out of sequence, or one whose checksum does not
chain onto its predecessor under this journal's salt, is refused with
:class:`RecoveryError`. Every rewrite draws a new salt, so records of an older
generation of the same journal do not chain either. Version 1 files (per-frame
checksums only) are still read, and are rewritten as version 3 when opened.

**Serials are never handed out twice (format version 3).** A checkpoint names
a state by its serial. In batched mode a crash may lose records that were
never synced, and with them the serials they carried; a recovery that counted
on from the records it found would hand those serials out again, and a
checkpoint of a lost state would then name whichever new state got its serial
(the ABA of S3). So serials come in blocks of :data:`SERIAL_BLOCK`, and a
reopened journal starts at the next block after everything its file
mentions. Before the first serial of a block is used, a *serial floor* record
naming the block is written and synced: the block is durably in use, so a
later crash, however much it loses, makes the next open start above it. The
floor is written when the journal is opened (one fsync per open); if that
write fails (a read-only file), the first record that uses the block carries
it, in the same write and sync. Version 2 files are read and rewritten as
version 3 when opened, the rewrite's base naming the new block.

**Every record is checked against the state it applies to** before it is
applied — offsets, lengths, removed bytes, rollback steps, capacity, serials —
so a record that is intact and in sequence but does not fit (a crafted one, or
one written by a buggy build) is a :class:`RecoveryError` too, never an
``IndexError`` and never a silently different buffer.

**One writer.** Opening a journal takes an exclusive lock through the storage
(``flock`` on ``NAME.lock`` in the directory) for as long as the journal is
open; a second opener gets :class:`JournalInUseError`. Compaction and adoption
happen under it. Two writers appending to one file would interleave records
into a history neither had; a compaction by one would erase the other's
acknowledged records.

**Durability modes.** By default every record is written and synced *before*
the buffer is touched (``Durability.per_operation()``): an operation that
returned survives any crash. ``Durability.batched(...)`` writes each record
before the buffer is touched but syncs only on :meth:`FileJournal.flush`,
every N records or once T milliseconds have passed since the last sync
(checked at each commit): many times the commits per second, and the weaker
guarantee stated in ``rollcert.model.properties.R5_BATCHED``: after a crash,
recovery yields a state of the history at or after the last completed flush
and at or before the crash point.

Recovery rebuilds exactly the last committed state: a torn final record
(incomplete, or failing its own payload checksum at the very end of the file)
is dropped and the file cut back to the last good record; anything else
wrong raises :class:`RecoveryError` naming the byte offset and what was
expected. Nothing is skipped or guessed.

The format (all integers little-endian) is documented in the README's
"durable journal" section.
"""

from __future__ import annotations

import contextlib
import errno
import secrets
import struct
import time
import zlib
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Literal
from typing import NoReturn

from rollcert.impl.journal import BaseMeta
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import Storage
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import OutcomeUnknownError
from rollcert.model.errors import RecoveryError
from rollcert.model.reference import POLICIES
from rollcert.model.reference import Policy

MAGIC = b"RCJOURNL"
FORMAT_VERSION = 3
#: Versions this build reads (versions 1 and 2 are rewritten as version 3 on open).
READABLE_VERSIONS = (1, 2, 3)

#: Versions 2 and 3: magic, format version, buffer id, salt, CRC-32 of the preceding 28 bytes.
HEADER = struct.Struct("<8sIQQI")
#: Versions 2 and 3: payload length, sequence number, CRC-32 of those 12 bytes,
#: CRC-32 of the payload, chained checksum (see :func:`chain_checksum`).
FRAME = struct.Struct("<IQIII")

#: Version 1: magic, format version, buffer id, CRC-32 of the preceding 20 bytes.
HEADER_V1 = struct.Struct("<8sIQI")
#: Version 1: payload length, CRC-32 of the 4 length bytes, CRC-32 of the payload.
FRAME_V1 = struct.Struct("<III")

BASE, SPLICE, ROLLBACK, EVICT_SPLICE, SERIAL_FLOOR = 1, 2, 3, 4, 5
#: Version 2 base: type, revision, next serial, horizon serial, base position,
#: capacity (0 = unbounded), policy (0 reject, 1 evict_oldest), and how many
#: records the rewrite wrote after it; then the base bytes. A rewrite is
#: atomic, so a file that ends before those records was cut, not torn.
BASE_FIELDS = struct.Struct("<BQQQQQBQ")
#: Version 1 base: type, revision, next serial, horizon serial, base position; then the bytes.
BASE_FIELDS_V1 = struct.Struct("<BQQQQ")
#: Splice (and evict-then-splice): type, serial, offset, removed length; then
#: the removed bytes, then the inserted bytes.
SPLICE_FIELDS = struct.Struct("<BQQQ")
#: Rollback: type, steps.
ROLLBACK_FIELDS = struct.Struct("<BQ")
#: Serial floor (version 3 only): type, the first serial of the block now in use.
FLOOR_FIELDS = struct.Struct("<BQ")

#: Serials are handed out in blocks this large: an open starts a new block, so
#: the serials of records a crash lost are never handed out again.
SERIAL_BLOCK = 1 << 32
#: Serials are u64 on disk.
SERIAL_SPACE = 1 << 64

DEFAULT_NAME = "journal"


def reopen_floor(next_serial: int) -> int:
    """The first serial a journal opened on a file whose records and floors go
    up to ``next_serial`` (exclusive) may hand out: the start of the next block.
    Every serial the last writer used, durable or lost, lies in a block at or
    below the one ``next_serial`` is in — the writer wrote a floor before it
    used a new block — so nothing from the block boundary up was ever used."""
    return (next_serial // SERIAL_BLOCK + 1) * SERIAL_BLOCK


def _crc(data: bytes, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


def chain_checksum(previous: int, salt: int, sequence: int, length: int, payload_check: int) -> int:
    """The checksum that ties a frame to its place: it covers the previous
    frame's chained checksum (the header's checksum for the first frame), this
    journal's salt, the frame's sequence number and length, and the payload's
    own checksum. A record moved, repeated, dropped or copied in from another
    journal fails it."""
    return _crc(struct.pack("<QQII", salt, sequence, length, payload_check), previous)


@dataclass(frozen=True)
class Chain:
    """Where the next frame goes: its sequence number and the checksum it chains onto."""

    salt: int
    sequence: int
    previous: int

    def frame(self, payload: bytes) -> tuple[bytes, Chain]:
        """The framed record, and the chain position after it."""
        length = len(payload)
        head = struct.pack("<IQ", length, self.sequence)
        payload_check = _crc(payload)
        chained = chain_checksum(self.previous, self.salt, self.sequence, length, payload_check)
        data = head + struct.pack("<III", _crc(head), payload_check, chained) + payload
        return data, Chain(self.salt, self.sequence + 1, chained)


def encode_header(buffer_id: int, salt: int) -> bytes:
    head = struct.pack("<8sIQQ", MAGIC, FORMAT_VERSION, buffer_id, salt)
    return head + _crc(head).to_bytes(4, "little")


def start_chain(header: bytes) -> Chain:
    """The chain of a fresh file whose header is ``header``: sequence 0, seeded
    with the header's checksum (so a frame only chains under this very header)."""
    _, _, _, salt, header_check = HEADER.unpack_from(header)
    return Chain(salt, 0, header_check)


def base_payload(
    base: bytes, meta: BaseMeta, capacity: int | None = None, policy: Policy = "reject", records: int = 0
) -> bytes:
    return (
        BASE_FIELDS.pack(
            BASE,
            meta.revision,
            meta.next_serial,
            meta.horizon_serial,
            meta.base_position,
            capacity or 0,
            POLICIES.index(policy),
            records,
        )
        + base
    )


def splice_payload(record: InverseRecord, inserted: bytes, *, evicts: bool = False) -> bytes:
    offset, removed, _inserted_length, serial = record
    return SPLICE_FIELDS.pack(EVICT_SPLICE if evicts else SPLICE, serial, offset, len(removed)) + removed + inserted


def rollback_payload(steps: int) -> bytes:
    return ROLLBACK_FIELDS.pack(ROLLBACK, steps)


def floor_payload(floor: int) -> bytes:
    return FLOOR_FIELDS.pack(SERIAL_FLOOR, floor)


def encode_journal(
    buffer_id: int,
    salt: int,
    base: bytes,
    meta: BaseMeta,
    records: list[tuple[InverseRecord, bytes]],
    *,
    capacity: int | None = None,
    policy: Policy = "reject",
) -> tuple[bytes, Chain]:
    """A whole version 3 journal file, and the chain position after its last record."""
    header = encode_header(buffer_id, salt)
    chain = start_chain(header)
    parts = [header]
    payloads = [base_payload(base, meta, capacity, policy, len(records))]
    for payload in payloads + [splice_payload(r, i) for r, i in records]:
        data, chain = chain.frame(payload)
        parts.append(data)
    return b"".join(parts), chain


def frame_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every complete version 2 or 3 frame in a journal file, header
    excluded, read by the length fields alone (no checks): for tests and tools
    that plant or inspect records."""
    spans, position = [], HEADER.size
    while position + FRAME.size <= len(data):
        end = position + FRAME.size + FRAME.unpack_from(data, position)[0]
        if end > len(data):
            break
        spans.append((position, end))
        position = end
    return spans


def chain_after(data: bytes, frames: int | None = None) -> Chain:
    """The chain position after the first ``frames`` frames of a version 2 or 3
    journal (all of them if ``None``), taken from the frames as written: what a
    writer who knows the format needs to append a record that chains."""
    chain = start_chain(data[: HEADER.size])
    for start, _end in frame_spans(data)[:frames]:
        _length, sequence, _head, _payload_check, chained = FRAME.unpack_from(data, start)
        chain = Chain(chain.salt, sequence + 1, chained)
    return chain


@dataclass(frozen=True)
class Durability:
    """When records reach the disk.

    ``per_operation`` (the default) syncs every record before the buffer is
    touched: an operation that returned survives any crash (R5). ``batched``
    writes every record before the buffer is touched but syncs it only on
    ``flush()``, once ``every_records`` records are waiting, or at the first
    commit ``every_ms`` milliseconds after the last sync; a crash may lose the
    records since the last sync, and recovery yields a state of the history
    at or after the last completed flush and at or before the crash (R5,
    batched variant).
    """

    mode: Literal["per_operation", "batched"] = "per_operation"
    every_records: int | None = None
    every_ms: float | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("per_operation", "batched"):
            raise ValueError(f"durability mode must be 'per_operation' or 'batched', got {self.mode!r}")
        if self.every_records is not None and (type(self.every_records) is not int or self.every_records < 1):
            raise ValueError(f"every_records must be a positive int or None, got {self.every_records!r}")
        if self.every_ms is not None and (
            not isinstance(self.every_ms, (int, float)) or isinstance(self.every_ms, bool) or self.every_ms < 0
        ):
            raise ValueError(f"every_ms must be a non-negative number or None, got {self.every_ms!r}")
        if self.mode == "per_operation" and (self.every_records is not None or self.every_ms is not None):
            raise ValueError("every_records and every_ms only apply to the batched mode")

    @classmethod
    def per_operation(cls) -> Durability:
        return cls("per_operation")

    @classmethod
    def batched(cls, every_records: int | None = 16, every_ms: float | None = 5.0) -> Durability:
        return cls("batched", every_records, every_ms)

    def describe(self) -> str:
        if self.mode == "per_operation":
            return "per-operation (every record synced before the operation returns)"
        triggers = ["flush()"]
        if self.every_records is not None:
            triggers.append(f"every {self.every_records} records")
        if self.every_ms is not None:
            triggers.append(f"every {self.every_ms:g} ms")
        return "batched (synced on " + ", ".join(triggers) + ")"


@dataclass
class Recovered:
    """The last committed state, as rebuilt from a journal file."""

    buffer_id: int
    meta: BaseMeta
    buffer: bytearray
    #: Live records, oldest first, each with its redo data.
    records: list[tuple[InverseRecord, bytes]] = field(default_factory=list)
    revision: int = 0
    #: Above every serial a record or a serial floor of the file mentions.
    next_serial: int = 1
    #: Where the last good record ends; a torn tail beyond it is cut off.
    good_length: int = 0
    torn_tail: bool = False
    version: int = FORMAT_VERSION
    #: Where the next frame goes (versions 2 and 3).
    chain: Chain | None = None
    capacity: int | None = None
    policy: Policy = "reject"
    #: Records the rewrite that made this file wrote after the base (versions 2 and 3).
    rewritten_records: int = 0
    #: Records read after the base.
    records_read: int = 0


class JournalReader:
    """Reads a journal file back into the last committed state.

    The decisions a recovery can get wrong are methods, so that the
    deliberately broken specimens can override exactly one of them:
    :meth:`torn_tail` (an incomplete final record: drop it),
    :meth:`corrupt_record` (a payload checksum failure before the end: refuse)
    and :meth:`misplaced_record` (an intact record out of sequence or off the
    chain: refuse).
    """

    def read(self, data: bytes) -> Recovered:
        if len(data) < 12:
            raise RecoveryError(
                f"byte 0: the header is truncated: expected {HEADER.size} bytes, the file has {len(data)}"
            )
        magic, version = struct.unpack_from("<8sI", data, 0)
        if magic != MAGIC:
            raise RecoveryError(f"byte 0: expected the magic {MAGIC!r}, found {magic!r}: not a rollcert journal")
        if version not in READABLE_VERSIONS:
            # An unknown version has an unknown header layout: its checksum cannot be checked.
            raise RecoveryError(
                f"byte 8: journal format version {version}; this build reads versions "
                + ", ".join(map(str, READABLE_VERSIONS))
            )
        header = HEADER if version >= 2 else HEADER_V1
        if len(data) < header.size:
            raise RecoveryError(
                f"byte 0: the header is truncated: expected {header.size} bytes, the file has {len(data)}"
            )
        check = struct.unpack_from("<I", data, header.size - 4)[0]
        if _crc(data[: header.size - 4]) != check:
            raise RecoveryError(f"byte 0: the header checksum does not match (expected {check:#010x})")
        if version == 1:
            return self._read_v1(data)
        return self._read_v2(data, version)

    def _read_v2(self, data: bytes, version: int) -> Recovered:
        """Versions 2 and 3 (chained frames; version 3 adds the serial floor record)."""
        _, _, buffer_id, salt, header_check = HEADER.unpack_from(data, 0)
        chain = Chain(salt, 0, header_check)
        state: Recovered | None = None
        position = HEADER.size
        while position < len(data):
            if len(data) - position < FRAME.size:
                return self._finish(state, position, chain, torn=True, version=version)
            length, sequence, head_check, payload_check, chained = FRAME.unpack_from(data, position)
            if _crc(data[position : position + 12]) != head_check:
                raise RecoveryError(
                    f"byte {position}: the record's length and sequence fields are corrupt "
                    f"(checksum {head_check:#010x} does not match)"
                )
            if sequence != chain.sequence:
                self.misplaced_record(
                    position,
                    f"expected record #{chain.sequence}, found record #{sequence}: a record is "
                    + ("repeated or out of order" if sequence < chain.sequence else "missing or out of order"),
                )
            end = position + FRAME.size + length
            payload = data[position + FRAME.size : end]
            if end > len(data):
                state = self.torn_tail(state, position, payload)
                return self._finish(state, position, chain, torn=True, version=version)
            if _crc(payload) != payload_check:
                if end == len(data):  # the final record: a torn write, not corruption
                    return self._finish(state, position, chain, torn=True, version=version)
                if self.corrupt_record(position, payload_check, _crc(payload)):
                    chain = Chain(salt, sequence + 1, chained)  # skipped, on the frame's word
                    position = end
                    continue
            expected_chain = chain_checksum(chain.previous, salt, sequence, length, payload_check)
            if chained != expected_chain:
                self.misplaced_record(
                    position,
                    f"record #{sequence} is intact but does not chain onto the record before it "
                    f"(expected chained checksum {expected_chain:#010x}, found {chained:#010x}): it was "
                    "copied from another journal, from an older generation of this one, or moved",
                )
            if state is None:
                state = self.apply(state, payload, position, buffer_id)
                state.version = version  # the base: what follows is read by its version's rules
            else:
                state = self.apply(state, payload, position, buffer_id)
            state.records_read = sequence
            chain = Chain(salt, sequence + 1, chained)
            position = end
        return self._finish(state, position, chain, torn=False, version=version)

    def _read_v1(self, data: bytes) -> Recovered:
        """Version 1: per-frame checksums only. Read for old files; rewritten as version 2 on open."""
        buffer_id = HEADER_V1.unpack_from(data, 0)[2]
        state: Recovered | None = None
        position = HEADER_V1.size
        while position < len(data):
            if len(data) - position < FRAME_V1.size:
                return self._finish(state, position, None, torn=True, version=1)
            length, length_check, payload_check = FRAME_V1.unpack_from(data, position)
            if _crc(length.to_bytes(4, "little")) != length_check:
                raise RecoveryError(
                    f"byte {position}: the record's length field is corrupt "
                    f"(checksum {length_check:#010x} does not match length {length})"
                )
            end = position + FRAME_V1.size + length
            payload = data[position + FRAME_V1.size : end]
            if end > len(data):
                state = self.torn_tail(state, position, payload)
                return self._finish(state, position, None, torn=True, version=1)
            if _crc(payload) != payload_check:
                if end == len(data):
                    return self._finish(state, position, None, torn=True, version=1)
                if self.corrupt_record(position, payload_check, _crc(payload)):
                    position = end
                    continue
            if state is None and payload[:1] == bytes([BASE]):
                payload = _v1_base_as_v2(payload, position)
                state = self.apply(state, payload, position, buffer_id)
                state.version = 1
            else:
                state = self.apply(state, payload, position, buffer_id)
            position = end
        return self._finish(state, position, None, torn=False, version=1)

    def _finish(
        self, state: Recovered | None, position: int, chain: Chain | None, *, torn: bool, version: int
    ) -> Recovered:
        if state is None:
            raise RecoveryError(
                f"byte {HEADER.size if version >= 2 else HEADER_V1.size}: expected the base record, found "
                + ("a torn record" if torn else "the end of the file")
            )
        if state.records_read < state.rewritten_records:
            raise RecoveryError(
                f"byte {position}: expected {state.rewritten_records} records after the base (the rewrite "
                f"that made this file wrote them at once), found {state.records_read}: the file was cut short"
            )
        state.good_length, state.torn_tail = position, torn
        state.version, state.chain = version, chain
        return state

    # -- the decisions -------------------------------------------------------------------

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

    def misplaced_record(self, position: int, explanation: str) -> None:
        """An intact record that is not the next one of this journal: refuse.
        (Returning would replay it — the ``crc_only`` bug.)"""
        raise RecoveryError(f"byte {position}: {explanation}")

    # -- replay -----------------------------------------------------------------------------

    def apply(self, state: Recovered | None, payload: bytes, position: int, buffer_id: int) -> Recovered:
        """Replay one record onto the state rebuilt so far, after checking that it fits."""
        try:
            return self._apply(state, payload, position, buffer_id)
        except RecoveryError:
            raise
        except (IndexError, ValueError, OverflowError, struct.error) as error:  # pragma: no cover - belt and braces
            raise RecoveryError(f"byte {position}: a record that does not fit: {error}") from error

    def _apply(self, state: Recovered | None, payload: bytes, position: int, buffer_id: int) -> Recovered:
        kind = payload[0] if payload else None
        if state is None:
            return _base_state(payload, position, buffer_id)
        if kind in (SPLICE, EVICT_SPLICE) and len(payload) >= SPLICE_FIELDS.size:
            _apply_splice(state, payload, position, evicts=kind == EVICT_SPLICE)
            return state
        if kind == ROLLBACK and len(payload) == ROLLBACK_FIELDS.size:
            _, steps = ROLLBACK_FIELDS.unpack_from(payload)
            if not 1 <= steps <= len(state.records):
                raise RecoveryError(
                    f"byte {position}: a rollback of {steps} records, but {len(state.records)} are live "
                    "(expected between 1 and that)"
                )
            for _ in range(steps):
                (offset, removed, inserted_length, serial), _ = state.records[-1]
                if offset + inserted_length > len(state.buffer):
                    raise RecoveryError(
                        f"byte {position}: the rollback cannot undo record serial {serial}: its "
                        f"{inserted_length} bytes at offset {offset} lie past the end of the buffer"
                    )
                state.records.pop()
                state.buffer[offset : offset + inserted_length] = removed
            state.revision += steps
            return state
        if kind == SERIAL_FLOOR and len(payload) == FLOOR_FIELDS.size and state.version >= 3:
            _apply_floor(state, payload, position)
            return state
        raise RecoveryError(
            f"byte {position}: unknown or malformed record (type {kind}, {len(payload)} bytes) in a version "
            f"{state.version} journal; expected a splice, an evict-and-splice, a rollback"
            + (" or a serial floor record" if state.version >= 3 else " record")
        )


def _v1_base_as_v2(payload: bytes, position: int) -> bytes:
    if len(payload) < BASE_FIELDS_V1.size:
        raise RecoveryError(f"byte {position}: expected the base record, found a {len(payload)}-byte record")
    fields = BASE_FIELDS_V1.unpack_from(payload)
    return BASE_FIELDS.pack(*fields, 0, 0, 0) + payload[BASE_FIELDS_V1.size :]


def _base_state(payload: bytes, position: int, buffer_id: int) -> Recovered:
    kind = payload[0] if payload else None
    if kind != BASE or len(payload) < BASE_FIELDS.size:
        raise RecoveryError(f"byte {position}: expected the base record, found record type {kind}")
    _, revision, next_serial, horizon_serial, base_position, capacity, policy, records = BASE_FIELDS.unpack_from(
        payload
    )
    if horizon_serial >= next_serial or policy >= len(POLICIES):
        raise RecoveryError(
            f"byte {position}: the base record does not make sense (horizon serial {horizon_serial}, "
            f"next serial {next_serial}, policy {policy}); expected horizon serial < next serial, policy 0 or 1"
        )
    meta = BaseMeta(revision, next_serial, horizon_serial, base_position)
    return Recovered(
        buffer_id,
        meta,
        bytearray(payload[BASE_FIELDS.size :]),
        revision=revision,
        next_serial=next_serial,
        capacity=capacity or None,
        policy=POLICIES[policy],
        rewritten_records=records,
    )


def _apply_splice(state: Recovered, payload: bytes, position: int, *, evicts: bool) -> None:
    _, serial, offset, removed_length = SPLICE_FIELDS.unpack_from(payload)
    removed = payload[SPLICE_FIELDS.size : SPLICE_FIELDS.size + removed_length]
    inserted = payload[SPLICE_FIELDS.size + removed_length :]
    where = f"byte {position}: the splice record (serial {serial})"
    if len(removed) != removed_length:
        raise RecoveryError(f"{where} says it removed {removed_length} bytes but holds {len(removed)}")
    newest = state.records[-1][0].serial if state.records else state.meta.horizon_serial
    if serial <= newest:
        raise RecoveryError(
            f"{where} is out of order: expected a serial above {newest}, the newest live state's "
            "(each record names a state newer than every state below it)"
        )
    if offset > len(state.buffer) or offset + removed_length > len(state.buffer):
        raise RecoveryError(
            f"{where} does not fit the buffer it follows: {removed_length} bytes at offset {offset} "
            f"of a {len(state.buffer)}-byte buffer"
        )
    if bytes(state.buffer[offset : offset + removed_length]) != removed:
        raise RecoveryError(f"{where} does not fit the buffer it follows: expected {removed!r} at offset {offset}")
    live, capacity = len(state.records), state.capacity
    if evicts:
        if capacity is None or state.policy != "evict_oldest" or live != capacity:
            raise RecoveryError(
                f"{where} evicts the oldest record, but the journal has {live} live records, capacity "
                f"{capacity} and policy {state.policy}: expected a full journal with the evict_oldest policy"
            )
        (oldest, _) = state.records.pop(0)
        state.meta = replace(
            state.meta, horizon_serial=oldest.serial, base_position=state.meta.base_position + 1
        )
    elif capacity is not None and live >= capacity:
        raise RecoveryError(
            f"{where} would make {live + 1} live records in a journal of capacity {capacity}: "
            "expected an evict-and-splice record"
        )
    state.buffer[offset : offset + removed_length] = inserted
    state.records.append((InverseRecord(offset, removed, len(inserted), serial), inserted))
    state.revision += 1
    state.next_serial = max(state.next_serial, serial + 1)


def _apply_floor(state: Recovered, payload: bytes, position: int) -> None:
    """A serial floor: the block starting at it was about to be used. It must
    lie at a block boundary at or above every serial the file mentions so far
    (a floor below them would let an open hand one out again)."""
    _, floor = FLOOR_FIELDS.unpack_from(payload)
    if state.records_read < state.rewritten_records:
        raise RecoveryError(
            f"byte {position}: a serial floor record among the {state.rewritten_records} records the rewrite "
            "wrote after the base: expected a splice (a rewrite writes no floor; its base names the next serial)"
        )
    if floor < state.next_serial or floor % SERIAL_BLOCK:
        raise RecoveryError(
            f"byte {position}: the serial floor record names serial {floor}: expected a multiple of "
            f"{SERIAL_BLOCK} at or above {state.next_serial}, above every serial the journal mentions before it"
        )
    state.next_serial = floor


class FileJournal:
    """A :class:`rollcert.impl.journal.Journal` that is durable: every commit is one
    chained record appended (and, per the :class:`Durability`, synced) through a
    :class:`Storage`, under the storage's exclusive lock on the journal."""

    #: A full journal with the evict_oldest policy writes one evict-and-splice record.
    supports_eviction = True

    def __init__(
        self,
        storage: Storage,
        name: str,
        buffer_id: int,
        records: list[tuple[InverseRecord, bytes]],
        size: int,
        *,
        chain: Chain | None = None,
        durability: Durability | None = None,
        capacity: int | None = None,
        policy: Policy = "reject",
        serial_limit: int,
    ) -> None:
        self.storage = storage
        self.name = name
        self.buffer_id = buffer_id
        self._records: deque[InverseRecord] = deque(record for record, _ in records)
        self._inserted: deque[bytes] = deque(inserted for _, inserted in records)
        self._size = size
        #: Where the next frame goes; ``None`` only while a version 1 file awaits its rewrite.
        self._chain = chain
        self.durability = durability or Durability.per_operation()
        self.capacity = capacity
        self.policy: Policy = policy
        #: Records written since the last sync (batched mode).
        self._unsynced = 0
        self._last_sync = time.monotonic()
        #: Set when an I/O error left the file in a state we could not restore.
        self._broken: str | None = None
        #: The evict-and-splice record just committed; evict_oldest() takes its record off.
        self._eviction_committed = False
        #: Serials below this are safe to commit: the file already makes any later
        #: open start above them. A record with a serial at or above it is
        #: preceded by a serial floor, in the same synced write.
        self._serial_limit = serial_limit

    @classmethod
    def create(
        cls,
        storage: Storage,
        name: str,
        initial: bytes,
        buffer_id: int,
        *,
        durability: Durability | None = None,
        capacity: int | None = None,
        policy: Policy = "reject",
    ) -> FileJournal:
        """Write a new journal atomically: temporary file, sync, rename, directory sync."""
        content, chain = encode_journal(
            buffer_id, secrets.randbits(64), initial, BaseMeta(0, 1, 0, 0), [], capacity=capacity, policy=policy
        )
        temporary = name + ".new"
        try:
            storage.write_new(temporary, content)
            storage.sync(temporary)
            storage.rename(temporary, name)
        except OSError as error:
            with contextlib.suppress(OSError):
                storage.remove(temporary)
            raise JournalError(f"cannot create the journal {name!r}: {error}; nothing was created") from error
        try:
            storage.sync_directory()
        except OSError as error:
            # The journal is in place but its name may not survive a crash.
            raise OutcomeUnknownError(
                f"the journal {name!r} was written but the directory could not be synced ({error}): "
                "a crash may leave no journal; open it again to learn whether it exists"
            ) from error
        return cls(
            storage, name, buffer_id, [], len(content), chain=chain, durability=durability,
            capacity=capacity, policy=policy, serial_limit=reopen_floor(1),
        )

    # -- the Journal protocol -----------------------------------------------------------

    def append(self, record: InverseRecord, inserted: bytes) -> None:
        self._check_usable()
        evicts = self.capacity is not None and len(self._records) >= self.capacity
        payload = splice_payload(record, inserted, evicts=evicts)
        if record.serial >= self._serial_limit:
            self._commit_reserving(record.serial - record.serial % SERIAL_BLOCK, payload)
        else:
            self._commit_payload(payload)
        self._records.append(record)
        self._inserted.append(inserted)
        self._eviction_committed = evicts

    def commit_rollback(self, steps: int) -> None:
        self._check_usable()
        self._commit_payload(rollback_payload(steps))

    def pop(self) -> InverseRecord:
        self._inserted.pop()
        return self._records.pop()

    def evict_oldest(self) -> InverseRecord:
        """Take the oldest record off; its eviction is already on disk, in the
        evict-and-splice record :meth:`append` wrote (one record: a crash
        cannot separate the eviction from the splice that caused it)."""
        if not self._eviction_committed:
            raise JournalError("no eviction was committed with the last record")
        self._eviction_committed = False
        self._inserted.popleft()
        return self._records.popleft()

    def rewrite(self, base: bytes, meta: BaseMeta, keep: int) -> None:
        """Compaction and adoption: write the new journal beside the old one,
        sync it, rename it over the old one, sync the directory.

        Until the rename, a failure touches only the temporary file: it is
        removed, the old journal is intact and stays usable (a full disk, which
        has no room for the copy, is reported as such). A failed rename that
        left the temporary file in place did not happen either. After the
        rename, a failed directory sync leaves it unknown which file a crash
        would bring back: :class:`OutcomeUnknownError`, the journal poisoned,
        nothing changed in memory (the buffer's bytes are the same either way;
        only the horizon differs)."""
        self._check_usable()
        kept = list(zip(self._records, self._inserted, strict=True))[len(self._records) - keep :]
        # A new salt: records of the old generation never chain into the new file.
        content, chain = encode_journal(
            self.buffer_id, secrets.randbits(64), base, meta, kept, capacity=self.capacity, policy=self.policy
        )
        temporary = self.name + ".new"
        try:
            self.storage.write_new(temporary, content)
            self.storage.sync(temporary)
        except OSError as error:
            self._discard(temporary)
            why = (
                f"the disk has no room for the {len(content)}-byte new copy ({error})"
                if error.errno in (errno.ENOSPC, errno.EDQUOT)
                else f"the new copy could not be written ({error})"
            )
            raise JournalError(
                f"cannot rewrite the journal: {why}; the old journal is intact and the buffer usable, unchanged"
            ) from error
        try:
            self.storage.rename(temporary, self.name)
        except OSError as error:
            if self._still_there(temporary):
                self._discard(temporary)
                raise JournalError(
                    f"cannot rewrite the journal: the rename failed ({error}); the old journal is intact "
                    "and the buffer usable, unchanged"
                ) from error
            self._poison(f"the rename of a rewritten journal failed ({error}) and its outcome is unknown")
            raise OutcomeUnknownError(
                f"outcome unknown: the rename of the rewritten journal failed ({error}) and the new copy is "
                "gone from its temporary name; this buffer shows the state before and refuses everything; "
                "reopen the journal to learn which file is in place"
            ) from error
        try:
            self.storage.sync_directory()
        except OSError as error:
            # A crash could still bring back the old file (the same buffer, an
            # older horizon: the state before the rewrite).
            self._poison(f"the directory could not be synced after a rewrite ({error})")
            raise OutcomeUnknownError(
                f"outcome unknown: the rewritten journal is in place but the directory could not be synced "
                f"({error}), so a crash may bring back the journal as it was; this buffer shows the state "
                "before and refuses everything; reopen the journal to learn which it is"
            ) from error
        # The new journal is in place, durably: from here on the rewrite has happened.
        for _ in range(len(self._records) - keep):
            self._records.popleft()
            self._inserted.popleft()
        self._size = len(content)
        self._chain = chain
        # The new base names meta.next_serial: a later open starts past its block.
        self._serial_limit = max(self._serial_limit, reopen_floor(meta.next_serial))
        self._unsynced = 0  # the rewrite synced every record
        self._last_sync = time.monotonic()

    def _discard(self, temporary: str) -> None:
        """Remove a temporary file that holds buffer contents; leave no copy behind."""
        with contextlib.suppress(OSError):
            self.storage.remove(temporary)

    def _still_there(self, name: str) -> bool:
        try:
            return self.storage.read(name) is not None
        except OSError:
            return False

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> InverseRecord:
        return self._records[index]

    # -- durability ------------------------------------------------------------------------

    @property
    def unsynced_records(self) -> int:
        """Records written but not yet synced (always 0 in per-operation mode)."""
        return self._unsynced

    def flush(self) -> None:
        """Sync every record written so far. After it returns, a crash recovers
        at least the current state (the batched mode's guarantee).

        If the sync fails, the journal is poisoned: after a failed fsync the
        kernel may have dropped the dirty pages, so which of the waiting
        records are durable is unknown, and nothing is built on them. The
        waiting operations were acknowledged (batched mode promises nothing
        past the last completed flush); a reopen recovers a state from that
        flush up to now."""
        self._check_usable()
        if not self._unsynced:
            return
        try:
            self.storage.sync(self.name)
        except OSError as error:
            waiting = self._unsynced
            self._poison(f"a flush failed ({error}): the last {waiting} records may be lost")
            raise JournalError(
                f"the flush failed ({error}): the {waiting} records written since the last completed flush "
                "may be lost; the journal refuses every operation until it is reopened, and the reopen "
                "recovers a state from the last completed flush up to now"
            ) from error
        self._unsynced = 0
        self._last_sync = time.monotonic()

    @property
    def poisoned(self) -> str | None:
        """The first failure that poisoned the journal, or ``None`` if it is usable."""
        return self._broken

    def close(self) -> None:
        """Flush, then release the writer lock; the journal can be opened again.
        A poisoned journal is not flushed (its error is raised) but is released."""
        try:
            self.flush()
        finally:
            self.storage.unlock(self.name)

    def _check_usable(self) -> None:
        """Refuse, recording nothing, once an I/O failure has poisoned the journal."""
        if self._broken is not None:
            raise JournalPoisonedError(
                f"the journal refuses every operation until it is reopened: {self._broken}",
                first_failure=self._broken,
            )

    def _poison(self, failure: str) -> None:
        """Remember the first failure; every later operation names it."""
        if self._broken is None:
            self._broken = failure

    # -- internals ---------------------------------------------------------------------------

    def _commit_payload(self, payload: bytes) -> None:
        if self._chain is None:  # pragma: no cover - open_durable_buffer rewrites version 1 first
            raise JournalError("a version 1 journal must be rewritten before it takes new records")
        data, after = self._chain.frame(payload)
        self._commit(data)
        self._chain = after

    def reserve_serials(self) -> bool:
        """Write and sync the floor of the next block of serials now, before any
        is used (``open_durable_buffer`` calls it on a recovered journal): one
        fsync per open, and the first splice after it is an ordinary commit.
        At open nothing of this process waits to be synced, so the sync makes
        durable only what the recovery read back. Returns whether the floor was
        written. If the write failed having written nothing (a read-only file, a
        full disk), nothing changed, the journal can still be read, and the first
        record that uses the block writes the floor itself
        (:meth:`_commit_reserving`). If part of it was written or its sync
        failed, it is cut back and the journal is poisoned, as after any failed
        write: readable, refusing every write until it is reopened."""
        floor = self._serial_limit
        if self._broken is not None or self._chain is None or floor + SERIAL_BLOCK > SERIAL_SPACE:
            return False
        data, after = self._chain.frame(floor_payload(floor))
        try:
            self.storage.append(self.name, data)
        except OSError as error:
            if self._holds_exactly(self._size):
                return False  # nothing was written (say, a read-only file): nothing to cut back
            self._cut_back("write", error, self._size, "the serial floor")
            return False
        try:
            self.storage.sync(self.name)
        except OSError as error:
            self._cut_back("sync", error, self._size, "the serial floor")
            return False
        self._size += len(data)
        self._chain = after
        self._serial_limit = floor + SERIAL_BLOCK
        self._unsynced = 0
        self._last_sync = time.monotonic()
        return True

    def _commit_reserving(self, floor: int, payload: bytes) -> None:
        """Commit a serial floor for the block starting at ``floor`` and, after
        it, the record that uses a serial of the block: one write and one sync,
        whatever the durability mode, so the floor is on the disk before the
        operation returns and a checkpoint can name the new state. A crash that
        tears the write leaves the floor, or nothing: either way no record with
        a serial of the block survives without the floor before it. Needed only
        when :meth:`reserve_serials` could not write the floor at open, and
        after 2**32 serials in one session."""
        self._check_usable()
        if self._chain is None:  # pragma: no cover - open_durable_buffer rewrites version 1 first
            raise JournalError("a version 1 journal must be rewritten before it takes new records")
        if floor + SERIAL_BLOCK > SERIAL_SPACE:
            raise JournalError(f"the journal has used up its serial numbers (next block at {floor})")
        floor_data, chain = self._chain.frame(floor_payload(floor))
        data, after = chain.frame(payload)
        try:
            self.storage.append(self.name, floor_data + data)
        except OSError as error:
            self._refuse("write", error, self._size)
        try:
            self.storage.sync(self.name)
        except OSError as error:
            self._refuse("sync", error, self._size)
        self._size += len(floor_data) + len(data)
        self._chain = after
        self._serial_limit = floor + SERIAL_BLOCK
        self._unsynced = 0  # the sync took every waiting record with it
        self._last_sync = time.monotonic()

    def _commit(self, data: bytes) -> None:
        """Append one framed record and sync it as the durability mode says,
        or raise :class:`JournalError` having poisoned the journal (see
        :meth:`_refuse`). In batched mode the sync comes every N records or T
        ms; if that sync fails, this record is cut back like one whose write
        failed (the caller is told it was refused, so it must never come back)
        and the records before it may be lost, as a failed flush may lose them."""
        self._check_usable()
        size = self._size
        try:
            self.storage.append(self.name, data)
        except OSError as error:
            self._refuse("write", error, size)
        if self.durability.mode == "per_operation":
            try:
                self.storage.sync(self.name)
            except OSError as error:
                self._refuse("sync", error, size)
            self._size = size + len(data)
            return
        every_records, every_ms = self.durability.every_records, self.durability.every_ms
        if (every_records is not None and self._unsynced + 1 >= every_records) or (
            every_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= every_ms
        ):
            try:
                self.storage.sync(self.name)
            except OSError as error:
                self._refuse("sync", error, size)
            self._unsynced = 0
            self._last_sync = time.monotonic()
        else:
            self._unsynced += 1
        self._size = size + len(data)

    def _refuse(self, what: str, error: OSError, size: int) -> NoReturn:
        """The ``what`` ("write" or "sync") of a record failed: cut the file
        back to ``size`` (where the record began), poison the journal, and
        raise. The error says "refused, nothing recorded" only when the cut-back
        (a truncation and a sync) succeeded or the file provably never got a
        byte of the record; otherwise the file may hold the record, and
        :class:`OutcomeUnknownError` says a reopen will tell."""
        if self._cut_back(what, error, size, "a record"):
            batched = self.durability.mode == "batched" and what == "sync"
            raise JournalError(
                f"refused, nothing recorded: the {what} of the record failed ({error}) and the journal was cut "
                "back to its last record"
                + ("; records written since the last completed flush may be lost" if batched else "")
                + "; it refuses every operation until it is reopened"
            ) from error
        raise OutcomeUnknownError(
            f"outcome unknown: the {what} of the record failed ({error}) and the journal could not be cut back "
            f"({self._broken}); the file may hold the record. This buffer shows the state before the operation "
            "and refuses everything; reopen the journal to learn whether the operation happened"
        ) from error

    def _cut_back(self, what: str, error: OSError, size: int, subject: str) -> bool:
        """After a failed write or sync, cut the file back to ``size`` and sync
        the cut, so that a half-written or unsynced record can never be read as
        committed, and poison the journal: after a failed fsync nothing the
        process believes about the file can be vouched for. True if the file
        provably holds nothing past ``size`` (the cut is durable, or the failed
        write never wrote a byte)."""
        if what == "write" and self._holds_exactly(size):
            # The write failed before writing a byte (a full disk, a read-only
            # file): the file is as it was, there is nothing to cut.
            self._poison(f"the {what} of {subject} failed ({error})")
            return True
        try:
            self.storage.truncate(self.name, size)
            self.storage.sync(self.name)
        except OSError as cut_error:
            self._poison(f"the {what} of {subject} failed ({error}) and cutting it back failed too ({cut_error})")
            return False
        self._poison(f"the {what} of {subject} failed ({error})")
        return True

    def _holds_exactly(self, size: int) -> bool:
        try:
            return len(self.storage.read(self.name) or b"") == size
        except OSError:
            return False


def open_durable_buffer(
    storage: Storage,
    initial: bytes = b"",
    *,
    name: str = DEFAULT_NAME,
    reader: JournalReader | None = None,
    journal_class: type[FileJournal] = FileJournal,
    durability: Durability | None = None,
    capacity: int | None = None,
    policy: Policy = "reject",
) -> JournaledBuffer:
    """Open the buffer journaled in ``storage``: recover it if the journal exists
    (``initial``, ``capacity`` and ``policy`` are then ignored: the journal
    remembers its own), else create it from ``initial``.

    Takes the journal's exclusive writer lock first (:class:`JournalInUseError`
    if another journal holds it) and keeps it until ``buffer.journal.close()``.
    Recovery cuts a torn final record off the file and rewrites a version 1 or
    2 file as version 3; any other damage raises :class:`RecoveryError` and
    leaves the file untouched. A recovered buffer hands out serials from a new
    block (:func:`reopen_floor`), never one a crash may have lost; its floor
    is written and synced here (:meth:`FileJournal.reserve_serials`).
    """
    if not isinstance(initial, (bytes, bytearray)):
        raise TypeError(f"initial must be bytes, got {type(initial).__name__}")
    if capacity is not None and (type(capacity) is not int or capacity < 1):
        raise ValueError(f"capacity must be a positive int or None, got {capacity!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    storage.lock(name)
    try:
        return _open_locked(storage, bytes(initial), name, reader, journal_class, durability, capacity, policy)
    except BaseException:
        storage.unlock(name)
        raise


def _open_locked(
    storage: Storage,
    initial: bytes,
    name: str,
    reader: JournalReader | None,
    journal_class: type[FileJournal],
    durability: Durability | None,
    capacity: int | None,
    policy: Policy,
) -> JournaledBuffer:
    try:
        data = storage.read(name)
    except OSError as error:
        raise RecoveryError(f"cannot read the journal {name!r}: {error}") from error
    if data is None:
        buffer_id = secrets.randbits(62) | (1 << 62)  # never equal to an in-memory buffer's small id
        journal = journal_class.create(
            storage, name, initial, buffer_id, durability=durability, capacity=capacity, policy=policy
        )
        buffer = JournaledBuffer._restore(
            initial, journal, buffer_id=buffer_id, meta=BaseMeta(0, 1, 0, 0), revision=0, next_serial=1
        )
        return _bounded(buffer, capacity, policy)
    recovered = (reader or JournalReader()).read(data)
    if recovered.torn_tail:
        try:
            storage.truncate(name, recovered.good_length)
            storage.sync(name)
        except OSError as error:
            raise RecoveryError(f"cannot cut the torn tail off the journal: {error}") from error
    # Records a crash lost may have carried serials above recovered.next_serial
    # (batched mode): hand out none of them, start at the next block.
    floor = reopen_floor(recovered.next_serial)
    if floor + SERIAL_BLOCK > SERIAL_SPACE:
        raise RecoveryError(
            f"the journal has used up its serial numbers (next serial {recovered.next_serial}); "
            "it can be read but takes no more records"
        )
    journal = journal_class(
        storage,
        name,
        recovered.buffer_id,
        recovered.records,
        recovered.good_length,
        chain=recovered.chain,
        durability=durability,
        capacity=recovered.capacity,
        policy=recovered.policy,
        serial_limit=floor,
    )
    if recovered.version != FORMAT_VERSION:
        _upgrade(journal, recovered, floor)  # its base names the new block
    else:
        journal.reserve_serials()
    buffer = JournaledBuffer._restore(
        bytes(recovered.buffer),
        journal,
        buffer_id=recovered.buffer_id,
        meta=recovered.meta,
        revision=recovered.revision,
        next_serial=floor,
    )
    return _bounded(buffer, recovered.capacity, recovered.policy)


def _bounded(buffer: JournaledBuffer, capacity: int | None, policy: Policy) -> JournaledBuffer:
    """The buffer enforces the capacity the journal was created with."""
    buffer._capacity = capacity
    buffer._policy = policy
    return buffer


def _upgrade(journal: FileJournal, recovered: Recovered, floor: int) -> None:
    """Rewrite a version 1 or 2 journal as version 3 (same records, same
    horizon), atomically. Its base names ``floor`` as the next serial: the
    rewrite is synced, so the new block is durably in use without a floor record."""
    base = bytearray(recovered.buffer)
    for (offset, removed, inserted_length, _serial), _ in reversed(recovered.records):
        base[offset : offset + inserted_length] = removed
    try:
        journal.rewrite(bytes(base), replace(recovered.meta, next_serial=floor), len(recovered.records))
    except JournalError as error:
        raise RecoveryError(
            f"cannot rewrite the version {recovered.version} journal as version {FORMAT_VERSION}: {error}"
        ) from error
