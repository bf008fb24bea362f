"""The world a run explores, and the coverage dimensions that show it reached it (SPEC §6a).

A property's *situations* (``rollcert.model.properties``) say a run met the
cases its rule is about. They say nothing of the bytes and sizes it met them
with: a run over ``abc`` and buffers of ten bytes reaches every situation of R2
and still never shows that a journal keeping its removed text as ``str`` turns
``b"\\xff"`` into U+FFFD, or that a record cut at 128 bytes loses its tail.
Those bugs live past thresholds of the *data*, not of the history, so the data
has dimensions of its own, counted beside the situations:

- line breaks and CRLF pairs; NUL, bytes 0x80-0xFF, invalid UTF-8; valid
  multi-byte UTF-8 characters, and edits that split one (byte targets) or stop
  next to one (text targets);
- removed, inserted and buffer lengths past 8, 16, 64, 128, 256 and 4096 bytes,
  and buffers past the target's own chunk size where it declares one;
- histories deeper than 16 and 64 records.

Beside the dimensions, a run states facts of its reach that no category
vouches for (issue 42: "worlds claimed, not drawn"): for text, the code points
the draws can produce, their Unicode general categories, and how many inserts
held a combining mark or changed under NFC, NFD or NFKC (a target that
normalises what it is sent fails only on those); the largest revision reached
and the largest step between two observed revisions (a counter kept in 8 or 16
bits passes every run that stays below 256); and how far buffers went against
the sizes nobody declares but code often has (a 64 KiB chunk, a 1 MiB page).
These are stated, never assumed: "nothing past 64 KiB drawn" when so.

Every one is counted on what was actually sent to the target (the bytes an edit
inserted, the bytes it removed from the buffer the target had shown) and
observed from it (its buffer's length, its depth where it reports one). Each is
required of every run of the rollback and diff families, like a situation: a run
that never reached one is ``unknown``, naming it — unless the target declared it
out of its world (``Target.alphabet``, ``Target.text``, ``Target.limits``); the
certificate then says ``passed within`` that world and lists what was not
exercised.

:class:`World` is also what the generators draw from
(:mod:`rollcert.stateful_tests.strategies`): one record says both what may be
drawn and what must be reached, so the two cannot drift apart.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from rollcert.targets.adapter import Target

#: Record-layout thresholds a length is tested past (SPEC §6a).
SIZE_THRESHOLDS = (8, 16, 64, 128, 256, 4096)
#: History depths a run must go past.
DEPTH_THRESHOLDS = (16, 64)
#: Every byte value: the default world's bytes.
ALL_BYTES = bytes(range(256))
#: The letters of the aliased small-scope draws (repeats make anchors ambiguous).
SMALL_LETTERS = b"abc"

#: A declared alphabet of at most this many bytes is also the small draws' letters.
SMALL_ALPHABET = 8
#: Multi-byte UTF-8 characters the wide draws use (two, three and four bytes).
MULTIBYTE_CHARACTERS = tuple(c.encode() for c in ("é", "ß", "€", "中", "😀"))
#: Text whose normal forms differ from it (issue 42): a decomposed e + combining
#: acute (NFC composes it), Hangul jamo (NFC composes a syllable), the Angstrom
#: sign (NFC maps it to U+00C5 alone) and the fi ligature (only NFKC changes it).
#: With the precomposed é of MULTIBYTE_CHARACTERS (NFD splits it), every normal
#: form has something to change. Drawn for text targets (``World.pieces``).
NORMALISATION_PIECES = tuple(c.encode() for c in ("e\u0301", "\u1100\u1161", "\u212b", "\ufb01"))
#: Buffer sizes that no target declares but code often has (a 64 KiB chunk, a 1 MiB
#: page): a run says how far past them it went.
UNDECLARED_SIZES = (1 << 16, 1 << 20)
#: Revision counters kept in so many bits wrap past these: a run says which it passed.
REVISION_WRAPS = (1 << 8, 1 << 16, 1 << 31, 1 << 32)
#: The pieces text with line structure is made of.
LINE_PIECES = (b"\n", b"\r\n", b"\r", b"\t", b" ", b"\x00")
#: The chunk sizes a run asks a target that can be asked for one (``Target.sets_chunk_bytes``)
#: to keep its storage in, now and then: a chunk of one byte makes every edit split, empty
#: or merge chunks; two to four let an edit fit inside one and still cross into the next.
SMALL_CHUNK_SIZES = (1, 2, 3, 4)


@dataclass(frozen=True)
class Dimension:
    """One coverage dimension: a name (the certificate's key) and what it means."""

    name: str
    description: str


def _size_dimensions(what: str, phrase: str) -> tuple[Dimension, ...]:
    return tuple(Dimension(f"{what}_past_{n}", f"{phrase} longer than {n} bytes") for n in SIZE_THRESHOLDS)


LINE_BREAK = Dimension("line_break", "an edit that inserted or removed a line break (\\n)")
CRLF = Dimension("crlf", "an edit that inserted or removed a CRLF pair")
NUL = Dimension("nul", "an edit that inserted or removed a NUL byte")
HIGH_BYTE = Dimension("high_byte", "an edit that inserted or removed a byte 0x80-0xFF")
INVALID_UTF8 = Dimension("invalid_utf8", "an edit that inserted or removed bytes that are not valid UTF-8")
MULTIBYTE = Dimension("multibyte_utf8", "an edit that inserted or removed a valid multi-byte UTF-8 character")
SPLITS_CHARACTER = Dimension("splits_character", "an edit that starts or ends inside a multi-byte UTF-8 character")
CHARACTER_BOUNDARY = Dimension(
    "character_boundary", "an edit that starts or ends right next to a multi-byte UTF-8 character"
)
REMOVED = _size_dimensions("removed", "an edit that removed a run of bytes")
INSERTED = _size_dimensions("inserted", "an edit that inserted a run of bytes")
BUFFER = _size_dimensions("buffer", "a buffer observed")
BUFFER_PAST_CHUNK = Dimension("buffer_past_chunk", "a buffer observed longer than the target's declared chunk size")
DEPTH = tuple(Dimension(f"depth_past_{n}", f"a history deeper than {n} live records") for n in DEPTH_THRESHOLDS)

#: Every dimension, in certificate order.
DIMENSIONS: tuple[Dimension, ...] = (
    LINE_BREAK, CRLF, NUL, HIGH_BYTE, INVALID_UTF8, MULTIBYTE, SPLITS_CHARACTER, CHARACTER_BOUNDARY,
    *REMOVED, *INSERTED, *BUFFER, BUFFER_PAST_CHUNK, *DEPTH,
)
DIMENSION_NAMES = frozenset(d.name for d in DIMENSIONS)


@dataclass(frozen=True)
class World:
    """What a target's runs draw from, as the target declared it.

    ``letters`` are the aliased small-scope draws' bytes (repeated text for the
    anchor bugs); ``wide`` the bytes the wide draws take any of. ``text``: the
    target is a text façade (SPEC §2), so every edit is valid UTF-8 at code-point
    boundaries. ``max_insert``/``max_buffer`` are its size limits; ``chunk`` its
    own chunk or page size, if it declares one."""

    letters: bytes = SMALL_LETTERS
    wide: bytes = ALL_BYTES
    text: bool = False
    max_insert: int | None = None
    max_buffer: int | None = None
    chunk: int | None = None
    #: (dimension, why) for each dimension a finding set aside puts out of reach
    #: (:attr:`rollcert.targets.adapter.KnownFinding.unreachable`).
    set_aside: tuple[tuple[str, str], ...] = ()

    @property
    def narrowed(self) -> bool:
        """Whether the target declared a world narrower than the default one."""
        return (
            set(self.wide) != set(ALL_BYTES)
            or self.text
            or self.max_insert is not None
            or self.max_buffer is not None
            or bool(self.set_aside)
        )

    def characters(self) -> tuple[bytes, ...]:
        """The multi-byte characters whose every byte the world allows."""
        return tuple(c for c in MULTIBYTE_CHARACTERS if all(b in self.wide for b in c))

    def pieces(self) -> tuple[bytes, ...]:
        """What text with line structure is made of here: letters, line pieces, characters."""
        allowed = [bytes([b]) for b in self.letters if b in self.wide]
        allowed += [p for p in LINE_PIECES if all(b in self.wide for b in p)]
        # Text whose normal forms differ, for a text target (issue 42: what a text
        # façade may normalise); a byte target's draws stay as they were measured.
        normalising = [p for p in NORMALISATION_PIECES if self.text and all(b in self.wide for b in p)]
        return tuple(allowed + list(self.characters()) + normalising) or (self.wide[:1],)

    def repertoire(self) -> str:
        """Every code point a text target's draws can hold, sorted: the letters,
        line pieces and characters the pieces are made of (text draws take no
        raw bytes; a small edit copies the buffer's own text)."""
        characters = set(self.letters.decode("utf-8", "ignore"))
        for piece in self.pieces():
            characters.update(piece.decode("utf-8", "ignore"))
        return "".join(sorted(characters))

    def bytes_phrase(self) -> str:
        """The bytes drawn from, for people: "any byte 0x00-0xFF", the declared
        alphabet, or for text exactly the code points the draws can hold and
        their general categories — never "any code point" (issue 42)."""
        if self.text and set(self.wide) == set(ALL_BYTES):
            repertoire = self.repertoire()
            categories = ", ".join(sorted({unicodedata.category(c) for c in repertoire}))
            return f"valid UTF-8 text of {len(repertoire)} code points (categories {categories}), not any code point"
        if set(self.wide) == set(ALL_BYTES):
            return "any byte 0x00-0xFF"
        return f"the declared alphabet {bytes(sorted(set(self.wide)))!r}" + (" as UTF-8 text" if self.text else "")

    def out_of_world(self, *, chunk_matters: bool = True) -> dict[str, str]:
        """The dimensions this world cannot reach, each with why (the certificate's
        "not exercised" list). ``chunk_matters``: whether the family's runs reach
        buffers past a declared chunk (the rollback family's do)."""
        why: dict[str, str] = {}
        wide = set(self.wide)
        alphabet = "outside the declared alphabet"
        if 0x0A not in wide:
            why[LINE_BREAK.name] = f"\\n is {alphabet}"
        if not {0x0D, 0x0A} <= wide:
            why[CRLF.name] = f"\\r\\n is {alphabet}"
        if 0x00 not in wide:
            why[NUL.name] = f"0x00 is {alphabet}"
        if not any(b >= 0x80 for b in wide):
            why[HIGH_BYTE.name] = f"every byte 0x80-0xFF is {alphabet}"
        if self.text:
            why[INVALID_UTF8.name] = "a text target takes valid UTF-8 only"
            why[SPLITS_CHARACTER.name] = "a text target is edited at code-point boundaries only"
        elif not any(b >= 0x80 for b in wide):
            why[INVALID_UTF8.name] = f"every byte 0x80-0xFF is {alphabet}"
        if not self.characters():
            why[MULTIBYTE.name] = f"every multi-byte character is {alphabet}"
            why.setdefault(SPLITS_CHARACTER.name, f"every multi-byte character is {alphabet}")
            why.setdefault(CHARACTER_BOUNDARY.name, f"every multi-byte character is {alphabet}")
        for threshold, removed, inserted, buffer in zip(SIZE_THRESHOLDS, REMOVED, INSERTED, BUFFER, strict=True):
            if self.max_buffer is not None and self.max_buffer <= threshold:
                for dimension in (removed, inserted, buffer):
                    why[dimension.name] = f"the declared buffer limit is {self.max_buffer} bytes"
            if self.max_insert is not None and self.max_insert <= threshold:
                why.setdefault(inserted.name, f"the declared insert limit is {self.max_insert} bytes")
        if self.chunk is None:
            pass  # nothing to pass: not a narrowing, and not listed
        elif not chunk_matters:
            why[BUFFER_PAST_CHUNK.name] = "this family's model tags every byte: its buffers stay below a chunk"
        elif self.max_buffer is not None and self.max_buffer <= self.chunk:
            why[BUFFER_PAST_CHUNK.name] = f"the declared buffer limit is {self.max_buffer} bytes"
        for dimension, reason in self.set_aside:
            why.setdefault(dimension, reason)
        return why

    def required(self, *, chunk_matters: bool = True) -> tuple[Dimension, ...]:
        """The dimensions a run in this world must reach."""
        out = set(self.out_of_world(chunk_matters=chunk_matters))
        # Counterparts, not narrowings: a byte target is asked to split characters
        # (a text target to stop next to them), and only a declared chunk has a past.
        out.add(SPLITS_CHARACTER.name if self.text else CHARACTER_BOUNDARY.name)
        if self.chunk is None:
            out.add(BUFFER_PAST_CHUNK.name)
        return tuple(d for d in DIMENSIONS if d.name not in out)


def world_of(target: Target) -> World:
    """The world ``target`` declared: its alphabet (else every byte), whether it is
    text, its size limits and its chunk size."""
    limits = target.limits
    wide = target.alphabet if target.alphabet is not None else ALL_BYTES
    letters = bytes(b for b in SMALL_LETTERS if b in wide) or wide[:3]
    if target.alphabet is not None and len(set(target.alphabet)) <= SMALL_ALPHABET:
        # A small declared alphabet is the aliased draws' letters, as it always was;
        # a large one (ASCII, say) only bounds the wide draws.
        letters = target.alphabet
    return World(
        letters=letters,
        wide=wide,
        text=target.text,
        max_insert=None if limits is None else limits.max_insert_bytes,
        max_buffer=None if limits is None else limits.max_buffer_bytes,
        chunk=target.chunk_bytes,
        set_aside=tuple(
            (dimension, f"the finding {finding.name} is set aside")
            for finding in target.set_aside
            for dimension in finding.unreachable
        ),
    )


# -- counting ---------------------------------------------------------------------------------


def inside_character(data: bytes, position: int) -> bool:
    """Whether ``position`` falls strictly inside a valid multi-byte UTF-8 character of ``data``."""
    if position <= 0 or position >= len(data) or data[position] & 0xC0 != 0x80:
        return False
    for start in range(position - 1, max(-1, position - 4), -1):
        lead = data[start]
        if lead & 0xC0 == 0x80:
            continue
        size = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
        if not size or start + size <= position:
            return False
        try:
            data[start : start + size].decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    return False


def _next_to_character(data: bytes, position: int) -> bool:
    after = position < len(data) and data[position] >= 0xC2
    before = position > 0 and data[position - 1] >= 0x80
    return (after or before) and not inside_character(data, position)


def _past(lengths: tuple[int, ...], value: int) -> int:
    """How many of the (sorted) thresholds ``value`` is past."""
    return bisect.bisect_left(lengths, value)


@dataclass
class WorldTally:
    """What one property's run reached of the world: per dimension how often, and
    the largest buffer, insert, delete and depth, and every byte value sent."""

    reached: Counter[str] = field(default_factory=Counter)
    largest_buffer: int = 0
    largest_insert: int = 0
    largest_delete: int = 0
    deepest: int = 0
    #: Bit ``b`` set: byte value ``b`` was sent to the target in some insert.
    bytes_sent: int = 0
    chunk: int | None = None
    #: Per Unicode general category, how many inserts of valid UTF-8 held a code point of it.
    categories: Counter[str] = field(default_factory=Counter)
    #: Inserts of valid UTF-8 that held a combining mark, and that NFC, NFD and NFKC change.
    normal_forms: Counter[str] = field(default_factory=Counter)
    #: The largest revision the target reported (``None``: it reports none), and
    #: the largest step between two revisions observed one after the other.
    largest_revision: int | None = None
    largest_revision_gap: int = 0
    #: Per undeclared size (UNDECLARED_SIZES), how many buffers observed were
    #: longer, and how many edits removed or inserted bytes across that offset.
    past_size: Counter[int] = field(default_factory=Counter)
    across_size: Counter[int] = field(default_factory=Counter)
    #: Examples whose buffer was built with a chunk size the run asked for
    #: (``BufferConfig.chunk_bytes``), and the most chunks of that size a buffer
    #: of one of them held: how far a chunked storage's many-chunk paths were run.
    small_chunk_examples: int = 0
    most_chunks: int = 0
    _last_revision: int | None = None
    _asked_chunk: int | None = None

    def edit(self, before: bytes, offset: int, delete_length: int, insert: bytes) -> None:
        """Count one edit sent to the target: ``insert`` at ``offset`` of ``before``
        (the buffer it had shown), replacing ``delete_length`` bytes."""
        if not 0 <= offset <= len(before) or not 0 <= delete_length <= len(before) - offset:
            return  # a bad-argument edit: nothing was inserted or removed
        removed = before[offset : offset + delete_length]
        reached = self.reached
        for data in (insert, removed):
            if not data:
                continue
            if b"\n" in data:
                reached[LINE_BREAK.name] += 1
                if b"\r\n" in data:
                    reached[CRLF.name] += 1
            if b"\x00" in data:
                reached[NUL.name] += 1
            if not data.isascii():
                reached[HIGH_BYTE.name] += 1
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    reached[INVALID_UTF8.name] += 1
                else:
                    reached[MULTIBYTE.name] += 1
        if not before.isascii():
            end = offset + delete_length
            if inside_character(before, offset) or inside_character(before, end):
                reached[SPLITS_CHARACTER.name] += 1
            elif _next_to_character(before, offset) or _next_to_character(before, end):
                reached[CHARACTER_BOUNDARY.name] += 1
        for dimension in REMOVED[: _past(SIZE_THRESHOLDS, delete_length)]:
            reached[dimension.name] += 1
        for dimension in INSERTED[: _past(SIZE_THRESHOLDS, len(insert))]:
            reached[dimension.name] += 1
        self.largest_insert = max(self.largest_insert, len(insert))
        self.largest_delete = max(self.largest_delete, delete_length)
        for byte in set(insert):
            self.bytes_sent |= 1 << byte
        self._text_facts(insert)
        for size in UNDECLARED_SIZES:
            if offset < size < offset + delete_length or (
                offset <= size < offset + len(insert) and len(before) - delete_length + len(insert) > size
            ):
                self.across_size[size] += 1

    def _text_facts(self, insert: bytes) -> None:
        """The categories and normal forms of an insert that is valid UTF-8 (what a
        text target, or a byte target holding text, was sent)."""
        try:
            text = insert.decode("utf-8")
        except UnicodeDecodeError:
            return
        characters = set(text)
        for category in {unicodedata.category(c) for c in characters}:
            self.categories[category] += 1
        if text.isascii():
            return  # ASCII is in every normal form, and holds no combining mark
        forms = self.normal_forms
        if any(unicodedata.combining(c) or unicodedata.category(c).startswith("M") for c in characters):
            forms["combining_mark"] += 1
        for form in ("NFC", "NFD", "NFKC"):
            if not unicodedata.is_normalized(form, text):
                forms[f"{form.lower()}_differs"] += 1

    def observed(self, buffer_length: int, depth: int, revision: int | None = None) -> None:
        """Count what was observed after a step: the buffer's length, the depth and,
        where the target reports it, its revision (as it reported it)."""
        if revision is not None:
            if self._last_revision is not None:
                self.largest_revision_gap = max(self.largest_revision_gap, abs(revision - self._last_revision))
            self._last_revision = revision
            self.largest_revision = revision if self.largest_revision is None else max(self.largest_revision, revision)
        for size in UNDECLARED_SIZES:
            if buffer_length > size:
                self.past_size[size] += 1
        reached = self.reached
        for dimension in BUFFER[: _past(SIZE_THRESHOLDS, buffer_length)]:
            reached[dimension.name] += 1
        if self.chunk is not None and buffer_length > self.chunk:
            reached[BUFFER_PAST_CHUNK.name] += 1
        for dimension in DEPTH[: _past(DEPTH_THRESHOLDS, depth)]:
            reached[dimension.name] += 1
        self.largest_buffer = max(self.largest_buffer, buffer_length)
        self.deepest = max(self.deepest, depth)
        if self._asked_chunk is not None:
            self.most_chunks = max(self.most_chunks, -(-buffer_length // self._asked_chunk))

    def initial(self, buffer: bytes, chunk_bytes: int | None = None) -> None:
        """Count the initial buffer the target was built with (its bytes were sent
        too; ``chunk_bytes``: the chunk size it was asked to keep them in); a new
        example, so the next revision observed starts a new sequence."""
        self._last_revision = None
        self._asked_chunk = chunk_bytes
        if chunk_bytes is not None:
            self.small_chunk_examples += 1
        for byte in set(buffer):
            self.bytes_sent |= 1 << byte

    def distinct_bytes(self) -> int:
        return bin(self.bytes_sent).count("1")


def world_report(world: World, tally: WorldTally, required: Iterable[Dimension], chunk_matters: bool) -> dict[str, Any]:
    """The world a run reached, as the certificate states it (plain JSON values)."""
    required = tuple(required)
    out = world.out_of_world(chunk_matters=chunk_matters)
    # A dimension a set-aside finding may put out of reach is not required, but a
    # run that got there anyway (a bounded R6 run past depth 64 behind textual's
    # 50-batch cap) states it as reached, not as "not exercised". A declared
    # narrowing is never second-guessed: what the target refuses stays out.
    declared_out = replace(world, set_aside=()).out_of_world(chunk_matters=chunk_matters)
    reached_anyway = {name for name, _ in world.set_aside if name not in declared_out and tally.reached[name]}
    declared: dict[str, Any] = {"text": world.text}
    if set(world.wide) != set(ALL_BYTES):
        declared["alphabet"] = bytes(sorted(set(world.wide))).decode("latin-1")
    if world.max_insert is not None:
        declared["max_insert_bytes"] = world.max_insert
    if world.max_buffer is not None:
        declared["max_buffer_bytes"] = world.max_buffer
    if world.chunk is not None:
        declared["chunk_bytes"] = world.chunk
    return {
        "bytes_drawn_from": world.bytes_phrase(),
        "declared": declared,
        "narrowed": world.narrowed,
        "distinct_bytes_sent": tally.distinct_bytes(),
        "bytes_sent": byte_set_text(tally.bytes_sent),
        "largest_buffer": tally.largest_buffer,
        "largest_insert": tally.largest_insert,
        "largest_delete": tally.largest_delete,
        "deepest": tally.deepest,
        "dimensions": {d.name: tally.reached[d.name] for d in DIMENSIONS if d in required or d.name in reached_anyway},
        "not_exercised": {
            name: out[name] for name in (d.name for d in DIMENSIONS) if name in out and name not in reached_anyway
        },
        "reach": reach_report(tally),
    }


#: The normal-form facts a reach record counts, in its order.
NORMAL_FORM_FACTS = ("combining_mark", "nfc_differs", "nfd_differs", "nfkc_differs")


def reach_report(tally: WorldTally) -> dict[str, Any]:
    """What a run reached that no category vouches for (issue 42), as plain JSON:
    the revisions (``None`` where the target reports none), the buffers past and
    the edits across each undeclared size, and the categories and normal forms of
    the valid UTF-8 inserts."""
    return {
        "largest_revision": tally.largest_revision,
        "largest_revision_gap": tally.largest_revision_gap,
        "buffers_past": {str(size): tally.past_size[size] for size in UNDECLARED_SIZES},
        "edits_across": {str(size): tally.across_size[size] for size in UNDECLARED_SIZES},
        "categories": dict(sorted(tally.categories.items())),
        "normal_forms": {name: tally.normal_forms[name] for name in NORMAL_FORM_FACTS},
        "small_chunks": {"examples": tally.small_chunk_examples, "most_chunks": tally.most_chunks},
    }


def merge_reach(reaches: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One reach record from several (:func:`merge_worlds`): the largest revision and
    gap, every count summed; the same keys in the same order as :func:`reach_report`."""
    tally = WorldTally()
    for reach in reaches:
        revision = reach.get("largest_revision")
        if type(revision) is int:
            tally.largest_revision = revision if tally.largest_revision is None else max(tally.largest_revision, revision)
        tally.largest_revision_gap = max(tally.largest_revision_gap, int(reach.get("largest_revision_gap") or 0))
        for size in UNDECLARED_SIZES:
            tally.past_size[size] += int(dict(reach.get("buffers_past") or {}).get(str(size), 0))
            tally.across_size[size] += int(dict(reach.get("edits_across") or {}).get(str(size), 0))
        tally.categories.update({str(k): int(v) for k, v in dict(reach.get("categories") or {}).items()})
        tally.normal_forms.update({str(k): int(v) for k, v in dict(reach.get("normal_forms") or {}).items()})
        small = dict(reach.get("small_chunks") or {})
        tally.small_chunk_examples += int(small.get("examples") or 0)
        tally.most_chunks = max(tally.most_chunks, int(small.get("most_chunks") or 0))
    return reach_report(tally)


#: The largest sizes a world record states.
WORLD_EXTREMES = ("distinct_bytes_sent", "largest_buffer", "largest_insert", "largest_delete", "deepest")
_DESCRIPTIONS = {d.name: d.description for d in DIMENSIONS}


def byte_set_text(byte_set: int) -> str:
    """A set of byte values (bit ``b`` for byte ``b``) as the 64 hex digits a world record keeps."""
    return f"{byte_set:064x}"


def byte_set_of(text: object) -> int | None:
    """The set :func:`byte_set_text` wrote, or ``None`` for anything else (an older record)."""
    if isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text):
        return int(text, 16)
    return None


def merge_worlds(worlds: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One world record from several runs' (the rounds of a sharded property, or
    every property of a certificate): each extreme the largest, each dimension's
    count the sum, what was not exercised by any of them; the distinct bytes sent
    counted over the union of the byte sets (the largest count, if a record has
    none). Empty if none explored data."""
    worlds = [w for w in worlds if w]
    if not worlds:
        return {}
    dimensions: dict[str, int] = {}
    not_exercised: dict[str, str] = {}
    for world in worlds:
        for name, count in dict(world.get("dimensions") or {}).items():
            dimensions[name] = dimensions.get(name, 0) + int(count)
        not_exercised.update(dict(world.get("not_exercised") or {}))
    first = worlds[0]
    extremes: dict[str, Any] = {key: max(int(w.get(key, 0)) for w in worlds) for key in WORLD_EXTREMES}
    byte_sets = [byte_set_of(w.get("bytes_sent")) for w in worlds]
    if all(byte_set is not None for byte_set in byte_sets):
        union = 0
        for byte_set in byte_sets:
            union |= byte_set or 0
        # In world_report's order (a sharded certificate is byte for byte the serial one).
        extremes = {
            "distinct_bytes_sent": bin(union).count("1"),
            "bytes_sent": byte_set_text(union),
            **{key: value for key, value in extremes.items() if key != "distinct_bytes_sent"},
        }
    return {
        "bytes_drawn_from": first.get("bytes_drawn_from", ""),
        "declared": first.get("declared", {}),
        "narrowed": any(w.get("narrowed") for w in worlds),
        **extremes,
        "dimensions": dimensions,
        "not_exercised": {name: why for name, why in not_exercised.items() if name not in dimensions},
        **({"reach": merge_reach(w["reach"] for w in worlds if "reach" in w)} if any("reach" in w for w in worlds) else {}),
    }


def reproducible_world(world: dict[str, Any]) -> dict[str, Any]:
    """A world record counted on thread interleavings (R7's: the sizes and bytes
    of the order the checker found), made the same for two runs of one seed:
    each dimension kept as reached (1) or not (0), and each largest size, which
    follows the order too (two runs of seed 0: buffers of 36,895 and 36,902
    bytes), as the power of two it reached (32,768). The bytes sent are drawn,
    not observed, and stay as they are."""
    if not world:
        return world
    floored = {
        key: 1 << (int(world[key]).bit_length() - 1) if int(world[key]) > 0 else 0
        for key in ("largest_buffer", "largest_insert", "largest_delete", "deepest")
        if key in world
    }
    dimensions = {name: min(int(count), 1) for name, count in dict(world.get("dimensions") or {}).items()}
    made = {**world, **floored, "dimensions": dimensions}
    reach = world.get("reach")
    if isinstance(reach, dict):
        # Counted on the order too: each count kept as reached or not, each largest floored.
        revision = reach.get("largest_revision")
        made["reach"] = {
            **reach,
            "largest_revision": revision if type(revision) is not int or revision <= 0 else 1 << (revision.bit_length() - 1),
            "largest_revision_gap": min(int(reach.get("largest_revision_gap") or 0), 1),
            **{
                key: {name: min(int(count), 1) for name, count in dict(reach.get(key) or {}).items()}
                for key in ("buffers_past", "edits_across", "categories", "normal_forms")
            },
        }
        if isinstance(reach.get("small_chunks"), dict):
            most = int(reach["small_chunks"].get("most_chunks") or 0)
            made["reach"]["small_chunks"] = {
                "examples": min(int(reach["small_chunks"].get("examples") or 0), 1),
                "most_chunks": 1 << (most.bit_length() - 1) if most > 0 else 0,
            }
    return made


def unreached(world: dict[str, Any]) -> list[str]:
    """The dimensions a world record requires and never reached, described."""
    return [
        f"{_DESCRIPTIONS.get(name, name)} ({name})"
        for name, count in dict(world.get("dimensions") or {}).items()
        if not count
    ]


def _size_name(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def reach_phrase(world: dict[str, Any]) -> str:
    """What a world record's reach states, for people: the revisions, how far the
    sizes went against the undeclared ones, and for text what was drawn of
    combining marks and normal forms — saying "nothing past ..." and "no ..."
    where so, so that a pass never reads wider than its draws (issue 42)."""
    reach = world.get("reach")
    if not isinstance(reach, dict):
        return ""
    parts = []
    revision = reach.get("largest_revision")
    if type(revision) is int:
        wraps = [w for w in REVISION_WRAPS if revision >= w]
        past = f"past {wraps[-1] - 1}" if wraps else f"none past {REVISION_WRAPS[0] - 1}"
        parts.append(f"revisions up to {revision} ({past}), largest step {reach.get('largest_revision_gap', 0)}")
    else:
        parts.append("revisions not reported")
    declared = dict(world.get("declared") or {})
    if "chunk_bytes" in declared:
        past_chunk = int(dict(world.get("dimensions") or {}).get(BUFFER_PAST_CHUNK.name, 0))
        parts.append(f"{past_chunk} buffers past the declared chunk of {declared['chunk_bytes']} bytes")
    small = dict(reach.get("small_chunks") or {})
    if "chunk_bytes" in declared or small.get("examples"):
        examples, most = int(small.get("examples") or 0), int(small.get("most_chunks") or 0)
        parts.append(f"{examples} examples in chunks of {SMALL_CHUNK_SIZES[0]}-{SMALL_CHUNK_SIZES[-1]} bytes" + (f" (up to {most} chunks)" if examples else ""))
    if "max_buffer_bytes" in declared:
        parts.append(f"largest buffer {world.get('largest_buffer', 0)} of the declared {declared['max_buffer_bytes']}")
    buffers_past = dict(reach.get("buffers_past") or {})
    across = dict(reach.get("edits_across") or {})
    for size in UNDECLARED_SIZES:
        count = int(buffers_past.get(str(size), 0))
        if not count:
            parts.append(f"nothing past {_size_name(size)} drawn")
            break
        parts.append(f"{count} buffers past {_size_name(size)}, {int(across.get(str(size), 0))} edits across it")
    forms = dict(reach.get("normal_forms") or {})
    if declared.get("text") or any(forms.values()):
        count = [int(forms.get(name, 0)) for name in NORMAL_FORM_FACTS]
        parts.append(
            f"text inserts: {count[0]} with a combining mark, {count[1]} changed by NFC, "
            f"{count[2]} by NFD, {count[3]} by NFKC"
        )
    return "; ".join(parts)


def world_phrase(world: dict[str, Any]) -> str:
    """One line stating a reached world (from :func:`world_report`'s record)."""
    text = (
        f"bytes {world.get('bytes_drawn_from', '?')}; largest buffer {world.get('largest_buffer', 0)}, "
        f"insert {world.get('largest_insert', 0)}, delete {world.get('largest_delete', 0)} bytes; "
        f"depth {world.get('deepest', 0)}"
    )
    reach = reach_phrase(world)
    return f"{text}; {reach}" if reach else text


def within_phrase(world: dict[str, Any]) -> str:
    """"within …" for a narrowed world: what the target declared, and what was not exercised."""
    declared = dict(world.get("declared") or {})
    parts = []
    if "alphabet" in declared:
        parts.append(f"alphabet {str(declared['alphabet']).encode('latin-1')!r}")
    if declared.get("text"):
        parts.append("UTF-8 text")
    if "max_buffer_bytes" in declared:
        parts.append(f"buffers up to {declared['max_buffer_bytes']} bytes")
    if "max_insert_bytes" in declared:
        parts.append(f"inserts up to {declared['max_insert_bytes']} bytes")
    missing = list(dict(world.get("not_exercised") or {}))
    text = "within " + (", ".join(parts) or "the declared world")
    if missing:
        text += "; not exercised: " + ", ".join(missing)
    return text
