"""The argument rules and plain data shared by the model and any implementation.

What a valid splice is (SPEC §2) is decided here once, by
:func:`check_splice_arguments`, for the model, the bundled implementation and
every adapter: a splice that one of them refuses and another accepts would be a
disagreement about the question, not about the answer.

A self-authored diff names places in the snapshot it was authored on: hunks
(``[start, end) -> replacement``) and read regions (``[start, end)``), plus an
anchor mode saying whether those places are bare offsets (``positional``) or
are anchored on the bytes around them (``content``). These are the *words* of
the contract between an author and an applier, so they live here, apart from
the rule that judges them: the model (:mod:`rollcert.model.diffs`) and the
production implementation (:mod:`rollcert.impl.diffs`) each compute the
read-set and the rebasing on their own, so that the certifier compares two
independent versions of S1 and can catch a mistake in either.

:func:`check_diff` is the authoring rule (what shape a diff may have at all),
not the staleness rule: a malformed diff is bad input everywhere, a
``ValueError``/``TypeError`` that changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


def check_integer(name: str, value: object) -> int:
    """Reject bools and non-integers with a ``TypeError`` (``True`` is not an offset)."""
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def check_splice_arguments(
    buffer_length: int, offset: object, delete_length: object, insert: object
) -> tuple[int, int, bytes]:
    """The validity rule of a splice (SPEC §2): ``0 <= o <= len`` and ``0 <= d <= len - o``."""
    offset = check_integer("offset", offset)
    delete_length = check_integer("delete_length", delete_length)
    if not isinstance(insert, (bytes, bytearray, memoryview)):
        raise TypeError(f"insert must be bytes, got {type(insert).__name__}")
    if not 0 <= offset <= buffer_length:
        raise ValueError(f"offset {offset} outside the buffer [0, {buffer_length}]")
    if not 0 <= delete_length <= buffer_length - offset:
        raise ValueError(
            f"delete_length {delete_length} at offset {offset} runs past the end "
            f"of a {buffer_length}-byte buffer"
        )
    return offset, delete_length, bytes(insert)


AnchorMode = Literal["positional", "content"]
ANCHOR_MODES: tuple[AnchorMode, ...] = ("positional", "content")


@dataclass(frozen=True)
class Region:
    """A half-open span ``[start, end)`` of the snapshot the diff was authored on."""

    start: int
    end: int

    def describe(self) -> str:
        return f"[{self.start}, {self.end})"


@dataclass(frozen=True)
class Hunk:
    """Replace ``[start, end)`` of the snapshot with ``replacement`` (B0 coordinates)."""

    start: int
    end: int
    replacement: bytes

    def describe(self) -> str:
        return f"[{self.start}, {self.end}) -> {self.replacement!r}"


def check_diff(base_length: int, mode: object, hunks: tuple[Hunk, ...], reads: tuple[Region, ...]) -> None:
    """The authoring rule of a diff; ``ValueError``/``TypeError`` naming what is wrong.

    Hunks lie inside the base, their starts strictly increase, and each ends at
    or before the next begins (so "all hunks or none" has one meaning). Read
    regions lie inside the base and are non-empty: an empty region at an
    insertion point is both before and after the insertion, and the two ways of
    rebasing it disagree.
    """
    if mode not in ANCHOR_MODES:
        raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
    if not hunks:
        raise ValueError("a diff needs at least one hunk")
    previous: Hunk | None = None
    for hunk in hunks:
        if not isinstance(hunk, Hunk):
            raise TypeError(f"a hunk must be a Hunk, got {type(hunk).__name__}")
        start, end = check_integer("hunk start", hunk.start), check_integer("hunk end", hunk.end)
        if not isinstance(hunk.replacement, bytes):
            raise TypeError(f"a hunk's replacement must be bytes, got {type(hunk.replacement).__name__}")
        if not 0 <= start <= end <= base_length:
            raise ValueError(f"hunk {hunk.describe()} lies outside the {base_length}-byte base")
        if previous is not None and not (previous.start < start and previous.end <= start):
            raise ValueError(
                f"hunks must be sorted and non-overlapping: {previous.describe()} then {hunk.describe()}"
            )
        previous = hunk
    for region in reads:
        if not isinstance(region, Region):
            raise TypeError(f"a read region must be a Region, got {type(region).__name__}")
        start, end = check_integer("region start", region.start), check_integer("region end", region.end)
        if not 0 <= start < end <= base_length:
            raise ValueError(
                f"read region {region.describe()} must be non-empty and inside the {base_length}-byte base"
            )
