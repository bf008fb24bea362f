"""The pointwise z3 encoding of buffers, splices and inverse records.

Why pointwise: a buffer is a length ``n`` and a byte function on ``[0, n)``; a
splice is a nested ``If`` over the index. With that encoding "two buffers are
equal" becomes, under negation, "their lengths differ or they differ at one free
index", so every query is quantifier-free and z3 decides it in milliseconds for
*unbounded* lengths, offsets and contents. The sequence theory (``SubSeq``) timed
out (20–30 s) on the very first lemma here, so it is not used for theorems.

The same functions build terms for concrete inputs (:func:`literal_buffer`,
:func:`evaluate_concretely`); the bridge test in ``tests/test_proofs.py`` uses
that to check this encoding against :func:`rollcert.model.reference.splice_bytes` on
random data, so the proofs cannot drift from the code.

A byte function is total (defined on every integer); only ``[0, n)`` carries
meaning. Splice maps indexes past the inserted bytes back into the base with the
length shift, and an inverse record's removed bytes are a *view* of the base;
that keeps every derived byte pointing at an in-range byte of a base buffer when
the splice is valid, which is what makes decoded counterexamples exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import z3

#: A byte function: index term -> byte term.
ByteFunction: TypeAlias = Callable[[z3.ArithRef], z3.ArithRef]
#: Anything z3 accepts where an integer term is expected.
IntTerm: TypeAlias = z3.ArithRef | int


def _as_term(value: IntTerm) -> z3.ArithRef:
    return value if isinstance(value, z3.ArithRef) else z3.IntVal(value)


@dataclass(frozen=True)
class SymbolicBuffer:
    """A buffer as z3 terms: ``length`` and ``byte_at(i)`` for ``0 <= i < length``."""

    name: str
    length: z3.ArithRef
    byte_at: ByteFunction


def declare_buffer(name: str) -> SymbolicBuffer:
    """A buffer of unknown length and contents (an ``Int`` and an uninterpreted function)."""
    function = z3.Function(f"{name}.bytes", z3.IntSort(), z3.IntSort())
    return SymbolicBuffer(name, z3.Int(f"{name}.length"), lambda index: function(index))


def literal_buffer(data: bytes, name: str = "literal") -> SymbolicBuffer:
    """A buffer with known bytes, as a chain of ``If`` terms (used by the bridge test)."""

    def byte_at(index: z3.ArithRef) -> z3.ArithRef:
        term: z3.ArithRef = z3.IntVal(0)
        for position in reversed(range(len(data))):
            term = z3.If(index == position, z3.IntVal(data[position]), term)
        return term

    return SymbolicBuffer(name, z3.IntVal(len(data)), byte_at)


def well_formed(buffer: SymbolicBuffer) -> z3.BoolRef:
    """A declared buffer's length is not negative (z3's ``Int`` would allow it)."""
    return buffer.length >= 0


def splice_byte(
    base_at: ByteFunction,
    offset: IntTerm,
    delete_length: IntTerm,
    insert_length: IntTerm,
    insert_at: ByteFunction,
    index: z3.ArithRef,
) -> z3.ArithRef:
    """Byte ``index`` of ``base[:offset] + insert + base[offset + delete_length:]``.

    This one expression is the whole meaning of a splice in every proof; the
    bridge test evaluates it against ``rollcert.model.reference.splice_bytes``.
    """
    offset, delete_length, insert_length = (
        _as_term(offset),
        _as_term(delete_length),
        _as_term(insert_length),
    )
    return z3.If(
        index < offset,
        base_at(index),
        z3.If(
            index < offset + insert_length,
            insert_at(index - offset),
            base_at(index - insert_length + delete_length),
        ),
    )


def splice(
    buffer: SymbolicBuffer, offset: IntTerm, delete_length: IntTerm, insert: SymbolicBuffer, name: str = ""
) -> SymbolicBuffer:
    """The buffer after ``splice(offset, delete_length, insert)``."""
    offset_term, delete_term = _as_term(offset), _as_term(delete_length)
    return SymbolicBuffer(
        name or f"splice({buffer.name})",
        buffer.length - delete_term + insert.length,
        lambda index: splice_byte(
            buffer.byte_at, offset_term, delete_term, insert.length, insert.byte_at, index
        ),
    )


def view(buffer: SymbolicBuffer, offset: IntTerm, length: IntTerm, name: str = "") -> SymbolicBuffer:
    """``buffer[offset:offset + length]`` without copying: byte ``j`` is byte ``offset + j``."""
    offset_term = _as_term(offset)
    return SymbolicBuffer(
        name or f"{buffer.name}[view]", _as_term(length), lambda index: buffer.byte_at(offset_term + index)
    )


def splice_is_valid(
    buffer: SymbolicBuffer, offset: IntTerm, delete_length: IntTerm, insert: SymbolicBuffer
) -> z3.BoolRef:
    """SPEC §2: ``0 <= o <= len(B)`` and ``0 <= d <= len(B) - o`` (and a real insert)."""
    offset_term, delete_term = _as_term(offset), _as_term(delete_length)
    return z3.And(
        offset_term >= 0,
        offset_term <= buffer.length,
        delete_term >= 0,
        delete_term <= buffer.length - offset_term,
        insert.length >= 0,
    )


@dataclass(frozen=True)
class SymbolicRecord:
    """An inverse record: where the splice happened, what it removed, how much it inserted."""

    offset: z3.ArithRef
    removed: SymbolicBuffer
    inserted_length: z3.ArithRef


def inverse_of(
    buffer: SymbolicBuffer, offset: IntTerm, delete_length: IntTerm, insert: SymbolicBuffer
) -> SymbolicRecord:
    """The record a correct journal writes *before* ``splice(offset, delete_length, insert)``."""
    offset_term = _as_term(offset)
    removed = view(buffer, offset_term, delete_length, name=f"removed({buffer.name})")
    return SymbolicRecord(offset_term, removed, insert.length)


def undo(buffer: SymbolicBuffer, record: SymbolicRecord, at_offset: IntTerm | None = None) -> SymbolicBuffer:
    """Replay one inverse: replace ``inserted_length`` bytes at the offset by the removed bytes.

    ``at_offset`` overrides the recorded offset: a correct rollback never does
    (LIFO makes the recorded offset right); the rebase lemma and the stale-offset
    refutation use it to say which offset *would* be right after a shift.
    """
    offset = record.offset if at_offset is None else _as_term(at_offset)
    return splice(buffer, offset, record.inserted_length, record.removed, name=f"undo({buffer.name})")


def undo_is_valid(buffer: SymbolicBuffer, record: SymbolicRecord, at_offset: IntTerm | None = None) -> z3.BoolRef:
    """The undo is itself a valid splice (a buggy rollback that would raise is not silent)."""
    offset = record.offset if at_offset is None else _as_term(at_offset)
    return splice_is_valid(buffer, offset, record.inserted_length, record.removed)


def buffers_differ(first: SymbolicBuffer, second: SymbolicBuffer, witness: z3.ArithRef) -> z3.BoolRef:
    """The negation of buffer equality with one free witness index (quantifier-free)."""
    return z3.Or(
        first.length != second.length,
        z3.And(witness >= 0, witness < first.length, first.byte_at(witness) != second.byte_at(witness)),
    )


def buffers_equal_through(first: SymbolicBuffer, second: SymbolicBuffer, limit: int) -> z3.BoolRef:
    """Equality spelled out index by index up to ``limit`` (for bounded refutations only)."""
    return z3.And(
        first.length == second.length,
        *[
            z3.Implies(index < first.length, first.byte_at(z3.IntVal(index)) == second.byte_at(z3.IntVal(index)))
            for index in range(limit)
        ],
    )


def evaluate_concretely(buffer: SymbolicBuffer, evaluate: Callable[[z3.ExprRef], int] | None = None) -> bytes:
    """The bytes a buffer term stands for, under a model (``evaluate``) or by simplification.

    Raises ``ValueError`` if a byte is not in ``0..255``: that would mean the
    encoding read outside the bytes that carry meaning.
    """
    evaluate = evaluate or _simplify_to_int
    length = evaluate(buffer.length)
    if length < 0:
        raise ValueError(f"{buffer.name} has negative length {length}")
    values = [evaluate(buffer.byte_at(z3.IntVal(index))) for index in range(length)]
    if any(not 0 <= value <= 255 for value in values):
        raise ValueError(f"{buffer.name} holds a value outside 0..255: {values}")
    return bytes(values)


def _simplify_to_int(term: z3.ExprRef) -> int:
    simplified = z3.simplify(term)
    if not z3.is_int_value(simplified):
        raise ValueError(f"term does not reduce to an integer: {simplified}")
    return int(simplified.as_long())
