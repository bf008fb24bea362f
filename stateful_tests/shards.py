"""Shards: a certification cut into work units any scheduler can run, and merged back.

SPEC §7: "a certification splits into shards (target, property, round seed)
that any scheduler can run, and merges into the certificate a serial run
gives". A property of a step family (rollback R0–R6, diffs S1–S3) runs up to
``profile.rounds`` rounds, round r seeded ``seed + r * ROUND_SEED_STRIDE``, and
stops after the first round that found a violation (or broke) or after which
every situation was reached. Rounds share nothing but sums — each builds a
fresh machine, seeded by its number, with no example database — so a round
runs alone as well as after the others: one work unit per round (a shard takes
a contiguous block of them, see :func:`shard_units`). The merge adds
the rounds up in order and stops where the serial loop stops; rounds past that
point that found nothing were run for nothing (a shard cannot know, before the
others ran, that an earlier round will end the property) and are dropped. The
result is the serial run's, field for field: the counterexample is the first
violating round's, minimised in its unit exactly as serially. The stopping
rule decides what to run, never what to forget: a round past that point that
ran anyway and found something is kept, as if the serial run had gone on to it
(:func:`merge_rounds`), and a unit nobody reported (:class:`Missing`) leaves
its property ``unknown`` at best.

A partial is untrusted input (SPEC §8): :func:`read_partial` checks it against
the shipped schema (``partial.schema.json``, with
:mod:`rollcert.targets.json_schema`, so that no ``jsonschema`` is needed at run
time), and :func:`merge` checks that each unit is claimed once, by the shard
whose block holds it, and agrees with the others; anything else is one
:class:`ShardError` line, exit status 3.

R7 (concurrent programs, :class:`~rollcert.stateful_tests.program_family.ProgramFamily`)
is one unit for the whole property: its rounds decide together when to stop
(it runs at least two, and re-runs the minimal program to count its failures),
so a round of it is not a function of its own seed alone.

A partial certificate (``rollcert-partial/2`` JSON) records the units one shard
ran, each with its whole result (counterexample steps included, so the merge
never runs the target) and what it needs to decide as the serial run would.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from rollcert.model.operations import operation_from_json
from rollcert.model.operations import operation_to_json
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests import model_coverage
from rollcert.stateful_tests.causes import restated
from rollcert.stateful_tests.causes import unknown_reason
from rollcert.stateful_tests.causes import unreached_dimensions
from rollcert.stateful_tests.certify import FURTHER_FIGURES
from rollcert.stateful_tests.certify import RoundRecord
from rollcert.stateful_tests.certify import _certify_property
from rollcert.stateful_tests.certify import assemble
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.certify import figures_of
from rollcert.stateful_tests.certify import process_state_kept
from rollcert.stateful_tests.certify import without_local_constants
from rollcert.stateful_tests.corpus import replay_corpus
from rollcert.stateful_tests.families import family_of
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.judge import watching_for_ctrl_c
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.progress_events import ProgressSink
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import HistoryCall
from rollcert.stateful_tests.verdicts import OrderedCall
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.verdicts import StuckCall
from rollcert.stateful_tests.world import merge_worlds
from rollcert.stateful_tests.world import unreached
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.adapter import visible
from rollcert.targets.input_files import InputFileError
from rollcert.targets.input_files import read_input_text
from rollcert.targets.json_schema import Checker
from rollcert.targets.json_schema import SchemaMismatch
from rollcert.targets.portable import portable_target

#: /2: each unit carries the byte values its round sent (a /1 partial merged a wrong distinct_bytes_sent).
PARTIAL_SCHEMA = "rollcert-partial/2"
#: A partial certificate larger than this is not one (a unit's counterexample is a handful of steps).
MAX_PARTIAL_BYTES = 64 << 20


class ShardError(ValueError):
    """Partials that cannot be merged, or a file that is not a partial: one line."""


@dataclass(frozen=True, order=True)
class Unit:
    """One work unit: a property and one round of it, or (``round`` None) the whole property."""

    property_id: str
    round: int | None

    @property
    def name(self) -> str:
        """``R2::shard-3`` (round 3 of R2), or ``R7`` for a whole property: the
        pytest item's last part, and what a worker process is given."""
        return self.property_id if self.round is None else f"{self.property_id}::shard-{self.round}"

    @staticmethod
    def parse(name: str) -> Unit:
        property_id, _, rest = name.partition("::shard-")
        return Unit(property_id, int(rest) if rest else None)


def units(property_ids: Sequence[str], profile: Profile) -> list[Unit]:
    """Every work unit of a certification, in the serial order."""
    listed = []
    for property_id in ALL_PROPERTY_IDS:
        if property_id not in property_ids:
            continue
        if isinstance(family_of(property_id), PropertyFamily):
            listed += [Unit(property_id, r) for r in range(profile.rounds)]
        else:
            listed.append(Unit(property_id, None))
    return listed


def shard_units(property_ids: Sequence[str], profile: Profile, index: int, count: int) -> list[Unit]:
    """Shard ``index`` of ``count`` (from 1): the ``index``-th of ``count``
    contiguous blocks of the units, as equal in number as they divide.

    Blocks, not every ``count``-th unit: a property's rounds then mostly fall in
    one shard, which skips the rounds its own earlier ones make useless
    (:func:`needed`). Dealt round-robin, each round of a property landed in
    another shard and every shard ran rounds the serial run never needed:
    measured on the bundled target (quick profile), three round-robin shards ran
    2.6 times the serial run's examples between them."""
    return shard_units_of(units(property_ids, profile), index, count)


@dataclass(frozen=True)
class UnitResult:
    """What one unit gave: its result, the round's record, and the corpus counts
    (the first unit of a property replays its corpus)."""

    unit: Unit
    result: PropertyResult
    record: RoundRecord
    corpus: tuple[int, int] | None = None


def run_unit(
    target: Target, name: str, profile: Profile, seed: int, *, progress: ProgressSink | None = None,
    corpus: Path | None = None,
) -> UnitResult:
    """Run the unit called ``name`` (:attr:`Unit.name`). The signature of
    ``certify_property``, so that ``certify -j N``'s worker processes run units
    as they run properties; ``progress`` hears the unit's own examples, steps and
    first violation, under its property (the caller sums a property's units)."""
    unit = Unit.parse(name)
    record = RoundRecord()
    counts = None
    if corpus is not None and unit.round in (None, 0):
        found = replay_corpus(target, corpus, [unit.property_id]).properties.get(unit.property_id)
        if found is not None:
            counts = (found.replayed, found.failed)
            if found.result is not None:
                return UnitResult(unit, found.result, record, counts)
    if unit.round is None:
        result = certify_property(target, unit.property_id, profile, seed, progress=progress)
        return UnitResult(unit, result, record, counts)
    with without_local_constants(), watching_for_ctrl_c(), process_state_kept():
        result = _certify_property(target, unit.property_id, profile, seed, progress, unit.round, record)
    return UnitResult(unit, result, record, counts)


def needed(unit: Unit, earlier: Sequence[UnitResult]) -> bool:
    """Whether ``unit`` can matter, given the ``earlier`` rounds of its property
    this shard ran. A shard holding rounds of its own that already end the
    property (a violation, an error, no machine at all, or every situation
    reached) knows the serial run stopped before ``unit``: whatever the other
    shards' earlier rounds did only adds to what it holds. The one saving a
    shard can make alone; the merge checks it never needs a skipped unit."""
    if unit.round is None:
        return True
    mine = [d for d in earlier if d.unit.round is not None and d.unit.round < unit.round]
    if any(not d.record.ran or d.result.verdict in ("violated", "error") for d in mine):
        return False
    reached: Counter[str] = Counter()
    for done in mine:
        reached.update(done.result.coverage)
    world = merge_worlds(d.result.world for d in mine)
    branches = model_coverage.merged([d.result.model_branches for d in mine])
    return (
        not mine
        or not all(reached[name] for name, _ in mine[0].record.situations)
        or bool(unreached(world))
        or bool(model_coverage.unreached(branches))
    )


@dataclass(frozen=True)
class Missing:
    """A unit nobody reported: a pytest item deselected, interrupted or whose
    worker died. Unlike a unit its shard skipped (``None``, which :func:`needed`
    proves the serial run never reaches), nobody knows what it would have found,
    so its property is at best ``unknown``, never ``passed``."""

    unit: Unit


def _ends(result: PropertyResult) -> bool:
    return result.verdict in ("violated", "error")


def _agree(property_id: str, present: Sequence[UnitResult]) -> None:
    """Refuse units of one property that no run gives together (:class:`ShardError`):
    a result of another property, a unit that never ran yet passed (a unit that
    did not run is not assessed, broke, or replayed a corpus finding), a property
    both not assessed and run, rounds that disagree on the situations to reach."""
    ran = [d for d in present if d.record.ran]
    for done in present:
        if done.result.property_id != property_id or done.unit.property_id != property_id:
            raise ShardError(f"conflicting units: {done.unit.name} holds a result of {done.result.property_id}")
        if not done.record.ran and done.unit.round is not None and done.result.verdict in ("passed", "unknown"):
            raise ShardError(f"conflicting units: {done.unit.name} never ran, yet says {done.result.verdict}")
        if ran and done.result.verdict == "not_assessed":
            raise ShardError(f"conflicting units: {done.unit.name} is not assessed, {ran[0].unit.name} ran")
    if any(d.record.situations != ran[0].record.situations for d in ran):
        raise ShardError(f"conflicting units: the rounds of {property_id} name different situations")


def _not_run(unit: Unit) -> PropertyResult:
    prop = PROPERTIES.get(unit.property_id)
    return PropertyResult(
        unit.property_id, "unknown", prop.title if prop is not None else "",
        reason=f"the work unit {unit.name} did not run",
    )


def merge_rounds(done: Sequence[UnitResult | Missing | None]) -> PropertyResult:
    """One property's result from its units in round order (``None``: a unit its
    shard skipped, see :func:`needed`; :class:`Missing`: a unit nobody reported).

    The serial loop's stopping rule (stop at the first violation or error, or once
    every situation was reached) decides which rounds count, so that a run of
    every round merges, field for field, into the serial run's certificate. It
    decides what a run needs to *run*, never what a certificate may *forget*:
    where a unit past that point ran anyway (a pytest item per round, a shard
    that could not know) and found a violation, an error or another rule's
    finding, the result is the one the serial run would have given had it run
    on to that round. A violation any unit found beats an error another unit
    met (an error says nothing about the rules). A missing unit leaves the
    property ``unknown`` at best."""
    property_id = next(d.unit.property_id for d in done if d is not None)
    present = [d for d in done if isinstance(d, UnitResult)]
    missing = [d.unit for d in done if isinstance(d, Missing)]
    first = done[0]
    if first is None:
        raise ShardError("the first round of a property was skipped: the partial certificates are inconsistent")
    if not present:
        return _not_run(missing[0])
    _agree(property_id, present)
    ran = [d for d in present if d.record.ran]
    if isinstance(first, UnitResult) and (
        first.unit.round is None or (not first.record.ran and first.result.verdict != "error")
    ):
        return first.result  # the whole property (R7), not assessed, no machine, or from the corpus
    if not ran:  # every round present broke before its machine ran (or its worker died)
        return next(d for d in present if _ends(d.result)).result
    names = [name for name, _ in ran[0].record.situations]
    # Where the serial loop stops: a round that ends the property, or once everything was reached.
    stop = len(done) - 1
    reached: Counter[str] = Counter()
    worlds: list[dict[str, Any]] = []
    branch_records: list[dict[str, Any]] = []
    for position, item in enumerate(done):
        if item is None:
            raise ShardError(f"a round of {property_id} the merge needs was skipped by its shard")
        if isinstance(item, Missing):
            continue
        if _ends(item.result):
            stop = position
            break
        reached.update(item.result.coverage)
        worlds.append(item.result.world)
        branch_records.append(item.result.model_branches)
        if (
            all(reached[name] for name in names)
            and not unreached(merge_worlds(worlds))
            and not model_coverage.unreached(model_coverage.merged(branch_records))
        ):
            stop = position
            break
    # What any unit that ran found is kept: the run goes on to the round that found it.
    violated = [i for i, d in enumerate(done) if isinstance(d, UnitResult) and d.result.verdict == "violated"]
    ending_at = violated or [i for i, d in enumerate(done) if isinstance(d, UnitResult) and _ends(d.result)]
    if ending_at:
        end = ending_at[0]
    else:
        elsewhere = [i for i, d in enumerate(done) if isinstance(d, UnitResult) and d.result.found_elsewhere]
        end = max([stop, *elsewhere])
    counted = [d for d in done[: end + 1] if isinstance(d, UnitResult)]
    ending = counted[-1].result if ending_at else None
    examples = steps = 0
    seconds = 0.0
    reached = Counter()
    tallies: Counter[str] = Counter()
    worlds = []
    bytes_sent = 0
    for unit in counted:
        result = unit.result
        examples, steps, seconds = examples + result.examples, steps + result.steps, seconds + result.seconds
        reached.update(result.coverage)
        tallies.update(unit.record.tallies)
        worlds.append(result.world)
        bytes_sent |= unit.record.bytes_sent
    found_elsewhere: dict[str, Counterexample] = {}
    for unit in present:  # every unit's, the first of each, as one run keeps
        for other, found in unit.result.found_elsewhere.items():
            found_elsewhere.setdefault(other, found)
    family = family_of(property_id)
    assert isinstance(family, PropertyFamily)
    merged = PropertyResult(property_id, "passed", ran[0].result.title)
    if ending is not None:
        merged.verdict, merged.reason, merged.counterexample = ending.verdict, ending.reason, ending.counterexample
        merged.findings = list(ending.findings)  # that round's, each minimised in its unit as serially
        if merged.reason and merged.counterexample is not None:  # "... never succeeded: 0 of N calls", all rounds'
            merged.reason = restated(merged.reason, tallies)
            explanation = restated(merged.counterexample.explanation, tallies)
            merged.counterexample = replace(merged.counterexample, explanation=explanation)
            if merged.findings:
                merged.findings[0] = merged.counterexample
    merged.found_elsewhere = dict(sorted(found_elsewhere.items()))
    merged.seconds = round(seconds, 3)
    merged.examples, merged.steps = examples, steps
    merged.coverage = {name: reached[name] for name in names}
    merged.world = merge_worlds(worlds)
    merged.model_branches = model_coverage.merged([unit.result.model_branches for unit in counted])  # a union
    if merged.world:
        # The byte values the rounds sent, counted once each as the serial run's one
        # tally counts them: a union, not the largest of the rounds' counts.
        merged.world["distinct_bytes_sent"] = bin(bytes_sent).count("1")
    if merged.verdict == "passed":
        situations_missed = [text for name, text in ran[0].record.situations if not reached[name]]
        branches_missed = [f"model branch {name}" for name in model_coverage.unreached(merged.model_branches)]
        merged.missing_situations = situations_missed + unreached(merged.world) + branches_missed
        if merged.missing_situations:
            merged.verdict = "unknown"
            dimensions_missed = unreached_dimensions(merged.world or {})
            merged.reason = unknown_reason(property_id, situations_missed + branches_missed, dimensions_missed, tallies)
    if missing and merged.verdict in ("passed", "unknown"):
        said = f"the work units {', '.join(u.name for u in missing)} did not run"
        merged.verdict, merged.reason = "unknown", f"{said}; {merged.reason}" if merged.reason else said
    merged.figures = figures_of(family, tallies)
    if ending is not None:  # how far that round's search for further findings ran (issue 43)
        merged.figures |= {name: ending.figures[name] for name in FURTHER_FIGURES if name in ending.figures}
    return merged


# -- partial certificates -----------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError("expected base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not valid base64") from None


def _observed_json(observed: Observed) -> dict[str, Any]:
    return {"error": observed.error, "buffer": _b64(observed.buffer), "depth": observed.depth, "revision": observed.revision}


def _observed(record: dict[str, Any]) -> Observed:
    return Observed(record["error"], _bytes(record["buffer"]), record["depth"], record["revision"])


def _history_json(history: ConcurrentHistory) -> dict[str, Any]:
    return {
        "program": list(history.program),
        "calls": [[c.id, c.thread, c.called, c.returned, c.action, c.result] for c in history.calls],
        "order": [[o.call, _b64(o.buffer), o.depth, o.revision] for o in history.order],
        "stuck": [[s.call, s.allowed, list(s.elsewhere)] for s in history.stuck],
        "failed": history.failed, "runs": history.runs,
    }


def _history(record: dict[str, Any]) -> ConcurrentHistory:
    return ConcurrentHistory(
        tuple(str(line) for line in record["program"]),
        tuple(HistoryCall(int(i), str(t), float(c), None if r is None else float(r), str(a), str(x))
              for i, t, c, r, a, x in record["calls"]),
        tuple(OrderedCall(int(c), _bytes(b), int(d), int(r)) for c, b, d, r in record["order"]),
        tuple(StuckCall(int(c), str(a), tuple(str(e) for e in elsewhere)) for c, a, elsewhere in record["stuck"]),
        int(record["failed"]), int(record["runs"]),
    )


def _counterexample_json(found: Counterexample) -> dict[str, Any]:
    return {
        "history": None if found.history is None else _history_json(found.history),
        "property": found.property_id, "target": portable_target(found.target), "initial": _b64(found.initial),
        "capacity": found.capacity, "policy": found.policy, "explanation": found.explanation,
        "durable": found.durable, "family": found.family, "durability": found.durability,
        "broken": list(found.broken), "harm": found.harm, "start_revision": found.start_revision,
        "chunk_bytes": found.chunk_bytes,
        "steps": [
            {
                "index": step.index, "operation": operation_to_json(step.operation), "before": _b64(step.before),
                "expected": _observed_json(step.expected), "actual": _observed_json(step.actual), "ok": step.ok,
                "sut_message": step.sut_message, "context": [list(pair) for pair in step.context], "note": step.note,
                "harm": step.harm,
            }
            for step in found.steps
        ],
    }


def _counterexample(record: dict[str, Any]) -> Counterexample:
    steps = tuple(
        StepRecord(
            step["index"], operation_from_json(step["operation"]), _bytes(step["before"]), _observed(step["expected"]),
            _observed(step["actual"]), step["ok"], step["sut_message"],
            tuple((str(label), str(text)) for label, text in step["context"]), step["note"],
            harm=str(step.get("harm", "")),
        )
        for step in record["steps"]
    )
    return Counterexample(
        record["property"], record["target"], _bytes(record["initial"]), record["capacity"], record["policy"], steps,
        record["explanation"], record["durable"], record["family"], record["durability"],
        None if record["history"] is None else _history(record["history"]),
        broken=tuple(str(name) for name in record.get("broken", ())), harm=str(record.get("harm", "")),
        start_revision=int(record.get("start_revision", 0)),
        chunk_bytes=None if record.get("chunk_bytes") is None else int(record["chunk_bytes"]),
    )


def _result_json(result: PropertyResult) -> dict[str, Any]:
    """Every field of ``result``, so that a field added to :class:`PropertyResult`
    travels too; one that is not plain JSON (other than the counterexample) is
    refused here, loudly, rather than dropped from a merged certificate."""
    record: dict[str, Any] = {}
    for item in fields(PropertyResult):
        value = getattr(result, item.name)
        if item.name == "counterexample":
            record[item.name] = None if value is None else _counterexample_json(value)
            continue
        if item.name == "found_elsewhere":
            record[item.name] = {pid: _counterexample_json(found) for pid, found in value.items()}
            continue
        if item.name == "findings":
            record[item.name] = [_counterexample_json(found) for found in value]
            continue
        try:
            json.dumps(value)
        except TypeError:
            raise TypeError(f"PropertyResult.{item.name} does not travel in a partial certificate: teach shards.py") from None
        record[item.name] = value
    return record


def _distinct(findings: list[Counterexample]) -> list[Counterexample]:
    """``findings`` once per (rules broken, harm signature), in order: a partial
    that lists one finding twice is read as listing it once."""
    distinct: dict[tuple[tuple[str, ...], str], Counterexample] = {}
    for found in findings:
        distinct.setdefault(found.finding_key(), found)
    return list(distinct.values())


def _result(record: dict[str, Any]) -> PropertyResult:
    found = record["counterexample"]
    values = {item.name: record[item.name] for item in fields(PropertyResult)}
    values["counterexample"] = None if found is None else _counterexample(found)
    values["found_elsewhere"] = {str(pid): _counterexample(item) for pid, item in dict(values["found_elsewhere"]).items()}
    values["findings"] = _distinct([_counterexample(item) for item in list(values["findings"])])
    if not isinstance(values["property_id"], str) or not isinstance(values["verdict"], str):
        raise TypeError("a unit's result needs a property and a verdict")
    return PropertyResult(**values)


def unit_json(done: UnitResult) -> dict[str, Any]:
    return {
        "property": done.unit.property_id, "round": done.unit.round, "result": _result_json(done.result),
        "ran": done.record.ran, "tallies": done.record.tallies,
        "situations": [list(pair) for pair in done.record.situations],
        "bytes_sent": f"{done.record.bytes_sent:064x}",
        "corpus": None if done.corpus is None else list(done.corpus),
    }


def read_unit(record: object) -> UnitResult:
    """A unit from :func:`unit_json`'s record (as a pytest item reports it);
    :class:`ShardError` for anything else."""
    try:
        _checker("unit").check(record)
        assert isinstance(record, dict)
        return _unit(record)
    except SchemaMismatch as mismatch:
        raise ShardError(f"a malformed work unit: {visible(str(mismatch))}") from None
    except _MALFORMED as error:
        raise ShardError(f"a malformed work unit ({type(error).__name__}: {visible(str(error))})") from None


#: What reading a record that fits the schema can still raise (bad base64, an
#: unknown operation, a float where a whole number belongs): one line, never a traceback.
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError)


@cache
def _schema() -> dict[str, Any]:
    """The shipped schema of a partial certificate (package data beside this module)."""
    text = resources.files("rollcert.stateful_tests").joinpath("partial.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _checker(definition: str | None = None) -> Checker:
    """The partial's schema, or (``definition``) one of its ``$defs`` alone (a work unit)."""
    schema = _schema()
    if definition is None:
        return Checker(schema)
    return Checker({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"})


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _byte_set(text: object) -> int:
    """A set of byte values as :func:`unit_json` writes it: 64 hex digits, bit ``b`` for byte ``b``."""
    if not isinstance(text, str) or len(text) != 64 or not all(c in "0123456789abcdef" for c in text):
        raise ValueError("bytes_sent is not 64 hex digits")
    return int(text, 16)


def _unit(record: dict[str, Any]) -> UnitResult:
    corpus = record["corpus"]
    number = record["round"]
    if number is not None and type(number) is not int:
        raise ValueError(f"round {number!r} is not a whole number")
    return UnitResult(
        Unit(record["property"], number), _result(record["result"]),
        RoundRecord(
            record["ran"], dict(record["tallies"]), [(str(n), str(d)) for n, d in record["situations"]],
            _byte_set(record["bytes_sent"]),
        ),
        None if corpus is None else (int(corpus[0]), int(corpus[1])),
    )


def target_json(target: Target) -> dict[str, Any]:
    """The target as a certificate names it (the fields ``to_json`` writes; the
    name with no absolute path of the run's machine, as ``assemble`` shows it)."""
    return {
        "name": portable_target(target.name), "version": target.version, "description": target.description,
        "capabilities": sorted(c.value for c in target.capabilities),
        "set_aside": {finding.name: finding.description for finding in target.set_aside},
    }


def _no_buffers(config: Any) -> Any:
    raise TargetError("a merged certificate's target is a record of the one the shards ran; it builds no buffers")


def _target(record: dict[str, Any]) -> Target:
    """A stand-in with the recorded name, version, capabilities and findings, so
    that the merge never needs the target (a merge job installs only rollcert)."""
    return Target(
        record["name"], record["version"], frozenset(Capability(c) for c in record["capabilities"]), _no_buffers,
        record["description"],
        set_aside=tuple(KnownFinding(n, d, lambda state, operation: False) for n, d in record["set_aside"].items()),
    )


@dataclass(frozen=True)
class Partial:
    """One shard's partial certificate, read back."""

    header: dict[str, Any]
    index: int
    count: int
    done: tuple[UnitResult, ...]
    skipped: tuple[Unit, ...] = ()


#: The header fields partials of one certification must share (refused with one line otherwise).
AGREED = ("suite_version", "target", "target_text", "profile", "seed", "only", "corpus")


def partial_json(
    header: dict[str, Any], index: int, count: int, done: Sequence[UnitResult], skipped: Sequence[Unit] = ()
) -> dict[str, Any]:
    return {
        "schema": PARTIAL_SCHEMA, **header, "shard": [index, count], "units": [unit_json(d) for d in done],
        "skipped": [unit.name for unit in skipped],
    }


def read_partial(path: Path) -> Partial:
    """A partial certificate from ``path``; :class:`ShardError` (one line) saying
    what is wrong. The file is untrusted input (SPEC §8): read as any input file
    is (:func:`~rollcert.targets.input_files.read_input_text`), checked against
    the shipped schema, then read; which units a shard may claim is
    :func:`merge`'s to check, against the other shards."""
    where = visible(str(path))
    if not path.is_file():
        raise ShardError(f"{where}: not a file")
    try:
        text = read_input_text(path, "the partial certificate", MAX_PARTIAL_BYTES)
        record = json.loads(text, parse_constant=_refuse_constant)
    except InputFileError as error:
        raise ShardError(visible(str(error))) from None
    except RecursionError:
        raise ShardError(f"{where}: nested too deeply to be a partial certificate") from None
    except ValueError as error:
        raise ShardError(f"{where}: cannot read a partial certificate: {visible(str(error))}") from None
    if not isinstance(record, dict) or record.get("schema") != PARTIAL_SCHEMA:
        schema = record.get("schema") if isinstance(record, dict) else None
        raise ShardError(f"{where}: not a {PARTIAL_SCHEMA} partial certificate (schema {_short(schema)})")
    try:
        _checker().check(record)
        index, count = record["shard"]
        if not (type(index) is int and type(count) is int and 1 <= index <= count):
            raise ValueError(f"bad shard {_short(record['shard'])}")
        header = {key: record[key] for key in AGREED}
        if type(header["seed"]) is not int:
            raise ValueError("the seed is not a whole number")
        done = tuple(_unit(unit) for unit in record["units"])
        skipped = tuple(Unit.parse(name) for name in record["skipped"])
        _target(header["target"])
    except SchemaMismatch as mismatch:
        raise ShardError(f"{where}: a malformed partial certificate: {visible(str(mismatch))}") from None
    except _MALFORMED as error:
        raise ShardError(
            f"{where}: a malformed partial certificate ({type(error).__name__}: {visible(str(error))})"
        ) from None
    return Partial({**header, "seed_source": record.get("seed_source", "")}, index, count, done, skipped)


def _claims(partials: Sequence[tuple[Path, Partial]], expected: Sequence[Unit]) -> dict[Unit, UnitResult | None]:
    """Every unit the partials hold (``None``: skipped by its shard), each claimed
    once, by the shard whose block holds it, every unit of each block accounted
    for; :class:`ShardError` otherwise. Without this a later partial carrying a
    unit of an earlier shard's block (``ran: false``, ``passed``) replaced that
    shard's real violation, and the merge said ``passed``."""
    known = set(expected)
    claimed: dict[Unit, tuple[Path, UnitResult | None]] = {}
    for path, part in partials:
        where = visible(str(path))
        block = set(shard_units_of(expected, part.index, part.count))
        for unit, done in [*((d.unit, d) for d in part.done), *((u, None) for u in part.skipped)]:
            name = visible(unit.name)
            if unit in claimed:
                earlier = visible(str(claimed[unit][0]))
                raise ShardError(f"{where}: the work unit {name} is claimed twice (also by {earlier})")
            if unit not in known:
                raise ShardError(f"{where}: {name} is not a work unit of this certification")
            if unit not in block:
                raise ShardError(f"{where}: {name} is not in the block of shard {part.index}/{part.count}")
            claimed[unit] = (path, done)
        unaccounted = sorted(block - {u for u, (p, _) in claimed.items() if p == path})
        if unaccounted:
            raise ShardError(f"{where}: shard {part.index}/{part.count} does not account for {unaccounted[0].name}")
    return {unit: done for unit, (_, done) in claimed.items()}


def shard_units_of(listed: Sequence[Unit], index: int, count: int) -> list[Unit]:
    """The ``index``-th of ``count`` contiguous blocks of ``listed`` (:func:`shard_units`'s cut)."""
    return list(listed[(index - 1) * len(listed) // count : index * len(listed) // count])


def merge(partials: Sequence[tuple[Path, Partial]]) -> tuple[CertificateData, dict[str, tuple[int, int]]]:
    """The serial run's certificate from the partials of every shard of one
    certification, and the corpus counts per property; :class:`ShardError` (one
    line) for partials of different certifications, a shard missing or twice, a
    unit outside its shard's block, claimed twice, or in conflict with another."""
    (first_path, first), *others = partials
    for path, other in others:
        for key in AGREED:
            if other.header[key] != first.header[key]:
                raise ShardError(
                    f"{visible(str(path))} is a shard of another certification than {visible(str(first_path))}: "
                    f"its {key} differs ({_short(other.header[key])} against {_short(first.header[key])})"
                )
        if other.count != first.count:
            raise ShardError(
                f"{visible(str(path))} is shard {other.index}/{other.count}, {visible(str(first_path))} is one of {first.count}"
            )
    seen: dict[int, Path] = {}
    for path, part in partials:
        if part.index in seen:
            raise ShardError(
                f"{visible(str(path))} and {visible(str(seen[part.index]))} are both shard {part.index}/{part.count}"
            )
        seen[part.index] = path
    missing = sorted(set(range(1, first.count + 1)) - set(seen))
    if missing:
        raise ShardError(f"shard {missing[0]}/{first.count} is missing: give every shard's partial certificate")
    header = first.header
    property_ids = [p for p in ALL_PROPERTY_IDS if header["only"] is None or p in header["only"]]
    expected = units(property_ids, PROFILES[header["profile"]])
    return certificate_of(header, _claims(partials, expected))


def certificate_of(
    header: dict[str, Any], by_unit: dict[Unit, UnitResult | None]
) -> tuple[CertificateData, dict[str, tuple[int, int]]]:
    """The certificate of the units of the certification ``header`` names (its
    profile and ``only``), and the corpus counts per property: what a serial run
    of them gives (:func:`merge_rounds`). A unit absent from ``by_unit`` did not
    run (:class:`Missing`); ``None``, its shard skipped it. One place for ``rollcert
    merge`` and the pytest plugin's ``--rollcert-json``."""
    property_ids = [p for p in ALL_PROPERTY_IDS if header["only"] is None or p in header["only"]]
    expected = units(property_ids, PROFILES[header["profile"]])
    stray = [u for u in by_unit if u not in set(expected)]
    if stray:
        raise ShardError(f"{visible(stray[0].name)} is not a work unit of this certification")
    results: dict[str, PropertyResult] = {}
    counts: dict[str, tuple[int, int]] = {}
    for property_id in property_ids:
        mine = [by_unit[u] if u in by_unit else Missing(u) for u in expected if u.property_id == property_id]
        results[property_id] = merge_rounds(mine)
        corpus = next((d.corpus for d in mine if isinstance(d, UnitResult) and d.corpus is not None), None)
        if corpus is not None:
            counts[property_id] = corpus
            results[property_id].figures.update(corpus_replayed=float(corpus[0]), corpus_failed=float(corpus[1]))
    certificate = assemble(_target(header["target"]), header["profile"], header["seed"], results, header["target_text"])
    certificate.seed_source = header["seed_source"]
    return certificate, counts


def _short(value: object) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."

