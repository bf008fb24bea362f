"""Certificates: the verdicts of a run, for people (text, Markdown) and machines
(versioned JSON, JUnit XML), and counterexamples a person can follow.

Every string a target or a file controls goes through its format's rule of
:mod:`rollcert.reports.escape` where a renderer puts it.

A counterexample is printed as numbered steps, each with the buffer before, the
bytes the model expected and the bytes the implementation produced, the
differing span marked ``⟦…⟧``, a plain-words explanation, and a one-line
command that replays it.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
import shlex
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

from rollcert.model.operations import operation_to_json
from rollcert.model.properties import PROPERTIES
from rollcert.reports.escape import markdown_code
from rollcert.reports.escape import markdown_fence
from rollcert.reports.escape import markdown_text
from rollcert.reports.escape import terminal
from rollcert.reports.escape import terminal_lines
from rollcert.reports.escape import xml_text
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import Counterexample
from rollcert.stateful_tests.certify import PropertyResult
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.family import MAX_FINDINGS
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import elided
from rollcert.stateful_tests.family import first_difference
from rollcert.stateful_tests.family import shown_window
from rollcert.stateful_tests.model_coverage import branches_phrase
from rollcert.stateful_tests.traces import trace_json
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.world import merge_worlds
from rollcert.stateful_tests.world import within_phrase
from rollcert.stateful_tests.world import world_phrase
from rollcert.targets.portable import portable_path
from rollcert.targets.version import SUITE_VERSION

SCHEMA = "rollcert-certificate/2"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def show_bytes(data: bytes, span: tuple[int, int] | None = None) -> str:
    """Bytes as readable text (Python escapes for the unprintable), ``span`` marked;
    a long buffer is shown around the span (``family.shown_window``)."""

    def text(chunk: bytes) -> str:
        return repr(chunk)[2:-1]

    first, last = shown_window(len(data), span[0] if span else 0)
    shown = data[first:last]
    if span is None:
        return elided(f"'{text(shown)}'", first, last, len(data))
    start, end = (min(max(edge - first, 0), len(shown)) for edge in span)
    return elided(f"'{text(shown[:start])}⟦{text(shown[start:end])}⟧{text(shown[end:])}'", first, last, len(data))


#: The most bytes of one buffer a JSON certificate records whole. The model's
#: buffers are far shorter; a target that answers with more is recorded as the
#: window a person is shown (``family.shown_window``) with the bytes around it
#: counted, so that its flood cannot swell the file.
RECORDED_BYTES = 1 << 16


def _observed_json(observed: Observed, focus: int = 0) -> dict[str, Any]:
    """One side's outcome at a step, as :mod:`rollcert.reports.stored_certificate`
    reads it back: the error kind, the bytes (bounded) and the counters."""
    buffer = observed.buffer
    record: dict[str, Any] = {"error": observed.error, "buffer": _b64(buffer)}
    if len(buffer) > RECORDED_BYTES:
        start, end = shown_window(len(buffer), focus)
        record.update(buffer=_b64(buffer[start:end]), buffer_start=start, buffer_length=len(buffer))
    record.update(text=show_bytes(buffer), depth=observed.depth, revision=observed.revision)
    return record


def _step_json(step: StepRecord) -> dict[str, Any]:
    """One counterexample step with everything a reader needs to draw it without
    the target (SPEC §6a): the operation, the model's allowed outcomes and the
    target's observed outcome."""
    span = first_difference(step.expected.buffer, step.actual.buffer)
    focus = span[0] if span else 0
    return {
        "index": step.index,
        "operation": operation_to_json(step.operation),
        **({"context": dict(step.context)} if step.context else {}),
        **({"note": step.note} if step.note else {}),
        **({"harm": step.harm} if step.harm else {}),
        "description": step.operation.describe(),
        "before": _b64(step.before),
        "before_text": show_bytes(step.before),
        "expected": _observed_json(step.expected, focus),
        "actual": _observed_json(step.actual, focus),
        **({"allowed": [_observed_json(outcome, focus) for outcome in step.allowed]} if step.allowed else {}),
        "ok": step.ok,
        "implementation_message": step.sut_message,
    }


# -- traces (replayable step lists) -------------------------------------------------


def counterexample_trace(counterexample: Counterexample) -> dict[str, Any]:
    family = family_named(counterexample.family)
    return trace_json(family, counterexample.config(), [step.operation for step in counterexample.steps])


def replay_command(counterexample: Counterexample) -> str:
    trace = json.dumps(counterexample_trace(counterexample), separators=(",", ":"))
    return f"rollcert replay {shlex.quote(counterexample.target)} --trace {shlex.quote(trace)}"


# -- counterexamples for people ------------------------------------------------------------


def format_steps(steps: Sequence[StepRecord]) -> list[str]:
    lines: list[str] = []
    for record in steps:
        lines.append(f"  {record.index}. {record.operation.describe()}")
        if record.context:  # an apply_diff: B0, the live base B, the diff, the rule
            lines += [f"       {terminal(label):<9} {terminal(text)}" for label, text in record.context]
        else:
            lines.append(f"       before    {show_bytes(record.before)}")
        expected, actual = record.expected, record.actual
        if record.ok:
            result = f"raised {terminal(actual.error)}" if actual.error else "ok"
            lines.append(f"       after     {show_bytes(actual.buffer)}   ({result}, as the model says)")
            continue
        span = first_difference(expected.buffer, actual.buffer)
        marks_e = (span[0], span[1]) if span else None
        marks_a = (span[0], span[2]) if span else None
        lines.append(f"       expected  {show_bytes(expected.buffer, marks_e)}   ({terminal(expected.status())})")
        for other in (outcome for outcome in record.allowed if outcome != expected):
            lines.append(f"             or  {show_bytes(other.buffer)}   ({terminal(other.status())})")
        lines.append(f"       actual    {show_bytes(actual.buffer, marks_a)}   ({terminal(actual.status())})")
        if record.harm:
            lines.append(f"       harm      {record.harm}")
        if record.sut_message:
            lines.append(f"       the implementation said: {terminal(record.sut_message)}")
    return lines



def steps_phrase(count: int) -> str:
    """``1 step``, ``3 steps``."""
    return "1 step" if count == 1 else f"{count} steps"


def _names(property_ids: Sequence[str]) -> str:
    """``R0``, ``R0 and S1``, ``R0, R2 and S1``."""
    return property_ids[0] if len(property_ids) == 1 else f"{', '.join(property_ids[:-1])} and {property_ids[-1]}"


def format_counterexample(
    counterexample: Counterexample, properties: Sequence[str] = (), *, signature: bool = False
) -> str:
    """The counterexample as numbered steps, titled with ``properties`` (the
    properties it is the counterexample of; by default the one it was found for)
    and, with ``signature``, with its harm signature (a certificate that lists
    several findings: what tells them apart)."""
    if counterexample.history is not None:
        from rollcert.stateful_tests.concurrency import history_text
        from rollcert.stateful_tests.concurrency import history_why

        history = counterexample.history
        return "\n".join([
            f"Counterexample for {_names(properties or [counterexample.property_id])} (a history of "
            f"{len(history.calls)} calls) on {terminal(counterexample.target)}:",
            *(f"  {line}" for line in terminal_lines(history_text(counterexample.target, history)).splitlines()),
            f"  Why: {terminal(history_why(history))}",
            f"  Run again: rollcert certify {terminal(shlex.quote(counterexample.target))} --only R7 (which run "
            "fails depends on how the threads were scheduled; the longest order's steps alone replay without failing)",
        ])
    capacity = (
        f", capacity {counterexample.capacity} ({counterexample.policy})"
        if counterexample.capacity is not None
        else ""
    ) + counterexample.config().journal_phrase()
    broken = counterexample.broken or (counterexample.property_id,)
    found = "" if counterexample.property_id in broken else f", found while exploring {counterexample.property_id}"
    named = f"; {terminal(counterexample.signature)}" if signature and counterexample.signature else ""
    lines = [
        f"Counterexample for {_names(properties or broken)} "
        f"({steps_phrase(len(counterexample.steps))}{found}{named}) on "
        f"{terminal(counterexample.target)}, starting from {show_bytes(counterexample.initial)}{capacity}:",
        *format_steps(counterexample.steps),
        f"  Broken: {_broken_line(counterexample, properties)}",
        f"  Why: {terminal_lines(counterexample.explanation)}",
        f"  Replay: {terminal(replay_command(counterexample))}",
    ]
    return "\n".join(lines)


def _broken_line(counterexample: Counterexample, properties: Sequence[str] = ()) -> str:
    """The rule the failing step broke, quoted (SPEC §6a), and the harm it did."""
    rule = counterexample.rule(properties[0] if properties else None)
    prop = PROPERTIES.get(rule)
    title = f" {prop.title}" if prop is not None else ""
    harm = f" — harm: {counterexample.harm}" if counterexample.harm else ""
    return f"{rule}{title}{harm}"


# -- whole certificates ------------------------------------------------------------------------


def _history_json(history: ConcurrentHistory) -> dict[str, Any]:
    """An R7 counterexample's program, history and failed linearisation, as
    :mod:`rollcert.reports.stored_certificate` reads it back (SPEC §6a)."""
    return {
        "program": list(history.program),
        "calls": [
            {"id": c.id, "thread": c.thread, "called": c.called, "returned": c.returned, "action": c.action,
             "result": c.result}
            for c in history.calls
        ],
        "order": [
            {"call": o.call, "buffer": _b64(o.buffer), "text": show_bytes(o.buffer), "depth": o.depth,
             "revision": o.revision}
            for o in history.order
        ],
        "stuck": [{"call": s.call, "allowed": s.allowed, "elsewhere": list(s.elsewhere)} for s in history.stuck],
        "failed": history.failed,
        "runs": history.runs,
    }


def _counterexample_json(counterexample: Counterexample) -> dict[str, Any]:
    steps = [_step_json(step) for step in counterexample.steps]
    last = (
        {"expected": steps[-1]["expected"]["buffer"], "actual": steps[-1]["actual"]["buffer"]} if steps else {}
    )
    history = {"history": _history_json(counterexample.history)} if counterexample.history is not None else {}
    return {
        "initial": _b64(counterexample.initial),
        "initial_text": show_bytes(counterexample.initial),
        "capacity": counterexample.capacity,
        "policy": counterexample.policy,
        **({"durability": counterexample.durability} if counterexample.durable else {}),
        **({"start_revision": counterexample.start_revision} if counterexample.start_revision else {}),
        **({"chunk_bytes": counterexample.chunk_bytes} if counterexample.chunk_bytes is not None else {}),
        "machine": counterexample.property_id,
        "steps": steps,
        **last,
        **history,
        "explanation": counterexample.explanation,
        "broken": list(counterexample.broken or (counterexample.property_id,)),
        "harm": counterexample.harm,
        "signature": counterexample.signature,
        "trace": counterexample_trace(counterexample),
        "replay": replay_command(counterexample),
    }


def _result_json(result: PropertyResult) -> dict[str, Any]:
    record: dict[str, Any] = {
        "verdict": result.verdict,
        "title": result.title or (PROPERTIES[result.property_id].title if result.property_id in PROPERTIES else ""),
        "examples": result.examples,
        "steps": result.steps,
        "seconds": result.seconds,
        "coverage": result.coverage,
    }
    if result.figures:
        record["figures"] = result.figures
    if result.world:
        record["world"] = result.world
    if result.missing_situations:
        record["missing_situations"] = result.missing_situations
    if result.model_branches:  # every required branch by name, and those reached
        record["model_branches"] = result.model_branches
    if result.reason:
        record["reason"] = result.reason
    if result.counterexample is not None:
        record["counterexample"] = _counterexample_json(result.counterexample)
    if len(result.findings) > 1:  # every distinct finding, the counterexample first (issue 43)
        record["findings"] = [_counterexample_json(found) for found in result.findings]
    if result.found_by:
        record["found_while_exploring"] = result.found_by
    elsewhere = {pid: ce for pid, ce in result.found_elsewhere.items() if pid != result.property_id}
    if elsewhere:  # findings of other rules this machine met, each reported under its rule
        record["found_elsewhere"] = {pid: list(ce.broken) for pid, ce in sorted(elsewhere.items())}
    return record


def to_json(certificate: CertificateData) -> dict[str, Any]:
    target = certificate.target
    return {
        "schema": SCHEMA,
        "target": {
            "name": target.name,
            "version": target.version,
            "description": target.description,
            "capabilities": sorted(c.value for c in target.capabilities),
            "set_aside": {finding.name: finding.description for finding in target.set_aside},
        },
        "suite_version": SUITE_VERSION,
        "profile": certificate.profile,
        "seed": certificate.seed,
        **({"seed_source": certificate.seed_source} if certificate.seed_source else {}),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "exit_status": certificate.exit_status,
        "properties": {pid: _result_json(r) for pid, r in certificate.results.items()},
        **({"world": world} if (world := world_summary(certificate)) else {}),
        **({"exhaustive": _exhaustive_json(certificate.exhaustive)} if certificate.exhaustive is not None else {}),
        **({"corpus": _corpus_json(certificate.corpus)} if certificate.corpus is not None else {}),
        **({"interrupted": certificate.interrupted} if certificate.interrupted else {}),
    }


def _corpus_json(corpus: Any) -> dict[str, Any]:
    return {
        "directory": corpus_shown(corpus), "replayed": corpus.replayed, "failed": corpus.failed,
        "skipped": corpus.skipped, "added": corpus.added,
    }


def corpus_shown(corpus: Any) -> str:
    """The corpus folder as every format shows it: relative to the run's working
    directory, or ``<corpus>`` (no absolute path of the run's machine, issue 43)."""
    return portable_path(corpus.directory, "corpus")


#: What ``passed`` means, in the first lines of every format (issue 43): a reader
#: who never saw the run must not take a certificate for a proof.
PASSED_MEANING = (
    "no violation found by random testing over the world stated below, with every listed situation "
    "reached — evidence, not a proof"
)


#: What an interrupted certificate says of itself, in every format.
INTERRUPTED_MEANING = (
    "the run stopped before it finished; the verdicts it reached are kept, every property it had not finished is unknown"
)


def interrupted_line(certificate: CertificateData, escape: Callable[[str], str] = terminal) -> list[str]:
    """One line when the run was stopped before it finished (SIGTERM, Ctrl-C): its
    certificate is partial, and must say so in every format."""
    if not certificate.interrupted:
        return []
    return [f"interrupted by {escape(certificate.interrupted)}: {INTERRUPTED_MEANING}"]


def corpus_line(certificate: CertificateData) -> list[str]:
    """One line on what the corpus gave, when a run used one."""
    corpus = certificate.corpus
    if corpus is None:
        return []
    skipped = f", {corpus.skipped} skipped" if corpus.skipped else ""
    return [
        f"corpus {corpus_shown(corpus)}: {corpus.replayed} traces replayed, {corpus.failed} still failing{skipped}; "
        f"{corpus.added} new counterexamples added"
    ]


def _exhaustive_json(result: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "summary": result.summary(),
        "verdict": result.verdict,
        "depth": result.depth,
        "requested_depth": result.requested_depth,
        "states": result.states,
        "distinct_states": result.distinct_states,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(result.states_per_second),
    }
    if result.violation is not None:
        record["property"] = result.property_id
        record["steps"] = [step.operation.describe() for step in result.violation.steps]
        record["explanation"] = result.violation.explanation
    if result.reason:
        record["reason"] = result.reason
    return record


def world_summary(certificate: CertificateData) -> dict[str, Any]:
    """The world the whole run reached, over every property that explored data:
    the largest buffer, insert, delete and depth any of them reached, and per
    dimension the total count. Empty if no property explored data (all R7, say)."""
    return merge_worlds(r.world for r in certificate.results.values())


def world_text_lines(certificate: CertificateData, indent: str = "  ") -> list[str]:
    """The world section of the text and Markdown certificates: what the run
    explored, per property its extremes and per dimension its count."""
    summary = world_summary(certificate)
    if not summary:
        return []
    lines = [f"World reached: {world_phrase(summary)}"]
    if summary.get("narrowed"):
        lines.append(f"{indent}a narrowed world: passed {within_phrase(summary)}")
    for pid, result in certificate.results.items():
        world = result.world
        if not world:
            continue
        counts = ", ".join(f"{name} {count}" for name, count in dict(world.get("dimensions") or {}).items())
        lines.append(
            f"{indent}{pid}: buffer {world.get('largest_buffer', 0)}, insert {world.get('largest_insert', 0)}, "
            f"delete {world.get('largest_delete', 0)}, depth {world.get('deepest', 0)}, "
            f"{world.get('distinct_bytes_sent', 0)} distinct bytes sent; {counts}"
        )
    missing = dict(summary.get("not_exercised") or {})
    if missing:
        lines.append(f"{indent}not exercised: " + "; ".join(f"{name} ({why})" for name, why in missing.items()))
    return lines


def _within(result: PropertyResult) -> str:
    """"passed within …; " for a pass in a narrowed world (SPEC §6a), else nothing."""
    if result.verdict == "passed" and result.world.get("narrowed"):
        return f"passed {within_phrase(result.world)}; "
    return ""


def not_judged_phrase(figures: dict[str, float]) -> str:
    """How many examples ended at a step the judge could not decide (readings left
    out past its budget: ``stateful_tests.family.Unjudgeable``), or "" if none: a
    pass is over the rest, and says so."""
    count = figures.get("steps_not_judged")
    if not isinstance(count, (int, float)) or not 0 < count < 2**53:
        return ""
    examples = "example" if count == 1 else "examples"
    return f"{count:.0f} {examples} ended at a step not judged (too many alignments to try)"


def retry_phrase(figures: dict[str, float]) -> str:
    """What a durable journal did after clean refusals (R5: poisoned or usable for
    the retry, both allowed; ``stateful_tests.machines.RETRY_FIGURES``), or "" if
    the run met none. Certificates are untrusted: a count that is not a small
    whole number is not shown."""
    names = ("clean_refusals", "retries_accepted", "poisoned_after_refusal")
    counts = [figures.get(name, 0) for name in (*names, "fault_kept_through_refusal", "fault_spent_on_refusal")]
    if not all(isinstance(count, (int, float)) and 0 <= count < 2**53 for count in counts):
        return ""
    refusals, taken, refused, kept, spent = counts
    parts = []
    if refusals:
        parts.append(
            f"after {refusals:.0f} clean refusals the journal took {taken:.0f} retries "
            f"and refused {refused:.0f} operations (stayed poisoned); both are allowed"
        )
    if kept or spent:
        # model/reference.py, "a fault armed across a refusal": kept or spent, both allowed.
        parts.append(
            f"an armed fault across a full or poisoned refusal was kept {kept:.0f} times "
            f"and spent {spent:.0f} times; both are allowed"
        )
    return "; ".join(parts)


def _detail(result: PropertyResult) -> str:
    if result.verdict in ("passed", "unknown"):
        reached = ", ".join(f"{name} {count}" for name, count in result.coverage.items())
        text = f"{_within(result)}{result.examples} examples, {result.steps} steps; reached: {reached}"
        if result.world:
            text += f"; world: {world_phrase(result.world)}"
        if "precision" in result.figures:
            text += (
                f"; precision {result.figures['precision']:.0%} "
                f"({result.figures['sut_accepts']:.0f} of {result.figures['rule_accepts']:.0f} rule-accepted diffs accepted)"
            )
        if not_judged := not_judged_phrase(result.figures):
            text += f"; {not_judged}"
        if retries := retry_phrase(result.figures):
            text += f"; {retries}"
        if branches := branches_phrase(result.model_branches):
            text += f"; {branches}"
        if result.verdict == "unknown" and result.reason:  # the cause first (stateful_tests.causes), then what was missed
            text += f" — {terminal_lines(result.reason)}"
        elif result.verdict == "unknown" and result.missing_situations:
            text += f" — never reached: {'; '.join(result.missing_situations)}"
        return text
    if result.verdict == "violated" and result.counterexample is not None:
        origin = ", from the corpus" if result.reason.startswith("from the corpus") else ""
        if result.counterexample.history is not None:
            return f"a history of {len(result.counterexample.history.calls)} calls no order explains (below{origin})"
        more = findings_phrase(result)
        return f"counterexample of {steps_phrase(len(result.counterexample.steps))} (below{origin}){more}"
    return terminal_lines(result.reason)


def several_findings(certificate: CertificateData) -> bool:
    """Whether some property lists more than one finding: the counterexamples are
    then titled with their harm signatures (a single one reads as it always did)."""
    return any(len(result.findings) > 1 for result in certificate.results.values())


def findings_phrase(result: PropertyResult) -> str:
    """"; 3 distinct findings" (and the cap, when a run met more), or "" for one;
    and when the search for further findings ran out of time rather than
    examples, that it did (another run of the seed may list other further
    findings: the figure ``further_search_cut``)."""
    count = len(result.findings)
    not_kept = result.figures.get("findings_not_kept", 0)
    cut = "; the search for further findings was cut short by its time" if result.figures.get("further_search_cut") else ""
    if count <= 1 and not not_kept:
        return cut
    text = f"; {count} distinct findings"
    if isinstance(not_kept, (int, float)) and 0 < not_kept < 2**53:
        text += f", {not_kept:.0f} more met and not kept (at most {MAX_FINDINGS} are)"
    return text + cut


def distinct_counterexamples(certificate: CertificateData) -> list[tuple[str, Counterexample | None, str]]:
    """Each violated property with each of its findings (its counterexample
    first), printed once: R0 lists every finding another machine found, and a
    reader should not read one twice. A repeat comes as ``(property, None, the
    property it repeats)``."""
    shown: dict[tuple[object, ...], str] = {}
    listed: list[tuple[str, Counterexample | None, str]] = []
    for property_id, result in certificate.results.items():
        for counterexample in findings_of(result):
            key = (counterexample.initial, counterexample.capacity, counterexample.policy, counterexample.durable,
                   counterexample.durability, counterexample.start_revision, counterexample.chunk_bytes,
                   tuple(step.operation for step in counterexample.steps))
            if key in shown:
                listed.append((property_id, None, shown[key]))
            else:
                shown[key] = property_id
                listed.append((property_id, counterexample, ""))
    return listed


def findings_of(result: PropertyResult) -> list[Counterexample]:
    """Every finding a property lists, its counterexample first (issue 43); a
    result that lists none but has a counterexample (an older certificate) that one."""
    if result.findings:
        return result.findings
    return [result.counterexample] if result.counterexample is not None else []


def _shared_counterexamples(certificate: CertificateData) -> list[tuple[list[str], Counterexample]]:
    """Each distinct counterexample once, with every property it is the counterexample
    of: a diff applier's R0 takes S1's, and one block titled "R0 and S1" says so,
    where "S1: the same as R0" under a block titled S1 read as a missing R0 block."""
    groups: list[tuple[list[str], Counterexample]] = []
    first: dict[tuple[object, ...], int] = {}
    for property_id, result in certificate.results.items():
        for counterexample in findings_of(result):
            key = (counterexample.initial, counterexample.capacity, counterexample.policy, counterexample.durable,
                   counterexample.durability, tuple(step.operation for step in counterexample.steps))
            if key in first:
                if property_id not in groups[first[key]][0]:
                    groups[first[key]][0].append(property_id)
            else:
                first[key] = len(groups)
                groups.append(([property_id], counterexample))
    return groups


#: A bytes literal longer than this (in characters) is shortened in printed logs.
LONGEST_LOGGED_LITERAL = 120
_BYTES_LITERAL = re.compile(r"b'(?:[^'\\\n]|\\.)*'" + r'|b"(?:[^"\\\n]|\\.)*"')


def abbreviate_bytes(text: str) -> str:
    """``text`` with every long bytes literal (``b'aaaa…'``, as explanations and
    operations print them) shortened to its two ends, its length and a short
    hash — ``b'aaaa…aaaa' (7,000 bytes, sha256:1a2b3c4d)`` — so that a CI log
    line stays readable (one used to run to 7,000 characters). For what is
    printed only: the JSON certificate keeps every value whole."""
    import ast
    import hashlib

    def shorten(found: re.Match[str]) -> str:
        literal = found.group(0)
        if len(literal) <= LONGEST_LOGGED_LITERAL:
            return literal
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            return literal
        if not isinstance(value, bytes):
            return literal
        digest = hashlib.sha256(value).hexdigest()[:8]
        head, tail = repr(value[:16])[2:-1], repr(value[-8:])[2:-1]
        return f"b'{head}…{tail}' ({len(value):,} bytes, sha256:{digest})"

    return _BYTES_LITERAL.sub(shorten, text)


def render_text(certificate: CertificateData) -> str:
    lines = [
        f"rollcert {SUITE_VERSION} — certificate for {terminal(certificate.target.name)} "
        f"(profile {certificate.profile}, seed {certificate.seed})",
        f"passed here means: {PASSED_MEANING}",
        *_set_aside_lines(certificate, ""),
        *corpus_line(certificate),
        *interrupted_line(certificate),
        "",
        f"{'property':<10}{'verdict':<14}details",
    ]
    for pid, result in certificate.results.items():
        title = f"{result.title}: " if result.title else ""
        lines.append(f"{pid:<10}{result.verdict:<14}{title}{_detail(result)}")
    world = world_text_lines(certificate)
    if world:
        lines += ["", *world]
    if certificate.exhaustive is not None:
        lines += ["", terminal(certificate.exhaustive.summary())]
        if certificate.exhaustive.violation is not None:
            lines += format_steps(certificate.exhaustive.violation.steps)
    several = several_findings(certificate)
    for properties, counterexample in _shared_counterexamples(certificate):
        lines += ["", format_counterexample(counterexample, properties, signature=several)]
    lines += ["", f"exit status {certificate.exit_status}"]
    return abbreviate_bytes("\n".join(lines))


def _set_aside_lines(certificate: CertificateData, bullet: str, escape: Callable[[str], str] = terminal) -> list[str]:
    """A focused target's runs skip its known findings; its certificate must say so."""
    return [
        f"{bullet}set aside (a known finding, not generated in this run): {escape(finding.name)} — "
        f"{escape(finding.description)}"
        for finding in certificate.target.set_aside
    ]


def render_markdown(certificate: CertificateData) -> str:
    target = certificate.target
    lines = [
        f"# rollcert certificate: {markdown_code(target.name)}",
        "",
        f"- target version: {markdown_text(target.version)}",
        f"- suite version: {SUITE_VERSION}; profile {markdown_code(certificate.profile)}; seed {certificate.seed}",
        f"- capabilities: {', '.join(sorted(c.value for c in target.capabilities))}",
        f"- `passed` here means: {PASSED_MEANING}",
        *_set_aside_lines(certificate, "- ", markdown_text),
        *(f"- {markdown_text(line)}" for line in corpus_line(certificate)),
        *(f"- **{line}**" for line in interrupted_line(certificate, markdown_text)),
        "",
        "| property | verdict | details |",
        "| --- | --- | --- |",
    ]
    for pid, result in certificate.results.items():
        name = markdown_text(f"{pid} {result.title}".strip())
        lines.append(f"| {name} | **{markdown_text(result.verdict)}** | {markdown_text(_detail(result))} |")
    lines += _world_markdown(certificate)
    titled: dict[str, int] = {}
    several = several_findings(certificate)
    for properties, counterexample in _shared_counterexamples(certificate):
        titled[properties[0]] = number = titled.get(properties[0], 0) + 1
        title = "counterexample" if number == 1 else f"finding {number}: {counterexample.signature}"
        lines += ["", f"## {markdown_text(_names(properties))} {markdown_text(title)}", "",
                  markdown_fence(format_counterexample(counterexample, properties, signature=several))]
    return "\n".join(lines) + "\n"


def _world_markdown(certificate: CertificateData) -> list[str]:
    """The world section of the Markdown certificate: a list, one property per item
    (the verdicts are the page's one table)."""
    lines = world_text_lines(certificate, indent="")
    if not lines:
        return []
    return ["", "## World reached", "", markdown_text(lines[0].removeprefix("World reached: ")) + ".", "",
            *("- " + markdown_text(line) for line in lines[1:])]


def render_junit(certificate: CertificateData) -> str:
    suite = ElementTree.Element(
        "testsuite",
        name=xml_text(f"rollcert:{certificate.target.name}"),
        tests=str(len(certificate.results)),
        failures=str(sum(r.verdict in ("violated", "unknown") for r in certificate.results.values())),
        errors=str(sum(r.verdict == "error" for r in certificate.results.values())),
        skipped=str(sum(r.verdict == "not_assessed" for r in certificate.results.values())),
    )
    # What a CI page needs to rerun a red job: the seed (a rotated one changes every run) and the profile.
    recorded = ElementTree.SubElement(suite, "properties")
    for name, value in (
        ("rollcert.seed", str(certificate.seed)), ("rollcert.profile", certificate.profile),
        *((("rollcert.seed_source", certificate.seed_source),) if certificate.seed_source else ()),
        ("rollcert.suite_version", SUITE_VERSION),
        *((("rollcert.interrupted", certificate.interrupted),) if certificate.interrupted else ()),
    ):
        ElementTree.SubElement(recorded, "property", name=name, value=xml_text(value))
    summary = world_summary(certificate)
    if summary:
        ElementTree.SubElement(recorded, "property", name="world", value=xml_text(world_phrase(summary)))
        if summary.get("narrowed"):
            ElementTree.SubElement(recorded, "property", name="world.within", value=xml_text(within_phrase(summary)))
        for name, count in dict(summary.get("dimensions") or {}).items():
            ElementTree.SubElement(recorded, "property", name=xml_text(f"world.{name}"), value=str(count))
    for pid, result in certificate.results.items():
        case = ElementTree.SubElement(
            suite, "testcase", classname=xml_text(f"rollcert.{certificate.target.name}"),
            name=xml_text(f"{pid} {result.title}".strip()),
            time=str(result.seconds),
        )
        if result.verdict == "violated" and result.counterexample is not None:
            failure = ElementTree.SubElement(case, "failure", type="violated", message=xml_text(result.reason[:500]))
            failure.text = xml_text(
                "\n\n".join(
                    format_counterexample(found, signature=len(result.findings) > 1) for found in findings_of(result)
                )
            )
        elif result.verdict == "unknown":
            ElementTree.SubElement(case, "failure", type="unknown", message=xml_text(result.reason))
        elif result.verdict == "error":
            ElementTree.SubElement(case, "error", type="error", message=xml_text(result.reason))
        elif result.verdict == "not_assessed":
            ElementTree.SubElement(case, "skipped", message=xml_text(result.reason))
        if result.world:  # after the outcome: JUnit readers expect system-out last
            counts = ", ".join(f"{name} {count}" for name, count in dict(result.world.get("dimensions") or {}).items())
            output = ElementTree.SubElement(case, "system-out")
            output.text = xml_text(f"{_within(result)}world: {world_phrase(result.world)}; {counts}")
    return ElementTree.tostring(suite, encoding="unicode")
