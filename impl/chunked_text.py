"""Byte storage that edits in place without moving the whole tail.

A flat ``bytearray`` moves every byte after the edit on each length-changing
splice: ~27 µs at 4 MiB here, for a one-byte insert. ``ChunkedText`` keeps the
bytes in chunks of a few tens of KiB, so an edit moves at most one chunk's tail.

Finding the chunk that holds an offset needs the chunk start offsets, and a
length-changing edit shifts the start of every later chunk. With one flat list of
starts that shift is O(number of chunks) (≈ 1.8 µs for 128 chunks at 4 MiB, more
than the rest of a rollback(1)), so the index has two levels: chunks are kept in
*groups* of about ``GROUP_SIZE``; each group has the starts of its chunks
relative to the group's first byte, and one list holds the absolute start of
every group. An edit shifts the relative starts after it inside its own group
and the absolute starts of the later groups: O(group size + number of groups),
about √(number of chunks) since the group size grows with the buffer. A lookup is two C
``bisect`` calls. A Fenwick tree would make the update O(log n) but every lookup
a Python loop: at 128 chunks that lookup costs ≈ 0.3 µs more than two bisects on
*every* splice and rollback, to save ≈ 0.2 µs on length-changing ones only, so
at the sizes that matter (1 KiB to a few MiB) the two-level index is faster in
CPython (measured: docs/performance.md). Up to
23 chunks (≈ 0.7 MiB; see ``_regroup``) there is a single group, and lookups skip
the group bisect, so small buffers pay almost nothing for the second level.

The journaled buffer reads the bytes an edit removes (``read_range``) and then
writes the same offset (``replace``). ``read_range`` leaves the chunk it found as
a hint, so that ``replace`` at that offset skips the second lookup; the hint is
dropped whenever chunk positions change (a length change or a re-split).

Every write bumps ``version``. The journal remembers the version it left the
storage in; a different version later means somebody wrote behind its back —
this is how R4 is detected strictly at O(1) cost, without hashing the buffer.
"""

from __future__ import annotations

from bisect import bisect_right

#: Chunks are split when they grow past twice this and dropped when emptied.
CHUNK_SIZE = 32 * 1024
#: Chunks per group of the two-level index, to start with. ``_regroup`` keeps every
#: group at half to 1.5x the group size (8 to 23 chunks), except a lone group,
#: which may hold fewer, and doubles the group size when there are more than four
#: times as many groups. 16 balances the two shifts at 4 MiB (128 chunks: 8 groups).
GROUP_SIZE = 16


class ChunkedText:
    """A mutable byte string stored as groups of chunks; see the module docstring.

    ``chunk_size`` and ``group_size`` default to the module's ``CHUNK_SIZE`` and
    ``GROUP_SIZE`` at construction time; tests pass tiny values so that every
    edit crosses, splits or empties chunks and groups.
    """

    __slots__ = (
        "_chunk_size",
        "_group_size",
        "_groups",
        "_gstarts",
        "_hint",
        "_hint_offset",
        "_rels",
        "length",
        "version",
    )

    def __init__(
        self, data: bytes = b"", *, chunk_size: int | None = None, group_size: int | None = None
    ) -> None:
        size = CHUNK_SIZE if chunk_size is None else chunk_size
        group = GROUP_SIZE if group_size is None else group_size
        if size < 1 or group < 1:
            raise ValueError("chunk_size and group_size must be at least 1")
        self._chunk_size = size
        self._group_size = group
        #: ``_groups[g][i]`` is a chunk; no group is empty, and no chunk is empty
        #: unless it is the only one (the empty buffer).
        self._groups: list[list[bytearray]] = []
        #: ``_rels[g][i]``: start of chunk ``i`` of group ``g``, relative to the group.
        self._rels: list[list[int]] = []
        #: ``_gstarts[g]``: absolute start of group ``g``.
        self._gstarts: list[int] = []
        #: Offset whose chunk ``read_range`` found last, or -1; ``_hint`` is that
        #: chunk as ``(group, index, chunk, offset inside the chunk)``.
        self._hint_offset = -1
        self._hint: tuple[int, int, bytearray, int] = (0, 0, bytearray(), 0)
        #: Number of bytes; read-only for callers (an attribute, not ``len()``, because
        #: the journaled buffer reads it on every splice).
        self.length = len(data)
        #: Incremented by every write, through any path.
        self.version = 0
        chunks = [bytearray(data[i : i + size]) for i in range(0, len(data), size)]
        self._regroup(0, 0, chunks, 0)

    def __len__(self) -> int:
        return self.length

    def read(self) -> bytes:
        return b"".join([chunk for group in self._groups for chunk in group])

    def read_range(self, start: int, end: int) -> bytes:
        """The bytes in ``[start, end)``; the caller has checked the bounds.

        Leaves the chunk it found as the hint for a ``replace`` at ``start``.
        """
        gstarts = self._gstarts
        if len(gstarts) == 1:  # small buffer: one group, skip the group bisect
            g = 0
            local = start
        else:
            g = bisect_right(gstarts, start) - 1
            local = start - gstarts[g]
        rel = self._rels[g]
        i = bisect_right(rel, local) - 1
        chunk = self._groups[g][i]
        local -= rel[i]
        if local + (end - start) <= len(chunk):
            self._hint_offset = start
            self._hint = (g, i, chunk, local)
            return bytes(chunk[local : local + end - start])
        return self._read_across(g, i, local, end - start)

    def locate(self, offset: int, length: int) -> tuple[bytearray, int] | None:
        """The chunk that holds all of ``[offset, offset+length)`` and where the range
        starts in it, or ``None`` if the range spans chunks; the caller checked the bounds.

        The journaled buffer's same-length fast path: one lookup serves both the read
        of the bytes a splice removes and the write over them, instead of
        ``read_range`` then ``replace``. A caller that writes into the chunk must
        keep its length and add 1 to ``version`` (R4 relies on every write counting).
        Leaves no hint: the journaled buffer undoes such a splice through the chunk
        it was given.
        """
        gstarts = self._gstarts
        if len(gstarts) == 1:
            g = 0
            local = offset
        else:
            g = bisect_right(gstarts, offset) - 1
            local = offset - gstarts[g]
        rel = self._rels[g]
        if len(rel) == 1:  # one chunk in the group (a buffer up to a chunk, 32 KiB): no bisect
            chunk = self._groups[g][0]
        else:
            i = bisect_right(rel, local) - 1
            chunk = self._groups[g][i]
            local -= rel[i]
        if local + length <= len(chunk):
            return chunk, local
        return None

    def _read_across(self, g: int, i: int, local: int, remaining: int) -> bytes:
        """The rare read that spans a chunk boundary: walk chunks, then groups."""
        groups = self._groups
        pieces = []
        while remaining > 0:
            group = groups[g]
            while i < len(group) and remaining > 0:
                piece = bytes(group[i][local : local + remaining])
                pieces.append(piece)
                remaining -= len(piece)
                local = 0
                i += 1
            g += 1
            i = 0
        return b"".join(pieces)

    def replace(self, offset: int, delete_length: int, insert: bytes) -> None:
        """``self[offset:offset+delete_length] = insert``; the caller checked the bounds."""
        self.version += 1
        if offset == self._hint_offset:
            g, i, chunk, local = self._hint
        else:
            gstarts = self._gstarts
            if len(gstarts) == 1:  # one group, which starts at 0
                g = 0
                local = offset
            else:
                g = bisect_right(gstarts, offset) - 1
                local = offset - gstarts[g]
            rel = self._rels[g]
            i = bisect_right(rel, local) - 1
            chunk = self._groups[g][i]
            local -= rel[i]
        if local + delete_length > len(chunk):
            self._replace_across(g, i, local, delete_length, insert)
            return
        chunk[local : local + delete_length] = insert
        delta = len(insert) - delete_length
        if delta:
            # Chunk positions move: shift the later starts in this group, then the
            # later groups' starts. Plain index loops: for the ≈ 8 entries each
            # shifts here they beat a list comprehension and a slice assignment.
            self._hint_offset = -1
            self.length += delta
            rel = self._rels[g]
            if i + 1 < len(rel):
                for k in range(i + 1, len(rel)):
                    rel[k] += delta
            gstarts = self._gstarts
            if g + 1 < len(gstarts):
                for k in range(g + 1, len(gstarts)):
                    gstarts[k] += delta
            if not chunk or len(chunk) > 2 * self._chunk_size:
                self._regroup(g, g + 1, self._groups[g], gstarts[g])

    def _replace_across(self, g: int, i: int, local: int, delete_length: int, insert: bytes) -> None:
        """The rare edit that spans a chunk boundary: merge the chunks it touches, re-split."""
        groups = self._groups
        last_g, last_i = g, i
        covered = len(groups[g][i]) - local
        while covered < delete_length:
            last_i += 1
            if last_i == len(groups[last_g]):
                last_g, last_i = last_g + 1, 0
            covered += len(groups[last_g][last_i])
        if last_g == g:
            touched = groups[g][i : last_i + 1]
        else:
            touched = groups[g][i:]
            for group in groups[g + 1 : last_g]:
                touched.extend(group)
            touched.extend(groups[last_g][: last_i + 1])
        merged = bytearray().join(touched)
        merged[local : local + delete_length] = insert
        self.length += len(insert) - delete_length
        chunks = groups[g][:i] + [merged] + groups[last_g][last_i + 1 :]
        self._regroup(g, last_g + 1, chunks, self._gstarts[g])

    def _regroup(self, first: int, end: int, chunks: list[bytearray], base: int) -> None:
        """Replace groups ``[first, end)``, which start at ``base``, by ``chunks``.

        Splits chunks longer than twice the chunk size, drops empty ones, cuts
        the result into groups of the group size (a short remainder joins the
        previous group), borrows a neighbouring group when fewer than half a group
        is left (so that deletions cannot leave many tiny groups behind), and
        recomputes the starts from ``first`` on. O(chunks touched + groups): it
        runs only when chunks are split, emptied or merged, never on the hot path.
        Grows the group size when there are more than four times as many groups.
        """
        self._hint_offset = -1
        size, group_size = self._chunk_size, self._group_size
        pieces: list[bytearray] = []
        for chunk in chunks:
            if len(chunk) > 2 * size:
                pieces.extend(chunk[k : k + size] for k in range(0, len(chunk), size))
            elif chunk:
                pieces.append(chunk)
        groups, rels, gstarts = self._groups, self._rels, self._gstarts
        if len(pieces) < group_size // 2 or not pieces:
            if end < len(groups):
                pieces.extend(groups[end])
                end += 1
            elif first > 0:
                first -= 1
                pieces[:0] = groups[first]
                base = gstarts[first]
            elif not pieces:
                pieces = [bytearray()]  # the empty buffer: one empty chunk
        new_groups = [pieces[k : k + group_size] for k in range(0, len(pieces), group_size)]
        if len(new_groups) > 1 and len(new_groups[-1]) < group_size // 2:
            new_groups[-2].extend(new_groups.pop())
        new_rels: list[list[int]] = []
        new_starts: list[int] = []
        position = base
        for group in new_groups:
            new_starts.append(position)
            rel = []
            offset = 0
            for chunk in group:
                rel.append(offset)
                offset += len(chunk)
            new_rels.append(rel)
            position += offset
        groups[first:end] = new_groups
        rels[first:end] = new_rels
        gstarts[first:end] = new_starts
        for k in range(first + len(new_groups), len(gstarts)):
            gstarts[k] = position
            position += rels[k][-1] + len(groups[k][-1])
        if len(gstarts) > 4 * group_size:
            # The buffer outgrew the group size (past 64 groups of 16 chunks, 32 MiB by
            # default): double it and regroup everything, so that an update stays
            # O(√chunks). O(chunks), once per doubling of the group size.
            self._group_size = 2 * group_size
            self._regroup(0, len(groups), [chunk for group in groups for chunk in group], 0)
