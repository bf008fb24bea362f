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

import hashlib
import random
import re
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import overload

from hypothesis import strategies as st

from rollcert.model.operations import Compact
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import DURABILITY_MODES
from rollcert.model.reference import POLICIES
from rollcert.model.reference import DurabilityMode
from rollcert.model.reference import ModelState
from rollcert.model.reference import Policy
from rollcert.stateful_tests.world import REVISION_WRAPS
from rollcert.stateful_tests.world import SIZE_THRESHOLDS
from rollcert.stateful_tests.world import SMALL_CHUNK_SIZES
from rollcert.stateful_tests.world import UNDECLARED_SIZES
from rollcert.stateful_tests.world import World

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


# -- wide draws ---------------------------------------------------------------------
#
# The aliased small-scope draws above find the anchor and ordering bugs; they
# never send a line break, a byte past 0x7F or more than a few bytes, so bugs that
# live past a threshold of the *data* (a record cut at 128 bytes, removed text kept
# as ``str``, CRLF normalised on undo, a column counted in characters) pass them.
# One decision in WIDE_SHARE is a wide one instead, over the target's declared
# world (rollcert.stateful_tests.world.World): any byte, text with line structure
# and multi-byte characters, or a run longer than one of the record-layout
# thresholds (and, for a buffer, than the target's chunk). Long contents are a
# random unit tiled, so a large buffer still repeats (an anchor search has look-
# alikes) and costs one multiplication, not a loop per byte.

#: One example in this many is a wide one; the others draw exactly as the
#: small-scope machine always did (the anchor and ordering bugs need runs of
#: small aliased edits, and a wide draw in between breaks the run).
WIDE_EXAMPLES = 4
#: In a wide example, one decision in this many is a wide one.
WIDE_SHARE = 2
#: The default world: any byte, no limits (SPEC §6a).
DEFAULT_WORLD = World()


def _hashed(raw: bytes, person: bytes) -> int:
    """A number read out of a start word for one decision (``person`` names it):
    the decisions an example takes from its word are independent of each other
    and of the word's own picks, yet replaying the word repeats them all."""
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8, person=person).digest(), "big")


def example_is_wide(raw: bytes) -> bool:
    """Whether the example an example's start word begins mixes wide draws in (one
    in :data:`WIDE_EXAMPLES`; read through a hash, so that it is independent of
    the picks the start reads, and never for a word of zeros)."""
    if not any(raw):
        return False
    choice = _hashed(raw, b"wide")
    return choice % WIDE_EXAMPLES == 0


def is_wide(word: Word) -> bool:
    """Whether this decision is a wide one (one in :data:`WIDE_SHARE`). A word of
    zeros — Hypothesis's simplest, and a frequent draw — stays a small-scope one."""
    return word.pick(WIDE_SHARE) == WIDE_SHARE - 1


def _rng(word: Word) -> random.Random:
    """A generator seeded from the rest of a word, for contents longer than a word holds."""
    return random.Random(word.pick(1 << 32))


def _past_a_threshold(word: Word, world: World, *, chunk: bool) -> int:
    """A length just past one of the thresholds (and the chunk size, with ``chunk``)."""
    # A declared chunk is the one rung only a start reaches (an insert never makes
    # a buffer that long), so it is drawn as often as all the others together.
    rungs = [*SIZE_THRESHOLDS, *([world.chunk] * len(SIZE_THRESHOLDS) if chunk and world.chunk is not None else [])]
    # The top threshold twice: past it a buffer has room for every removal the dimensions ask.
    rungs.append(SIZE_THRESHOLDS[-1])
    rung = rungs[word.pick(len(rungs))]
    return rung + 1 + word.pick(max(1, rung // 8))


def _text_lines(rng: random.Random, world: World, lines: int) -> bytes:
    """Text with line structure: ``lines`` lines of 0-8 pieces (letters, tabs,
    NUL, multi-byte characters...), each ended by a line break the world allows —
    a CRLF pair half the time (Windows text is where a log that normalises line
    endings goes wrong), else \n, now and then a lone \r. A piece drawn among
    the breaks as well (a bare break inside a line) keeps mixed endings possible."""
    pieces = world.pieces()
    ends = [end for end in (b"\r\n", b"\r\n", b"\n", b"\n", b"\r") if end in pieces] or [b""]
    return b"".join(
        b"".join(rng.choices(pieces, k=rng.randint(0, 8))) + rng.choice(ends) for _ in range(lines)
    )


def _filler(rng: random.Random, world: World, length: int) -> bytes:
    """At least ``length`` bytes of the world: a unit of raw bytes (byte worlds),
    of text pieces (letters, line breaks, CRLF, multi-byte characters) or of a few
    letters, tiled whole (so text stays valid UTF-8)."""
    kind = rng.randrange(1, 3) if world.text else rng.randrange(3)
    if kind == 0:
        unit = bytes(rng.choices(world.wide, k=rng.randint(1, 48)))
    elif kind == 1:
        unit = b"".join(rng.choices(world.pieces(), k=rng.randint(1, 24)))
    else:
        unit = bytes(rng.choices(world.letters, k=rng.randint(1, 6)))
    unit = unit or world.letters[:1]
    return unit * -(-length // len(unit))


def _wide_initial(word: Word, world: World, chunk: bool) -> bytes:
    """Few random bytes, text with lines, or a buffer past a threshold (or the chunk)."""
    rng = _rng(word)
    if word.pick(2):
        return _filler(rng, world, word.pick(40) + 1)
    length = _past_a_threshold(word, world, chunk=chunk)
    if world.max_buffer is not None:
        length = min(length, world.max_buffer)
    return _filler(rng, world, length)[: world.max_buffer]


def _wide_insert(word: Word, world: World, room: int | None) -> bytes:
    """1-8 bytes of the world, a few text pieces, or a run past a threshold;
    never past the insert limit, nor (``room``) past the buffer limit."""
    kind = word.pick(3)
    rng = _rng(word)
    if kind == 0 and not world.text:
        insert = bytes(rng.choices(world.wide, k=word.pick(8) + 1))
    elif kind <= 1:
        insert = b"".join(rng.choices(world.pieces(), k=word.pick(6) + 1))
    else:
        insert = _filler(rng, world, _past_a_threshold(word, world, chunk=False))
    limits = [limit for limit in (world.max_insert, room) if limit is not None]
    return insert[: min(limits)] if limits else insert


_CONTINUATION = re.compile(rb"[\x80-\xbf]")
_LEAD = re.compile(rb"[\xc2-\xf4]")
#: Where a line ends: a CRLF pair if the buffer has one (a removal that starts
#: there takes the pair whole, which is what a log that normalises line endings
#: gets wrong), else \n or \r.
_LINE_END = (re.compile(rb"\r\n"), re.compile(rb"[\r\n]"))
#: The offset kinds that search the buffer for a place, after 0, the end and
#: anywhere: each a list of patterns, the first one found anywhere wins. Inside
#: a multi-byte character and right before one, for every wide edit...
_PLACES = ((_CONTINUATION,), (_LEAD,))
#: ...and also at a line end, for the edit undone at once (:func:`wide_edit_of`).
_PLACES_AND_LINE_ENDS = (*_PLACES, _LINE_END)


def _wide_offset(
    word: Word, buffer: bytes, places: tuple[tuple[re.Pattern[bytes], ...], ...] = _PLACES, chunk: int | None = None
) -> int:
    """0, the end, anywhere, or — where the buffer has any — one of ``places``
    (each as likely): inside a multi-byte character, right before one (and, for
    the edit undone at once, a line end), where a log that treats bytes as text
    goes wrong. In a buffer longer than a declared ``chunk``, also (as likely as
    each of those) a few bytes around a chunk boundary (:func:`near_chunk_boundary`)."""
    length = len(buffer)
    boundary = chunk is not None and length > chunk
    # Past an undeclared size (UNDECLARED_SIZES) also just before its seam, so an
    # edit from there crosses it: a kind only buffers that long have, so the
    # draws of every shorter buffer are as they were.
    seams = [size for size in UNDECLARED_SIZES if size < length]
    kind = word.pick(3 + len(places) + boundary + bool(seams))
    if kind == 0:
        return 0
    if kind == 1:
        return length
    if seams and kind == 3 + len(places) + boundary:
        return seams[word.pick(len(seams))] - 1 - word.pick(64)
    anywhere = word.pick(length + 1)
    if kind == 2:
        return anywhere
    if boundary and kind == 3 + len(places):
        assert chunk is not None
        return near_chunk_boundary(word, length, chunk)
    for place in places[kind - 3]:
        found = place.search(buffer, anywhere) or place.search(buffer)
        if found is not None:
            return found.start()
    return anywhere


def near_chunk_boundary(word: Word, length: int, chunk: int) -> int:
    """An offset within 3 bytes of a multiple of ``chunk`` inside a buffer of
    ``length`` bytes (``length > chunk``). Storage kept in chunks of that size
    (``impl.chunked_text``) has its rare paths there — an edit or a read that
    spans two chunks, a chunk emptied or merged — and a random offset in a buffer
    just past one chunk lands within a few bytes of the boundary about once in
    5,000 draws (issue 42: the mutation run's survivors)."""
    boundary = chunk * (word.pick(length // chunk) + 1)
    return min(length, max(0, boundary + word.pick(7) - 3))


def _wide_edit(
    word: Word, buffer: bytes, world: World, places: tuple[tuple[re.Pattern[bytes], ...], ...] = _PLACES
) -> tuple[int, int, bytes]:
    """(offset, delete_length, insert) of a wide edit of ``buffer`` (its offset
    one of ``places`` now and then: :func:`_wide_offset`)."""
    offset = _wide_offset(word, buffer, places, world.chunk)
    room = len(buffer) - offset
    kind = word.pick(4)
    if kind == 0:
        delete_length = 0
    elif kind == 1:
        delete_length = room
    elif kind == 2:
        delete_length = word.pick(room + 1)
    else:  # past a threshold the buffer has room for: the largest half the time, the offset moved back to fit it
        fitting = [t + 1 for t in SIZE_THRESHOLDS if t < len(buffer)]
        if not fitting:
            delete_length = word.pick(room + 1)
        else:
            delete_length = fitting[-1] if word.pick(2) else fitting[word.pick(len(fitting))]
            offset = min(offset, len(buffer) - delete_length)
    free = None if world.max_buffer is None else max(0, world.max_buffer - len(buffer) + delete_length)
    insert = _wide_insert(word, world, free) if word.pick(4) else b""
    return offset, delete_length, insert


def _character_start(data: bytes, position: int) -> int:
    """``position`` moved back to the start of the character it falls inside, if any."""
    while 0 < position < len(data) and data[position] & 0xC0 == 0x80:
        position -= 1
    return position


def wide_edit_from(buffer: bytes, raw: bytes, world: World) -> tuple[int, int, bytes] | None:
    """A wide edit of ``buffer`` one time in :data:`WIDE_SHARE`, read out of a
    drawn :data:`WORD`; ``None`` the other times (the caller draws its own small
    edit). Never one that changes nothing (the diff machines never draw one);
    a text target's cut to code-point boundaries."""
    word = Word(raw)
    if not is_wide(word):
        return None
    offset, delete_length, insert = _wide_edit(word, buffer, world)
    if world.text:
        offset, delete_length, insert = as_text_edit(buffer, offset, delete_length, insert)
    if not delete_length and not insert:
        insert = world.letters[:1]
    return offset, delete_length, insert


def history_edit_from(
    buffer: bytes, raw: bytes, world: World, letters: bytes, wide: bool = True
) -> tuple[int, int, bytes]:
    """One edit of a diff machine's long history, read out of a word (a long
    history draws no more from Hypothesis than its first edit did): a wide one
    one time in :data:`WIDE_SHARE`, else up to two bytes replaced by up to two
    of ``letters``; never one that changes nothing."""
    drawn = wide_edit_from(buffer, raw, world) if wide else None
    if drawn is not None:
        return drawn
    word = Word(raw[::-1])
    offset = word.pick(len(buffer) + 1)
    delete_length = word.pick(min(2, len(buffer) - offset) + 1)
    insert = word.letters(letters, word.pick(2) + (0 if delete_length else 1))
    return offset, delete_length, insert


def wide_replacement(raw: bytes, world: World) -> bytes | None:
    """A hunk's replacement from the wide draws one time in :data:`WIDE_SHARE`
    (any byte, text with lines, or a run past a threshold), else ``None``."""
    word = Word(raw)
    if not is_wide(word):
        return None
    insert = _wide_insert(word, world, None)
    return as_text(insert) if world.text else insert


def wide_diff_initial(raw: bytes, world: World) -> bytes:
    """A diff machine's wide start: at least three bytes of the world (random
    bytes, text with lines, or a buffer past a threshold)."""
    initial = _wide_initial(Word(raw), world, chunk=False)
    initial = as_text(initial) if world.text else initial
    return initial if len(initial) >= 3 else initial + world.letters[:1] * (3 - len(initial))


def as_text_edit(buffer: bytes, offset: int, delete_length: int, insert: bytes) -> tuple[int, int, bytes]:
    """The edit a text target is asked instead: both ends moved back to code-point
    boundaries, the insert cut to whole UTF-8 characters (SPEC §2: a splice that
    splits a code point is bad input for a text façade, not a test of it)."""
    start = _character_start(buffer, offset)
    end = _character_start(buffer, offset + delete_length)
    return start, max(0, end - start), insert.decode("utf-8", "ignore").encode("utf-8")


def as_text(data: bytes) -> bytes:
    """``data`` cut to whole UTF-8 characters."""
    return data.decode("utf-8", "ignore").encode("utf-8")


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


def _world_initial(word: Word, world: World, chunk: bool, wide: bool) -> bytes:
    """The small-scope start, or — in a wide example, one time in :data:`WIDE_SHARE` — a wide one."""
    if wide and is_wide(word):
        initial = _wide_initial(word, world, chunk)
    else:
        initial = _initial_buffer(word, world.letters)
    return as_text(initial) if world.text else initial


def initial_buffer(raw: bytes, world: World = DEFAULT_WORLD, *, chunk: bool = True, wide: bool = True) -> bytes:
    """The initial buffer a drawn :data:`WORD` names (see :func:`_world_initial`)."""
    return _world_initial(Word(raw), world, chunk, wide)


@dataclass(frozen=True)
class Start:
    """What a rollback machine's example starts from: the initial buffer, the
    durability mode (durable machines), and a capacity and policy (bounded)."""

    initial: bytes
    durability: DurabilityMode | None = None
    capacity: int | None = None
    policy: Policy | None = None
    #: Whether the example mixes wide draws in (:func:`example_is_wide`).
    wide: bool = False


#: A long history's capacity: past the deepest depth threshold, so a bounded
#: buffer too reaches long histories (one start in eight of a bounded run).
_LONG_CAPACITY = 66


def start_from(raw: bytes, world: World, bounded: str, durable: bool, small: bool = False) -> Start:
    """An example's start, read out of one drawn :data:`WORD`: the initial buffer,
    then the durability mode if ``durable`` (each equally likely), then — if
    ``bounded`` is "always", or "sometimes" and a coin says so — a capacity of
    1-4 (one time in eight, 66-73: a long bounded history) and a policy.

    ``small`` keeps every start below the chunk and 64 KiB: the search for
    further findings (``certify``'s second pass, issue 43) runs few, cheap
    examples, and one start of 1.25 MiB costs 0.155 s a replay; the sizes are
    the first pass's to reach."""
    word = Word(raw)
    wide = example_is_wide(raw)
    initial = _world_initial(word, world, not small, wide)
    if small:
        pass
    elif world.chunk is not None and starts_past_the_chunk(raw):
        # Not in R5's machine (as the starts past 64 KiB below): there its stories are
        # records and crashes, and a journal of 1.25 MiB states crowded them out
        # (R5 never rolled back a poisoned journal on seeds 0 and 2).
        chunks = MANY_CHUNKS if word.pick(MANY_CHUNKS_SHARE) == 0 and not durable else 1
        initial = _filler(_rng(Word(raw)), world, chunks * world.chunk + 1 + word.pick(world.chunk // 8))
        initial = initial[: world.max_buffer]
        initial = as_text(initial) if world.text else initial
    elif not durable and starts_past_64_kib(raw) and (world.max_buffer is None or world.max_buffer > UNDECLARED_SIZES[0]):
        # Past the size nobody declares (issue 42): a 64 KiB chunk or page the
        # target has and never said. A tiled unit, so it costs a multiplication.
        # Not in R5's machine: its stories are records and crashes, and there a
        # start past 64 KiB took the examples keep_record_after_failed_sync needs
        # (found 9 of 10 seeds with them, 10 of 10 before).
        initial = _filler(_rng(Word(raw)), world, UNDECLARED_SIZES[0] + 1 + word.pick(UNDECLARED_SIZES[0] // 8))
        initial = as_text(initial) if world.text else initial
    durability = DURABILITY_MODES[word.pick(len(DURABILITY_MODES))] if durable else None
    if bounded == "always" or (bounded == "sometimes" and word.pick(2)):
        capacity = word.pick(_MAX_CAPACITY) + 1 if word.pick(8) else _LONG_CAPACITY + word.pick(8)
        return Start(initial, durability, capacity, POLICIES[word.pick(len(POLICIES))], wide)
    return Start(initial, durability, wide=wide)


#: One example in this many (of a target that declares a chunk size) starts past
#: the chunk, whether or not it is a wide one: the only way a run gets a buffer
#: that long, and Hypothesis reuses start words so much (108 distinct in 515
#: examples of a quick R0 run) that the wide starts' share alone left a seed's
#: whole run below the chunk.
CHUNK_START_SHARE = 16
#: Of those, one in this many starts past :data:`MANY_CHUNKS` chunks instead of one:
#: storage that indexes its chunks in a second level (``impl.chunked_text`` keeps
#: groups of 8-23 chunks) has its group paths — an edit that shifts later groups,
#: spans two of them, or empties a chunk so that a group borrows from its
#: neighbour — only past a few dozen chunks; below that every edit stays in one
#: group, and issue 42's mutation run found all of that code unexercised.
MANY_CHUNKS_SHARE = 2
#: Enough chunks for three groups of the bundled storage (1.25 MiB at its 32 KiB
#: chunk); the model keeps each live state whole, so a step costs a copy of it
#: (≈ 0.1 ms), and only one example in 32 pays it.
MANY_CHUNKS = 40


#: One example in this many starts past 64 KiB, whatever the target declares
#: (unless it declares a smaller buffer limit): the only way a run reaches the
#: undeclared size cheaply, and edits across it (UNDECLARED_SIZES).
PAST_64_KIB_SHARE = 6


def starts_past_64_kib(raw: bytes) -> bool:
    """Whether the example this start word begins starts past 64 KiB (through a
    hash, as :func:`starts_past_the_chunk`; never for a word of zeros)."""
    if not any(raw):
        return False
    choice = _hashed(raw, b"64kib")
    return choice % PAST_64_KIB_SHARE == 0


def seam_edit_of(buffer: bytes, raw: bytes, world: World = DEFAULT_WORLD) -> tuple[int, int, bytes] | None:
    """An edit across the first undeclared size the buffer is past (64 KiB): from
    up to 64 bytes before the seam to up to 64 past it, replaced by 0-4 letters;
    ``None`` for a shorter buffer. What an example that starts past 64 KiB does
    first, so that every such example crosses the seam once (a removal that
    spans two chunks is where a chunked store goes wrong), not only the few
    whose drawn edits happen to."""
    seams = [size for size in UNDECLARED_SIZES if size + 64 < len(buffer)]
    if not seams:
        return None
    word = Word(raw)
    offset = seams[0] - 1 - word.pick(64)
    delete_length = seams[0] - offset + 1 + word.pick(64)
    insert = word.letters(world.letters, word.pick(5))
    return _as_asked(buffer, offset, delete_length, insert, world)


def starts_past_the_chunk(raw: bytes) -> bool:
    """Whether the example this start word begins starts past a declared chunk
    (through a hash, as :func:`example_is_wide`; never for a word of zeros)."""
    if not any(raw):
        return False
    choice = _hashed(raw, b"chunk")
    return choice % CHUNK_START_SHARE == 0


#: One example in this many (of a target that declares ``sets_chunk_bytes``) is
#: built with chunks of :data:`SMALL_CHUNK_SIZES` bytes.
SMALL_CHUNKS_SHARE = 6
#: How many chunks such an example starts with, in chunks (one range drawn of
#: the three; the third of the time the drawn initial buffer is kept): a few dozen
#: (``impl.chunked_text`` groups its chunks by 16 at first, so 40 chunks are three
#: groups: a lookup past the first group, an edit that shifts the later groups'
#: starts, a read or a removal across two groups) or past 64 groups of 16 (where
#: the group size doubles and everything is regrouped). Before, the group paths
#: came only with a 1.25 MiB start (one example in 32) and then needed particular
#: edits, and the doubling needed 32 MiB: issue 42's mutation run left both
#: unexercised.
SMALL_CHUNK_COUNTS = ((40, 90), (1040, 1300))


def chunk_bytes_from(raw: bytes) -> int | None:
    """The chunk size an example asks its buffer to be built with (issue 42):
    ``None`` (the target's own) mostly; one time in :data:`SMALL_CHUNKS_SHARE`
    one of :data:`SMALL_CHUNK_SIZES`. Read through a hash of the start word, as
    :func:`starts_past_the_chunk`; never for a word of zeros."""
    if not any(raw):
        return None
    choice = _hashed(raw, b"smallchunk")
    if choice % SMALL_CHUNKS_SHARE:
        return None
    return SMALL_CHUNK_SIZES[choice // SMALL_CHUNKS_SHARE % len(SMALL_CHUNK_SIZES)]


def initial_in_small_chunks(raw: bytes, world: World, chunk: int, drawn: bytes) -> bytes:
    """The initial buffer of an example built with chunks of ``chunk`` bytes: the
    ``drawn`` one, or one of :data:`SMALL_CHUNK_COUNTS` chunks long (each a third
    of the time), of the world's bytes and within its buffer limit. A drawn
    start past the most chunks asked for (the starts past a declared chunk or
    64 KiB) is not kept: a million one-byte chunks cost the storage ~100 MB and
    run no path a thousand do not."""
    word = Word(hashlib.blake2b(raw, digest_size=16, person=b"chunkcount").digest())
    pick = word.pick(len(SMALL_CHUNK_COUNTS) + 1)
    if pick == len(SMALL_CHUNK_COUNTS):
        if len(drawn) <= chunk * SMALL_CHUNK_COUNTS[-1][1]:
            return drawn
        pick = word.pick(len(SMALL_CHUNK_COUNTS))
    low, high = SMALL_CHUNK_COUNTS[pick]
    length = chunk * (low + word.pick(high - low + 1))
    initial = _filler(_rng(word), world, length)[:length][: world.max_buffer]
    return as_text(initial) if world.text else initial


#: One example in this many (of a target that declares ``starts_at_revision``)
#: starts a few steps below a revision where a narrow counter wraps.
HIGH_REVISION_SHARE = 8


def start_revision_from(raw: bytes) -> int:
    """The revision an example starts at (issue 42): 0 mostly; one time in
    :data:`HIGH_REVISION_SHARE` 1-8 below 2^8, 2^16, 2^31 or 2^32, so a counter
    kept in 8, 16 or 32 bits (signed or not) wraps within the example's first
    few mutations. Read through a hash of the start word, as
    :func:`starts_past_the_chunk`; never for a word of zeros."""
    if not any(raw):
        return 0
    choice = _hashed(raw, b"revision")
    if choice % HIGH_REVISION_SHARE:
        return 0
    choice //= HIGH_REVISION_SHARE
    wrap = REVISION_WRAPS[choice % len(REVISION_WRAPS)]
    return wrap - 1 - choice // len(REVISION_WRAPS) % 8


# -- edits -------------------------------------------------------------------------

#: Insert kinds, drawn as equals: fresh small text, a stutter (twice: the copy
#: an anchor search cannot tell from the original), a copy from elsewhere.
_SMALL, _STUTTER, _COPY = 0, 1, 2
_INSERT_KINDS = (_SMALL, _STUTTER, _STUTTER, _COPY)


class RunBoundaries(Sequence[int]):
    """The offsets ``i`` (1 <= i < len) with ``buffer[i - 1] != buffer[i]``, in
    order: the boundaries between two runs of equal bytes. The same sequence as
    ``tuple(i for i in range(1, n) if buffer[i - 1] != buffer[i])`` (so the same
    words draw the same offsets), but a small edit reads its length and at most
    one item of it, and on the wide draws' 36-63 KiB buffers that loop was a fifth
    of a run's time. The neighbours are XORed as two big integers: a zero byte
    of the result is an equal pair, and counting zero bytes is done in C."""

    __slots__ = ("_differs", "_length")

    def __init__(self, buffer: bytes) -> None:
        pairs = len(buffer) - 1
        if pairs < 1:
            self._differs = b""
        else:
            xored = int.from_bytes(buffer[:-1], "big") ^ int.from_bytes(buffer[1:], "big")
            self._differs = xored.to_bytes(pairs, "big")
        self._length = len(self._differs) - self._differs.count(0)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        # The first pair p with index + 1 unequal pairs in differs[: p + 1].
        differs, low, high = self._differs, 0, len(self._differs) - 1
        while low < high:
            middle = (low + high) // 2
            if middle + 1 - differs.count(0, 0, middle + 1) > index:
                high = middle
            else:
                low = middle + 1
        return low + 1


def _offset_kinds(state: ModelState, chunk: int | None = None) -> tuple[Sequence[int], ...]:
    """What an offset is drawn among, each kind as likely: 0, the end and the
    newest edit's offset (``hot``; in a buffer longer than a declared ``chunk``,
    also the first chunk boundary and the bytes either side of it); anywhere; and —
    twice as likely, when there are any — the boundaries between two runs of text,
    where an anchor search has the most look-alike candidates."""
    buffer = state.current
    length = len(buffer)
    newest = state.edits[-1]
    hot: tuple[int, ...] = (0, length, min(newest.offset, length)) if newest is not None else (0, length)
    if chunk is not None and length > chunk:
        hot += (chunk - 1, chunk, chunk + 1)
    boundaries = RunBoundaries(buffer)
    anywhere = range(length + 1)
    return (hot, anywhere, boundaries, boundaries) if boundaries else (hot, anywhere)


def edit_from(
    state: ModelState, raw: bytes, world: World = DEFAULT_WORLD, wide: bool = True
) -> tuple[int, int, bytes]:
    """(offset, delete_length, insert) of a valid splice of ``state``'s buffer,
    read out of one drawn :data:`WORD`: in a ``wide`` example a wide edit one
    time in :data:`WIDE_SHARE` (:func:`_wide_edit`), else a small-scope one
    (:func:`_small_edit`); a text target's cut to code-point boundaries."""
    word = Word(raw)
    buffer = state.current
    if wide and is_wide(word):
        edit = _wide_edit(word, buffer, world)
    else:
        edit = _small_edit(state, word, world.letters, world.chunk)
    edit = within_limits(buffer, *edit, world)
    return as_text_edit(buffer, *edit) if world.text else edit


def paste_of(buffer: bytes, raw: bytes, world: World = DEFAULT_WORLD) -> tuple[int, int, bytes]:
    """An insert of wide text at a wide offset (nothing removed): 1-4 lines of
    text half the time, else a run (of any bytes, text or letters) past a size threshold;
    within the world's limits, a text target's at a code-point boundary. What an
    edit undone at once works on, so that its removal can take line breaks,
    CRLF pairs and multi-byte characters even in an example whose buffer holds
    only the small-scope letters."""
    word = Word(raw)
    offset = _wide_offset(word, buffer, chunk=world.chunk)
    rng = _rng(word)
    if word.pick(2):
        insert = _text_lines(rng, world, word.pick(4) + 1)
    else:
        insert = _filler(rng, world, _past_a_threshold(word, world, chunk=False))
    return _as_asked(buffer, offset, 0, insert, world)


def wide_edit_of(state: ModelState, raw: bytes, world: World = DEFAULT_WORLD) -> tuple[int, int, bytes]:
    """A wide edit of ``state``'s buffer whatever the example (:func:`_wide_edit`),
    within the world's limits, a text target's cut to code-point boundaries; never
    one that changes nothing. For the rule that undoes an edit at once: the bytes
    its rollback must bring back are the edit's removed text, so what a log gets
    wrong about removed text (cut at a size, line endings normalised, decoded as
    text) shows on the next step, not only when a later rollback happens to reach
    that record."""
    buffer = state.current
    return _as_asked(buffer, *_wide_edit(Word(raw), buffer, world, _PLACES_AND_LINE_ENDS), world)


def _as_asked(buffer: bytes, offset: int, delete_length: int, insert: bytes, world: World) -> tuple[int, int, bytes]:
    """An edit as a target is asked it: within the world's limits, a text
    target's cut to code-point boundaries, never one that changes nothing."""
    offset, delete_length, insert = within_limits(buffer, offset, delete_length, insert, world)
    if world.text:
        offset, delete_length, insert = as_text_edit(buffer, offset, delete_length, insert)
    if not delete_length and not insert:
        insert = world.letters[:1]
    return offset, delete_length, insert


def within_limits(buffer: bytes, offset: int, delete_length: int, insert: bytes, world: World) -> tuple[int, int, bytes]:
    """The edit with its insert cut to the world's declared limits (an insert at
    most ``max_insert`` bytes, a result at most ``max_buffer``): a target that
    declared limits is never asked more, and a long history of such edits still
    builds up (each over-limit edit would be set aside, and a 6-byte target never
    got past depth 64)."""
    if world.max_insert is not None:
        insert = insert[: world.max_insert]
    if world.max_buffer is not None:
        insert = insert[: max(0, world.max_buffer - (len(buffer) - delete_length))]
    return offset, delete_length, insert


def _small_edit(state: ModelState, word: Word, alphabet: bytes, chunk: int | None = None) -> tuple[int, int, bytes]:
    """A small-scope edit:

    - the offset: see :func:`_offset_kinds`;
    - the delete length: nothing or everything to the end half the time, else any;
    - the insert: fresh small text (empty half of those times, else 1-4
      letters), a stutter (1-4 bytes right before or after the offset: the
      copy an anchor search cannot tell from the original; twice as likely) or
      a copy of 1-4 bytes from elsewhere in the buffer.
    """
    buffer = state.current
    kinds = _offset_kinds(state, chunk)
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


def draw_edit(
    data: st.DataObject, state: ModelState, world: World = DEFAULT_WORLD, wide: bool = True
) -> tuple[int, int, bytes]:
    """:func:`edit_from` a word drawn from ``data``: one draw, one choice."""
    return edit_from(state, data.draw(WORD, label="edit"), world, wide)


#: How often a splice starts a long history instead: one in LONG_HISTORY_SHARE
#: a run past the first depth threshold, one in DEEP_HISTORY_SHARE past the second.
LONG_HISTORY_SHARE = 24
DEEP_HISTORY_SHARE = 96


def history_length(raw: bytes) -> int:
    """How many edits a splice rule makes from this word: 1 mostly; 17-20 or
    66-72 now and then, so that every run reaches histories deeper than 16 and
    64 records (a log capped at 12 entries passes every short one). Read from
    a hash of the word, not the digits :func:`edit_from` reads."""
    # Mixed through a hash: Hypothesis draws words of zeros (and other simple
    # ones) far more often than one in 2^64, and every one of them must not
    # start a long history.
    if not any(raw):
        return 1
    choice = _hashed(raw, b"history")
    if choice % DEEP_HISTORY_SHARE == 0:
        return 66 + choice // DEEP_HISTORY_SHARE % 7
    if choice % LONG_HISTORY_SHARE == 0:
        return 17 + choice // LONG_HISTORY_SHARE % 4
    return 1


#: In a machine that undoes at once (R2's), one splice rule in this many is an
#: edit undone at once instead of a single splice.
UNDO_AT_ONCE_SHARE = 8


def undone_at_once(raw: bytes) -> bool:
    """Whether a splice rule drawn with this word is, in a machine that undoes at
    once (R2's), wide text pasted, a wide edit of it and that edit rolled back at
    once (one in :data:`UNDO_AT_ONCE_SHARE`; read through a hash, as
    :func:`history_length`, never for a word of zeros).

    A rollback meets the record it takes back in the state the record was made in
    only when nothing came between, and some records misplace themselves only
    there: a column counted in characters after a multi-byte character of the
    same line is undone right only if the line is as it was. R2's machine has one
    splice rule and one rollback rule, drawn alike, and a splice now and then makes
    a long history: most splices are buried under later ones before any rollback
    reaches them, and in a small-scope example the buffer holds no multi-byte
    character at all. Measured (quick, seeds 0-9): character_column's first
    violation came after a median of 564 steps without this, 169 with it (one
    splice rule in 8), where a plain Hypothesis machine with ``st.binary()`` inserts
    needs 157. One in 3 cut it to 109 but took the splices pycrdt's undo bug needs
    (a re-created insertion undone: R2 at ci seeds 0-3 found it 2 times without
    this, 0 times with one in 3; one in 8 keeps seed 0's). It is done inside the
    splice rule, not as a third rule, so that the splice and rollback rules are
    drawn as often as before (a third rule thinned the runs of one-step rollbacks
    an anchor bug needs). And only where the world holds a multi-byte character
    (``RollbackFamily.build_machine``): in pycrdt's ASCII world even one in 8
    let its R2 finding go unfound at ci seed 0 on two runs of three."""
    if not any(raw):
        return False
    choice = _hashed(raw, b"undo")
    return choice % UNDO_AT_ONCE_SHARE == 0


#: One example in this many starts with a long history (past the deepest depth
#: threshold) before its first rule: a machine with many rules draws few splices,
#: and its splices alone reached depth 64 on too few seeds.
DEEP_START_SHARE = 16


def start_history_length(raw: bytes) -> int:
    """How many edits an example makes before its first rule, read from its start
    word (through a hash, as :func:`history_length`): 0 mostly, 66-69 one time in
    :data:`DEEP_START_SHARE`."""
    if not any(raw):
        return 0
    choice = _hashed(raw, b"start")
    return 66 + choice // DEEP_START_SHARE % 4 if choice % DEEP_START_SHARE == 0 else 0


def history_words(raw: bytes, count: int) -> list[bytes]:
    """The words of a long history's further edits, derived from its first."""
    rng = random.Random(raw)
    return [rng.randbytes(8) for _ in range(count)]


def history_word_stream(raw: bytes) -> Iterator[bytes]:
    """:func:`history_words` one at a time, for a story that knows only as it goes how many it needs."""
    rng = random.Random(raw)
    while True:
        yield rng.randbytes(8)


# -- rollbacks ---------------------------------------------------------------------


#: One rollback in this many (at depth 1 or more) is ``rollback(0)``.
ZERO_STEPS_SHARE = 8


def rollback_steps_from(state: ModelState, raw: bytes, *, zero: bool = False) -> int:
    """1, the whole depth, one past it (the horizon), or anything between — each
    as likely as the others; read out of one drawn :data:`WORD`. At depth 0: 1 or 0.

    With ``zero`` (the rollback rule's draw), one time in :data:`ZERO_STEPS_SHARE`
    ``rollback(0)`` on a non-empty log instead: it must change nothing (nor the
    revision). Without it a fast path that takes a record back on ``rollback(0)``
    passed every seed (issue 42's mutation run). Not for a crash: a rollback of
    nothing has no I/O to interrupt."""
    word, depth = Word(raw), state.depth
    if depth == 0:
        return 1 - word.pick(2)
    if zero and word.pick(ZERO_STEPS_SHARE) == 0:
        return 0
    # Under an out-of-log write (R4), as likely as each of the others: the count
    # that stops exactly at its depth — allowed, as the record above it was
    # written over the write — where "one more" is refused. Without it, a check
    # that also refused the rollback ending there passed (issue 42's mutation run).
    below = [barrier for barrier in state.barriers if barrier < depth]
    choices = (1, word.pick(depth) + 1, depth, depth + 1, *([depth - max(below)] if below else []))
    return choices[word.pick(len(choices))]


def draw_rollback_steps(data: st.DataObject, state: ModelState) -> int:
    """:func:`rollback_steps_from` a word drawn from ``data``."""
    return rollback_steps_from(state, data.draw(WORD, label="steps"))


def evicting_journal(state: ModelState) -> bool:
    """A bounded journal with policy evict_oldest."""
    return state.capacity is not None and state.policy == "evict_oldest"


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


# -- bad arguments (SPEC §2) ----------------------------------------------------------

#: Integer arguments of the wrong type (offset, delete_length, steps, keep): each
#: must be refused with TypeError, changing nothing. Bools first: to Python
#: ``True`` is the int 1, to SPEC §2 (``model.contract.check_integer``) it is no
#: offset; a float that is a whole number, one that is not, a numeral, nothing.
WRONG_TYPE_INTEGERS: tuple[object, ...] = (True, False, 1.0, 0.5, "1", None)
#: Inserts of the wrong type, each a TypeError: an int (``bytes(2)`` would be two
#: NUL bytes), text, nothing, a list of byte values.
WRONG_TYPE_INSERTS: tuple[object, ...] = (2, "x", None, [120])
#: The inserts that are not ``bytes`` yet must be taken exactly as bytes are
#: (SPEC §2, ``model.contract.check_splice_arguments``).
BYTES_LIKE: tuple[type[bytearray] | type[memoryview], ...] = (bytearray, memoryview)

#: What :func:`bad_argument_from` reads out of a word: a broken operation, or the
#: kind of bytes-like insert a valid edit is to carry (the rule makes that edit).
BadArgument = Splice | Rollback | Compact | type[bytearray] | type[memoryview]


def bad_argument_from(
    state: ModelState, raw: bytes, *, compacts: bool, strict: bool = True, wrong_types: bool = True
) -> BadArgument:
    """Arguments of the wrong type, sign or range for every operation that takes
    any (a TypeError or a ValueError that changes nothing), or now and then a
    bytes-like insert that must be accepted; read out of one drawn :data:`WORD`,
    each kind of breakage as likely as the others and each value within it.
    Without ``strict`` (a target that does not declare ``checks_arguments``),
    splices out of range only: SPEC §2 defines a splice's range and nothing
    more. A rollback only with a record to undo (as every rollback rule:
    ``RollbackFamily.generable``), a compaction only where the target can
    compact (``compacts``), an argument of another type or a bytes-like insert
    only where it can reach the target (``wrong_types``: not over a typed wire).

    Picked from a word rather than by nested ``sampled_from``s: those the
    mutator repeated within a run, and a whole quick R0 run once sent no bool
    offset at all (the mutant that takes one went unkilled)."""
    word, length, depth = Word(raw), len(state.current), state.depth
    wrong_types = wrong_types and strict
    kinds: list[Sequence[BadArgument]] = [
        [Splice(offset, delete_length, b"x") for offset, delete_length in _out_of_range(length)],
    ]
    if wrong_types:
        kinds += [
            BYTES_LIKE,
            [Splice(offset, 0, b"x") for offset in WRONG_TYPE_INTEGERS],  # type: ignore[arg-type]
            [Splice(0, delete_length, b"x") for delete_length in WRONG_TYPE_INTEGERS],  # type: ignore[arg-type]
            [Splice(0, 0, insert) for insert in WRONG_TYPE_INSERTS],  # type: ignore[arg-type]
        ]
    # A negative count and keep travel as integers; a bool and a float only without a typed wire.
    if depth and strict:
        kinds.append([Rollback(steps) for steps in ((-1, True, 1.0) if wrong_types else (-1,))])  # type: ignore[arg-type]
    if compacts and strict:
        kinds.append([Compact(keep) for keep in ((-1, depth + 1, True) if wrong_types else (-1, depth + 1))])
    values = kinds[word.pick(len(kinds))]
    return values[word.pick(len(values))]


def _out_of_range(length: int) -> tuple[tuple[int, int], ...]:
    """(offset, delete_length) pairs that break the validity rule of a splice."""
    return ((-1, 0), (length + 1, 0), (0, length + 1), (length, 1), (0, -1))


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


# -- a tool's writes the plain diff edits rarely make (S1, S2) -----------------------
# The diff machines' rewrite stories (a tool rewrites one byte in place between a
# snapshot and an apply) and the S1 machine's emptied buffer: diff_edits deletes
# at most two bytes, so a tool never empties a buffer of three or more, and it
# keeps the length only when it happens to delete as many bytes as it inserts.


def draw_tool_substitution(
    data: st.DataObject,
    buffer: bytes,
    alphabet: bytes,
    *,
    text: bool = False,
    places: Sequence[int] | None = None,
) -> tuple[int, int, bytes] | None:
    """One byte of ``buffer`` (at one of ``places``, if given) replaced by one of
    ``alphabet``'s that is neither it nor a neighbour of it, or ``None`` if there
    is no such letter there (nor, for a ``text`` target, where the byte belongs
    to a multi-byte character), or no place.

    The length is kept (a same-length rewrite: a renamed identifier, a digit
    bumped); the byte really changes, so it is no equal-byte rewrite; and the new
    byte differs from both neighbours, so that a target that sees only content
    reads the same one-byte change the model makes (replacing ``1`` by ``2`` in
    ``12`` could be read as the old ``2`` moving left)."""
    if places is None:
        places = range(len(buffer))

    def letters_at(offset: int) -> bytes:
        if text and buffer[offset] >= 0x80:
            return b""
        nearby = buffer[max(0, offset - 1) : offset + 2]
        return bytes(c for c in alphabet if c not in nearby)

    # Only where some letter will do: a tool's two letters are often both next
    # to a place (seed 2 of read_set_ends_only: four stories, no rewrite).
    places = [offset for offset in places if letters_at(offset)]
    if not places:
        return None
    offset = places[draw_index(data, len(places), "substituted byte")]
    letters = letters_at(offset)
    return offset, 1, bytes([letters[draw_index(data, len(letters), "substitute")]])


def emptying_write(buffer: bytes) -> tuple[int, int, bytes]:
    """Delete everything: a tool that truncates the file (``buffer`` is not empty)."""
    return 0, len(buffer), b""
