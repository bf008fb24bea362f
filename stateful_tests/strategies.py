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

Every strategy object is built once per configuration and reused (module
constants, or ``functools.cache`` keyed by small hashable arguments such as a
length, an alphabet, or the tuple of offsets an offset is drawn among).
Hypothesis validates each *new* strategy object on its first draw, and
``st.composite`` inspects the decorated function's source and signature each
time it is applied; building strategies afresh on every draw
spent more time there than in the model, the judge and the implementation
together (docs/performance.md, "Strategies built once"). Where a strategy's
values depend on the buffer's bytes (a stutter, a copy), the cached strategy
draws *positions* with exactly the choices the per-call strategy made, and a
per-call ``.map`` — which adds no choice — reads them out of the buffer. So the
distribution drawn is unchanged (checked against the per-call module: the same
values and the same choice sequences on 14,400 seeded draws).
"""

from __future__ import annotations

from functools import cache
from functools import partial

from hypothesis import strategies as st

from rollcert.model.reference import POLICIES
from rollcert.model.reference import ModelState
from rollcert.model.reference import Policy

#: Two letters make repeats likely; a third keeps some edits distinguishable.
ALPHABET = b"ab"
WIDE_ALPHABET = b"abc"


@cache
def small_bytes(max_size: int = 4, alphabet: bytes = WIDE_ALPHABET) -> st.SearchStrategy[bytes]:
    return st.just(b"") | st.lists(
        st.sampled_from(list(alphabet)), min_size=1, max_size=max_size
    ).map(bytes)


def _repeat(pair: tuple[bytes, int]) -> bytes:
    return pair[0] * pair[1]


def _runs(pair: tuple[bytes, list[int]]) -> bytes:
    return b"".join(bytes([letter]) * count for letter, count in zip(pair[0], pair[1], strict=False))


@cache
def initial_buffers(alphabet: bytes = WIDE_ALPHABET) -> st.SearchStrategy[bytes]:
    """Short buffers over a small alphabet: random, periodic (``abab…``) or runs
    (``aaaaabbbb``). Runs and periods are where an anchor matches in several
    places, so a first-match search undoes the wrong copy; runs are drawn twice
    as often as the rest because that bug needs them."""
    plain = st.lists(st.sampled_from(list(ALPHABET)), max_size=8).map(bytes)
    periodic = st.tuples(small_bytes(3, alphabet).filter(bool), st.integers(2, 5)).map(_repeat)
    runs = st.tuples(st.sampled_from([b"ab", b"ba", b"aba"]), st.lists(st.integers(1, 12), min_size=3, max_size=3)).map(
        _runs
    )
    return st.one_of(st.just(b""), plain, periodic, runs, runs)


_CAPACITIES = st.integers(1, 4)
_POLICIES = st.sampled_from(POLICIES)


def capacities() -> st.SearchStrategy[int]:
    return _CAPACITIES


def policies() -> st.SearchStrategy[Policy]:
    return _POLICIES


# Offsets, inserts and step counts depend on the state. Offsets are cached by the
# values they choose among (Hypothesis merges a ``one_of`` of ``sampled_from`` and a
# small ``integers`` into one draw, so positions mapped afterwards would change the
# choices); inserts draw tagged positions, keyed only by the buffer's length, and
# ``_resolve_insert`` (a per-call ``.map``) looks them up in this buffer.


@cache
def _offsets(hot: tuple[int, ...], length: int, boundaries: tuple[int, ...]) -> st.SearchStrategy[int]:
    if not boundaries:
        return st.sampled_from(hot) | st.integers(0, length)
    return st.one_of(st.sampled_from(hot), st.integers(0, length), st.sampled_from(boundaries), st.sampled_from(boundaries))


def offsets(state: ModelState) -> st.SearchStrategy[int]:
    """0, the end, the newest edit's offset, a boundary between two runs of text
    (where an anchor search has the most look-alike candidates), or anywhere."""
    buffer = state.current
    length = len(buffer)
    newest = state.edits[-1]
    hot = (0, length, min(newest.offset, length)) if newest is not None else (0, length)
    boundaries = tuple(i for i in range(1, length) if buffer[i - 1] != buffer[i])
    return _offsets(hot, length, boundaries)


@cache
def delete_lengths_of_room(room: int) -> st.SearchStrategy[int]:
    return st.sampled_from(sorted({0, room})) | st.integers(0, room)


def delete_lengths(state: ModelState, offset: int) -> st.SearchStrategy[int]:
    return delete_lengths_of_room(len(state.current) - offset)


_SMALL, _STUTTER, _COPY = 0, 1, 2
_STUTTER_SHAPES = st.tuples(st.booleans(), st.integers(1, 4))


def _tag_small(text: bytes) -> tuple[int, bytes]:
    return (_SMALL, text)


def _tag_pair(kind: int, pair: tuple[object, int]) -> tuple[int, tuple[object, int]]:
    return (kind, pair)


@cache
def _insert_shapes(length: int, near_offset: bool, alphabet: bytes) -> st.SearchStrategy[tuple[int, object]]:
    """The draws of :func:`inserts` for a buffer of ``length`` bytes, tagged."""
    stutters = _STUTTER_SHAPES.map(partial(_tag_pair, _STUTTER)) if near_offset and length else st.nothing()
    copies = (
        st.tuples(st.integers(0, length - 1), st.integers(1, 4)).map(partial(_tag_pair, _COPY))
        if length
        else st.nothing()
    )
    return st.one_of(small_bytes(alphabet=alphabet).map(_tag_small), stutters, stutters, copies)


def _resolve_insert(buffer: bytes, offset: int, shape: tuple[int, object]) -> bytes:
    kind, value = shape
    if kind == _SMALL:
        assert isinstance(value, bytes)
        return value
    assert isinstance(value, tuple)
    first, count = value
    if kind == _STUTTER:
        return buffer[offset : offset + count] if first else buffer[max(0, offset - count) : offset]
    return buffer[first : first + count]


def inserts(
    state: ModelState, offset: int | None = None, alphabet: bytes = WIDE_ALPHABET
) -> st.SearchStrategy[bytes]:
    """Empty, a stutter (a copy of the bytes right beside ``offset``: the copy an
    anchor search cannot tell from the original), fresh small text, or a copy of
    text from elsewhere in the buffer."""
    buffer = state.current
    shapes = _insert_shapes(len(buffer), offset is not None, alphabet)
    return shapes.map(partial(_resolve_insert, buffer, 0 if offset is None else offset))


@cache
def _rollback_steps_at(depth: int) -> st.SearchStrategy[int]:
    if depth == 0:
        return st.sampled_from([1, 0])
    # Mostly reachable targets (1, the whole depth, anything between), sometimes one past the horizon.
    return st.one_of(st.just(1), st.integers(1, depth), st.just(depth), st.just(depth + 1))


_ONE_STEP = st.just(1)


def rollback_steps(state: ModelState, *, single: bool) -> st.SearchStrategy[int]:
    if single:
        return _ONE_STEP
    return _rollback_steps_at(state.depth)


def out_of_range_splices(state: ModelState) -> st.SearchStrategy[tuple[int, int]]:
    """(offset, delete_length) pairs that break the validity rule of a splice."""
    return _out_of_range_splices(len(state.current))


@cache
def _out_of_range_splices(length: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.sampled_from([(-1, 0), (length + 1, 0), (0, length + 1), (length, 1), (0, -1)])


# -- durability (R5) ------------------------------------------------------------------


#: A crash point no operation reaches: the crash comes once the operation is done.
AFTER_THE_LAST_IO_CALL = 64


_CRASH_POINTS = st.just(0) | st.integers(0, 4) | st.just(AFTER_THE_LAST_IO_CALL)


def crash_points() -> st.SearchStrategy[int]:
    """Which I/O call of an operation the crash hits: most often the first (the
    write of its record), else one of the next few (a splice makes two calls —
    write, fsync; a compaction four) or, rarely, one past them all."""
    return _CRASH_POINTS


_FEW_LOST = st.integers(1, 4)
_LOST_UNSYNCED_BYTES = st.one_of(_FEW_LOST, _FEW_LOST, st.sampled_from([0, 1 << 20]), st.integers(5, 64))


def lost_unsynced_bytes() -> st.SearchStrategy[int]:
    """How many unsynced bytes the crash loses from the end: none, all of them,
    or — half the time — a few: a torn write that cut off the end of the record,
    which is where a record's data usually sits, whatever the format."""
    return _LOST_UNSYNCED_BYTES


# -- self-authored diffs (S1-S3) ------------------------------------------------------
# The diff machine (rollcert.stateful_tests.diff_machine) draws from these. Buffers are
# short and made of few letters, so a tool's write lands next to, inside or far
# from a diff's regions with similar odds, and repeated text gives a search by
# content (the fuzzy_reconcile specimen) a wrong copy to find. The agent writes
# lower-case letters, tools write digits, hunks write upper case: a
# counterexample shows at a glance who wrote what.

#: Letters of the initial buffer and of the agent's own edits.
DIFF_ALPHABET = b"ab"
#: What a tool writes.
TOOL_ALPHABET = b"12"
#: What a diff's hunks write.
HUNK_ALPHABET = b"XY"


def _first_letters(count: int) -> bytes:
    return b"abcdefgh"[:count]


_DIFF_INITIAL_BUFFERS = st.one_of(
    st.integers(3, 8).map(_first_letters),
    st.lists(st.sampled_from(list(DIFF_ALPHABET)), min_size=3, max_size=8).map(bytes),
)


def diff_initial_buffers() -> st.SearchStrategy[bytes]:
    """Three to eight bytes: over ``ab`` (repeats) or distinct letters (readable)."""
    return _DIFF_INITIAL_BUFFERS


@cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@cache
def _letters(alphabet: bytes, min_size: int, max_size: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.sampled_from(list(alphabet)), min_size=min_size, max_size=max_size)


@st.composite
def _diff_edit(draw: st.DrawFn, length: int, alphabet: bytes) -> tuple[int, int, bytes]:
    offset = draw(_integers(0, length), label="offset")
    delete_length = draw(_integers(0, min(2, length - offset)), label="delete_length")
    minimum = 0 if delete_length else 1
    insert = bytes(draw(_letters(alphabet, minimum, 2), label="insert"))
    return offset, delete_length, insert


@cache
def _diff_edits(length: int, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    return _diff_edit(length, alphabet)


def diff_edits(buffer: bytes, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    """(offset, delete_length, insert) of a valid splice of ``buffer``; never a no-op."""
    return _diff_edits(len(buffer), alphabet)


@st.composite
def _hunk_list(draw: st.DrawFn, length: int) -> list[tuple[int, int, bytes]]:
    count = draw(_integers(1, 2), label="hunks")
    hunks: list[tuple[int, int, bytes]] = []
    lowest = 0
    for _ in range(count):
        if lowest > length:
            break
        start = draw(_integers(lowest, length), label="hunk start")
        end = draw(_integers(start, min(length, start + 2)), label="hunk end")
        replacement = bytes(draw(_letters(HUNK_ALPHABET, 0 if end > start else 1, 2)))
        hunks.append((start, end, replacement))
        lowest = max(end, start + 1)
    return hunks


@cache
def _hunk_lists(length: int) -> st.SearchStrategy[list[tuple[int, int, bytes]]]:
    return _hunk_list(length)


def hunk_lists(base: bytes) -> st.SearchStrategy[list[tuple[int, int, bytes]]]:
    """One or two hunks ``(start, end, replacement)`` of ``base``: sorted, starts
    strictly increasing, each ending before the next begins."""
    return _hunk_lists(len(base))


@st.composite
def _region(draw: st.DrawFn, length: int) -> tuple[int, int]:
    # The choices of ``integers(0, length - 1).flatmap(start -> integers(start + 1, ...))``,
    # with the inner strategies cached instead of built on every draw.
    start = draw(_integers(0, length - 1))
    return start, draw(_integers(start + 1, min(length, start + 3)))


_NO_REGIONS: st.SearchStrategy[list[tuple[int, int]]] = st.just([])


@cache
def _read_region_lists(length: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    if length == 0:
        return _NO_REGIONS
    return st.lists(_region(length), min_size=0, max_size=2, unique=True)


def read_region_lists(base: bytes) -> st.SearchStrategy[list[tuple[int, int]]]:
    """None, one or two non-empty regions ``(start, end)`` of ``base``."""
    return _read_region_lists(len(base))


_ANCHOR_MODES = st.sampled_from(["content", "content", "positional"])


def anchor_modes() -> st.SearchStrategy[str]:
    """Content diffs first (they shrink to it), positional ones a third of the time."""
    return _ANCHOR_MODES


@st.composite
def _substitution(draw: st.DrawFn, length: int, alphabet: bytes) -> tuple[int, int, bytes]:
    # The choices of the nested ``flatmap`` this replaces: offset, count, letters.
    offset = draw(_integers(0, length - 1))
    count = draw(_integers(1, min(2, length - offset)))
    return offset, count, bytes(draw(_letters(alphabet, count, count)))


@cache
def _diff_substitutions(length: int, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    if length == 0:
        return st.nothing()
    return _substitution(length, alphabet)


def diff_substitutions(buffer: bytes, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    """Length-preserving edits (one or two bytes replaced by as many): after a
    rollback and such an edit the buffer is as deep *and as long* as before,
    with other text — where a counter or a size check would call a stale
    snapshot current (S3)."""
    return _diff_substitutions(len(buffer), alphabet)
