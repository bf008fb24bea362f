"""SPEC §2: bad input is a TypeError (a wrong type) or a ValueError (a wrong
value) that changes nothing, and a bytearray or memoryview insert is taken as
bytes are. R0's ``bad_arguments`` rule sends such arguments to every operation
that takes any; these tests pin what the model predicts for each, replay the
four mutants of ``impl/journaled_buffer.py`` that no draw used to reach (the
mutation benchmark's survivors at lines 161, 164, 232 and 316 of f9003ec)
against fakes that behave like them, and carry each new kind of argument
through a trace, the shrinker and the counterexample's rendering."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from importlib import resources
from typing import Any

import pytest
from _helpers import violation_on

from rollcert.model.operations import ARGUMENT_TYPES
from rollcert.model.operations import Compact
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.reports.certificate import format_steps
from rollcert.reports.certificate import replay_command
from rollcert.reports.explain import walkthrough
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.certify import _counterexample
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.machines import rules_for
from rollcert.stateful_tests.model_coverage import machine_traits
from rollcert.stateful_tests.model_coverage import required
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled_diffs import BundledDiffAdapter
from rollcert.targets.json_schema import Checker
from rollcert.targets.resolve import resolve_target

HELLO = BufferConfig(b"hello")
#: One record to undo or compact, so that every bad rollback and compaction is drawable.
ONE_RECORD: list[Operation] = [Splice(0, 1, b"J")]


def _model_after(operations: list[Operation]):  # type: ignore[no-untyped-def]
    state = initial_state(HELLO.initial)
    for operation in operations:
        state = step(state, operation).state
    return state


# -- what the model predicts ------------------------------------------------------------

REFUSED: list[tuple[Operation, str]] = [
    *((Splice(bad, 0, b"x"), "TypeError") for bad in strategies.WRONG_TYPE_INTEGERS),
    *((Splice(0, bad, b"x"), "TypeError") for bad in strategies.WRONG_TYPE_INTEGERS),
    (Splice(-1, 0, b"x"), "ValueError"),
    (Splice(0, -1, b"x"), "ValueError"),
    (Splice(6, 0, b"x"), "ValueError"),
    *((Splice(0, 0, bad), "TypeError") for bad in strategies.WRONG_TYPE_INSERTS),  # type: ignore[arg-type]
    (Rollback(-1), "ValueError"),
    (Rollback(True), "TypeError"),
    (Rollback(1.0), "TypeError"),  # type: ignore[arg-type]
    (Compact(-1), "ValueError"),
    (Compact(2), "ValueError"),  # past the depth of one
    (Compact(True), "TypeError"),
    (Compact(False), "TypeError"),  # a bool is no keep, even one that would mean 0
]


@pytest.mark.parametrize(("operation", "kind"), REFUSED, ids=[op.describe() for op, _ in REFUSED])
def test_the_model_refuses_each_bad_argument_with_its_kind_and_changes_nothing(
    operation: Operation, kind: str
) -> None:
    state = _model_after(ONE_RECORD)
    prediction = ROLLBACK.predict(state, operation)
    assert [(reading.error, reading.state) for reading in prediction.readings] == [(kind, state)]
    assert prediction.readings[0].state.revision == state.revision


@pytest.mark.parametrize("kind", strategies.BYTES_LIKE, ids=lambda kind: kind.__name__)
def test_the_model_takes_a_bytes_like_insert_exactly_as_bytes(kind: type[Any]) -> None:
    state = _model_after(ONE_RECORD)
    taken = step(state, Splice(1, 2, kind(b"KL")))
    assert taken == step(state, Splice(1, 2, b"KL"))
    assert taken.error is None and taken.state.current == b"JKLlo"
    assert type(taken.state.edits[-1].insert) is bytes  # the model keeps bytes, whatever it was given


#: Enough words that every value of every kind comes up (a kind is 1 in 7 at most,
#: a value 1 in 6 within it), as scattered as drawn ones.
WORDS = [hashlib.sha256(index.to_bytes(4, "little")).digest()[:8] for index in range(1500)]


@pytest.mark.parametrize("records", [0, 1, 2])
@pytest.mark.parametrize("compacts", [True, False])
@pytest.mark.parametrize("wrong_types", [True, False], ids=["types-checked", "signs-and-ranges-only"])
def test_every_draw_is_refused_with_its_kind_or_a_bytes_like_insert(
    records: int, compacts: bool, wrong_types: bool
) -> None:
    state = _model_after(ONE_RECORD * records)
    drawn = [
        strategies.bad_argument_from(state, word, compacts=compacts, wrong_types=wrong_types)
        for word in WORDS
    ]
    operations = [value for value in drawn if not isinstance(value, type)]
    # The bytes-like inserts, as the wrong types, only where the target types its arguments.
    assert {value for value in drawn if isinstance(value, type)} == (set(strategies.BYTES_LIKE) if wrong_types else set())
    kinds = set()
    for operation in operations:
        with pytest.raises((TypeError, ValueError)) as refused:
            step(state, operation)
        kinds.add(refused.type)
        assert wrong_types or refused.type is ValueError  # over a typed wire, wrong signs and ranges only
    assert kinds == ({TypeError, ValueError} if wrong_types else {ValueError})
    assert (Compact in map(type, operations)) is compacts
    assert (Rollback in map(type, operations)) is bool(
        records
    )  # as every rollback rule, only with a record to undo
    if (
        wrong_types
    ):  # every wrong type of every argument is sent (bools too: the mutant at line 161 takes only those)
        sent = {(type(v), repr(v)) for op in operations if isinstance(op, Splice) for v in vars(op).values()}
        wanted = {
            (type(v), repr(v)) for v in (*strategies.WRONG_TYPE_INTEGERS, *strategies.WRONG_TYPE_INSERTS)
        }
        assert wanted <= sent


def test_a_protocol_target_is_sent_no_argument_of_another_type_and_answers_the_rest() -> None:
    """Decision (``Target.typed_wire``): the protocol's ``int`` is never a bool, a
    float or a string, so the client refuses those itself (TypeError, the model's
    kind) and the machines do not draw them for a server; a negative count or
    keep travels and the server answers ValueError; a bytes-like insert travels
    as the bytes it holds."""
    server = resolve_target(f"subprocess:{sys.executable} -m rollcert.targets.protocol_server")
    assert server.typed_wire and not resolve_target("bundled").typed_wire
    operations = [*ONE_RECORD, Rollback(-1), Compact(-1), Compact(2), Splice(-1, 0, b"x"), Rollback(True)]
    operations += [Splice(1, 0, bytearray(b"K")), Splice(1, 0, memoryview(b"L"))]
    records = replay(ROLLBACK, server, HELLO, operations)
    assert all(record.ok for record in records)
    assert [record.actual.error for record in records] == [None, *["ValueError"] * 4, "TypeError", None, None]
    assert records[-1].actual.buffer == b"JLKello"


# -- the four mutants, replayed -----------------------------------------------------------


class _Mutant161(BundledDiffAdapter):
    """``type(offset) is not int and type(delete_length) is not int``: one wrong-typed int passes."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if type(offset) is not int and type(delete_length) is not int:
            raise TypeError("offset and delete_length must be ints")
        super().splice(int(offset), int(delete_length), insert)


class _Mutant164(BundledDiffAdapter):
    """``if isinstance(insert, (bytearray, memoryview))``: bytes-like refused, anything else made bytes."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if type(insert) is not bytes:
            if isinstance(insert, (bytearray, memoryview)):
                raise TypeError(f"insert must be bytes, got {type(insert).__name__}")
            insert = bytes(insert)
        super().splice(offset, delete_length, insert)


class _Mutant232(BundledDiffAdapter):
    """``if steps < -1``: rollback(-1) is no error (it undoes nothing here)."""

    def rollback(self, steps: int) -> None:
        if steps != -1:
            super().rollback(steps)


class _Mutant316(BundledDiffAdapter):
    """``if not -1 <= keep <= depth``: compact(-1) fails further in with an IndexError."""

    def compact(self, keep: int) -> None:
        if keep == -1:
            raise IndexError("list index out of range")
        super().compact(keep)


def _target(adapter: type[BundledDiffAdapter]) -> Target:
    return Target(
        adapter.__name__, "test", frozenset(Capability) - {Capability.DIFFS}, adapter, checks_arguments=True
    )


MUTANTS: list[tuple[type[BundledDiffAdapter], list[Operation]]] = [
    (_Mutant161, [Splice(True, 0, b"x")]),
    (_Mutant164, [Splice(0, 1, bytearray(b"J"))]),
    (_Mutant164, [Splice(0, 0, 2)]),  # type: ignore[arg-type]
    (_Mutant232, [*ONE_RECORD, Rollback(-1)]),
    (_Mutant316, [*ONE_RECORD, Compact(-1)]),
]


@pytest.mark.parametrize(
    ("adapter", "operations"), MUTANTS, ids=[f"{a.__name__}:{ops[-1].describe()}" for a, ops in MUTANTS]
)
def test_each_mutant_s_input_is_reported_as_an_r0_violation(
    adapter: type[BundledDiffAdapter], operations: list[Operation]
) -> None:
    violation = violation_on(_target(adapter), HELLO, operations)
    assert "R0" in violation.broken
    assert len(violation.steps) == len(operations)
    assert replay(ROLLBACK, resolve_target("bundled"), HELLO, operations)[
        -1
    ].ok  # the bundled buffer passes it


def test_the_bundled_buffer_answers_every_bad_argument_as_the_model_does() -> None:
    operations = [
        *ONE_RECORD,
        *(op for op, _ in REFUSED),
        Splice(1, 0, bytearray(b"K")),
        Splice(1, 0, memoryview(b"L")),
    ]
    records = replay(ROLLBACK, resolve_target("bundled"), HELLO, operations)
    assert all(record.ok for record in records)
    assert [record.actual.error for record in records[1:-2]] == [kind for _, kind in REFUSED]
    assert records[-1].actual.buffer == b"JLKello"


# -- carried faithfully: traces, shrinking, rendering -----------------------------------

CARRIED: list[Operation] = [
    *(Splice(bad, 0, b"x") for bad in strategies.WRONG_TYPE_INTEGERS),  # type: ignore[arg-type]
    Splice(0, -1, b"x"),
    *(Splice(0, 0, bad) for bad in strategies.WRONG_TYPE_INSERTS),  # type: ignore[arg-type]
    Splice(0, 1, bytearray(b"J")),
    Splice(0, 1, memoryview(b"J")),
    Rollback(-1),
    Rollback(True),
    Rollback(1.0),  # type: ignore[arg-type]
    Compact(-1),
    Compact(True),
]


def _fields(operation: Operation) -> list[tuple[type[Any], Any]]:
    return [(type(value), value) for value in vars(operation).values()]


@pytest.mark.parametrize("operation", CARRIED, ids=[op.describe() for op in CARRIED])
def test_a_trace_carries_each_argument_as_itself(operation: Operation) -> None:
    text = json.dumps(trace_json(ROLLBACK, HELLO, [operation]))
    _, _, (back,) = parse_trace(text)
    assert _fields(back) == _fields(operation)
    assert _fields(pickle.loads(pickle.dumps(operation))) == _fields(operation)  # as a worker hands it back


@pytest.mark.parametrize(
    "field",
    [
        {"type": "float", "value": "1"},
        {"type": "bool", "value": 1},
        {"type": "NoneType", "value": 0},
        {"type": "list", "value": ["x"]},
        {"type": "bytearray", "value": "not base64!"},
        {"type": "complex", "value": 1},
        {"type": "bool"},
        {"type": "bool", "value": True, "more": 1},
        True,  # untagged: a damaged trace, not a bad argument
        1.5,
    ],
)
def test_a_bad_tag_in_a_trace_is_a_typed_error(field: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        operation_from_json({"op": "rollback", "steps": field})
    with pytest.raises((TypeError, ValueError)):
        operation_from_json({"op": "splice", "offset": 0, "delete_length": 0, "insert": field})


def test_an_argument_no_trace_carries_is_refused_when_written() -> None:
    with pytest.raises(TypeError):
        operation_to_json(Rollback(object()))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        operation_to_json(Rollback(float("nan")))  # type: ignore[arg-type]


def test_a_counterexample_shows_each_argument_as_it_was_sent() -> None:
    shown = [
        op.describe()
        for op in (Splice("1", 0, b"x"), Splice(0, 0, memoryview(b"J")), Rollback(True), Compact(1.0))
    ]  # type: ignore[arg-type]
    assert shown == [
        "splice(offset='1', delete_length=0, insert=b'x')",
        "splice(offset=0, delete_length=0, insert=memoryview(b'J'))",
        "rollback(True)",
        "compact(keep=1.0)",
    ]


@pytest.mark.parametrize(
    ("adapter", "operations"), MUTANTS, ids=[f"{a.__name__}:{ops[-1].describe()}" for a, ops in MUTANTS]
)
def test_a_mutant_s_finding_shrinks_renders_and_replays_with_its_arguments(
    adapter: type[BundledDiffAdapter], operations: list[Operation]
) -> None:
    target = _target(adapter)
    padded = [Splice(5, 0, b"!"), *operations]  # one step for the shrinker to take away
    found = minimise(ROLLBACK, target, violation_on(target, HELLO, padded), "R0", budget=200)
    shrunk = found.steps[-1].operation  # maybe shorter, never of other types: they are the story
    assert [kind for kind, _ in _fields(shrunk)] == [kind for kind, _ in _fields(operations[-1])]
    counterexample = _counterexample("R0", target, found, "rollback")
    assert shrunk.describe() in "\n".join(format_steps(counterexample.steps))
    command = replay_command(counterexample)
    trace = command.split("--trace ", 1)[1].strip("'")
    _, config, back = parse_trace(trace)
    assert _fields(back[-1]) == _fields(shrunk)
    violation_on(target, config, back)  # the replay command's trace fails again
    assert walkthrough(counterexample).steps


# -- where they are drawn -----------------------------------------------------------------


def test_r0_takes_the_rule_and_its_branches_are_required_of_r0_only() -> None:
    bundled = resolve_target("bundled")
    assert "bad_arguments" in rules_for("R0", bundled.capabilities)
    assert not any(
        "bad_arguments" in rules_for(pid, bundled.capabilities)
        for pid in ("R1", "R2", "R3", "R4", "R5", "R6")
    )
    names = {
        pid: {
            b.name for b in required("rollback", machine_traits(ROLLBACK.build_machine(bundled, pid, None)))
        }  # type: ignore[arg-type]
        for pid in ("R0", "R5")
    }
    range_checks = {name for name in names["R0"] if "_compact" in name or "_commit" in name} - names["R5"]
    assert len(range_checks) >= 2  # the raise of a negative rollback and of a keep out of range


SCHEMAS = {
    "certificate": ("rollcert.reports", "certificate.schema.json"),
    "partial": ("rollcert.stateful_tests", "partial.schema.json"),
}


def _schema(name: str) -> dict[str, Any]:
    package, file = SCHEMAS[name]
    loaded: dict[str, Any] = json.loads(resources.files(package).joinpath(file).read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("name", SCHEMAS)
def test_a_certificate_and_a_partial_admit_each_tagged_argument_and_no_other_tag(name: str) -> None:
    schema = _schema(name)
    assert set(schema["$defs"]["tagged_argument"]["properties"]["type"]["enum"]) == ARGUMENT_TYPES
    operation = Checker({"$defs": schema["$defs"], "$ref": "#/$defs/operation"})
    for carried in CARRIED:
        operation.check(operation_to_json(carried))
    assert not operation.fits({"op": "rollback", "steps": {"type": "complex", "value": 1}})
    assert not operation.fits({"op": "rollback", "steps": {"type": "bool", "value": True, "more": 1}})


def test_a_trace_with_an_argument_of_another_type_is_generable_only_without_a_typed_wire() -> None:
    server = Target("server", "test", frozenset(Capability), BundledDiffAdapter, typed_wire=True)
    in_process = _target(BundledDiffAdapter)
    # A Python target that does not declare it types its arguments: wrong signs and ranges only, as a server.
    lenient = Target("lenient", "test", frozenset(Capability) - {Capability.DIFFS}, BundledDiffAdapter)
    assert ROLLBACK.generable(HELLO, [Splice(-1, 0, b"x")], lenient)
    assert not ROLLBACK.generable(HELLO, [Splice(True, 0, b"x")], lenient)
    for operations, on_server in [
        ([Splice(True, 0, b"x")], False),
        ([*ONE_RECORD, Rollback(1.0)], False),  # type: ignore[arg-type]
        ([*ONE_RECORD, Rollback(-1), Compact(-1)], True),
        ([Splice(0, 0, memoryview(b"L"))], True),
    ]:
        assert ROLLBACK.generable(HELLO, operations, in_process)
        assert ROLLBACK.generable(HELLO, operations, server) is on_server
