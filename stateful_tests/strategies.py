"""Every Hypothesis strategy of the suite, aimed at the bug classes of SPEC §6.

Uniform random bytes almost never produce the situations where rollback logs
go wrong, so each generator leans towards them:

- *repeated text*: small alphabets, periodic buffers, and inserts copied from
  the buffer itself, so a content search has several candidates (R2);
- *edge offsets*: 0, the end, and the offset of the newest edit, so edits land
  before, on and after each other with length changes (R2, R3);
- *empty inserts and deletes*, and deletes of everything to the end;
- rollback step counts at 1, the whole depth and one past it (R3, R6).

The rollback machines read each decision (an example's start, an edit, a
rollback's step count) out of one drawn word of random bytes (see "one choice
per decision" below): nested ``one_of``/``lists``/``map`` strategies made
Hypothesis spend more on their choices and spans than the model, the judge and
the implementation cost together, and ran at 0.6-0.8x a plain machine's steps
per second (docs/performance.md). The diff machine's strategies are still
composed ones, each built once per configuration (module constants, or
``functools.cache`` keyed by a length or an alphabet): Hypothesis validates
every *new* strategy object on its first draw, and ``st.composite`` inspects
the decorated function each time it is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from hypothesis import strategies as st

from rollcert.model.reference import DURABILITY_MODES
from rollcert.model.reference import POLICIES
from rollcert.model.reference import DurabilityMode
from rollcert.model.reference import ModelState
from rollcert.model.reference import Policy

#: Two letters make repeats likely; a third keeps some edits distinguishable.
ALPHABET = b"ab"
WIDE_ALPHABET = b"abc"

# -- one choice per decision -------------------------------------------------------
#
# An example's start, each edit and each rollback's step count are drawn as ONE
# choice: eight random bytes (WORD), from which a Word reads every pick with
# exact arithmetic. Nested ``one_of``/``lists``/``tuples``/``map`` drew one choice
# per branch, element and field, each in its own span, and Hypothesis's cost
# per example grows with both: it draws them, records them in its tree, and
# mutates examples span by span — and the mutator also retries, up to five
# times each, examples that were thrown out, whenever they hold two spans of
# one kind (several integer spans of a start, say). A plain machine's
# ``integers``/``binary`` draws made three to five times fewer; this way,
# rollcert's machine makes about as many choices per step as a plain one.
# Eight bytes are 2^64 values, so a word is always new to Hypothesis's tree
# (its search for novel examples varies the word, not the rule it draws next),
# and the few hundred thousand combinations one decision reads out of it come
# out uniform to one part in 2^40. The distribution is the nested strategies',
# branch for branch: each branch of a former ``one_of`` as likely as it was,
# values uniform within a branch; only list lengths, which ``lists`` drew with
# a geometric tail, are uniform now.

#: The one choice of a decision (see above).
WORD: st.SearchStrategy[bytes] = st.binary(min_size=8, max_size=8)


class Word:
    """Uniform picks read one after another out of a drawn :data:`WORD`
    (mutable: each pick consumes part of the word)."""

    __slots__ = ("_rest",)

    def __init__(self, raw: bytes) -> None:
        self._rest = int.from_bytes(raw, "little")

    def pick(self, count: int) -> int:
        """One of ``0 .. count - 1``, each as likely."""
        self._rest, chosen = divmod(self._rest, count)
        return chosen

    def letters(self, alphabet: bytes, count: int) -> bytes:
        return bytes(alphabet[self.pick(len(alphabet))] for _ in range(count))


# -- starts ------------------------------------------------------------------------

_RUN_PATTERNS = (b"ab", b"ba", b"aba")
_MAX_CAPACITY = 4


def _initial_buffer(word: Word, alphabet: bytes) -> bytes:
    """Short buffers over a small alphabet: empty, random over ``ab`` (up to 8
    bytes), periodic (a unit of 1-3 letters, 2-5 times: ``abab…``) or runs
    (``aaaaabbbb``: a pattern's letters, each 1-12 times). Runs and periods are
    where an anchor matches in several places, so a first-match search undoes
    the wrong copy; runs are drawn twice as often as the rest because that bug
    needs them."""
    kind = word.pick(5)
    if kind == 0:
        return b""
    if kind == 1:
        return word.letters(ALPHABET, word.pick(9))
    if kind == 2:
        unit = word.letters(alphabet, word.pick(3) + 1)
        return unit * (word.pick(4) + 2)
    pattern = _RUN_PATTERNS[word.pick(len(_RUN_PATTERNS))]
    return b"".join(bytes([letter]) * (word.pick(12) + 1) for letter in pattern)


def initial_buffer(raw: bytes, alphabet: bytes = WIDE_ALPHABET) -> bytes:
    """The initial buffer a drawn :data:`WORD` names (see :func:`_initial_buffer`)."""
    return _initial_buffer(Word(raw), alphabet)


@dataclass(frozen=True)
class Start:
    """What a rollback machine's example starts from: the initial buffer, the
    durability mode (durable machines), and a capacity and policy (bounded)."""

    initial: bytes
    durability: DurabilityMode | None = None
    capacity: int | None = None
    policy: Policy | None = None


def start_from(raw: bytes, alphabet: bytes, bounded: str, durable: bool) -> Start:
    """An example's start, read out of one drawn :data:`WORD`: the initial buffer,
    then the durability mode if ``durable`` (each equally likely), then — if
    ``bounded`` is "always", or "sometimes" and a coin says so — a capacity of
    1-4 and a policy."""
    word = Word(raw)
    initial = _initial_buffer(word, alphabet)
    durability = DURABILITY_MODES[word.pick(len(DURABILITY_MODES))] if durable else None
    if bounded == "always" or (bounded == "sometimes" and word.pick(2)):
        return Start(initial, durability, word.pick(_MAX_CAPACITY) + 1, POLICIES[word.pick(len(POLICIES))])
    return Start(initial, durability)


# -- edits -------------------------------------------------------------------------

#: Insert kinds, drawn as equals: fresh small text, a stutter (twice: the copy
#: an anchor search cannot tell from the original), a copy from elsewhere.
_SMALL, _STUTTER, _COPY = 0, 1, 2
_INSERT_KINDS = (_SMALL, _STUTTER, _STUTTER, _COPY)


def _offset_kinds(state: ModelState) -> tuple[Sequence[int], ...]:
    """What an offset is drawn among, each kind as likely: 0, the end and the
    newest edit's offset (``hot``); anywhere; and — twice as likely, when there
    are any — the boundaries between two runs of text, where an anchor search
    has the most look-alike candidates."""
    buffer = state.current
    length = len(buffer)
    newest = state.edits[-1]
    hot = (0, length, min(newest.offset, length)) if newest is not None else (0, length)
    boundaries = tuple(i for i in range(1, length) if buffer[i - 1] != buffer[i])
    anywhere = range(length + 1)
    return (hot, anywhere, boundaries, boundaries) if boundaries else (hot, anywhere)


def edit_from(state: ModelState, raw: bytes, alphabet: bytes = WIDE_ALPHABET) -> tuple[int, int, bytes]:
    """(offset, delete_length, insert) of a valid splice of ``state``'s buffer,
    read out of one drawn :data:`WORD`:

    - the offset: see :func:`_offset_kinds`;
    - the delete length: nothing or everything to the end half the time, else any;
    - the insert: fresh small text (empty half of those times, else 1-4
      letters), a stutter (1-4 bytes right before or after the offset: the
      copy an anchor search cannot tell from the original; twice as likely) or
      a copy of 1-4 bytes from elsewhere in the buffer.
    """
    word = Word(raw)
    buffer = state.current
    kinds = _offset_kinds(state)
    among = kinds[word.pick(len(kinds))]
    offset = among[word.pick(len(among))]
    room = len(buffer) - offset
    delete_length = word.pick(room + 1) if word.pick(2) else (0, room)[word.pick(2)]
    kind = _INSERT_KINDS[word.pick(len(_INSERT_KINDS))] if buffer else _SMALL  # nothing to copy yet
    if kind == _SMALL:
        insert = word.letters(alphabet, word.pick(4) + 1) if word.pick(2) else b""
    elif kind == _STUTTER:
        count = word.pick(4) + 1
        insert = buffer[offset : offset + count] if word.pick(2) else buffer[max(0, offset - count) : offset]
    else:
        start = word.pick(len(buffer))
        insert = buffer[start : start + word.pick(4) + 1]
    return offset, delete_length, insert


def draw_edit(data: st.DataObject, state: ModelState, alphabet: bytes = WIDE_ALPHABET) -> tuple[int, int, bytes]:
    """:func:`edit_from` a word drawn from ``data``: one draw, one choice."""
    return edit_from(state, data.draw(WORD, label="edit"), alphabet)


# -- rollbacks ---------------------------------------------------------------------


def rollback_steps_from(state: ModelState, raw: bytes) -> int:
    """1, the whole depth, one past it (the horizon), or anything between — each
    as likely as the others; read out of one drawn :data:`WORD`. At depth 0: 1 or 0."""
    word, depth = Word(raw), state.depth
    if depth == 0:
        return 1 - word.pick(2)
    return (1, word.pick(depth) + 1, depth, depth + 1)[word.pick(4)]


def draw_rollback_steps(data: st.DataObject, state: ModelState) -> int:
    """:func:`rollback_steps_from` a word drawn from ``data``."""
    return rollback_steps_from(state, data.draw(WORD, label="steps"))


def draw_branch_steps(data: st.DataObject, state: ModelState) -> int:
    """One step back half the time (the step that brings a dead checkpoint's
    depth back), else anything up to the whole depth; one choice."""
    word = Word(data.draw(WORD, label="steps"))
    return 1 if word.pick(2) == 0 else word.pick(state.depth) + 1


@cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


def draw_index(data: st.DataObject, count: int, label: str) -> int:
    """An index into a short list of ``count`` choices (a ``sampled_from`` of the
    list's positions, without building a strategy per list)."""
    return data.draw(_integers(0, count - 1), label=label)


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
