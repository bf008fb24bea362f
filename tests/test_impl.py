"""The bundled JournaledBuffer: typed errors that change nothing, storage, threads."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rollcert.impl.chunked_text as chunked_text
from rollcert.impl import Checkpoint
from rollcert.impl import ChunkedText
from rollcert.impl import DivergenceError
from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.impl import JournalError
from rollcert.impl import UnreachableRollbackError


def snapshot(buffer: JournaledBuffer) -> tuple[bytes, int, int]:
    return buffer.read(), buffer.depth, buffer.revision


def busy_buffer() -> JournaledBuffer:
    buffer = JournaledBuffer(b"the quick brown fox")
    buffer.splice(4, 5, b"slow")
    buffer.splice(0, 0, b">> ")
    return buffer


BAD_CALLS: list[tuple[str, Callable[[JournaledBuffer], object], type[Exception]]] = [
    ("negative offset", lambda b: b.splice(-1, 0, b"x"), ValueError),
    ("offset past end", lambda b: b.splice(10_000, 0, b"x"), ValueError),
    ("delete past end", lambda b: b.splice(3, 10_000, b""), ValueError),
    ("negative delete", lambda b: b.splice(3, -2, b""), ValueError),
    ("str insert", lambda b: b.splice(0, 0, "text"), TypeError),
    ("float offset", lambda b: b.splice(1.0, 0, b""), TypeError),
    ("bool offset", lambda b: b.splice(True, 0, b""), TypeError),
    ("None delete", lambda b: b.splice(0, None, b""), TypeError),
    ("negative rollback", lambda b: b.rollback(-1), ValueError),
    ("rollback past horizon", lambda b: b.rollback(3), UnreachableRollbackError),
    ("str rollback", lambda b: b.rollback("1"), TypeError),
    ("rollback_to non-token", lambda b: b.rollback_to(2), TypeError),
    ("foreign token", lambda b: b.rollback_to(JournaledBuffer(b"").checkpoint()), UnreachableRollbackError),
    ("forged token", lambda b: b.rollback_to(Checkpoint(b.checkpoint().buffer_id, 1, 999)), UnreachableRollbackError),
]


@pytest.mark.parametrize("name, call, error", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_arguments_raise_typed_errors_and_change_nothing(
    name: str, call: Callable[[JournaledBuffer], object], error: type[Exception]
) -> None:
    buffer = busy_buffer()
    before = snapshot(buffer)
    token = buffer.checkpoint()
    with pytest.raises(error):
        call(buffer)
    assert snapshot(buffer) == before
    buffer.rollback_to(token)  # the log still works afterwards
    buffer.rollback(2)
    assert buffer.read() == b"the quick brown fox"


@pytest.mark.parametrize(
    "kwargs, error",
    [({"capacity": 0}, ValueError), ({"capacity": "3"}, TypeError), ({"policy": "drop"}, ValueError)],
)
def test_bad_construction(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        JournaledBuffer(b"", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        JournaledBuffer("text")  # type: ignore[arg-type]


def test_failed_append_changes_nothing() -> None:
    journal = FaultInjectingJournal(InMemoryJournal())
    buffer = JournaledBuffer(b"abc", journal=journal)
    buffer.splice(0, 1, b"A")
    journal.fail_next_append()
    with pytest.raises(JournalError):
        buffer.splice(1, 1, b"B")
    assert snapshot(buffer) == (b"Abc", 1, 1)
    buffer.rollback(1)
    assert buffer.read() == b"abc"


def test_bounded_policies() -> None:
    rejecting = JournaledBuffer(b"", capacity=2)
    rejecting.splice(0, 0, b"a")
    rejecting.splice(0, 0, b"b")
    with pytest.raises(JournalError):
        rejecting.splice(0, 0, b"c")
    assert snapshot(rejecting) == (b"ba", 2, 2)
    evicting = JournaledBuffer(b"", capacity=2, policy="evict_oldest")
    first = evicting.checkpoint()
    for letter in b"abc":
        evicting.splice(0, 0, bytes([letter]))
    assert (evicting.read(), evicting.depth) == (b"cba", 2)
    with pytest.raises(UnreachableRollbackError):
        evicting.rollback_to(first)  # evicted past the horizon
    evicting.rollback(2)
    assert evicting.read() == b"a"


def test_out_of_log_write_is_detected_strictly_anywhere() -> None:
    buffer = JournaledBuffer(b"0123456789" * 10_000)
    buffer.splice(5, 1, b"x")
    buffer.storage.replace(90_000, 1, b"?")  # far from the span the rollback restores
    buffer.splice(0, 0, b"y")
    buffer.rollback(1)  # the record on top of the write still undoes
    with pytest.raises(DivergenceError):
        buffer.rollback(1)
    assert buffer.depth == 1
    buffer.adopt_current()
    assert buffer.depth == 0 and buffer.read()[90_000:90_001] == b"?"


def test_checkpoint_is_not_just_a_depth() -> None:
    buffer = JournaledBuffer(b"")
    buffer.splice(0, 0, b"a")
    token = buffer.checkpoint()
    buffer.rollback(1)
    buffer.splice(0, 0, b"a")  # same depth, same bytes, different state
    with pytest.raises(UnreachableRollbackError):
        buffer.rollback_to(token)


@given(
    st.binary(max_size=40),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 10), st.binary(max_size=12)), max_size=40),
)
def test_chunked_text_equals_bytearray(initial: bytes, edits: list[tuple[int, int, bytes]]) -> None:
    """Tiny chunks so that every edit crosses, splits or empties chunks."""
    original = chunked_text.CHUNK_SIZE
    chunked_text.CHUNK_SIZE = 4
    try:
        text, reference = ChunkedText(initial), bytearray(initial)
        for offset, delete_length, insert in edits:
            offset = min(offset, len(reference))
            delete_length = min(delete_length, len(reference) - offset)
            text.replace(offset, delete_length, insert)
            reference[offset : offset + delete_length] = insert
            assert text.read() == bytes(reference) and len(text) == len(reference)
            assert text.read_range(offset, len(reference)) == bytes(reference[offset:])
    finally:
        chunked_text.CHUNK_SIZE = original


@given(
    st.binary(min_size=1, max_size=24),
    st.lists(
        st.tuples(st.sampled_from(["same", "splice", "rollback", "rollback2"]), st.integers(0, 40), st.binary(max_size=9)),
        max_size=40,
    ),
)
def test_same_length_undo_shortcut_matches_the_model(initial: bytes, steps: list[tuple[str, int, bytes]]) -> None:
    """rollback(1) writes a same-length splice's bytes back into the chunk the splice
    wrote, without a lookup. With 4-byte chunks, the splices between (length
    changes that split, merge and regroup chunks) and multi-step rollbacks must
    never leave it writing into a chunk that is no longer the buffer's."""
    original = chunked_text.CHUNK_SIZE
    chunked_text.CHUNK_SIZE = 4
    try:
        buffer, history = JournaledBuffer(initial), [initial]
        for kind, where, text in steps:
            current = history[-1]
            offset = where % (len(current) + 1)
            if kind == "same" and text and offset + len(text) <= len(current):
                buffer.splice(offset, len(text), text)
                history.append(current[:offset] + text + current[offset + len(text) :])
            elif kind == "splice":
                delete = min(len(text) // 2, len(current) - offset)
                buffer.splice(offset, delete, text)
                history.append(current[:offset] + text + current[offset + delete :])
            elif kind.startswith("rollback") and len(history) > 1:
                count = min(len(history) - 1, 1 if kind == "rollback" else 2)
                buffer.rollback(count)
                del history[-count:]
            assert buffer.read() == history[-1] and buffer.depth == len(history) - 1
    finally:
        chunked_text.CHUNK_SIZE = original


def test_large_buffer_round_trip() -> None:
    data = bytes(range(256)) * 20_000  # 5 MiB, many chunks
    buffer = JournaledBuffer(data)
    for i in range(200):
        buffer.splice((i * 7919) % len(buffer), i % 17, b"<%d>" % i)
    buffer.splice(100, 200_000, b"")  # spans several chunks
    buffer.rollback(201)
    assert buffer.read() == data


def test_threads_see_whole_operations() -> None:
    """Concurrent splices and rollbacks never interleave inside one operation."""
    buffer = JournaledBuffer(b"")
    errors: list[BaseException] = []

    def worker(letter: bytes) -> None:
        try:
            for _ in range(300):
                buffer.splice(0, 0, letter * 3)
                buffer.rollback(1) if len(buffer) > 30 else None
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(bytes([65 + i]),)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    content = buffer.read()
    assert len(content) % 3 == 0
    assert all(content[i] == content[i + 1] == content[i + 2] for i in range(0, len(content), 3))
    buffer.rollback(buffer.depth)
    assert buffer.read() == b""
