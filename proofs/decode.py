"""Turn a z3 model into a counterexample a person can check by hand — and check it.

A refutation's z3 model is a handful of integers and function tables. This
module reads out only the *inputs* (the starting buffer, the splices, the
diff's hunk and read region) and then replays the buggy rule and the correct
rule concretely with :func:`rollcert.model.reference.splice_bytes`, in plain Python.
The printed step list comes from that replay, not from z3, and the
counterexample only counts if the replay really shows the bug (expected and
actual differ) and agrees with what z3 claimed. A decoding bug therefore shows
up as a failed re-check instead of a fake counterexample.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import z3

from rollcert.model.contract import check_splice_arguments
from rollcert.model.operations import Splice
from rollcert.model.reference import splice_bytes
from rollcert.proofs.encoding import SymbolicBuffer
from rollcert.proofs.encoding import evaluate_concretely


class ModelReader:
    """Reads integers and buffers out of a z3 model (every unknown completed)."""

    def __init__(self, model: z3.ModelRef) -> None:
        self.model = model

    def integer(self, term: z3.ExprRef | int) -> int:
        if isinstance(term, int):
            return term
        value = self.model.eval(term, model_completion=True)
        if not z3.is_int_value(value):
            raise ValueError(f"model gives no integer for {term}: {value}")
        return int(value.as_long())

    def buffer(self, buffer: SymbolicBuffer) -> bytes:
        return evaluate_concretely(buffer, self.integer)


@dataclass(frozen=True)
class ConcreteRecord:
    """An inverse record with real bytes (what a correct journal would hold)."""

    offset: int
    removed: bytes
    inserted_length: int

    def describe(self) -> str:
        return f"record(offset={self.offset}, removed={self.removed!r}, inserted_length={self.inserted_length})"


class ReplayError(Exception):
    """A decoded scenario cannot be replayed (an invalid splice): the decode is wrong."""


def apply_splice(buffer: bytes, edit: Splice) -> tuple[bytes, ConcreteRecord]:
    """Apply a splice after checking it is valid; return the new buffer and its inverse record."""
    try:
        offset, delete_length, insert = check_splice_arguments(
            len(buffer), edit.offset, edit.delete_length, edit.insert
        )
    except ValueError as error:
        raise ReplayError(f"{edit.describe()} is invalid on {buffer!r}: {error}") from error
    record = ConcreteRecord(offset, buffer[offset : offset + delete_length], len(insert))
    return splice_bytes(buffer, offset, delete_length, insert), record


def undo_at(buffer: bytes, record: ConcreteRecord, offset: int | None = None) -> bytes:
    """Replay an inverse record, at its own offset or at ``offset``; invalid means the decode is wrong."""
    at = record.offset if offset is None else offset
    after, _ = apply_splice(buffer, Splice(at, record.inserted_length, record.removed))
    return after


@dataclass
class Replay:
    """A scenario replayed concretely: the numbered steps and the two outcomes."""

    steps: list[str] = field(default_factory=list)
    expected: bytes = b""
    actual: bytes = b""
    expected_means: str = ""
    extra_checks: list[tuple[bool, str]] = field(default_factory=list)

    def step(self, text: str) -> None:
        self.steps.append(text)

    def require(self, holds: bool, what: str) -> None:
        """A side condition the scenario must meet for the counterexample to be genuine."""
        self.extra_checks.append((holds, what))


@dataclass(frozen=True)
class Counterexample:
    """A decoded, concretely re-checked counterexample to a buggy rule."""

    steps: tuple[str, ...]
    expected: bytes
    actual: bytes
    expected_means: str
    recheck_error: str | None

    @property
    def rechecked(self) -> bool:
        return self.recheck_error is None

    def render(self, indent: str = "    ") -> str:
        lines = [f"{indent}{number}. {text}" for number, text in enumerate(self.steps, start=1)]
        lines.append(f"{indent}expected {self.expected!r} ({self.expected_means}), got {self.actual!r}")
        lines.append(
            f"{indent}re-checked with rollcert.model.reference.splice_bytes: "
            + ("the buggy rule really differs" if self.rechecked else f"FAILED: {self.recheck_error}")
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": list(self.steps),
            "expected": base64.b64encode(self.expected).decode("ascii"),
            "actual": base64.b64encode(self.actual).decode("ascii"),
            "expected_text": repr(self.expected),
            "actual_text": repr(self.actual),
            "expected_means": self.expected_means,
            "rechecked": self.rechecked,
            "recheck_error": self.recheck_error,
        }


def confirm(
    replay_scenario: Callable[[], Replay], claimed_expected: bytes, claimed_actual: bytes
) -> Counterexample:
    """Replay concretely and compare with z3's claim; any disagreement is a re-check failure."""
    try:
        replay = replay_scenario()
    except ReplayError as error:
        return Counterexample((), claimed_expected, claimed_actual, "", f"replay impossible: {error}")
    problems = [what for holds, what in replay.extra_checks if not holds]
    if replay.expected == replay.actual:
        problems.append("the concrete replay gives the same buffer both ways (no bug shown)")
    if replay.expected != claimed_expected:
        problems.append(f"z3 claimed expected {claimed_expected!r}, replay gives {replay.expected!r}")
    if replay.actual != claimed_actual:
        problems.append(f"z3 claimed actual {claimed_actual!r}, replay gives {replay.actual!r}")
    return Counterexample(
        tuple(replay.steps),
        replay.expected,
        replay.actual,
        replay.expected_means,
        "; ".join(problems) or None,
    )


# --- concrete replays, one per refutation ------------------------------------------------


def _splice_step(replay: Replay, buffer: bytes, edit: Splice, label: str) -> tuple[bytes, ConcreteRecord]:
    after, record = apply_splice(buffer, edit)
    replay.step(f"{label}: {edit.describe()} -> {after!r}   (journal: {record.describe()})")
    return after, record


def replay_fifo(origin: bytes, first: Splice, second: Splice) -> Replay:
    """Two splices, then their records replayed oldest first at their absolute offsets."""
    replay = Replay(expected=origin, expected_means="the buffer before both splices")
    replay.step(f"buffer {origin!r}")
    after_first, first_record = _splice_step(replay, origin, first, "splice 1")
    after_second, second_record = _splice_step(replay, after_first, second, "splice 2")
    undone_first = undo_at(after_second, first_record)
    replay.step(f"FIFO: undo record 1 first, at offset {first_record.offset} -> {undone_first!r}")
    replay.actual = undo_at(undone_first, second_record)
    replay.step(f"then undo record 2 at offset {second_record.offset} -> {replay.actual!r}")
    return replay


def replay_dropped_inverse(origin: bytes, first: Splice, second: Splice) -> Replay:
    """Splice 2 mutated the buffer but its record was lost; rollback(1) undoes splice 1."""
    replay = Replay(expected=origin, expected_means="the state before splice 1, which rollback(1) claims")
    replay.step(f"buffer {origin!r}")
    after_first, first_record = _splice_step(replay, origin, first, "splice 1")
    after_second, _ = apply_splice(after_first, second)
    replay.step(f"splice 2: {second.describe()} -> {after_second!r}   (its inverse record was DROPPED)")
    replay.actual = undo_at(after_second, first_record)
    replay.step(f"rollback(1) undoes record 1 at offset {first_record.offset} -> {replay.actual!r}")
    return replay


def replay_stale_offset(origin: bytes, first: Splice, later: Splice) -> Replay:
    """Record 1 undone at its recorded offset after a later edit before it shifted the text."""
    replay = Replay(expected_means="splice 1 undone, the later edit kept")
    replay.step(f"buffer {origin!r}")
    after_first, first_record = _splice_step(replay, origin, first, "splice 1")
    after_later, _ = apply_splice(after_first, later)
    shift = len(later.insert) - later.delete_length
    replay.step(f"later edit before it: {later.describe()} -> {after_later!r}   (length change {shift:+d})")
    replay.require(later.offset + later.delete_length <= first.offset, "the later edit lies before splice 1")
    replay.require(shift != 0, "the later edit changes the length")
    replay.actual = undo_at(after_later, first_record)
    replay.step(f"undo record 1 at its recorded offset {first_record.offset} (stale) -> {replay.actual!r}")
    replay.expected, _ = apply_splice(origin, later)
    replay.step(f"correct: undo at offset {first_record.offset + shift} (shifted by {shift:+d})")
    return replay


def replay_skipped_entry(origin: bytes, edits: tuple[Splice, Splice, Splice]) -> Replay:
    """checkpoint, three splices, then a rollback_to that undoes records 3 and 1 but skips 2."""
    replay = Replay(expected=origin, expected_means="the checkpoint's state")
    replay.step(f"buffer {origin!r}, checkpoint taken")
    buffer, records = origin, []
    for number, edit in enumerate(edits, start=1):
        buffer, record = _splice_step(replay, buffer, edit, f"splice {number}")
        records.append(record)
    buffer = undo_at(buffer, records[2])
    replay.step(f"rollback_to(checkpoint): undo record 3 at offset {records[2].offset} -> {buffer!r}")
    replay.step("... record 2 SKIPPED")
    replay.actual = undo_at(buffer, records[0])
    replay.step(f"undo record 1 at offset {records[0].offset} -> {replay.actual!r}")
    return replay


def widened_hunk(start: int, delete_length: int, buffer_length: int) -> tuple[int, int]:
    """SPEC S1: a hunk's region widened by one byte each side, clipped at the buffer's ends."""
    return max(start - 1, 0), min(start + delete_length + 1, buffer_length)


def replay_write_set_only(
    snapshot: bytes,
    read_region: tuple[int, int],
    hunk: tuple[int, int],
    write: Splice,
    authored: bytes,
    reauthored: bytes,
) -> Replay:
    """A diff whose *read* region changed, accepted because its write region did not.

    ``authored`` is what the author's program wrote after reading the region in
    the snapshot; ``reauthored`` is what the same program writes after reading
    the region in the live base. The program is the counterexample's (z3 chose
    it); the only thing the re-check relies on is that a program reading
    different bytes may write different bytes.
    """
    read_start, read_length = read_region
    hunk_start, hunk_delete = hunk
    replay = Replay(expected_means="the diff re-authored on the live base (or a StaleBaseError)")
    replay.step(f"author's snapshot B0 = {snapshot!r}")
    content_then = snapshot[read_start : read_start + read_length]
    replay.step(
        f"the diff reads [{read_start}, {read_start + read_length}) = {content_then!r} and, from what it read, "
        f"replaces [{hunk_start}, {hunk_start + hunk_delete}) = {snapshot[hunk_start : hunk_start + hunk_delete]!r} "
        f"by {authored!r}"
    )
    live, _ = apply_splice(snapshot, write)
    low, high = widened_hunk(hunk_start, hunk_delete, len(snapshot))
    replay.step(
        f"someone else writes {write.describe()} -> live base {live!r}; it misses the hunk widened to "
        f"[{low}, {high}), so a write-set-only check ACCEPTS the diff"
    )
    content_now = live[read_start : read_start + read_length]
    replay.step(
        f"but the read region now holds {content_now!r}; the same author, reading it, writes {reauthored!r}"
    )
    replay.require(len(write.insert) == write.delete_length, "the write keeps the length (regions stay put)")
    replay.require(
        write.offset + write.delete_length <= low or write.offset >= high, "the write misses the widened hunk"
    )
    replay.require(content_then != content_now, "the read region really changed")
    replay.actual, _ = apply_splice(live, Splice(hunk_start, hunk_delete, authored))
    replay.step(f"applied anyway: splice({hunk_start}, {hunk_delete}, {authored!r}) -> {replay.actual!r}")
    replay.expected, _ = apply_splice(live, Splice(hunk_start, hunk_delete, reauthored))
    return replay


def replay_positional(snapshot: bytes, hunk: Splice, write: Splice) -> Replay:
    """A positional diff applied at its snapshot offset after an earlier write shifted the text."""
    replay = Replay(expected_means="the diff applied first and the intervening write after (they commute)")
    replay.step(f"author's snapshot B0 = {snapshot!r}")
    replay.step(f"positional diff authored on B0: {hunk.describe()}")
    live, _ = apply_splice(snapshot, write)
    shift = len(write.insert) - write.delete_length
    low, _ = widened_hunk(hunk.offset, hunk.delete_length, len(snapshot))
    replay.step(f"intervening write before the hunk: {write.describe()} -> live base {live!r} (shift {shift:+d})")
    replay.require(write.offset + write.delete_length <= low, "the write lies before the widened hunk")
    replay.actual, _ = apply_splice(live, hunk)
    replay.step(f"diff applied at its original offset {hunk.offset} on the live base -> {replay.actual!r}")
    diff_first, _ = apply_splice(snapshot, hunk)
    replay.expected, _ = apply_splice(diff_first, write)
    replay.step(f"correct: diff first -> {diff_first!r}, then the write -> {replay.expected!r}")
    return replay
