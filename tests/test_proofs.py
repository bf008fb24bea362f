"""The z3 proofs: every obligation gets its verdict, and the encoding matches the code.

The bridge tests are what keep the proofs honest: the theorems are about the
z3 encoding of splice and inverse records, so these tests evaluate that same
encoding on concrete random inputs and compare it with
``rollcert.model.reference.splice_bytes``, the reference model's step function, and the
production ``JournaledBuffer``. If someone changes the meaning of a splice in
the code, the bridge fails before a proof silently stops being about it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.command.cli import main as rollcert_main
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.model.reference import step
from rollcert.proofs import decode
from rollcert.proofs.encoding import SymbolicBuffer
from rollcert.proofs.encoding import SymbolicRecord
from rollcert.proofs.encoding import evaluate_concretely
from rollcert.proofs.encoding import inverse_of
from rollcert.proofs.encoding import literal_buffer
from rollcert.proofs.encoding import splice
from rollcert.proofs.encoding import undo
from rollcert.proofs.induction import lifo_rollback_restores
from rollcert.proofs.induction import vocabulary
from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.obligations import Obligation
from rollcert.proofs.obligations import obligation_named
from rollcert.proofs.report import SCHEMA
from rollcert.proofs.runner import ObligationResult
from rollcert.proofs.runner import check
from rollcert.proofs.runner import hypotheses_satisfiable

pytestmark = pytest.mark.proof

try:
    from rollcert.impl import JournaledBuffer
except ImportError:  # the implementation is built in parallel; the bridge to it is optional
    JournaledBuffer = None  # type: ignore[assignment,misc]

BRIDGE_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

_results: dict[str, ObligationResult] = {}


def result_of(obligation: Obligation) -> ObligationResult:
    """Each obligation is solved once per test session (they are deterministic)."""
    if obligation.name not in _results:
        _results[obligation.name] = check(obligation)
    return _results[obligation.name]


def _ids(obligation: Obligation) -> str:
    return obligation.name


THEOREMS = [o for o in REGISTRY if o.kind == "theorem"]
REFUTATIONS = [o for o in REGISTRY if o.kind == "refutation"]


# --- verdicts ----------------------------------------------------------------------------


def test_registry_covers_the_required_obligations() -> None:
    names = {o.name for o in REGISTRY}
    required = {
        "splice-then-inverse",
        "two-step-lifo",
        "inverse-rebase-past-earlier-edit",
        "diff-commutes-with-write-outside-read-set",
        "read-check-accepts-only-unchanged-regions",
        "lifo-rollback-all-n/base",
        "lifo-rollback-all-n/step",
        "rollback-to-all-n/base",
        "rollback-to-all-n/step",
        "fifo-replay",
        "dropped-inverse",
        "stale-offset",
        "skipped-checkpoint-entry",
        "write-set-only-staleness-check",
        "positional-diff-on-advanced-base",
    }
    assert required <= names
    assert len(names) == len(REGISTRY), "obligation names must be unique"
    for obligation in REGISTRY:
        assert obligation.properties and obligation.description
        assert obligation.scope.split()[0] in {"unbounded", "induction", "bounded"}


@pytest.mark.slow
@pytest.mark.parametrize("obligation", THEOREMS, ids=_ids)
def test_theorem_is_proved(obligation: Obligation) -> None:
    result = result_of(obligation)
    assert result.verdict == "PROVED", result.detail


@pytest.mark.slow
@pytest.mark.parametrize("obligation", THEOREMS, ids=_ids)
def test_theorem_is_not_vacuous(obligation: Obligation) -> None:
    """The hypotheses alone have a model: the theorem is not proved by contradiction."""
    assert hypotheses_satisfiable(obligation.build()) == z3.sat


@pytest.mark.parametrize("obligation", REFUTATIONS, ids=_ids)
def test_refutation_is_refuted_with_a_rechecked_counterexample(obligation: Obligation) -> None:
    result = result_of(obligation)
    assert result.verdict == "REFUTED", result.detail
    counterexample = result.counterexample
    assert counterexample is not None
    assert counterexample.rechecked, counterexample.recheck_error
    assert counterexample.expected != counterexample.actual
    assert len(counterexample.steps) >= 2
    assert "expected" in counterexample.render()


def test_induction_step_needs_the_one_step_lemma() -> None:
    """Without the lemma instance the step is *not* provable: the lemma carries it, it is no decoration."""
    v = vocabulary()
    origin, rest, edit = z3.Const("origin", v.buffer), z3.Const("rest", v.edits), z3.Const("edit", v.edit)
    solver = z3.Solver()
    solver.set("timeout", 10_000)
    solver.add(
        lifo_rollback_restores(v, origin, rest),
        z3.Not(lifo_rollback_restores(v, origin, v.edits.newest_edit(edit, rest))),
    )
    assert solver.check() == z3.sat


def test_recheck_rejects_a_fake_counterexample() -> None:
    """A decode that produced a scenario without the bug is reported, not believed."""
    harmless = (b"abcd", Splice(0, 0, b""), Splice(0, 0, b""))
    fake = decode.confirm(lambda: decode.replay_fifo(*harmless), b"abcd", b"abXd")
    assert not fake.rechecked
    assert "no bug shown" in (fake.recheck_error or "")
    invalid = decode.confirm(lambda: decode.replay_fifo(b"ab", Splice(5, 0, b""), Splice(0, 0, b"")), b"", b"x")
    assert not invalid.rechecked


def test_decoded_counterexample_starts_from_the_readable_origin() -> None:
    """The printed scenario starts from b'abc…' (the readability constraints held) and expects it back."""
    counterexample = result_of(obligation_named("fifo-replay")).counterexample
    assert counterexample is not None
    origin = ast.literal_eval(counterexample.steps[0].removeprefix("buffer "))
    assert origin == b"abcdef"[: len(origin)]
    assert counterexample.expected == origin


# --- the bridge: the encoding is the code ------------------------------------------------


@st.composite
def buffer_and_splice(draw: st.DrawFn, max_length: int = 10) -> tuple[bytes, int, int, bytes]:
    buffer = draw(st.binary(max_size=max_length))
    offset = draw(st.integers(0, len(buffer)))
    delete_length = draw(st.integers(0, len(buffer) - offset))
    insert = draw(st.binary(max_size=4))
    return buffer, offset, delete_length, insert


def _concrete(buffer: SymbolicBuffer) -> bytes:
    return evaluate_concretely(buffer)


@pytest.mark.slow
@BRIDGE_SETTINGS
@given(buffer_and_splice())
def test_bridge_splice_encoding_equals_splice_bytes(case: tuple[bytes, int, int, bytes]) -> None:
    buffer, offset, delete_length, insert = case
    encoded = splice(literal_buffer(buffer, "B"), offset, delete_length, literal_buffer(insert, "s"))
    assert _concrete(encoded) == splice_bytes(buffer, offset, delete_length, insert)


@BRIDGE_SETTINGS
@given(buffer_and_splice())
@pytest.mark.slow
def test_bridge_inverse_encoding_equals_the_concrete_inverse(case: tuple[bytes, int, int, bytes]) -> None:
    buffer, offset, delete_length, insert = case
    symbolic_buffer = literal_buffer(buffer, "B")
    record = inverse_of(symbolic_buffer, offset, delete_length, literal_buffer(insert, "s"))
    after = splice(symbolic_buffer, offset, delete_length, literal_buffer(insert, "s"))
    assert _concrete(record.removed) == buffer[offset : offset + delete_length]
    assert z3.simplify(record.inserted_length).as_long() == len(insert)
    concrete_after = splice_bytes(buffer, offset, delete_length, insert)
    undone = _concrete(undo(after, record))
    assert undone == splice_bytes(concrete_after, offset, len(insert), buffer[offset : offset + delete_length])
    assert undone == buffer


@st.composite
def splice_sequences(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int, bytes]]]:
    buffer = draw(st.binary(max_size=8))
    current, edits = buffer, []
    for _ in range(draw(st.integers(1, 3))):
        offset = draw(st.integers(0, len(current)))
        delete_length = draw(st.integers(0, len(current) - offset))
        insert = draw(st.binary(max_size=3))
        edits.append((offset, delete_length, insert))
        current = splice_bytes(current, offset, delete_length, insert)
    return buffer, edits


def _encoded_history(initial: bytes, edits: list[tuple[int, int, bytes]]) -> tuple[list[bytes], list[bytes]]:
    """The encoding's buffers after each splice, then after each LIFO undo.

    Each step starts from the previous step's bytes as a fresh literal: the
    bridge is about the encoding of *one* operation (composition is plain
    function composition), and evaluating a composed term is exponential.
    """
    current = initial
    records, forward = [], []
    for number, (offset, delete_length, insert) in enumerate(edits):
        before, insert_buffer = literal_buffer(current, f"B{number}"), literal_buffer(insert, f"s{number}")
        record = inverse_of(before, offset, delete_length, insert_buffer)
        records.append((_concrete(record.removed), len(insert), offset))
        current = _concrete(splice(before, offset, delete_length, insert_buffer))
        forward.append(current)
    backward = []
    for removed, inserted_length, offset in reversed(records):
        symbolic = literal_buffer(current, "live")
        record = SymbolicRecord(z3.IntVal(offset), literal_buffer(removed, "removed"), z3.IntVal(inserted_length))
        current = _concrete(undo(symbolic, record))
        backward.append(current)
    return forward, backward


@BRIDGE_SETTINGS
@given(splice_sequences())
@pytest.mark.slow
def test_bridge_lifo_encoding_equals_the_reference_model(case: tuple[bytes, list[tuple[int, int, bytes]]]) -> None:
    initial, edits = case
    forward, backward = _encoded_history(initial, edits)
    state = initial_state(initial)
    for (offset, delete_length, insert), encoded in zip(edits, forward, strict=True):
        state = step(state, Splice(offset, delete_length, insert)).state
        assert encoded == state.current
    for encoded in backward:
        outcome = step(state, Rollback(1))
        assert outcome.error is None
        state = outcome.state
        assert encoded == state.current
    assert state.current == initial


@pytest.mark.skipif(JournaledBuffer is None, reason="impl.JournaledBuffer is not importable")
@BRIDGE_SETTINGS
@given(splice_sequences())
@pytest.mark.slow
def test_bridge_lifo_encoding_equals_journaled_buffer(case: tuple[bytes, list[tuple[int, int, bytes]]]) -> None:
    initial, edits = case
    forward, backward = _encoded_history(initial, edits)
    implementation: Any = JournaledBuffer(initial)
    for (offset, delete_length, insert), encoded in zip(edits, forward, strict=True):
        implementation.splice(offset, delete_length, insert)
        assert implementation.read() == encoded
    for encoded in backward:
        implementation.rollback(1)
        assert implementation.read() == encoded


# --- the command ---------------------------------------------------------------------------


@pytest.mark.slow
def test_prove_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    # The CrossHair checks (~25 s) have their own tests (test_crosshair.py).
    assert rollcert_main(["prove", "--no-crosshair", "--refinement-depth", "2"]) == 0
    output = capsys.readouterr().out
    for obligation in REGISTRY:
        assert obligation.name in output
    assert "UNKNOWN " not in output and "FAILED " not in output


def test_prove_writes_json_and_shows_counterexamples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "proofs.json"
    assert rollcert_main(["prove", "--only", "fifo-replay", "--only", "two-step-lifo", "--show-counterexamples", "--json", str(target)]) == 0
    document = json.loads(target.read_text())
    assert document["schema"] == SCHEMA
    assert document["passed"] is True
    verdicts = {entry["name"]: entry["verdict"] for entry in document["obligations"]}
    assert verdicts == {"two-step-lifo": "PROVED", "fifo-replay": "REFUTED"}
    fifo = next(entry for entry in document["obligations"] if entry["name"] == "fifo-replay")
    assert fifo["counterexample"]["rechecked"] is True
    assert "expected" in capsys.readouterr().out


def test_prove_rejects_an_unknown_obligation(capsys: pytest.CaptureFixture[str]) -> None:
    assert rollcert_main(["prove", "--only", "no-such-obligation"]) == 3
    assert "no obligation or check named" in capsys.readouterr().err


@pytest.mark.slow
def test_unknown_on_a_theorem_is_a_failure(capsys: pytest.CaptureFixture[str]) -> None:
    """Out of budget means UNKNOWN and exit 2 (not settled), never PROVED, never 0."""
    starved = check(obligation_named("lifo-rollback-unrolled-5"), timeout_seconds=0.001)
    assert starved.verdict == "UNKNOWN"
    assert not starved.passed
    assert rollcert_main(["prove", "--only", "lifo-rollback-unrolled-5", "--timeout", "0.001"]) == 2
    assert "UNKNOWN" in capsys.readouterr().out
