"""The z3 encoding computes what ``model/reference.py`` computes (issue 44).

The unbounded theorems of ``rollcert prove`` are about the pointwise encoding
in :mod:`rollcert.proofs.encoding`. They say something about the model only if
the encoding, evaluated on concrete values, gives the model's bytes: for a
splice, for ``rollback(n)`` for *every* n of a log, and for ``rollback_to`` a
checkpoint. Hypothesis draws buffers up to 64 bytes and logs up to 10 records
(empty inserts and deletes, whole-buffer edits, edits at both ends), and each
case is compared with ``reference.step``: bytes and depth.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.model import reference
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.proofs.encoding import SymbolicBuffer
from rollcert.proofs.encoding import SymbolicRecord
from rollcert.proofs.encoding import evaluate_concretely
from rollcert.proofs.encoding import inverse_of
from rollcert.proofs.encoding import literal_buffer
from rollcert.proofs.encoding import splice
from rollcert.proofs.encoding import undo

MAX_BUFFER = 64
MAX_RECORDS = 10


@st.composite
def histories(draw: st.DrawFn) -> tuple[bytes, list[Splice]]:
    """A buffer and a log of valid splices on it, each valid where it is applied."""
    current = draw(st.binary(max_size=MAX_BUFFER))
    initial = current
    edits: list[Splice] = []
    for _ in range(draw(st.integers(0, MAX_RECORDS))):
        offset = draw(st.integers(0, len(current)))
        delete = draw(st.integers(0, len(current) - offset))
        insert = draw(st.binary(max_size=8))
        edits.append(Splice(offset, delete, insert))
        current = reference.splice_bytes(current, offset, delete, insert)
    return initial, edits


def concrete(data: bytes, name: str) -> SymbolicBuffer:
    """The same buffer as ``literal_buffer(data)`` (byte ``i`` of ``data`` on
    ``[0, n)``, 0 elsewhere), read by a table lookup when the index term
    reduces to a number, instead of a chain of ``n`` ``If`` terms: the
    splice/undo/view terms under test stay exactly the encoding's.
    ``test_the_fast_literal_is_literal_buffer`` checks the two agree."""

    def byte_at(index: z3.ArithRef) -> z3.ArithRef:
        value = z3.simplify(index)
        if z3.is_int_value(value):
            position = value.as_long()
            return z3.IntVal(data[position] if 0 <= position < len(data) else 0)
        return literal_buffer(data, name).byte_at(index)

    return SymbolicBuffer(name, z3.IntVal(len(data)), byte_at)


def _materialise(buffer: SymbolicBuffer, name: str) -> SymbolicBuffer:
    """The encoding's buffer evaluated and put back as a literal: the next
    encoded step then starts from concrete bytes (the nesting stays shallow,
    and each step of the encoding is compared on its own)."""
    return concrete(evaluate_concretely(buffer), name)


def _encoded_log(initial: bytes, edits: list[Splice]) -> tuple[list[SymbolicBuffer], list[SymbolicRecord]]:
    """Every buffer of the history and every record, through the encoding."""
    buffers, records = [concrete(initial, "B0")], []
    for number, edit in enumerate(edits):
        insert = concrete(edit.insert, f"insert{number}")
        records.append(inverse_of(buffers[-1], edit.offset, edit.delete_length, insert))
        after = splice(buffers[-1], edit.offset, edit.delete_length, insert)
        buffers.append(_materialise(after, f"B{number + 1}"))
    return buffers, records


def _encoded_rollback(buffers: list[SymbolicBuffer], records: list[SymbolicRecord], steps: int) -> bytes:
    """``steps`` LIFO undos, each at its recorded offset, through the encoding."""
    current = buffers[-1]
    for record in reversed(records[len(records) - steps :]):
        current = _materialise(undo(current, record), "rolled back")
    return evaluate_concretely(current)


def _model_after(initial: bytes, edits: list[Splice]) -> reference.ModelState:
    state = reference.initial_state(initial)
    for edit in edits:
        outcome = reference.step(state, edit)
        assert outcome.error is None
        state = outcome.state
    return state


@pytest.mark.slow  # z3 over every drawn history: 3-14 s on a loaded 2-core CI machine
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_encoded_splices_compute_the_models_buffers(history: tuple[bytes, list[Splice]]) -> None:
    initial, edits = history
    buffers, _ = _encoded_log(initial, edits)
    assert [evaluate_concretely(b) for b in buffers] == list(_model_after(initial, edits).states)


@pytest.mark.slow  # z3 over every drawn history: 3-14 s on a loaded 2-core CI machine
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_encoded_rollback_n_is_the_models_for_every_n(history: tuple[bytes, list[Splice]]) -> None:
    initial, edits = history
    buffers, records = _encoded_log(initial, edits)
    state = _model_after(initial, edits)
    for steps in range(len(edits) + 1):
        outcome = reference.step(state, Rollback(steps))
        assert outcome.error is None
        assert _encoded_rollback(buffers, records, steps) == outcome.state.current, steps
        assert outcome.state.depth == len(edits) - steps


@pytest.mark.slow  # z3 over every drawn history: 3-14 s on a loaded 2-core CI machine
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.data())
def test_encoded_rollback_to_is_the_models(history: tuple[bytes, list[Splice]], data: st.DataObject) -> None:
    """A checkpoint after ``k`` of the edits; rollback_to it is, in the encoding,
    ``len(edits) - k`` single LIFO undos (the definition ``rollback-to-all-n``
    proves things about); in the model, a move to the checkpoint's serial."""
    initial, edits = history
    taken_at = data.draw(st.integers(0, len(edits)), label="checkpoint after edit")
    state = reference.initial_state(initial)
    for edit in edits[:taken_at]:
        state = reference.step(state, edit).state
    state = reference.step(state, TakeCheckpoint()).state
    for edit in edits[taken_at:]:
        state = reference.step(state, edit).state
    outcome = reference.step(state, RollbackTo(0))
    assert outcome.error is None
    buffers, records = _encoded_log(initial, edits)
    assert _encoded_rollback(buffers, records, len(edits) - taken_at) == outcome.state.current
    assert outcome.state.depth == taken_at


def test_the_comparison_has_teeth() -> None:
    """A record replayed one byte to the right is told apart (the check is not vacuous)."""
    buffers, records = _encoded_log(b"abcdef", [Splice(1, 2, b"XY"), Splice(0, 1, b"")])
    shifted = evaluate_concretely(undo(buffers[-1], records[-1], at_offset=z3.IntVal(1)))
    assert shifted != reference.splice_bytes(b"aXYdef", 0, 0, b"a")
    assert _encoded_rollback(buffers, records, 2) == b"abcdef"


@settings(max_examples=20, deadline=None)
@given(st.binary(max_size=12), st.integers(-2, 14))
def test_the_fast_literal_is_literal_buffer(data: bytes, index: int) -> None:
    term = z3.IntVal(index)
    assert z3.simplify(concrete(data, "x").byte_at(term)).as_long() == z3.simplify(
        literal_buffer(data, "x").byte_at(term)
    ).as_long()
