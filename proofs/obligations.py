"""The registry of proof obligations: what must be proved, and what must be refuted.

Each obligation is a small named builder that returns the z3 assertions of one
query. A *theorem* asserts its hypotheses and the negation of its claim: it is
proved when z3 says ``unsat`` (no counterexample exists, for any size). A
*refutation* states a buggy rule as if it were right: it must come back
``sat``, and its model is decoded into a concrete counterexample (see
:mod:`rollcert.proofs.decode`). Refutations are the proofs' own teeth: if the encoding
were too weak to tell a bug from the rule, they would come back ``unsat``.

Refutations add side constraints so that the counterexample reads easily: the
original buffer is ``b'abcdef'`` cut to at most six bytes, inserted bytes are
capital letters. That only narrows where z3 looks; the counterexample is then
replayed concretely with ``rollcert.model.reference.splice_bytes``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import z3

from rollcert.model.operations import Splice
from rollcert.proofs import decode
from rollcert.proofs.encoding import IntTerm
from rollcert.proofs.encoding import SymbolicBuffer
from rollcert.proofs.encoding import SymbolicRecord
from rollcert.proofs.encoding import buffers_differ
from rollcert.proofs.encoding import declare_buffer
from rollcert.proofs.encoding import inverse_of
from rollcert.proofs.encoding import splice
from rollcert.proofs.encoding import splice_is_valid
from rollcert.proofs.encoding import undo
from rollcert.proofs.encoding import undo_is_valid
from rollcert.proofs.encoding import view
from rollcert.proofs.encoding import well_formed
from rollcert.proofs.induction import lifo_rollback_restores
from rollcert.proofs.induction import rollback_to_reaches_checkpoint
from rollcert.proofs.induction import vocabulary

Kind = Literal["theorem", "refutation"]

#: Longest buffer and insert in a refutation's counterexample (readability, not soundness).
READABLE_BUFFER_LENGTH = 6
READABLE_INSERT_LENGTH = 3


@dataclass(frozen=True)
class Query:
    """The assertions of one z3 query, and how to decode a model of it (refutations).

    By convention the *last* assertion is the negated claim and the others are
    the hypotheses; the runner checks that the hypotheses alone are satisfiable,
    so that no theorem is "proved" because its hypotheses contradict each other.
    """

    assertions: tuple[z3.BoolRef, ...]
    decode: Callable[[decode.ModelReader], decode.Counterexample] | None = None
    #: Extra z3 solver parameters, e.g. to keep named constants readable in the model.
    solver_options: tuple[tuple[str, bool | int], ...] = ()

    @property
    def hypotheses(self) -> tuple[z3.BoolRef, ...]:
        return self.assertions[:-1]

    @property
    def negated_claim(self) -> z3.BoolRef:
        return self.assertions[-1]


@dataclass(frozen=True)
class Obligation:
    name: str
    kind: Kind
    scope: str
    properties: tuple[str, ...]
    description: str
    build: Callable[[], Query]


REGISTRY: list[Obligation] = []


def _register(
    name: str, kind: Kind, scope: str, properties: tuple[str, ...], description: str
) -> Callable[[Callable[[], Query]], Callable[[], Query]]:
    def register(build: Callable[[], Query]) -> Callable[[], Query]:
        REGISTRY.append(Obligation(name, kind, scope, properties, " ".join(description.split()), build))
        return build

    return register


def obligation_named(name: str) -> Obligation:
    for candidate in REGISTRY:
        if candidate.name == name:
            return candidate
    raise KeyError(name)


# --- vocabulary shared by the builders ---------------------------------------------------


@dataclass(frozen=True)
class SymbolicSplice:
    """``splice(offset, delete_length, insert)`` with every part unknown."""

    label: str
    offset: z3.ArithRef
    delete_length: z3.ArithRef
    insert: SymbolicBuffer

    def valid_on(self, buffer: SymbolicBuffer) -> z3.BoolRef:
        return splice_is_valid(buffer, self.offset, self.delete_length, self.insert)

    def apply(self, buffer: SymbolicBuffer) -> SymbolicBuffer:
        return splice(buffer, self.offset, self.delete_length, self.insert, name=f"after {self.label}")

    def record(self, buffer: SymbolicBuffer) -> SymbolicRecord:
        return inverse_of(buffer, self.offset, self.delete_length, self.insert)

    @property
    def shift(self) -> z3.ArithRef:
        """How much the splice changes the length (positions after it move by this)."""
        return self.insert.length - self.delete_length

    def decoded(self, reader: decode.ModelReader) -> Splice:
        return Splice(reader.integer(self.offset), reader.integer(self.delete_length), reader.buffer(self.insert))


def declare_splice(label: str) -> SymbolicSplice:
    return SymbolicSplice(
        label, z3.Int(f"{label}.offset"), z3.Int(f"{label}.delete_length"), declare_buffer(f"{label}.insert")
    )


def _witness(label: str = "witness") -> z3.ArithRef:
    return z3.FreshInt(label)


def _lettered(buffer: SymbolicBuffer, first_letter: str, max_length: int) -> list[z3.BoolRef]:
    """Readability: at most ``max_length`` bytes, spelling ``first_letter`` onwards (``abc…``)."""
    return [
        buffer.length <= max_length,
        *[buffer.byte_at(z3.IntVal(index)) == ord(first_letter) + index for index in range(max_length)],
    ]


def _pinned(buffer: SymbolicBuffer, low: str, high: str, max_length: int) -> tuple[SymbolicBuffer, list[z3.BoolRef]]:
    """The same buffer through named constants, so that a model can be read back.

    z3 cannot evaluate an uninterpreted function applied to a lambda array in a
    model; the constants it *can* evaluate. Lengths are kept in
    ``1..max_length`` (readability) so the constants cover every byte that
    carries meaning.
    """
    length = z3.Int(f"{buffer.name}.length")
    values = [z3.Int(f"{buffer.name}[{index}]") for index in range(max_length)]

    def byte_at(index: z3.ArithRef) -> z3.ArithRef:
        term: z3.ArithRef = z3.IntVal(0)
        for position in reversed(range(max_length)):
            term = z3.If(index == position, values[position], term)
        return term

    constraints = [
        length == buffer.length,
        length >= 1,
        length <= max_length,
        *[values[index] == buffer.byte_at(z3.IntVal(index)) for index in range(max_length)],
        *[z3.And(ord(low) <= value, value <= ord(high)) for value in values],
    ]
    return SymbolicBuffer(buffer.name, length, byte_at), constraints


def _readable_origin(buffer: SymbolicBuffer) -> list[z3.BoolRef]:
    return _lettered(buffer, "a", READABLE_BUFFER_LENGTH)


def _readable_insert(edit: SymbolicSplice, first_letter: str) -> list[z3.BoolRef]:
    return _lettered(edit.insert, first_letter, READABLE_INSERT_LENGTH)


def _widened_hunk(start: IntTerm, delete_length: IntTerm, buffer_length: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef]:
    """SPEC S1's effective region of a hunk: one byte more each side, clipped at the ends."""
    start_term = z3.IntVal(start) if isinstance(start, int) else start
    low = z3.If(start_term >= 1, start_term - 1, 0)
    end = start_term + delete_length
    high = z3.If(end + 1 <= buffer_length, end + 1, buffer_length)
    return low, high


# --- theorems over bytes (pointwise, unbounded) ------------------------------------------


@_register(
    "splice-then-inverse",
    "theorem",
    "unbounded",
    ("R1", "R2"),
    """For every buffer and every valid splice, replaying the inverse record the
    journal takes before the splice (offset, removed bytes, inserted length) at
    the recorded offset gives back exactly the buffer before the splice. This is
    the one-step lemma the induction proofs use.""",
)
def splice_then_inverse() -> Query:
    buffer, edit, index = declare_buffer("B"), declare_splice("edit"), _witness()
    restored = undo(edit.apply(buffer), edit.record(buffer))
    return Query((edit.valid_on(buffer), buffers_differ(restored, buffer, index)))


@_register(
    "two-step-lifo",
    "theorem",
    "unbounded",
    ("R2", "R3"),
    """Two splices, the second anywhere on the result of the first (overlapping,
    before or after it, changing the length or not): undoing record 2 and then
    record 1, each at its recorded absolute offset, restores the original
    buffer. Absolute offsets are right under strict LIFO replay.""",
)
def two_step_lifo() -> Query:
    origin, first, second, index = declare_buffer("B0"), declare_splice("first"), declare_splice("second"), _witness()
    after_first = first.apply(origin)
    after_second = second.apply(after_first)
    restored = undo(undo(after_second, second.record(after_first)), first.record(origin))
    return Query(
        (
            first.valid_on(origin),
            second.valid_on(after_first),
            buffers_differ(restored, origin, index),
        )
    )


@_register(
    "inverse-rebase-past-earlier-edit",
    "theorem",
    "unbounded",
    ("R2",),
    """An inverse recorded at offset o stays valid after a later edit at o' that
    lies entirely before it (o' + d' <= o) and changes the length by δ: at
    offset o + δ the buffer holds exactly the bytes the recorded splice
    inserted (so an anchor check there passes), and undoing there gives the
    later edit applied to the original buffer — the record's bytes go back
    exactly where they were removed, and the later edit survives.""",
)
def inverse_rebase() -> Query:
    origin, recorded, later = declare_buffer("B0"), declare_splice("recorded"), declare_splice("later")
    after_recorded = recorded.apply(origin)
    after_later = later.apply(after_recorded)
    rebased_offset = recorded.offset + later.shift
    restored = undo(after_later, recorded.record(origin), at_offset=rebased_offset)
    bytes_at_rebased_offset = view(after_later, rebased_offset, recorded.insert.length)
    return Query(
        (
            recorded.valid_on(origin),
            later.valid_on(after_recorded),
            later.offset + later.delete_length <= recorded.offset,
            z3.Or(
                buffers_differ(restored, later.apply(origin), _witness()),
                buffers_differ(bytes_at_rebased_offset, recorded.insert, _witness()),
            ),
        )
    )


@_register(
    "diff-commutes-with-write-outside-read-set",
    "theorem",
    "unbounded",
    ("S1",),
    """A diff hunk [h, h+d) -> R authored on B0 and an intervening write on B0
    that lies outside the hunk's effective read region (widened by one byte each
    side, clipped at the ends, SPEC S1) commute: the diff rebased past the write
    and applied to the live base gives the same bytes as the diff applied first
    and the write (rebased past the diff) after. A larger read-set only narrows
    which writes are allowed, so this covers it too.""",
)
def diff_commutes_with_write() -> Query:
    snapshot, hunk, write = declare_buffer("B0"), declare_splice("hunk"), declare_splice("write")
    low, high = _widened_hunk(hunk.offset, hunk.delete_length, snapshot.length)
    write_before = write.offset + write.delete_length <= low
    write_after = write.offset >= high
    diff_first = hunk.apply(snapshot)
    write_rebased = z3.If(write_before, write.offset, write.offset + hunk.shift)
    diff_then_write = splice(diff_first, write_rebased, write.delete_length, write.insert)
    live_base = write.apply(snapshot)
    hunk_rebased = z3.If(write_before, hunk.offset + write.shift, hunk.offset)
    applied_on_live_base = splice(live_base, hunk_rebased, hunk.delete_length, hunk.insert)
    return Query(
        (
            hunk.valid_on(snapshot),
            write.valid_on(snapshot),
            z3.Or(write_before, write_after),
            buffers_differ(applied_on_live_base, diff_then_write, _witness()),
        )
    )


@dataclass(frozen=True)
class AuthorProgram:
    """The diff's author as an unknown function of the bytes it read.

    The read region's content is one z3 array (bytes ``0 .. k-1``, zero beyond),
    and the replacement's length and bytes are uninterpreted functions of that
    array: whatever the author computes, it computes from what it read and
    nothing else.
    """

    replacement_length: z3.FuncDeclRef
    replacement_byte: z3.FuncDeclRef

    @staticmethod
    def declare() -> AuthorProgram:
        content = z3.ArraySort(z3.IntSort(), z3.IntSort())
        return AuthorProgram(
            z3.Function("author.replacement_length", content, z3.IntSort()),
            z3.Function("author.replacement_byte", content, z3.IntSort(), z3.IntSort()),
        )

    @staticmethod
    def read(buffer: SymbolicBuffer, start: z3.ArithRef, length: z3.ArithRef) -> z3.ArrayRef:
        position = z3.FreshInt("read")
        return z3.Lambda(
            [position],
            z3.If(z3.And(position >= 0, position < length), buffer.byte_at(start + position), 0),
        )

    def writes(self, content: z3.ArrayRef, name: str) -> SymbolicBuffer:
        return SymbolicBuffer(
            name, self.replacement_length(content), lambda index: self.replacement_byte(content, index)
        )


def read_region_accepted(start: IntTerm, end: IntTerm, edit: SymbolicSplice) -> z3.BoolRef:
    """``impl/diffs.py``'s check of one read region through one edit, encoded:
    ``map_intervals`` rejects an edit that removes a byte of ``[start, end)``
    and splits the region at an insertion strictly inside it (which ``_shift``
    then rejects as not contiguous); every other edit is accepted.
    ``tests/test_proofs_vacuity.py`` compares this with the real function."""
    start_term, end_term = z3.IntVal(start) if isinstance(start, int) else start, end
    removes_a_byte = z3.And(edit.delete_length > 0, edit.offset < end_term, start_term < edit.offset + edit.delete_length)
    splits = z3.And(edit.offset + edit.delete_length > start_term, edit.offset < end_term, edit.insert.length > 0)
    return z3.And(z3.Not(removes_a_byte), z3.Not(splits))


def read_region_moved_to(start: IntTerm, edit: SymbolicSplice) -> z3.ArithRef:
    """Where ``map_intervals`` moves an accepted region's start through one edit."""
    start_term = z3.IntVal(start) if isinstance(start, int) else start
    return z3.If(edit.offset + edit.delete_length <= start_term, start_term + edit.shift, start_term)


@_register(
    "read-check-accepts-only-unchanged-regions",
    "theorem",
    "unbounded",
    ("S1",),
    """S1 on the code's own check, for one intervening edit: whenever
    impl/diffs.py's read-region trace (map_intervals, then _shift's contiguity
    test; encoded by read_region_accepted, compared with the real function in
    tests/test_proofs_vacuity.py) accepts a region [s, e) across a valid
    splice, the bytes at the place it moves the region to are exactly the
    region's bytes of the snapshot, and they lie inside the live buffer: an
    accepted read was unchanged. For every buffer, region and edit; several
    edits are checked on the real code by CrossHair (s1-read-check-exact).""",
)
def read_check_accepts_only_unchanged() -> Query:
    snapshot, edit = declare_buffer("B0"), declare_splice("write")
    start, end = z3.Ints("read.start read.end")
    live = edit.apply(snapshot)
    moved = read_region_moved_to(start, edit)
    position = _witness("position")
    changed = z3.Or(
        moved + (end - start) > live.length,
        moved < 0,
        z3.And(position >= 0, position < end - start, live.byte_at(moved + position) != snapshot.byte_at(start + position)),
    )
    return Query(
        (
            edit.valid_on(snapshot),
            start >= 0,
            end <= snapshot.length,
            read_region_accepted(start, end, edit),
            changed,
        )
    )


# --- theorems over logs of any length (induction done by the harness) --------------------


@_register(
    "log-count-nonnegative/base",
    "theorem",
    "induction base",
    ("R3",),
    """Lemma for rollback_to: the number of edits in the empty history is not
    negative (so "roll back count(history) steps" never asks for a negative
    number of steps).""",
)
def count_nonnegative_base() -> Query:
    v = vocabulary()
    return Query((z3.Not(v.count(v.edits.no_edits) >= 0),))


@_register(
    "log-count-nonnegative/step",
    "theorem",
    "induction step",
    ("R3",),
    """Lemma for rollback_to, step: if count(rest) >= 0 then count(edit :: rest) >= 0.""",
)
def count_nonnegative_step() -> Query:
    v = vocabulary()
    rest, edit = z3.Const("rest", v.edits), z3.Const("edit", v.edit)
    return Query((v.count(rest) >= 0, z3.Not(v.count(v.edits.newest_edit(edit, rest)) >= 0)))


@_register(
    "lifo-rollback-all-n/base",
    "theorem",
    "induction base",
    ("R3",),
    """LIFO rollback of a whole log, base case: with no edits, replaying the
    empty journal leaves the original buffer.""",
)
def lifo_base() -> Query:
    v = vocabulary()
    origin = z3.Const("origin", v.buffer)
    return Query((z3.Not(lifo_rollback_restores(v, origin, v.edits.no_edits)),))


@_register(
    "lifo-rollback-all-n/step",
    "theorem",
    "induction step",
    ("R2", "R3"),
    """LIFO rollback of a whole log, step: if replaying the journal of any
    history `rest` newest-first restores the original, then so does replaying
    the journal of `edit :: rest`. Uses the one-step lemma (proved by
    splice-then-inverse) for the buffer `rest` produced. With the base case this
    proves it for histories of every length.""",
)
def lifo_step() -> Query:
    v = vocabulary()
    origin, rest, edit = z3.Const("origin", v.buffer), z3.Const("rest", v.edits), z3.Const("edit", v.edit)
    return Query(
        (
            lifo_rollback_restores(v, origin, rest),
            v.one_step_lemma(v.current(origin, rest), edit),
            z3.Not(lifo_rollback_restores(v, origin, v.edits.newest_edit(edit, rest))),
        )
    )


@_register(
    "rollback-to-all-n/base",
    "theorem",
    "induction base",
    ("R3",),
    """rollback_to(checkpoint), base case: with no edits since the checkpoint,
    zero LIFO steps leave exactly the checkpoint's buffer and the log below it,
    whatever that log holds.""",
)
def rollback_to_base() -> Query:
    v = vocabulary()
    checkpoint, below = z3.Const("checkpoint", v.buffer), z3.Const("below", v.records)
    return Query((z3.Not(rollback_to_reaches_checkpoint(v, checkpoint, v.edits.no_edits, below)),))


@_register(
    "rollback-to-all-n/step",
    "theorem",
    "induction step",
    ("R3",),
    """rollback_to(checkpoint), step: if count(above) single LIFO steps from the
    top take any history `above` back to the checkpoint's buffer and the log
    below it, then so do the steps for `edit :: above`. Uses the one-step lemma
    and log-count-nonnegative. So rollback_to equals n single steps and lands on
    the checkpoint's state, for every n and every log below the checkpoint.""",
)
def rollback_to_step() -> Query:
    v = vocabulary()
    checkpoint, below = z3.Const("checkpoint", v.buffer), z3.Const("below", v.records)
    rest, edit = z3.Const("rest", v.edits), z3.Const("edit", v.edit)
    return Query(
        (
            rollback_to_reaches_checkpoint(v, checkpoint, rest, below),
            v.one_step_lemma(v.current(checkpoint, rest), edit),
            v.count(rest) >= 0,
            z3.Not(rollback_to_reaches_checkpoint(v, checkpoint, v.edits.newest_edit(edit, rest), below)),
        )
    )


#: How many splices the unrolled cross-check uses: 0.15 s at 5, 1.5 s at 6, 15 s at 7.
UNROLLED_DEPTH = 5


@_register(
    f"lifo-rollback-unrolled-{UNROLLED_DEPTH}",
    "theorem",
    f"bounded k={UNROLLED_DEPTH}",
    ("R2", "R3"),
    f"""Cross-check of the induction with real bytes instead of abstract buffers:
    {UNROLLED_DEPTH} splices of unbounded buffers with unbounded offsets and
    contents, each valid on the buffer before it, then their records replayed
    newest first, restore the original. Unrolling is exponential (k = 7 takes
    ~15 s), which is why the all-n theorems are proved by induction.""",
)
def lifo_rollback_unrolled() -> Query:
    origin = declare_buffer("B0")
    buffers, records, hypotheses = [origin], [], []
    for number in range(UNROLLED_DEPTH):
        edit = declare_splice(f"edit{number + 1}")
        hypotheses.append(edit.valid_on(buffers[-1]))
        records.append(edit.record(buffers[-1]))
        buffers.append(edit.apply(buffers[-1]))
    restored = buffers[-1]
    for record in reversed(records):
        restored = undo(restored, record)
    return Query((*hypotheses, buffers_differ(restored, origin, _witness())))


# --- refutations: the buggy rules must get counterexamples -------------------------------


@_register(
    "fifo-replay",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("R3",),
    """Buggy rule: undo two splices oldest-first, each at its recorded absolute
    offset. The second splice's offsets are relative to the buffer the first one
    made, so replaying out of order puts bytes in the wrong place.""",
)
def fifo_replay() -> Query:
    origin, first, second = declare_buffer("B0"), declare_splice("first"), declare_splice("second")
    after_first = first.apply(origin)
    after_second = second.apply(after_first)
    first_record, second_record = first.record(origin), second.record(after_first)
    undone_first = undo(after_second, first_record)
    actual = undo(undone_first, second_record)

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        scenario = (reader.buffer(origin), first.decoded(reader), second.decoded(reader))
        return decode.confirm(
            lambda: decode.replay_fifo(*scenario), reader.buffer(origin), reader.buffer(actual)
        )

    return Query(
        (
            well_formed(origin),
            first.valid_on(origin),
            second.valid_on(after_first),
            undo_is_valid(after_second, first_record),
            undo_is_valid(undone_first, second_record),
            *_readable_origin(origin),
            *_readable_insert(first, "X"),
            *_readable_insert(second, "P"),
            buffers_differ(actual, origin, _witness()),
        ),
        decode_model,
    )


@_register(
    "dropped-inverse",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("R1",),
    """Buggy rule: the buffer is mutated first and the inverse record appended
    best-effort; splice 2's record is lost. rollback(1) then undoes splice 1
    on a buffer that still holds splice 2, giving a state that never existed
    instead of the one before splice 1.""",
)
def dropped_inverse() -> Query:
    origin, first, second = declare_buffer("B0"), declare_splice("first"), declare_splice("second")
    after_first = first.apply(origin)
    after_second = second.apply(after_first)
    first_record = first.record(origin)
    actual = undo(after_second, first_record)

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        scenario = (reader.buffer(origin), first.decoded(reader), second.decoded(reader))
        return decode.confirm(
            lambda: decode.replay_dropped_inverse(*scenario), reader.buffer(origin), reader.buffer(actual)
        )

    return Query(
        (
            well_formed(origin),
            first.valid_on(origin),
            second.valid_on(after_first),
            undo_is_valid(after_second, first_record),
            *_readable_origin(origin),
            *_readable_insert(first, "X"),
            *_readable_insert(second, "P"),
            buffers_differ(actual, origin, _witness()),
        ),
        decode_model,
    )


@_register(
    "stale-offset",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("R2",),
    """Buggy rule: undo a record at its recorded offset after a later,
    length-changing edit before it (that edit not undone). The recorded offset
    is stale by the length change; the right offset is o + δ
    (inverse-rebase-past-earlier-edit).""",
)
def stale_offset() -> Query:
    origin, recorded, later = declare_buffer("B0"), declare_splice("recorded"), declare_splice("later")
    after_recorded = recorded.apply(origin)
    after_later = later.apply(after_recorded)
    record = recorded.record(origin)
    actual = undo(after_later, record)
    expected = later.apply(origin)

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        scenario = (reader.buffer(origin), recorded.decoded(reader), later.decoded(reader))
        return decode.confirm(
            lambda: decode.replay_stale_offset(*scenario), reader.buffer(expected), reader.buffer(actual)
        )

    return Query(
        (
            well_formed(origin),
            recorded.valid_on(origin),
            later.valid_on(after_recorded),
            later.offset + later.delete_length <= recorded.offset,
            later.shift != 0,
            undo_is_valid(after_later, record),
            *_readable_origin(origin),
            *_readable_insert(recorded, "X"),
            *_readable_insert(later, "P"),
            buffers_differ(actual, expected, _witness()),
        ),
        decode_model,
    )


@_register(
    "skipped-checkpoint-entry",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("R3",),
    """Buggy rule: rollback_to(checkpoint) undoes records 3 and 1 of the three
    made since the checkpoint, skipping record 2 (a jump or a lost entry on the
    way). The result is not the checkpoint's state.""",
)
def skipped_checkpoint_entry() -> Query:
    origin = declare_buffer("B0")
    edits = (declare_splice("first"), declare_splice("second"), declare_splice("third"))
    buffers, records, assertions = [origin], [], [well_formed(origin)]
    for edit in edits:
        assertions.append(edit.valid_on(buffers[-1]))
        records.append(edit.record(buffers[-1]))
        buffers.append(edit.apply(buffers[-1]))
    undone_third = undo(buffers[3], records[2])
    actual = undo(undone_third, records[0])

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        origin_bytes = reader.buffer(origin)
        decoded = (edits[0].decoded(reader), edits[1].decoded(reader), edits[2].decoded(reader))
        return decode.confirm(
            lambda: decode.replay_skipped_entry(origin_bytes, decoded), origin_bytes, reader.buffer(actual)
        )

    return Query(
        (
            *assertions,
            undo_is_valid(buffers[3], records[2]),
            undo_is_valid(undone_third, records[0]),
            *_readable_origin(origin),
            *_readable_insert(edits[0], "X"),
            *_readable_insert(edits[1], "P"),
            *_readable_insert(edits[2], "J"),
            buffers_differ(actual, origin, _witness()),
        ),
        decode_model,
    )


@_register(
    "write-set-only-staleness-check",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("S1",),
    """Buggy rule: accept a stale diff when the intervening write misses the
    hunk (its write-set, even widened), without checking the rest of its
    read-set. The write changed bytes the author read, so the author would have
    written something else: applying the diff is not re-authoring it on the
    live base.""",
)
def write_set_only_check() -> Query:
    snapshot, write = declare_buffer("B0"), declare_splice("write")
    read_start, read_length = z3.Ints("read.start read.length")
    hunk_start, hunk_delete = z3.Ints("hunk.start hunk.delete_length")
    author = AuthorProgram.declare()
    live = write.apply(snapshot)
    content_then = AuthorProgram.read(snapshot, read_start, read_length)
    content_now = AuthorProgram.read(live, read_start, read_length)
    authored, authored_pins = _pinned(author.writes(content_then, "authored"), "P", "S", 2)
    reauthored, reauthored_pins = _pinned(author.writes(content_now, "reauthored"), "P", "S", 2)
    low, high = _widened_hunk(hunk_start, hunk_delete, snapshot.length)
    applied = splice(live, hunk_start, hunk_delete, authored)
    re_authored = splice(live, hunk_start, hunk_delete, reauthored)

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        scenario = (
            reader.buffer(snapshot),
            (reader.integer(read_start), reader.integer(read_length)),
            (reader.integer(hunk_start), reader.integer(hunk_delete)),
            write.decoded(reader),
            reader.buffer(authored),
            reader.buffer(reauthored),
        )
        return decode.confirm(
            lambda: decode.replay_write_set_only(*scenario), reader.buffer(re_authored), reader.buffer(applied)
        )

    return Query(
        (
            well_formed(snapshot),
            write.valid_on(snapshot),
            write.insert.length == write.delete_length,
            z3.Or(write.offset + write.delete_length <= low, write.offset >= high),
            read_length >= 1,
            read_start >= 0,
            read_start + read_length <= snapshot.length,
            read_start <= low,
            high <= read_start + read_length,
            hunk_start >= 0,
            hunk_delete >= 1,  # readability: the hunk replaces something
            hunk_start + hunk_delete <= snapshot.length,
            *_readable_origin(snapshot),
            *_readable_insert(write, "X"),
            *authored_pins,
            *reauthored_pins,
            buffers_differ(applied, re_authored, _witness()),
        ),
        decode_model,
        # Without this z3 eliminates the pinned constants and reports their values
        # as terms over lambdas that its model evaluator cannot reduce.
        solver_options=(("smt.solve_eqs", False),),
    )


@_register(
    "positional-diff-on-advanced-base",
    "refutation",
    "bounded (buffers <= 6 bytes)",
    ("S1",),
    """Buggy rule: apply a positional diff (by offset) at its snapshot offset on
    a live base that a length-changing write before the hunk has advanced. The
    offset now names other bytes; the diff must be rejected (or, if
    content-anchored, rebased by the write's length change).""",
)
def positional_diff() -> Query:
    snapshot, hunk, write = declare_buffer("B0"), declare_splice("hunk"), declare_splice("write")
    low, _ = _widened_hunk(hunk.offset, hunk.delete_length, snapshot.length)
    live = write.apply(snapshot)
    actual = hunk.apply(live)
    expected = splice(live, hunk.offset + write.shift, hunk.delete_length, hunk.insert)

    def decode_model(reader: decode.ModelReader) -> decode.Counterexample:
        scenario = (reader.buffer(snapshot), hunk.decoded(reader), write.decoded(reader))
        return decode.confirm(
            lambda: decode.replay_positional(*scenario), reader.buffer(expected), reader.buffer(actual)
        )

    return Query(
        (
            well_formed(snapshot),
            hunk.valid_on(snapshot),
            write.valid_on(snapshot),
            write.offset + write.delete_length <= low,
            write.shift != 0,
            hunk.valid_on(live),
            *_readable_origin(snapshot),
            *_readable_insert(hunk, "X"),
            *_readable_insert(write, "P"),
            buffers_differ(actual, expected, _witness()),
        ),
        decode_model,
    )
