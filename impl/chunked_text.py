"""Byte storage that edits in place without moving the whole tail.

A flat ``bytearray`` moves every byte after the edit on each length-changing
splice: ~27 µs at 4 MiB here, for a one-byte insert. ``ChunkedText`` keeps the
bytes in chunks of a few tens of KiB and a sorted list of chunk start offsets,
so an edit moves at most one chunk's tail plus one integer per later chunk.

Every write bumps ``version``. The journal remembers the version it left the
storage in; a different version later means somebody wrote behind its back —
this is how R4 is detected strictly at O(1) cost, without hashing the buffer.
"""

from __future__ import annotations

from bisect import bisect_right

#: Chunks are split when they grow past twice this and merged when emptied.
CHUNK_SIZE = 32 * 1024


class ChunkedText:
    """A mutable byte string stored as a list of chunks; see the module docstring."""

    __slots__ = ("_chunks", "_starts", "length", "version")

    def __init__(self, data: bytes = b"") -> None:
        self._chunks: list[bytearray] = [
            bytearray(data[i : i + CHUNK_SIZE]) for i in range(0, len(data), CHUNK_SIZE)
        ] or [bytearray()]
        self._starts: list[int] = list(range(0, max(len(data), 1), CHUNK_SIZE))[: len(self._chunks)]
        #: Number of bytes; read-only for callers (an attribute, not ``len()``, because
        #: the journaled buffer reads it on every splice).
        self.length = len(data)
        #: Incremented by every write, through any path.
        self.version = 0

    def __len__(self) -> int:
        return self.length

    def read(self) -> bytes:
        return b"".join(self._chunks)

    def read_range(self, start: int, end: int) -> bytes:
        """The bytes in ``[start, end)``; the caller has checked the bounds."""
        index = bisect_right(self._starts, start) - 1
        local = start - self._starts[index]
        chunk = self._chunks[index]
        if local + (end - start) <= len(chunk):
            return bytes(chunk[local : local + end - start])
        pieces = [bytes(chunk[local:])]
        remaining = end - start - len(pieces[0])
        while remaining > 0:
            index += 1
            piece = self._chunks[index][:remaining]
            pieces.append(bytes(piece))
            remaining -= len(piece)
        return b"".join(pieces)

    def replace(self, offset: int, delete_length: int, insert: bytes) -> None:
        """``self[offset:offset+delete_length] = insert``; the caller checked the bounds."""
        self.version += 1
        starts = self._starts
        index = bisect_right(starts, offset) - 1
        chunk = self._chunks[index]
        local = offset - starts[index]
        if local + delete_length > len(chunk):
            self._replace_across_chunks(index, local, delete_length, insert)
            return
        chunk[local : local + delete_length] = insert
        delta = len(insert) - delete_length
        if delta:
            self.length += delta
            if index + 1 < len(starts):
                starts[index + 1 :] = [start + delta for start in starts[index + 1 :]]
            if len(chunk) > 2 * CHUNK_SIZE or (not chunk and len(self._chunks) > 1):
                self._rechunk(index, index + 1)

    def _replace_across_chunks(self, index: int, local: int, delete_length: int, insert: bytes) -> None:
        """The rare edit that spans a chunk boundary: merge the chunks it touches."""
        last = index
        covered = len(self._chunks[index]) - local
        while covered < delete_length:
            last += 1
            covered += len(self._chunks[last])
        merged = bytearray().join(self._chunks[index : last + 1])
        merged[local : local + delete_length] = insert
        delta = len(insert) - delete_length
        self.length += delta
        self._chunks[index : last + 1] = [merged]
        self._starts[index : last + 1] = [self._starts[index]]
        self._starts[index + 1 :] = [start + delta for start in self._starts[index + 1 :]]
        self._rechunk(index, index + 1)

    def _rechunk(self, first: int, end: int) -> None:
        """Re-split chunks ``[first, end)`` into pieces of ``CHUNK_SIZE``; drop empties."""
        data = b"".join(self._chunks[first:end])
        base = self._starts[first]
        pieces = [bytearray(data[i : i + CHUNK_SIZE]) for i in range(0, len(data), CHUNK_SIZE)]
        self._chunks[first:end] = pieces
        self._starts[first:end] = [base + i * CHUNK_SIZE for i in range(len(pieces))]
        if not self._chunks:
            self._chunks.append(bytearray())
            self._starts.append(0)
