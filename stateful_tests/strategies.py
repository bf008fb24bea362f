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

from rollcert.model.reference import POLICIES, ModelState, Policy

#: Two letters make repeats likely; a third keeps some edits distinguishable.
ALPHABET = b"ab"
WIDE_ALPHABET = b"abc"


def small_bytes(max_size: int = 4, alphabet: bytes = WIDE_ALPHABET) -> st.SearchStrategy[bytes]:
    return st.just(b"") | st.lists(
        st.sampled_from(list(alphabet)), min_size=1, max_size=max_size
    ).map(bytes)


def initial_buffers(alphabet: bytes = WIDE_ALPHABET) -> st.SearchStrategy[bytes]:
    """Short buffers over a small alphabet: random, periodic (``abab…``) or runs
    (``aaaaabbbb``). Runs and periods are where an anchor matches in several
    places, so a first-match search undoes the wrong copy; runs are drawn twice
    as often as the rest because that bug needs them."""
    plain = st.lists(st.sampled_from(list(ALPHABET)), max_size=8).map(bytes)
    periodic = st.tuples(small_bytes(3, alphabet).filter(bool), st.integers(2, 5)).map(lambda pair: pair[0] * pair[1])
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


def inserts(
    state: ModelState, offset: int | None = None, alphabet: bytes = WIDE_ALPHABET
) -> st.SearchStrategy[bytes]:
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
    return st.one_of(small_bytes(alphabet=alphabet), stutters, stutters, copies)


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


# -- durability (R5) ------------------------------------------------------------------


#: A crash point no operation reaches: the crash comes once the operation is done.
AFTER_THE_LAST_IO_CALL = 64


def crash_points() -> st.SearchStrategy[int]:
    """Which I/O call of an operation the crash hits: most often the first (the
    write of its record), else one of the next few (a splice makes two calls —
    write, fsync; a compaction four) or, rarely, one past them all."""
    return st.just(0) | st.integers(0, 4) | st.just(AFTER_THE_LAST_IO_CALL)


def lost_unsynced_bytes() -> st.SearchStrategy[int]:
    """How many unsynced bytes the crash loses from the end: none, all of them,
    or — half the time — a few: a torn write that cut off the end of the record,
    which is where a record's data usually sits, whatever the format."""
    few = st.integers(1, 4)
    return st.one_of(few, few, st.sampled_from([0, 1 << 20]), st.integers(5, 64))


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


def diff_initial_buffers() -> st.SearchStrategy[bytes]:
    """Three to eight bytes: over ``ab`` (repeats) or distinct letters (readable)."""
    repeated = st.lists(st.sampled_from(list(DIFF_ALPHABET)), min_size=3, max_size=8).map(bytes)
    distinct = st.integers(3, 8).map(lambda n: b"abcdefgh"[:n])
    return st.one_of(distinct, repeated)


def diff_edits(buffer: bytes, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    """(offset, delete_length, insert) of a valid splice of ``buffer``; never a no-op."""
    length = len(buffer)

    def build(draw: st.DrawFn) -> tuple[int, int, bytes]:
        offset = draw(st.integers(0, length), label="offset")
        delete_length = draw(st.integers(0, min(2, length - offset)), label="delete_length")
        minimum = 0 if delete_length else 1
        insert = bytes(draw(st.lists(st.sampled_from(list(alphabet)), min_size=minimum, max_size=2), label="insert"))
        return offset, delete_length, insert

    return st.composite(build)()


def hunk_lists(base: bytes) -> st.SearchStrategy[list[tuple[int, int, bytes]]]:
    """One or two hunks ``(start, end, replacement)`` of ``base``: sorted, starts
    strictly increasing, each ending before the next begins."""
    length = len(base)

    def build(draw: st.DrawFn) -> list[tuple[int, int, bytes]]:
        count = draw(st.integers(1, 2), label="hunks")
        hunks: list[tuple[int, int, bytes]] = []
        lowest = 0
        for _ in range(count):
            if lowest > length:
                break
            start = draw(st.integers(lowest, length), label="hunk start")
            end = draw(st.integers(start, min(length, start + 2)), label="hunk end")
            replacement = bytes(
                draw(st.lists(st.sampled_from(list(HUNK_ALPHABET)), min_size=0 if end > start else 1, max_size=2))
            )
            hunks.append((start, end, replacement))
            lowest = max(end, start + 1)
        return hunks

    return st.composite(build)()


def read_region_lists(base: bytes) -> st.SearchStrategy[list[tuple[int, int]]]:
    """None, one or two non-empty regions ``(start, end)`` of ``base``."""
    length = len(base)
    if length == 0:
        return st.just([])
    region = st.integers(0, length - 1).flatmap(
        lambda start: st.integers(start + 1, min(length, start + 3)).map(lambda end: (start, end))
    )
    return st.lists(region, min_size=0, max_size=2, unique=True)


def anchor_modes() -> st.SearchStrategy[str]:
    """Content diffs first (they shrink to it), positional ones a third of the time."""
    return st.sampled_from(["content", "content", "positional"])


def diff_substitutions(buffer: bytes, alphabet: bytes) -> st.SearchStrategy[tuple[int, int, bytes]]:
    """Length-preserving edits (one or two bytes replaced by as many): after a
    rollback and such an edit the buffer is as deep *and as long* as before,
    with other text — where a counter or a size check would call a stale
    snapshot current (S3)."""
    length = len(buffer)
    if length == 0:
        return st.nothing()
    return st.integers(0, length - 1).flatmap(
        lambda offset: st.integers(1, min(2, length - offset)).flatmap(
            lambda count: st.lists(st.sampled_from(list(alphabet)), min_size=count, max_size=count).map(
                lambda letters: (offset, count, bytes(letters))
            )
        )
    )
