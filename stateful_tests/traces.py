"""Traces: a run's steps as plain JSON that ``rollcert replay`` runs again.

One format for every family (``rollcert-trace/2``): the family's name, the
buffer configuration and the operations, encoded by the one operation codec
of :mod:`rollcert.model.operations`. Traces of earlier releases
(``rollcert-trace/1`` for the rollback family, ``rollcert-diff-trace/1`` for the
diff family) are still read. A trace is untrusted input — it may come from a
hand-edited certificate — so every field is checked before anything runs, and a
bad one is a ``ValueError``/``TypeError`` that names it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import DURABILITY_MODES
from rollcert.model.reference import POLICIES
from rollcert.stateful_tests.families import STEP_FAMILIES
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.targets.adapter import BufferConfig

TRACE_SCHEMA = "rollcert-trace/2"

#: Bounds on a trace read from outside: nothing a real counterexample comes near.
MAX_OPERATIONS = 10_000
MAX_INITIAL_BYTES = 1 << 20
MAX_INTEGER = 1 << 62
#: The most buffer bytes replaying a trace may step through, estimated before it runs
#: as (initial bytes + every byte it inserts) x (operations + 1): each step keeps the
#: buffer it started from, on both sides. A counterexample is a few steps on a short
#: buffer; a hand-made trace of a megabyte buffer and a thousand one-byte edits (a
#: 1.9 MB file) used to cost 2 GB to replay.
MAX_REPLAY_BYTES = 1 << 28
#: The most chunks a trace that asks for a chunk size (``chunk_bytes``) may make its
#: buffer hold, estimated before it runs as (initial bytes + every byte it inserts)
#: / chunk size. A chunk costs its storage about 300 bytes: a hand-made trace of a
#: 1 MiB start in one-byte chunks took 336 MB to build. The generated ones hold a
#: few thousand (issue 42's small chunks: up to 1,300 at the start).
MAX_ASKED_CHUNKS = 1 << 18

AnyFamily = PropertyFamily[Any, Any, Any]


#: A starting buffer at least this long that is one short unit repeated is written
#: as the unit and a count (``initial_times``): a counterexample past 64 KiB stays
#: a line a reader can copy (issue 42), not 90 KB of base64.
TILED_INITIAL = 4096
#: The longest unit ``initial_times`` repeats.
TILE_UNIT = 64


def _tiled(initial: bytes) -> tuple[bytes, int] | None:
    """``(unit, times)`` if ``initial`` is a unit of at most TILE_UNIT bytes repeated."""
    if len(initial) < TILED_INITIAL:
        return None
    for size in range(1, TILE_UNIT + 1):
        times, rest = divmod(len(initial), size)
        if not rest and initial[:size] * times == initial:
            return initial[:size], times
    return None


def _initial_fields(initial: bytes) -> dict[str, Any]:
    tiled = _tiled(initial)
    if tiled is None:
        return {"initial": base64.b64encode(initial).decode("ascii")}
    unit, times = tiled
    return {"initial": base64.b64encode(unit).decode("ascii"), "initial_times": times}


def trace_json(family: AnyFamily, config: BufferConfig, operations: list[Any]) -> dict[str, Any]:
    return {
        "schema": TRACE_SCHEMA,
        "family": family.name,
        **_initial_fields(config.initial),
        "capacity": config.capacity,
        "policy": config.policy,
        **({"durable": True} if config.durable else {}),
        **({"durability": config.durability} if config.durable and config.durability != "per_operation" else {}),
        **({"start_revision": config.start_revision} if config.start_revision else {}),
        **({"chunk_bytes": config.chunk_bytes} if config.chunk_bytes is not None else {}),
        "operations": [operation_to_json(op) for op in operations],
    }


#: How deep an operation's JSON nests: a crash_during holds an operation, an
#: apply_diff lists of hunks; nothing a trace holds goes deeper.
MAX_OPERATION_DEPTH = 6


def _check_integers(value: object, where: str, depth: int = 0) -> None:
    """Refuse integers no trace needs (a 5000-digit number is not an offset), and
    nesting no operation has (so that neither this check nor the decoder can
    run out of stack on a hand-made trace)."""
    if depth > MAX_OPERATION_DEPTH:
        raise ValueError(f"{where}: nested more deeply than any operation")
    if type(value) is int and not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise ValueError(f"{where}: integer out of range")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_integers(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_integers(item, f"{where}[{index}]", depth + 1)


def _inserted(operation: Any) -> int:
    """The bytes one operation may add to the buffer (an edit's insert, a diff's
    replacements, the operation a crash interrupts)."""
    inner = getattr(operation, "operation", None)
    insert = getattr(operation, "insert", b"")
    return (
        # An insert of the wrong type (R0's bad_arguments) adds nothing: it is refused.
        (len(insert) if isinstance(insert, (bytes, bytearray, memoryview)) else 0)
        + sum(len(hunk.replacement) for hunk in getattr(operation, "hunks", ()))
        + (_inserted(inner) if inner is not None else 0)
    )


def parse_trace(text: str) -> tuple[AnyFamily, BufferConfig, list[Any]]:
    """Parse a trace (JSON text) of any family; ``ValueError``/``TypeError`` saying what is wrong."""
    try:
        record = json.loads(text)
    except RecursionError:
        raise ValueError("the trace is nested too deeply to be a trace") from None
    except ValueError as error:  # not JSON, or an integer too long to convert
        raise ValueError(f"the trace is not JSON: {error}") from None
    if not isinstance(record, dict):
        raise TypeError(f"a trace is a JSON object, got {type(record).__name__}")
    schema = record.get("schema")
    if schema == TRACE_SCHEMA:
        family_name = record.get("family")
        if not isinstance(family_name, str):
            raise TypeError("trace field 'family' must be a family's name")
        family = family_named(family_name)
    else:
        legacy = [f for f in STEP_FAMILIES if schema in f.legacy_trace_schemas]
        if not legacy:
            raise ValueError(f"not a {TRACE_SCHEMA} trace (schema {schema!r})")
        family = legacy[0]
    initial = record.get("initial")
    if not isinstance(initial, str):
        raise TypeError("trace field 'initial' must be base64 text")
    try:
        initial_bytes = base64.b64decode(initial, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("trace field 'initial' is not valid base64") from None
    times = record.get("initial_times", 1)
    if type(times) is not int or not 1 <= times <= MAX_INITIAL_BYTES:
        raise ValueError(f"trace field 'initial_times' must be a whole number from 1 to {MAX_INITIAL_BYTES}")
    if len(initial_bytes) * times > MAX_INITIAL_BYTES:
        raise ValueError(f"trace field 'initial' holds more than {MAX_INITIAL_BYTES} bytes")
    initial_bytes *= times
    capacity = record.get("capacity")
    if capacity is not None and (type(capacity) is not int or not 1 <= capacity <= MAX_INTEGER):
        raise ValueError(f"trace field 'capacity' must be a positive integer or null, got {capacity!r}")
    policy = record.get("policy", "reject")
    if policy not in POLICIES:
        raise ValueError(f"trace field 'policy' must be one of {', '.join(POLICIES)}, got {policy!r}")
    durable = record.get("durable", False)
    if type(durable) is not bool:
        raise TypeError("trace field 'durable' must be true or false")
    durability = record.get("durability", "per_operation")
    if durability not in DURABILITY_MODES:
        raise ValueError(f"trace field 'durability' must be one of {', '.join(DURABILITY_MODES)}, got {durability!r}")
    if durability != "per_operation" and not durable:
        raise ValueError("trace field 'durability' names a mode of a durable journal, but 'durable' is not true")
    start_revision = record.get("start_revision", 0)
    if type(start_revision) is not int or not 0 <= start_revision <= MAX_INTEGER:
        raise TypeError("trace field 'start_revision' must be a whole number, at least 0")
    chunk_bytes = record.get("chunk_bytes")
    if chunk_bytes is not None and (type(chunk_bytes) is not int or not 1 <= chunk_bytes <= MAX_INTEGER):
        raise TypeError("trace field 'chunk_bytes' must be a whole number of bytes, at least 1")
    operations = record.get("operations")
    if not isinstance(operations, list):
        raise TypeError("trace field 'operations' must be a list")
    if len(operations) > MAX_OPERATIONS:
        raise ValueError(f"trace field 'operations' holds more than {MAX_OPERATIONS} operations")
    parsed = []
    for index, item in enumerate(operations):
        where = f"trace operation {index + 1}"
        _check_integers(item, where)
        try:
            operation = operation_from_json(item)
        except (ValueError, TypeError) as error:
            raise type(error)(f"{where}: {error}") from None
        if not family.accepts(operation):
            raise ValueError(f"{where}: {operation.kind!r} is not an operation of the {family.name} family")
        parsed.append(operation)
    inserted = sum(_inserted(operation) for operation in parsed)
    if (len(initial_bytes) + inserted) * (len(parsed) + 1) > MAX_REPLAY_BYTES:
        raise ValueError(
            f"{len(parsed)} operations on a buffer of up to {len(initial_bytes) + inserted} bytes would step "
            f"through more than {MAX_REPLAY_BYTES >> 20} MiB of buffers: no counterexample is that large"
        )
    if chunk_bytes is not None and len(initial_bytes) + inserted > chunk_bytes * MAX_ASKED_CHUNKS:
        raise ValueError(
            f"a buffer of up to {len(initial_bytes) + inserted} bytes in chunks of {chunk_bytes} bytes would hold "
            f"more than {MAX_ASKED_CHUNKS} chunks: no counterexample asks for that many"
        )
    return family, BufferConfig(initial_bytes, capacity, policy, durable, durability, start_revision, chunk_bytes), parsed
