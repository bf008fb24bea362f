"""Every Hypothesis strategy of the suite, aimed at the bug classes of SPEC §6.

Uniform random bytes almost never produce the situations where rollback logs
go wrong, so each generator leans towards them:

- *repeated text*: small alphabets, periodic buffers, and inserts copied from
  the buffer itself, so a content search has several candidates (R2);
- *edge offsets*: 0, the end, and the offset of the newest edit, so edits land
  before, on and after each other with length changes (R2, R3);
- *empty inserts and deletes*, and deletes of everything to the end;
- rollback step counts at 1, the whole depth and one past it (R3, R6).

Shrinking moves towards the first alternative of each ``one_of``, so the
simplest case comes first.
"""

from __future__ import annotations

from hypothesis import strategies as st

from model.reference import POLICIES, ModelState, Policy

#: Two letters make repeats likely; a third keeps some edits distinguishable.
ALPHABET = b"ab"
WIDE_ALPHABET = b"abc"


def small_bytes(max_size: int = 4) -> st.SearchStrategy[bytes]:
    return st.just(b"") | st.lists(
        st.sampled_from(list(WIDE_ALPHABET)), min_size=1, max_size=max_size
    ).map(bytes)


def initial_buffers() -> st.SearchStrategy[bytes]:
    """Short buffers over a small alphabet: random, periodic (``abab…``) or runs
    (``aaaaabbbb``). Runs and periods are where an anchor matches in several
    places, so a first-match search undoes the wrong copy; runs are drawn twice
    as often as the rest because that bug needs them."""
    plain = st.lists(st.sampled_from(list(ALPHABET)), max_size=8).map(bytes)
    periodic = st.tuples(small_bytes(3).filter(bool), st.integers(2, 5)).map(lambda pair: pair[0] * pair[1])
    runs = st.tuples(st.sampled_from([b"ab", b"ba", b"aba"]), st.lists(st.integers(1, 12), min_size=3, max_size=3)).map(
        lambda pair: b"".join(bytes([letter]) * count for letter, count in zip(pair[0], pair[1], strict=False))
    )
    return st.one_of(st.just(b""), plain, periodic, runs, runs)


def capacities() -> st.SearchStrategy[int]:
    return st.integers(1, 4)


def policies() -> st.SearchStrategy[Policy]:
    return st.sampled_from(POLICIES)


def offsets(state: ModelState) -> st.SearchStrategy[int]:
    """0, the end, the newest edit's offset, a boundary between two runs of text
    (where an anchor search has the most look-alike candidates), or anywhere."""
    buffer = state.current
    length = len(buffer)
    newest = state.edits[-1]
    hot = [0, length] + ([min(newest.offset, length)] if newest is not None else [])
    boundaries = [i for i in range(1, length) if buffer[i - 1] != buffer[i]]
    if not boundaries:
        return st.sampled_from(hot) | st.integers(0, length)
    return st.one_of(st.sampled_from(hot), st.integers(0, length), st.sampled_from(boundaries), st.sampled_from(boundaries))


def delete_lengths(state: ModelState, offset: int) -> st.SearchStrategy[int]:
    room = len(state.current) - offset
    return st.sampled_from(sorted({0, room})) | st.integers(0, room)


def inserts(state: ModelState, offset: int | None = None) -> st.SearchStrategy[bytes]:
    """Empty, a stutter (a copy of the bytes right beside ``offset``: the copy an
    anchor search cannot tell from the original), fresh small text, or a copy of
    text from elsewhere in the buffer."""
    buffer = state.current
    stutters = (
        st.tuples(st.booleans(), st.integers(1, 4)).map(
            lambda pair: buffer[offset : offset + pair[1]] if pair[0] else buffer[max(0, offset - pair[1]) : offset]
        )
        if offset is not None and buffer
        else st.nothing()
    )
    copies = (
        st.tuples(st.integers(0, len(buffer) - 1), st.integers(1, 4)).map(
            lambda pair: buffer[pair[0] : pair[0] + pair[1]]
        )
        if buffer
        else st.nothing()
    )
    return st.one_of(small_bytes(), stutters, stutters, copies)


def rollback_steps(state: ModelState, *, single: bool) -> st.SearchStrategy[int]:
    if single:
        return st.just(1)
    depth = state.depth
    if depth == 0:
        return st.sampled_from([1, 0])
    # Mostly reachable targets (1, the whole depth, anything between), sometimes one past the horizon.
    return st.one_of(st.just(1), st.integers(1, depth), st.just(depth), st.just(depth + 1))


def out_of_range_splices(state: ModelState) -> st.SearchStrategy[tuple[int, int]]:
    """(offset, delete_length) pairs that break the validity rule of a splice."""
    length = len(state.current)
    return st.sampled_from([(-1, 0), (length + 1, 0), (0, length + 1), (length, 1), (0, -1)])
