"""The baselines SPEC §7 compares ``impl.JournaledBuffer`` against.

Each is measured in the same run as the implementation, so only ratios matter.

- :class:`SeedLikeBuffer` reproduces the *cost profile* of the seed's
  ``RewriteBuffer`` (the design card's example code): every splice hashes two
  anchors (sha256 of up to 16 bytes before and after the edit, as hex strings),
  copies the removed bytes, builds a plain dataclass record and appends it to a
  list through one more method call (the seed's stand-in for a durable append),
  then splices a flat ``bytearray``. Its rollback has no offset: it walks every
  position from 0, hashing the 16 bytes before it, until both anchors match.
  Written here from the description, not copied, and kept deliberately
  unoptimised in the same places the seed is (method call per anchor, a fresh
  ``bytes`` copy per hash, hexdigest comparison).
- :func:`bytearray_splice` is the bare flat buffer: ``buf[o:o+d] = s``.
- :class:`FsyncRecordFile` appends a small record to a real file and fsyncs it:
  the floor for any durable commit.
- :class:`SQLiteEditStore` is SQLite on disk in WAL mode with
  ``synchronous=FULL``: one transaction per edit that inserts the inverse record
  and (optionally) applies the edit to the buffer, stored as one blob, through
  incremental blob I/O.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
from dataclasses import dataclass

__all__ = [
    "ANCHOR_BYTES",
    "FsyncRecordFile",
    "SQLiteEditStore",
    "SeedLikeBuffer",
    "SeedLikeRecord",
    "bytearray_splice",
    "encode_record",
]

#: The seed's anchor width: up to this many bytes either side of an edit.
ANCHOR_BYTES = 16


@dataclass
class SeedLikeRecord:
    """The seed's inverse record: two anchors, the removed bytes, the inserted length."""

    before_digest: str
    after_digest: str
    removed: bytes
    inserted_length: int


class SeedLikeBuffer:
    """Write-ahead splices located on rollback by content anchors (see module docstring)."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.records: list[SeedLikeRecord] = []

    def _digest(self, start: int, end: int) -> str:
        # A fresh bytes copy and a hex digest, as the seed does for every anchor.
        return hashlib.sha256(bytes(self.data[start:end])).hexdigest()

    def _commit(self, record: SeedLikeRecord) -> bool:
        self.records.append(record)
        return True

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        end = offset + delete_length
        record = SeedLikeRecord(
            self._digest(max(0, offset - ANCHOR_BYTES), offset),
            self._digest(end, end + ANCHOR_BYTES),
            bytes(self.data[offset:end]),
            len(insert),
        )
        if not self._commit(record):  # the seed refuses to mutate on a failed append
            raise RuntimeError("inverse record not committed")
        self.data[offset:end] = insert

    def _locate(self, record: SeedLikeRecord) -> int | None:
        """The first position whose anchors match: a linear scan from 0."""
        for position in range(len(self.data) + 1):
            if self._digest(max(0, position - ANCHOR_BYTES), position) != record.before_digest:
                continue
            end = position + record.inserted_length
            if self._digest(end, end + ANCHOR_BYTES) == record.after_digest:
                return position
        return None

    def rollback(self, steps: int = 1) -> None:
        for _ in range(steps):
            if not self.records:
                raise RuntimeError("rollback past the start of the log")
            record = self.records[-1]
            position = self._locate(record)
            if position is None:
                raise RuntimeError("anchors not found: buffer diverged from its log")
            self.data[position : position + record.inserted_length] = record.removed
            self.records.pop()

    def read(self) -> bytes:
        return bytes(self.data)


def bytearray_splice(buf: bytearray, offset: int, delete_length: int, insert: bytes) -> None:
    """The bare flat-buffer splice (benchmarks inline this expression in their loops)."""
    buf[offset : offset + delete_length] = insert


_RECORD_HEADER = struct.Struct("<QQII")  # offset, serial, inserted length, removed length


def encode_record(offset: int, removed: bytes, inserted_length: int, serial: int) -> bytes:
    """A small length-framed inverse record, the kind a durable journal would write."""
    return _RECORD_HEADER.pack(offset, serial, inserted_length, len(removed)) + removed


class FsyncRecordFile:
    """Append a record to a real file with ``os.write`` and make it durable with ``os.fsync``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def commit(self, record: bytes) -> None:
        os.write(self.fd, record)
        os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class SQLiteEditStore:
    """SQLite on disk (WAL, synchronous=FULL), one commit per edit.

    With ``store_buffer`` the buffer lives in the database as one blob and each
    same-length edit is written into it in place (``Connection.blobopen``) in the
    same transaction as the inverse record; without it, only the record is
    stored, which is the cheapest thing SQLite can durably do per edit.
    """

    def __init__(self, path: str, initial: bytes, *, store_buffer: bool = True) -> None:
        self.path = path
        self.store_buffer = store_buffer
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(
            "CREATE TABLE inverse (serial INTEGER PRIMARY KEY, off INTEGER, removed BLOB, inserted INTEGER)"
        )
        self.db.execute("CREATE TABLE buffer (id INTEGER PRIMARY KEY, data BLOB)")
        self.db.execute("INSERT INTO buffer VALUES (1, ?)", (initial,))
        self.serial = 0
        # A same-length edit needs the removed bytes; keep a mirror so reading
        # them is not part of the measured SQLite cost.
        self.mirror = bytearray(initial)

    def splice_same_length(self, offset: int, insert: bytes) -> None:
        end = offset + len(insert)
        removed = bytes(self.mirror[offset:end])
        self.serial += 1
        db = self.db
        db.execute("BEGIN")
        db.execute("INSERT INTO inverse VALUES (?, ?, ?, ?)", (self.serial, offset, removed, len(insert)))
        if self.store_buffer:
            with db.blobopen("buffer", "data", 1) as blob:
                blob.seek(offset)
                blob.write(insert)
        db.execute("COMMIT")
        self.mirror[offset:end] = insert

    def close(self) -> None:
        self.db.close()
