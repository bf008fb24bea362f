"""No theorem proves more than it says (issue 44).

The old S1 theorem still proved with 12 of its 13 hypotheses removed: it said
that equal inputs give equal outputs. Here every theorem of the registry is
proved again with each hypothesis left out in turn, and must then *not*
prove (z3 finds a model, or cannot decide): each hypothesis is needed, so the
theorem is about what its hypotheses describe. Also: the z3 encoding of
``impl/diffs.py``'s read-region check, used by
``read-check-accepts-only-unchanged-regions``, computes what the real
function computes.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.proofs.encoding import declare_buffer
from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.obligations import Obligation
from rollcert.proofs.obligations import SymbolicSplice
from rollcert.proofs.obligations import read_region_accepted
from rollcert.proofs.obligations import read_region_moved_to

pytestmark = pytest.mark.proof

THEOREMS = [obligation for obligation in REGISTRY if obligation.kind == "theorem"]


def _proves_without(obligation: Obligation, left_out: int) -> z3.CheckSatResult:
    query = obligation.build()
    solver = z3.Solver()
    solver.set("timeout", 2_000)  # unknown counts as "no longer proves"
    solver.add(*[h for i, h in enumerate(query.hypotheses) if i != left_out], query.negated_claim)
    return solver.check()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("obligation", "left_out"),
    [(o, i) for o in THEOREMS for i in range(len(o.build().hypotheses))],
    ids=lambda value: value.name if isinstance(value, Obligation) else f"without-{value}",
)
def test_every_hypothesis_is_needed(obligation: Obligation, left_out: int) -> None:
    assert _proves_without(obligation, left_out) != z3.unsat, (
        f"{obligation.name} still proves without hypothesis {left_out}: "
        f"{obligation.build().hypotheses[left_out]}"
    )


def test_the_vacuity_test_sees_a_redundant_hypothesis() -> None:
    """Teeth: a theorem given a hypothesis it does not need is flagged."""
    from dataclasses import replace

    from rollcert.proofs.obligations import Query
    from rollcert.proofs.obligations import obligation_named

    original = obligation_named("splice-then-inverse")

    def padded() -> Query:
        query = original.build()
        return Query((z3.Int("unused") >= 0, *query.assertions))

    assert _proves_without(replace(original, build=padded), 0) == z3.unsat


def _accepted_by_encoding(start: int, end: int, offset: int, removed: int, inserted: int) -> tuple[bool, int]:
    edit = SymbolicSplice("edit", z3.IntVal(offset), z3.IntVal(removed), declare_buffer("insert"))
    edit = SymbolicSplice("edit", edit.offset, edit.delete_length, _sized(inserted))
    accepted = z3.simplify(read_region_accepted(start, z3.IntVal(end), edit))
    moved = z3.simplify(read_region_moved_to(start, edit))
    return z3.is_true(accepted), moved.as_long()


def _sized(length: int):  # type: ignore[no-untyped-def]
    from rollcert.proofs.encoding import literal_buffer

    return literal_buffer(bytes(length), "insert")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_read_check_encoding_is_impl_diffs(data: st.DataObject) -> None:
    """``read_region_accepted``/``read_region_moved_to`` against
    ``impl.diffs.DiffableBuffer._shift`` (through ``map_intervals``) on one edit."""
    from rollcert.proofs.read_set_check import traced_shift

    length = data.draw(st.integers(0, 12))
    start = data.draw(st.integers(0, length))
    end = data.draw(st.integers(start + 1, length)) if start < length else None
    if end is None:
        return
    offset = data.draw(st.integers(0, length))
    removed = data.draw(st.integers(0, length - offset))
    inserted = data.draw(st.integers(0, 4))
    shift = traced_shift(start, end, [((offset, removed, inserted),)])
    accepted, moved = _accepted_by_encoding(start, end, offset, removed, inserted)
    assert accepted == (shift is not None)
    if shift is not None:
        assert moved == start + shift
