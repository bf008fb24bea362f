"""ChunkedText against a plain bytearray, with tiny chunks and groups.

With chunks of 1–8 bytes and groups of 1–5 chunks, every few edits cross a chunk
or group boundary, empty a chunk, split one, or merge groups, so the rare paths
of the two-level index run as often as the hot one. The internal index is
checked after every edit, not only the bytes: a wrong start offset would
otherwise show up only at some later, unrelated offset.
"""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollcert.impl import ChunkedText
from rollcert.impl import journal as journal_module
from rollcert.impl.journal import BaseMeta
from rollcert.impl.journal import InMemoryJournal
from rollcert.impl.journal import InverseRecord

# (kind, position, length, insert): position and length are scaled to the current
# buffer. "hinted" reads the removed bytes first and then writes the same offset,
# as JournaledBuffer.splice does, so the read_range hint is used and must be right.
operations = st.lists(
    st.tuples(
        st.sampled_from(["replace", "hinted", "delete-to-end", "read"]),
        st.integers(0, 1000),
        st.integers(0, 40),
        st.binary(max_size=40),
    ),
    max_size=60,
)


def check_index(text: ChunkedText, reference: bytearray) -> None:
    """The bytes, the length, and every start offset of the two-level index."""
    assert text.read() == bytes(reference)
    assert text.length == len(text) == len(reference)
    groups, rels, gstarts = text._groups, text._rels, text._gstarts
    assert groups and len(groups) == len(rels) == len(gstarts)
    assert len(groups) <= 4 * text._group_size  # the group size grows with the buffer
    position = 0
    for group, rel, start in zip(groups, rels, gstarts, strict=True):
        assert group and len(rel) == len(group)
        assert start == position
        for chunk, relative in zip(group, rel, strict=True):
            assert relative == position - start
            assert chunk or len(reference) == 0  # only the empty buffer keeps an empty chunk
            assert len(chunk) <= 2 * text._chunk_size
            position += len(chunk)
    assert position == len(reference)


@given(
    st.binary(max_size=60),
    st.integers(1, 8),
    st.integers(1, 5),
    operations,
)
def test_chunked_text_matches_bytearray(
    initial: bytes, chunk_size: int, group_size: int, ops: list[tuple[str, int, int, bytes]]
) -> None:
    text = ChunkedText(initial, chunk_size=chunk_size, group_size=group_size)
    reference = bytearray(initial)
    check_index(text, reference)
    for kind, position, length, insert in ops:
        offset = position % (len(reference) + 1)
        delete_length = min(length, len(reference) - offset)
        if kind == "read":
            end = min(offset + length, len(reference))
            assert text.read_range(offset, end) == bytes(reference[offset:end])
            continue
        if kind == "delete-to-end":
            delete_length = len(reference) - offset
        if kind == "hinted":
            removed = text.read_range(offset, offset + delete_length)
            assert removed == bytes(reference[offset : offset + delete_length])
        text.replace(offset, delete_length, insert)
        reference[offset : offset + delete_length] = insert
        check_index(text, reference)
        assert text.read_range(0, len(reference)) == bytes(reference)


@given(st.lists(st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=30)), max_size=80))
def test_growth_past_many_groups_then_undo(inserts: list[tuple[int, bytes]]) -> None:
    """Grow from empty to many groups, then delete every insert again, newest first (a rollback)."""
    text, reference = ChunkedText(b"", chunk_size=4, group_size=2), bytearray()
    done: list[tuple[int, int]] = []
    for position, insert in inserts:
        offset = position % (len(reference) + 1)
        text.replace(offset, 0, insert)
        reference[offset:offset] = insert
        done.append((offset, len(insert)))
        check_index(text, reference)
    for offset, length in reversed(done):
        text.replace(offset, length, b"")
        del reference[offset : offset + length]
        check_index(text, reference)
    assert text.read() == b"" and len(text._groups) == 1


def test_hint_is_dropped_when_positions_move() -> None:
    """A read at an offset, then a length change before it, then a write at that offset."""
    text = ChunkedText(b"abcdefgh" * 4, chunk_size=4, group_size=2)
    assert text.read_range(20, 22) == b"ef"
    text.replace(0, 0, b"XYZ")  # every later chunk moves by 3
    text.replace(20, 2, b"!!")
    assert text.read() == b"XYZ" + (b"abcdefgh" * 4)[:17] + b"!!" + (b"abcdefgh" * 4)[19:]


def test_hint_is_dropped_when_chunks_are_rebuilt() -> None:
    """A same-length edit across a boundary merges and re-splits chunks: the hinted chunk is gone."""
    text = ChunkedText(b"abcdefghijkl", chunk_size=4, group_size=2)
    assert text.read_range(5, 6) == b"f"
    text.replace(3, 2, b"XY")  # crosses "abcd"|"efgh", same length
    text.replace(5, 1, b"!")
    assert text.read() == b"abcXY!ghijkl"


def test_versions_and_defaults() -> None:
    text = ChunkedText(bytes(100_000))  # the module's chunk and group sizes
    assert (text.length, text.version) == (100_000, 0)
    text.replace(99_999, 1, b"")
    text.replace(0, 0, b"")  # a no-op write is still a write
    assert text.version == 2 and len(text) == 99_999
    with pytest.raises(ValueError):
        ChunkedText(b"", chunk_size=0)


# -- the packed in-memory journal ------------------------------------------------------

journal_operations = st.lists(
    st.tuples(st.sampled_from(["append", "append", "pop", "evict", "rewrite", "index"]), st.integers(0, 50), st.binary(max_size=5)),
    max_size=120,
)


@pytest.mark.parametrize("batch", [1, 2, 3])
@given(journal_operations)
def test_packed_journal_is_a_deque_of_records(batch: int, ops) -> None:
    """With batches of 1-3 records, every operation packs, unpacks or evicts from a
    partly evicted batch; the journal must behave exactly as a deque of records."""
    saved = journal_module.PACK_BATCH
    journal_module.PACK_BATCH = batch  # not monkeypatch: a function-scoped fixture under @given
    try:
        _replay_against_a_deque(InMemoryJournal(), ops)
    finally:
        journal_module.PACK_BATCH = saved


def _replay_against_a_deque(journal: InMemoryJournal, ops: list[tuple[str, int, bytes]]) -> None:
    reference: deque[InverseRecord] = deque()
    serial = 0
    for kind, number, removed in ops:
        if kind == "append":
            serial += 1
            record = InverseRecord(number * 1000, removed, number % 7, serial)
            journal.append(record, b"")
            reference.append(record)
        elif kind == "pop" and reference:
            assert journal.pop() == reference.pop()
        elif kind == "evict" and reference:
            assert journal.evict_oldest() == reference.popleft()
        elif kind == "rewrite":
            keep = number % (len(reference) + 1)
            journal.rewrite(b"", BaseMeta(0, 0, 0, 0), keep)
            for _ in range(len(reference) - keep):
                reference.popleft()
        elif kind == "index" and reference:
            index = number % len(reference)
            assert journal[index] == reference[index]
            assert journal[-1 - index] == reference[-1 - index]
        assert len(journal) == len(reference)
    assert [journal[i] for i in range(len(journal))] == list(reference)
    with pytest.raises(IndexError):
        journal[len(reference)]


def test_popping_into_a_partly_evicted_batch_skips_the_evicted_records() -> None:
    saved = journal_module.PACK_BATCH
    journal_module.PACK_BATCH = 2
    try:
        journal = InMemoryJournal()
        records = [InverseRecord(n, bytes([n]) * n, n, n) for n in range(1, 5)]
        for record in records:
            journal.append(record, b"")  # the fourth append packs records 1 and 2
        assert journal.evict_oldest() == records[0]
        assert [journal.pop() for _ in range(3)] == records[:0:-1]
        assert len(journal) == 0
        with pytest.raises(IndexError):
            journal.pop()
    finally:
        journal_module.PACK_BATCH = saved
