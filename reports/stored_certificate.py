"""Reading a JSON certificate back: the one reader of ``rollcert-certificate/2``.

A certificate is passed around (CI artefacts, bug reports, a colleague's mail)
and read by people who never saw the run, so the file is untrusted input
(SPEC §6a, §8). This reader

- reads only a regular file, up to a size limit (:mod:`rollcert.targets.input_files`);
- parses it and checks it against the shipped JSON Schema
  (``certificate.schema.json``, with :mod:`rollcert.targets.json_schema`), then
  checks what a schema cannot say (base64, the trace, the operations), so that
  anything malformed is one :class:`CertificateFileError` line, exit status 3;
- rebuilds the verdicts and each counterexample from what the file records —
  every step's operation, the model's allowed outcomes and the target's observed
  outcome — and never imports, builds, starts or runs the target the file names:
  the target comes back as a stand-in whose factory refuses to build (replaying a
  counterexample is ``rollcert replay TARGET --certificate CERT``, with the target
  given on the command line);
- cleans every string the file controls with :func:`~rollcert.targets.adapter.visible`
  as it reads it, so no control character reaches any renderer (terminal, Markdown,
  JUnit, HTML each escape what is left their own way).

A certificate written before step outcomes were recorded still reads; its
counterexample is ``None`` and :attr:`StoredCertificate.unrecorded` names the
property, for a one-line "replay it" message.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from rollcert.model.operations import operation_from_json
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import HistoryCall
from rollcert.stateful_tests.verdicts import OrderedCall
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.verdicts import StuckCall
from rollcert.stateful_tests.world import byte_set_of
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.adapter import UsageError
from rollcert.targets.adapter import visible
from rollcert.targets.input_files import read_input_text
from rollcert.targets.json_schema import Checker
from rollcert.targets.json_schema import SchemaMismatch

CERTIFICATE_SCHEMA = "rollcert-certificate/2"


class CertificateFileError(UsageError):
    """A file that is not a certificate this release can read; the message says
    which file and the first thing wrong with it (one line, exit status 3)."""


@cache
def certificate_checker() -> Checker:
    """The shipped schema (package data beside this module), loaded once."""
    text = resources.files("rollcert.reports").joinpath("certificate.schema.json").read_text(encoding="utf-8")
    return Checker(json.loads(text))


def clean(text: object) -> str:
    """One line of file-controlled text, every control and format character escaped."""
    return visible(str(text))


def clean_lines(text: object) -> str:
    """Several lines of file-controlled text (an explanation, a timeline): each line
    cleaned, the line breaks kept."""
    return "\n".join(visible(line) for line in str(text).split("\n"))


def _refused(where: str, problem: str) -> CertificateFileError:
    return CertificateFileError(f"{where} is not a certificate rollcert can read: {clean(problem)}")


@dataclass(frozen=True)
class StoredExhaustive:
    """The exhaustive search's result as the file records it (for the exit status
    and the summary line; its steps are not drawn)."""

    verdict: str
    summary_text: str
    reason: str = ""
    violation: None = None

    def summary(self) -> str:
        return self.summary_text


@dataclass(frozen=True)
class StoredCertificate:
    """A certificate read back from its file: the verdicts, each recorded
    counterexample, and what the file said about itself."""

    data: CertificateData
    #: The file's own ``created`` and ``exit_status`` (the latter is recomputed in ``data``).
    created: str
    recorded_exit_status: int | None
    #: Properties whose counterexample the file holds without step outcomes (an older release).
    unrecorded: tuple[str, ...]
    #: The counterexamples' traces as the file holds them, by property (for ``replay --certificate``).
    traces: dict[str, dict[str, Any]]
    #: The file's size: the bound on what drawing it may cost.
    size: int


def _refuse_building(config: BufferConfig) -> Any:
    raise TargetError(
        "a certificate read from a file does not run its target; replay a counterexample with "
        "rollcert replay TARGET --certificate CERT --property ID"
    )


def _stand_in_target(info: dict[str, Any]) -> Target:
    """The target as the certificate describes it, which cannot be built."""
    known = {capability.value: capability for capability in Capability}
    capabilities = frozenset(known[name] for name in info.get("capabilities", ()) if name in known)
    set_aside = tuple(
        KnownFinding(clean(name), clean(description), lambda state, operation: False)
        for name, description in dict(info.get("set_aside") or {}).items()
    )
    return Target(
        clean(info["name"]), clean(info.get("version", "")), capabilities, _refuse_building,
        description=clean(info.get("description", "")), set_aside=set_aside,
    )


def _bytes(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where} is not valid base64") from None


def _observed(record: dict[str, Any], where: str) -> tuple[Observed, str]:
    """One side's outcome, and a note when the file keeps only a window of its bytes."""
    buffer = _bytes(record["buffer"], f"{where}.buffer")
    note = ""
    if "buffer_length" in record:
        start, length = int(record.get("buffer_start", 0)), int(record["buffer_length"])
        note = f"(the certificate keeps bytes [{start}, {start + len(buffer)}) of this {length}-byte buffer)"
    error = record["error"]
    return Observed(None if error is None else clean(error), buffer, record["depth"], record["revision"]), note


def _step(record: dict[str, Any], where: str) -> StepRecord | None:
    """One recorded step, or ``None`` if the file does not record its outcomes."""
    if not all(key in record for key in ("before", "expected", "actual", "ok")):
        return None
    operation = operation_from_json(record["operation"])
    expected, _ = _observed(record["expected"], f"{where}.expected")
    actual, elision = _observed(record["actual"], f"{where}.actual")
    allowed = tuple(
        _observed(item, f"{where}.allowed[{n}]")[0] for n, item in enumerate(record.get("allowed") or ())
    )
    message = clean(record.get("implementation_message", ""))
    return StepRecord(
        index=int(record.get("index", 0)),
        operation=operation,
        before=_bytes(record["before"], f"{where}.before"),
        expected=expected,
        actual=actual,
        ok=record["ok"],
        sut_message=" ".join(part for part in (message, elision) if part),
        context=tuple((clean(label), clean(text)) for label, text in dict(record.get("context") or {}).items()),
        note=clean(record.get("note", "")),
        allowed=allowed if len(allowed) > 1 else (),
        harm=clean(record.get("harm", "")),
    )


def _machine(property_id: str, record: dict[str, Any], family_name: str) -> str:
    """The machine that found a counterexample: the file says so (``machine``);
    older files name it in R0's reason ("found by the R2 machine")."""
    import re

    named = record["counterexample"].get("machine")
    if isinstance(named, str) and named in _property_ids():
        return named
    found = re.search(r"found (?:by the (\w+) machine|while exploring (\w+))", str(record.get("reason", "")))
    if found and (found.group(1) or found.group(2)) in _property_ids():
        return found.group(1) or found.group(2)
    family = family_named(family_name)
    return property_id if property_id in family.property_ids else family.property_ids[0]


@cache
def _property_ids() -> frozenset[str]:
    from rollcert.model.properties import ALL_PROPERTY_IDS

    return frozenset(ALL_PROPERTY_IDS)


def _finite(value: object, where: str) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise ValueError(f"{where} is not a finite number")
    return number


def _history(stored: dict[str, Any], where: str) -> ConcurrentHistory:
    """An R7 counterexample's recorded history; ``ValueError`` if its parts do not
    refer to each other (an order or a stuck call naming a call it does not have)."""
    calls = []
    for n, call in enumerate(stored["calls"]):
        returned = call["returned"]
        calls.append(HistoryCall(
            int(call["id"]), clean(call["thread"]), _finite(call["called"], f"{where}.calls[{n}].called"),
            None if returned is None else _finite(returned, f"{where}.calls[{n}].returned"),
            clean(call["action"]), clean(call["result"]),
        ))
    ids = [call.id for call in calls]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: two calls have the same id")
    order = tuple(
        OrderedCall(int(o["call"]), _bytes(o["buffer"], f"{where}.order[{n}].buffer"), int(o["depth"]), int(o["revision"]))
        for n, o in enumerate(stored["order"])
    )
    stuck = tuple(
        StuckCall(int(s["call"]), clean(s["allowed"]), tuple(clean(text) for text in s.get("elsewhere") or ()))
        for s in stored["stuck"]
    )
    named = [o.call for o in order] + [s.call for s in stuck]
    if any(call_id not in set(ids) for call_id in named):
        raise ValueError(f"{where}: the order or a stuck call names a call the history does not have")
    return ConcurrentHistory(
        tuple(clean(line) for line in stored["program"]), tuple(calls), order, stuck,
        int(stored["failed"]), int(stored["runs"]),
    )


def _counterexample(
    property_id: str, record: dict[str, Any], target_name: str, stored: dict[str, Any] | None = None
) -> Counterexample | None:
    """The counterexample the file records for ``property_id`` (or ``stored``, one
    of its findings), rebuilt from what it records; ``None`` for an older file
    that recorded no step outcomes."""
    if stored is None:
        stored = record["counterexample"]
    history = (
        _history(stored["history"], f"properties.{property_id}.counterexample.history") if "history" in stored else None
    )
    if not stored["steps"] and history is None:
        raise ValueError("a counterexample with no steps (and no concurrent history)")
    family, config, _ = parse_trace(json.dumps(stored["trace"]))
    steps = []
    for position, step in enumerate(stored["steps"]):
        rebuilt = _step(step, f"properties.{property_id}.counterexample.steps[{position}]")
        if rebuilt is None:
            return None
        if not family.accepts(rebuilt.operation):
            raise ValueError(f"step {position + 1} of {property_id}: {rebuilt.operation.kind!r} is not an operation of the {family.name} family")
        steps.append(rebuilt)
    return Counterexample(
        _machine(property_id, {**record, "counterexample": stored}, family.name), target_name, config.initial, config.capacity, config.policy,
        tuple(steps), clean_lines(stored.get("explanation", "")), config.durable, family.name, config.durability,
        history,
        broken=tuple(name for name in (clean(item) for item in stored.get("broken") or ()) if name in _property_ids()),
        harm=clean(stored.get("harm", "")),
        start_revision=config.start_revision,
        chunk_bytes=config.chunk_bytes,
    )


def _findings(
    property_id: str, record: dict[str, Any], target_name: str, first: Counterexample | None, where: str
) -> list[Counterexample]:
    """Every finding the file lists for ``property_id`` (issue 43), the
    counterexample first; a file that lists none has its counterexample alone."""
    if first is None:
        return []
    findings = [first]
    for position, stored in enumerate(record.get("findings") or ()):
        if position == 0:
            continue  # the counterexample itself, read above
        try:
            found = _counterexample(property_id, record, target_name, stored)
        except (ValueError, TypeError) as error:
            raise _refused(where, f"properties.{property_id}.findings[{position}]: {error}") from None
        if found is not None:
            findings.append(found)
    return findings


def _result(property_id: str, record: dict[str, Any]) -> PropertyResult:
    return PropertyResult(
        property_id=property_id,
        verdict=record["verdict"],
        title=clean(record.get("title", "")),
        examples=int(record.get("examples", 0)),
        steps=int(record.get("steps", 0)),
        seconds=float(record.get("seconds", 0.0)),
        coverage={clean(name): int(count) for name, count in dict(record.get("coverage") or {}).items()},
        missing_situations=[clean(text) for text in record.get("missing_situations") or ()],
        reason=clean_lines(record.get("reason", "")),
        figures={clean(name): float(value) for name, value in dict(record.get("figures") or {}).items()},
        found_by=clean(record.get("found_while_exploring", "")),
        world=_world(record.get("world")),
        model_branches=_model_branches(record.get("model_branches")),
    )


def _model_branches(stored: object) -> dict[str, Any]:
    """A model-branches record as the schema checked it, its names cleaned."""
    if not isinstance(stored, dict):
        return {}
    return {
        "measured": bool(stored.get("measured")),
        "required": [clean(name) for name in stored.get("required") or ()],
        "reached": [clean(name) for name in stored.get("reached") or ()],
        "set_aside": [clean(name) for name in stored.get("set_aside") or ()],
    }


def _world(stored: object) -> dict[str, Any]:
    """A world record as the schema checked it, every text cleaned for the terminal and the page."""
    if not isinstance(stored, dict):
        return {}
    world: dict[str, Any] = {}
    for key, value in stored.items():
        if key in ("dimensions",):
            world[key] = {clean(name): int(count) for name, count in dict(value).items()}
        elif key == "not_exercised":
            world[key] = {clean(name): clean(why) for name, why in dict(value).items()}
        elif key == "declared":
            world[key] = {
                clean(name): (item if isinstance(item, (bool, int)) else clean(item)) for name, item in dict(value).items()
            }
        elif key in ("narrowed",):
            world[key] = bool(value)
        elif key == "bytes_sent":
            if byte_set_of(value) is not None:  # anything but 64 hex digits is dropped, never shown
                world[key] = value
        elif key == "reach" and isinstance(value, dict):
            world[key] = _reach(value)
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            continue  # a key a later release adds: never read
        else:
            world[clean(key)] = value if isinstance(value, int) else clean(value)
    return world


def _reach(stored: dict[str, Any]) -> dict[str, Any]:
    """A world's reach (issue 42) as the schema checked it: whole numbers, and
    names cleaned for the terminal and the page; anything else is dropped."""
    reach: dict[str, Any] = {}
    for key, value in stored.items():
        if key in ("largest_revision", "largest_revision_gap"):
            if value is None or (type(value) is int and value >= 0):
                reach[key] = value
        elif key in ("buffers_past", "edits_across", "categories", "normal_forms", "small_chunks") and isinstance(value, dict):
            reach[key] = {clean(name): count for name, count in value.items() if type(count) is int and count >= 0}
    return reach


def certificate_from_json(record: object, where: str = "the certificate", size: int = 0) -> StoredCertificate:
    """A parsed JSON document as a :class:`StoredCertificate`; :class:`CertificateFileError`
    naming the first thing wrong (nothing is run, whatever the file names)."""
    try:
        certificate_checker().check(record)
    except SchemaMismatch as mismatch:
        raise _refused(where, str(mismatch)) from None
    assert isinstance(record, dict)
    target = _stand_in_target(record["target"])
    results: dict[str, PropertyResult] = {}
    unrecorded: list[str] = []
    traces: dict[str, dict[str, Any]] = {}
    for property_id, stored in record["properties"].items():
        if property_id not in _property_ids():
            raise _refused(where, f"properties: {property_id!r} is not a property of this release")
        name = property_id
        result = _result(name, stored)
        if "counterexample" in stored:
            traces[name] = stored["counterexample"]["trace"]
            try:
                result.counterexample = _counterexample(name, stored, target.name)
            except (ValueError, TypeError) as error:
                raise _refused(where, f"properties.{name}.counterexample: {error}") from None
            if result.counterexample is None:
                unrecorded.append(name)
            result.findings = _findings(name, stored, target.name, result.counterexample, where)
        results[name] = result
    exhaustive = None
    if "exhaustive" in record:
        stored_search = record["exhaustive"]
        exhaustive = StoredExhaustive(
            stored_search["verdict"], clean(stored_search.get("summary", stored_search["verdict"])),
            clean_lines(stored_search.get("reason", "")),
        )
    data = CertificateData(target, clean(record.get("profile", "")), int(record.get("seed", 0)), results, exhaustive)
    if record.get("interrupted"):
        data.interrupted = clean(record["interrupted"])
    status = record.get("exit_status")
    return StoredCertificate(
        data, clean(record.get("created", "")), int(status) if status is not None else None,
        tuple(unrecorded), traces, size,
    )


def read_certificate_file(path: Path) -> StoredCertificate:
    """The certificate in the file at ``path``; :class:`CertificateFileError` (or the
    input file's own error) for anything that is not one."""
    text = read_input_text(path, "the certificate")
    where = clean(str(path))
    try:
        record = json.loads(text)
    except RecursionError:
        raise _refused(where, "it is nested too deeply to be a certificate") from None
    except ValueError as error:
        raise _refused(where, f"it is not JSON ({error})") from None
    return certificate_from_json(record, where, len(text))


