"""``rollcert explain``: a counterexample walked through one step at a time.

A certificate states *that* a rule was broken; a learner understands *why* by
watching it happen. For every step of a counterexample this module computes
what a person needs to see: the operation, the buffer before and after with
the edited span marked (deleted, inserted, undone, restored), the journal
records that are live after the step, what the model expected and, at the
failing step, the rule that was broken, one sentence saying why and — for R2,
R4 and S1 — the place the implementation should have looked.

Nothing here trusts the implementation for the journal: the records are
computed from the reference model's state (``rollcert.model.reference`` for the
rollback machines, ``rollcert.model.diffs`` for the diff machines), stepped
along the same trace the judge ran, so the picture shows what the log *should*
hold. The same :class:`Walkthrough` feeds the terminal view here and the HTML
certificate (``html_certificate.py``).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcert.model.diffs import Accepted
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import Rejected
from rollcert.model.diffs import apply
from rollcert.model.diffs import author
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.diffs import reject_apply
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.properties import PROPERTIES
from rollcert.model.reference import ModelState
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.reports.escape import terminal
from rollcert.reports.escape import terminal_lines
from rollcert.reports.stored_certificate import CertificateFileError
from rollcert.reports.stored_certificate import StoredCertificate
from rollcert.reports.stored_certificate import read_certificate_file
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import Counterexample
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import elided
from rollcert.stateful_tests.family import first_difference
from rollcert.stateful_tests.family import shown_repr
from rollcert.stateful_tests.family import shown_window
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target

#: Kinds of marked span. In text: deleted/undone ``[-…-]``, inserted/restored
#: ``{+…+}``, an out-of-log write ``<!…!>``, bytes that differ from the model ``⟦…⟧``.
DELETED, INSERTED, UNDONE, RESTORED, TAMPERED, CORRUPT = (
    "deleted", "inserted", "undone", "restored", "tampered", "corrupt",
)
_TEXT_MARKS = {
    DELETED: ("[-", "-]"),
    UNDONE: ("[-", "-]"),
    INSERTED: ("{+", "+}"),
    RESTORED: ("{+", "+}"),
    TAMPERED: ("<!", "!>"),
    CORRUPT: ("⟦", "⟧"),
}
LEGEND = (
    "marks: [-…-] deleted or undone   {+…+} inserted or restored   "
    "<!…!> written behind the log's back   ⟦…⟧ differs from the model"
)


class ExplainError(Exception):
    """Nothing to explain (no violation, a counterexample that does not reproduce,
    an unreadable certificate): the message says which."""


@dataclass(frozen=True)
class Span:
    """A marked half-open span ``[start, end)`` of one drawn buffer."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class JournalEntry:
    """One live inverse record as the model sees it: where the splice happened,
    the bytes it removed (what undo puts back) and the bytes it inserted."""

    offset: int
    removed: bytes
    inserted: bytes

    def describe(self) -> str:
        return f"offset {self.offset}, removed {shown_repr(self.removed)}, inserted {shown_repr(self.inserted)}"


@dataclass(frozen=True)
class DrawnStep:
    """One step of a counterexample, ready to draw.

    ``after`` is the model's buffer after the step (at a passing step the
    implementation's is the same); ``before_marks`` mark what the step took
    away, ``after_marks`` what it put in. At the failing step,
    ``expected_marks`` and ``actual_marks`` mark where the two buffers differ.
    """

    record: StepRecord
    before_marks: tuple[Span, ...]
    after: bytes
    after_marks: tuple[Span, ...]
    journal: tuple[JournalEntry, ...]
    expected_marks: tuple[Span, ...] = ()
    actual_marks: tuple[Span, ...] = ()
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class Walkthrough:
    """A counterexample with everything a person needs to follow it."""

    property_id: str
    #: The machine that found it (differs from ``property_id`` when R0 took
    #: another machine's counterexample).
    machine_property: str
    title: str
    target: str
    config: BufferConfig
    steps: tuple[DrawnStep, ...]
    rule: str
    why: str
    look_here: str
    explanation: str
    replay: str
    #: R7: the concurrent history, drawn instead of steps (``steps`` is empty).
    history: ConcurrentHistory | None = None
    #: The finding's harm signature (``Counterexample.signature``): what tells it from the others.
    signature: str = ""
    #: Which of its property's findings this is (1: its counterexample).
    finding: int = 1


# -- the rule, in one sentence ------------------------------------------------------------


def rule_sentence(property_id: str) -> str:
    """The first sentence of the property's statement in ``model/properties.py``."""
    statement = " ".join(PROPERTIES[property_id].statement.split())
    match = re.match(r"(.+?[.!?])(\s|$)", statement)
    return match.group(1) if match else statement


def property_title(property_id: str) -> str:
    prop = PROPERTIES.get(property_id)
    return prop.title if prop is not None else ""


# -- spans and journals from the model -------------------------------------------------------


def _edit_marks(offset: int, delete_length: int, inserted: int, *, kinds: tuple[str, str]) -> tuple[Span, Span]:
    return Span(offset, offset + delete_length, kinds[0]), Span(offset, offset + inserted, kinds[1])


def _fallback_marks(before: bytes, after: bytes, kinds: tuple[str, str]) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    span = first_difference(before, after)
    if span is None:
        return (), ()
    start, end_before, end_after = span
    return (Span(start, end_before, kinds[0]),), (Span(start, end_after, kinds[1]),)


def _rollback_journal(state: ModelState) -> tuple[JournalEntry, ...]:
    entries = []
    for depth in range(1, state.depth + 1):
        edit = state.edits[depth]
        if edit is None:
            continue
        below = state.states[depth - 1]
        entries.append(JournalEntry(edit.offset, below[edit.offset : edit.offset + edit.delete_length], edit.insert))
    return tuple(entries)


def _rollback_marks(
    before: ModelState, operation: Operation, after: ModelState, error: bool
) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """Exact spans where the operation says where it acts (a splice, a one-record
    undo); otherwise the span between the common prefix and suffix."""
    if error:
        return (), ()
    if isinstance(operation, (Splice, OutOfLogWrite)):
        kinds = (DELETED, INSERTED) if isinstance(operation, Splice) else (TAMPERED, TAMPERED)
        gone, new = _edit_marks(operation.offset, operation.delete_length, len(operation.insert), kinds=kinds)
        return (gone,), (new,)
    if isinstance(operation, (Rollback, RollbackTo)):
        undone = before.depth - after.depth
        if undone == 1 and before.edits[before.depth] is not None:
            edit = before.edits[before.depth]
            assert edit is not None
            gone, back = _edit_marks(edit.offset, len(edit.insert), edit.delete_length, kinds=(UNDONE, RESTORED))
            return (gone,), (back,)
        return _fallback_marks(before.current, after.current, (UNDONE, RESTORED))
    return _fallback_marks(before.current, after.current, (DELETED, INSERTED))


def _diff_journal(state: DiffModelState) -> tuple[JournalEntry, ...]:
    entries = []
    for depth in range(1, state.depth + 1):
        below, above = state.states[depth - 1], state.states[depth]
        span = first_difference(below, above) or (0, 0, 0)
        entries.append(
            JournalEntry(span[0], bytes(b for _, b in below[span[0] : span[1]]), bytes(b for _, b in above[span[0] : span[2]]))
        )
    return tuple(entries)


def _diff_marks(before: DiffModelState, operation: Any, after: DiffModelState) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    span = first_difference(before.current, after.current)
    if span is None:
        return (), ()
    kinds = (UNDONE, RESTORED) if operation.kind in ("rollback", "rollback_diff") else (DELETED, INSERTED)
    return (Span(span[0], span[1], kinds[0]),), (Span(span[0], span[2], kinds[1]),)


def _failing_marks(record: StepRecord) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    if record.ok:
        return (), ()
    span = first_difference(record.expected.buffer, record.actual.buffer)
    if span is None:
        return (), ()
    start, end_expected, end_actual = span
    return (Span(start, end_expected, CORRUPT),), (Span(start, end_actual, CORRUPT),)


@dataclass(frozen=True)
class _Walk:
    """The model stepped along a trace: one drawn step per record, and the
    model state before each step (for the pointers at the failing step)."""

    steps: tuple[DrawnStep, ...]
    states_before: tuple[Any, ...]


class _Budget:
    """Counts the bytes of model buffers a walk steps through; past the limit, the
    counterexample is not one rollcert wrote (its recorded steps are short, the
    model's buffers are not): refused in one line."""

    def __init__(self, property_id: str, limit: int | None) -> None:
        self.property_id, self.limit, self.spent = property_id, limit, 0

    def spend(self, *buffers: Sequence[Any]) -> None:
        self.spent += sum(len(buffer) for buffer in buffers)
        if self.limit is not None and self.spent > self.limit:
            raise CertificateFileError(
                f"drawing the certificate's {self.property_id} counterexample would step the model through more than "
                f"{self.limit >> 20} MiB of buffers, out of proportion to the file: it is not a certificate rollcert wrote"
            )


def _walk_rollback(config: BufferConfig, records: Sequence[StepRecord], budget: _Budget) -> _Walk:
    state = initial_state(config.initial, config.capacity, config.policy)
    drawn, befores = [], []
    for record in records:
        befores.append(state)
        try:
            outcome = step(state, record.operation)
            candidates = [outcome.state] + ([outcome.also_acceptable] if outcome.also_acceptable else [])
            error = outcome.error is not None
        except (ValueError, TypeError):  # bad arguments: the model changes nothing
            candidates, error = [state], True
        after = next((c for c in candidates if record.ok and c.current == record.actual.buffer), candidates[0])
        budget.spend(record.before, after.current, record.expected.buffer, record.actual.buffer)
        before_marks, after_marks = _rollback_marks(state, record.operation, after, error)
        expected_marks, actual_marks = _failing_marks(record)
        drawn.append(
            DrawnStep(record, before_marks, record.expected.buffer, after_marks, _rollback_journal(after),
                      expected_marks, actual_marks)
        )
        state = after
    return _Walk(tuple(drawn), tuple(befores))


def _context_lines(record: StepRecord) -> tuple[str, ...]:
    """The labelled lines a step carries besides its buffer (an apply_diff's B0,
    live base, diff and rule), whichever way the record holds them."""
    return tuple(f"{label:<9} {text}" for label, text in record.context)


def _is_imprecise(record: StepRecord) -> bool:
    return record.note.startswith("imprecise")


def _walk_diff(config: BufferConfig, records: Sequence[StepRecord], budget: _Budget) -> _Walk:
    state = initial_diff_state(config.initial)
    drawn, befores = [], []
    for record in records:
        befores.append(state)
        operation: Any = record.operation
        try:
            after = diff_step(state, operation).state
        except (ValueError, TypeError):
            after = state
        if _is_imprecise(record):  # refused what the rule allows: sound, nothing changed
            after = reject_apply(state)
        budget.spend(record.before, after.current, record.expected.buffer, record.actual.buffer)
        before_marks, after_marks = _diff_marks(state, operation, after)
        expected_marks, actual_marks = _failing_marks(record)
        context = _context_lines(record)
        drawn.append(
            DrawnStep(record, before_marks, record.expected.buffer, after_marks, _diff_journal(after),
                      expected_marks, actual_marks, context)
        )
        state = after
    return _Walk(tuple(drawn), tuple(befores))


# -- why, and where it should have looked ---------------------------------------------------------


def other_outcomes(record: StepRecord) -> tuple[Observed, ...]:
    """The outcomes the model also allowed at a step besides ``expected`` (a crash
    recovers the state before *or* after the interrupted operation; a rollback
    that meets a barrier refuses *or* stops there): each is shown, so a reader
    never takes the one shown first for the only right answer."""
    return tuple(outcome for outcome in record.allowed if outcome != record.expected)


def why_sentence(record: StepRecord) -> str:
    """One sentence: how the implementation's answer differs from the model's."""
    expected, actual = record.expected, record.actual
    clauses = []
    if expected.error != actual.error:
        if expected.error is None:
            clauses.append(f"the implementation refused with {actual.error} an operation the rules allow")
        elif actual.error is None:
            clauses.append(f"the implementation went ahead where the rules refuse with {expected.error}")
        else:
            clauses.append(f"the implementation raised {actual.error} where the rules say {expected.error}")
    span = first_difference(expected.buffer, actual.buffer)
    if span is not None:
        start, end_e, end_a = span
        clauses.append(
            f"its buffer differs from the model's at [{start}, {max(end_e, end_a)}) — expected "
            f"{expected.buffer[start:end_e]!r}, got {actual.buffer[start:end_a]!r} — a state that never "
            "existed in this history"
        )
    if expected.depth != actual.depth:
        clauses.append(f"its depth is {actual.depth}, not {expected.depth}")
    if expected.revision != actual.revision:
        clauses.append(f"its revision is {actual.revision}, not {expected.revision}")
    text = "; ".join(clauses) or "its answer differs from the model's"
    return text[0].upper() + text[1:] + "."


def _look_r2(walk: _Walk, failing: DrawnStep) -> str:
    before: ModelState = walk.states_before[-1]
    operation = failing.record.operation
    if not isinstance(operation, (Rollback, RollbackTo)):
        return ""
    undone = [e for e in reversed(before.edits[1 : before.depth + 1]) if e is not None]
    steps = operation.steps if isinstance(operation, Rollback) else len(undone)
    records = undone[:steps]
    if not records:
        return ""
    below = before.states
    where = "; then ".join(
        f"at offset {e.offset} take out {e.insert!r} (the bytes the record inserted) and put back "
        f"{below[depth - 1][e.offset : e.offset + e.delete_length]!r}"
        for depth, e in zip(range(before.depth, 0, -1), records, strict=False)
    )
    newest = records[0]
    found = failing.record.before[newest.offset : newest.offset + len(newest.insert)]
    span = first_difference(failing.record.expected.buffer, failing.record.actual.buffer)
    wrong = (
        f" Wrong restore position: the record says offset {newest.offset}, and the implementation's result "
        f"first differs from the model's at offset {span[0]} — it edited another copy of the same bytes."
        if span and span[0] != newest.offset else ""
    )
    return (
        f"The implementation should have looked at the recorded offset, not searched for the text: {where}. "
        f"The bytes at [{newest.offset}, {newest.offset + len(newest.insert)}) before the rollback were "
        f"{found!r}, exactly what the record inserted: checking them there is enough.{wrong}"
    )


def _look_r4(walk: _Walk, failing: DrawnStep) -> str:
    writes = [
        (drawn.record.index, drawn.record.operation, walk.states_before[position].depth)
        for position, drawn in enumerate(walk.steps)
        if isinstance(drawn.record.operation, OutOfLogWrite)
    ]
    if not writes:
        return ""
    index, write, depth = writes[-1]
    assert isinstance(write, OutOfLogWrite)
    wrote = (
        f"Step {index} wrote [{write.offset}, {write.offset + write.delete_length}) -> {write.insert!r} behind "
        f"the log's back at depth {depth}."
    )
    expected = failing.record.expected
    if expected.error == "DivergenceError":
        return (
            f"{wrote} Before undoing record {depth} — the step that would cross the write — the implementation "
            "should have compared the buffer with what its log says it holds (a version or digest check) and "
            "raised DivergenceError, changing nothing."
        )
    if expected.error is None:
        # The model lets this rollback through: it undoes nothing at or below the
        # write, so the write's bytes stay. Saying "raise DivergenceError" here
        # would teach the wrong fix.
        return (
            f"{wrote} This rollback does not cross it: the model lets it succeed and keeps the write's bytes "
            f"(expected {expected.buffer!r}). The implementation should have undone only the records above the "
            "write, one LIFO step at a time, and checked each; jumping to a copy of the buffer taken before the "
            "write (or replaying past it) erases what the other writer put there."
        )
    return ""


def _look_s1(walk: _Walk, failing: DrawnStep) -> str:
    operation: Any = failing.record.operation
    if getattr(operation, "kind", "") != "apply_diff":
        return ""
    before: DiffModelState = walk.states_before[-1]
    try:
        diff = author(before, operation)
    except (ValueError, TypeError):
        return ""
    result = apply(diff, before.current, before.next_identity)
    base = diff.base.content
    if isinstance(result, Rejected) and result.conflict is not None:
        region = result.conflict
        return (
            f"Conflicting region [{region.start}, {region.end}) of the snapshot B0 "
            f"({base[region.start:region.end]!r}): the diff read it, and its bytes are no longer in the live "
            "base B contiguous and unchanged. The implementation should have traced that region from B0 to B "
            "through the edits in between (not only the hunks it writes, not by searching for similar text) and "
            "raised StaleBaseError naming it."
        )
    if isinstance(result, Rejected):
        return (
            f"The live base B ({failing.record.before!r}) is not the snapshot B0 ({base!r}) and the diff is "
            "positional: the implementation should have compared B with B0 and refused — offsets into a text "
            "that moved point at other bytes."
        )
    if isinstance(result, Accepted):
        placed = ", ".join(f"[{start}, {end}) -> {rep!r}" for start, end, rep in result.placed)
        return (
            f"The rule places the hunks at {placed} of the live base, where their read regions now stand; "
            "the implementation should have moved each hunk with its own region (traced through the edits), "
            "not matched text."
        )
    return ""


_LOOK_HERE: dict[str, Callable[[_Walk, DrawnStep], str]] = {"R2": _look_r2, "R4": _look_r4, "S1": _look_s1}


# -- building walkthroughs ---------------------------------------------------------------------


def walkthrough(
    counterexample: Counterexample, property_id: str | None = None, replay: str = "", budget: int | None = None
) -> Walkthrough:
    """Draw ``counterexample`` (reported under ``property_id``, default its own),
    stepping the model through at most ``budget`` bytes of buffers (``None``: no bound)."""
    from rollcert.reports.certificate import replay_command

    machine = counterexample.property_id
    reported = property_id or machine
    config = counterexample.config()
    if counterexample.history is not None:
        return _history_walkthrough(counterexample, counterexample.history, reported)
    walk = (_walk_diff if machine in DIFFS.property_ids else _walk_rollback)(
        config, counterexample.steps, _Budget(reported, budget)
    )
    failing = walk.steps[-1]
    # SPEC §6a: the rule the failing step broke, never merely the machine's.
    broken = counterexample.rule(reported)
    look = _LOOK_HERE.get(broken)
    return Walkthrough(
        property_id=reported,
        machine_property=machine,
        title=property_title(reported),
        target=counterexample.target,
        config=config,
        steps=walk.steps,
        rule=f"{broken} {property_title(broken)}: {rule_sentence(broken)}",
        why=why_sentence(failing.record),
        look_here=look(walk, failing) if look is not None else "",
        explanation=counterexample.explanation,
        replay=replay or replay_command(counterexample),
        signature=counterexample.signature,
    )


def _history_walkthrough(counterexample: Counterexample, history: ConcurrentHistory, reported: str) -> Walkthrough:
    from rollcert.stateful_tests.concurrency import history_text
    from rollcert.stateful_tests.concurrency import history_why

    return Walkthrough(
        property_id=reported,
        machine_property=counterexample.property_id,
        title=property_title(reported),
        target=counterexample.target,
        config=counterexample.config(),
        steps=(),
        rule=f"{reported} {property_title(reported)}: {rule_sentence(reported)}",
        why=history_why(history),
        look_here="",
        explanation=history_text(counterexample.target, history),
        replay=f"rollcert certify {shlex.quote(counterexample.target)} --only R7",
        history=history,
    )


def choose_property(verdicts: dict[str, str], wanted: str | None) -> str:
    """The property to explain: the one asked for, else the first violated one
    that is not R0 (R0's counterexample is always some other machine's), else R0."""
    if wanted is not None:
        wanted = wanted.upper()
        if wanted not in verdicts:
            raise ExplainError(f"no result for {wanted} (have: {', '.join(verdicts)})")
        if verdicts[wanted] != "violated":
            raise ExplainError(f"{wanted} is {verdicts[wanted]}: there is no counterexample to explain")
        return wanted
    violated = [pid for pid, verdict in verdicts.items() if verdict == "violated"]
    if not violated:
        summary = ", ".join(f"{pid} {verdict}" for pid, verdict in verdicts.items())
        raise ExplainError(f"nothing is violated ({summary}): there is no counterexample to explain")
    return next((pid for pid in violated if pid != "R0"), violated[0])


def properties_to_certify(target: Target, wanted: str | None) -> tuple[str, ...] | None:
    """A specimen is certified only on the properties its story breaks (fast, and
    what a learner wants to see); anything else on everything, unless asked."""
    if wanted is not None:
        return (wanted.upper(),)
    if target.breaks:
        return tuple(sorted(target.breaks))
    return None


def from_certificate_data(certificate: CertificateData, wanted: str | None = None) -> Walkthrough:
    chosen = choose_property({pid: r.verdict for pid, r in certificate.results.items()}, wanted)
    counterexample = certificate.results[chosen].counterexample
    if counterexample is None:
        raise ExplainError(f"{chosen} is violated but carries no counterexample")
    return walkthrough(counterexample, chosen)


#: The longest counterexample ``explain`` and ``html`` draw from a file: a minimal
#: counterexample is a handful of steps; the model's history grows with each.
MAX_DRAWN_STEPS = 1000


def drawing_budget(file_size: int) -> int:
    """The most bytes of model buffers drawing a certificate of ``file_size`` bytes
    may step through: in proportion to the file, so that a small hand-made file
    (a megabyte initial buffer and ten thousand one-byte edits) cannot cost
    gigabytes (it used to cost about 10 GiB for a 1.7 MB file)."""
    return (16 << 20) + 16 * file_size


def stored_walkthrough(
    stored: StoredCertificate, property_id: str, counterexample: Counterexample | None = None
) -> Walkthrough:
    """Draw the recorded counterexample of ``property_id`` (or ``counterexample``,
    one of its findings) from a certificate read from its file: nothing is
    replayed, imported or run."""
    if property_id in stored.unrecorded:
        raise ExplainError(
            f"the certificate's {property_id} counterexample was written without its step outcomes (an older "
            f"rollcert): replay it on its target with rollcert replay TARGET --certificate CERT --property {property_id}"
        )
    if counterexample is None:
        counterexample = stored.data.results[property_id].counterexample
    if counterexample is None:
        raise ExplainError(f"{property_id} is violated but the certificate carries no counterexample")
    if len(counterexample.steps) > MAX_DRAWN_STEPS:
        raise CertificateFileError(
            f"the certificate's {property_id} counterexample has {len(counterexample.steps)} steps, more than the "
            f"{MAX_DRAWN_STEPS} drawn; replay it with rollcert replay TARGET --certificate CERT --property {property_id}"
        )
    return walkthrough(counterexample, property_id, budget=drawing_budget(stored.size))


def from_certificate_file(path: Path, wanted: str | None = None) -> Walkthrough:
    stored = read_certificate_file(path)
    verdicts = {pid: result.verdict for pid, result in stored.data.results.items()}
    return stored_walkthrough(stored, choose_property(verdicts, wanted))


def findings_to_explain(certificate: CertificateData, wanted: str | None) -> list[tuple[str, Counterexample | None]]:
    """What ``explain`` walks through (issue 43): every finding of ``wanted``, or
    by default of every violated property — the other rules' first, R0 last, since
    it lists their findings too — each finding once. ``None`` for a property whose
    file recorded no counterexample to draw (:func:`stored_walkthrough` says why)."""
    verdicts = {pid: result.verdict for pid, result in certificate.results.items()}
    chosen = choose_property(verdicts, wanted)  # the errors a single walk gave, for nothing to explain
    violated = [pid for pid, verdict in verdicts.items() if verdict == "violated"]
    order = [chosen] if wanted is not None else [pid for pid in violated if pid != "R0"] + [
        pid for pid in violated if pid == "R0"
    ]
    walked: set[tuple[object, ...]] = set()
    listed: list[tuple[str, Counterexample | None]] = []
    for property_id in order:
        result = certificate.results[property_id]
        findings = result.findings or ([result.counterexample] if result.counterexample is not None else [])
        if not findings:
            listed.append((property_id, None))
        for found in findings:
            key = (found.initial, found.capacity, found.policy, found.durable, tuple(s.operation for s in found.steps))
            if key not in walked:
                walked.add(key)
                listed.append((property_id, found))
    return listed


def load_all(source: str, wanted: str | None = None, *, profile: str = "quick", seed: int = 0) -> list[Walkthrough]:
    """Every walkthrough ``explain`` shows for ``source`` (a certificate JSON file or
    a target to certify now): see :func:`findings_to_explain`."""
    path = Path(source)
    if source.endswith(".json") or (path.exists() and not path.is_dir()):
        stored = read_certificate_file(path)
        return [stored_walkthrough(stored, pid, found) for pid, found in findings_to_explain(stored.data, wanted)]
    from rollcert.targets.resolve import resolve_target

    target = resolve_target(source)
    certificate = certify(target, profile=profile, seed=seed, only=properties_to_certify(target, wanted))
    walks = []
    for pid, found in findings_to_explain(certificate, wanted):
        if found is None:
            raise ExplainError(f"{pid} is violated but carries no counterexample")
        walks.append(walkthrough(found, pid))
    return walks


def load(source: str, wanted: str | None = None, *, profile: str = "quick", seed: int = 0) -> Walkthrough:
    """``source`` is a certificate JSON file or a target to certify now."""
    path = Path(source)
    if source.endswith(".json") or (path.exists() and not path.is_dir()):  # a FIFO too: refused, never waited on
        return from_certificate_file(path, wanted)
    from rollcert.targets.resolve import resolve_target

    target = resolve_target(source)
    only = properties_to_certify(target, wanted)
    return from_certificate_data(certify(target, profile=profile, seed=seed, only=only), wanted)


# -- the terminal view -----------------------------------------------------------------------------


def show_marked(data: bytes, marks: Sequence[Span]) -> str:
    """``data`` as readable text with each span bracketed by its kind's marks
    (an empty span shows where something was, or will be, put); a long buffer is
    shown around its first mark (``family.shown_window``)."""
    first, last = shown_window(len(data), min((mark.start for mark in marks), default=0))
    if (first, last) == (0, len(data)):
        return _marked(data, marks)
    inside = [
        Span(max(mark.start, first) - first, min(mark.end, last) - first, mark.kind)
        for mark in marks
        if mark.start <= last and mark.end >= first
    ]
    return elided(_marked(data[first:last], inside), first, last, len(data))


def _marked(data: bytes, marks: Sequence[Span]) -> str:
    pieces = []
    for position in range(len(data) + 1):
        pieces += [_TEXT_MARKS[s.kind][1] for s in marks if s.end == position and s.start < s.end]
        pieces += ["".join(_TEXT_MARKS[s.kind]) for s in marks if s.start == s.end == position]
        pieces += [_TEXT_MARKS[s.kind][0] for s in marks if s.start == position and s.start < s.end]
        if position < len(data):
            pieces.append(repr(data[position : position + 1])[2:-1])
    return "'" + "".join(pieces) + "'"



def render_step(walk: Walkthrough, drawn: DrawnStep) -> list[str]:
    record = drawn.record
    total = len(walk.steps)
    failing = not record.ok
    lines = [f"Step {record.index} of {total}: {record.operation.describe()}" + ("   <- the failing step" if failing else "")]
    lines += [f"  {terminal(line)}" for line in drawn.context]
    lines.append(f"  before    {show_marked(record.before, drawn.before_marks)}")
    if not failing:
        lines.append(f"  after     {show_marked(drawn.after, drawn.after_marks)}")
        lines.append(f"  model     {terminal(record.expected.status())} — the implementation agrees")
    else:
        lines.append(f"  expected  {show_marked(record.expected.buffer, drawn.expected_marks or drawn.after_marks)}"
                     f"   ({terminal(record.expected.status())})")
        for other in other_outcomes(record):
            lines.append(f"        or  {show_marked(other.buffer, ())}   ({terminal(other.status())})")
        lines.append(
            f"  actual    {show_marked(record.actual.buffer, drawn.actual_marks)}   ({terminal(record.actual.status())})"
        )
        if record.sut_message:
            lines.append(f"  the implementation said: {terminal(record.sut_message)}")
    journal = "  journal   " + ("(empty)" if not drawn.journal else "")
    lines.append(journal.rstrip() if drawn.journal else journal)
    lines += [f"    #{n} {entry.describe()}" for n, entry in enumerate(drawn.journal, 1)]
    if failing:
        lines.append(f"  Broken:   {walk.rule}")
        lines.append(f"  Why:      {terminal(walk.why)}")
        if walk.look_here:
            lines.append(f"  Look at:  {terminal(walk.look_here)}")
    return lines


def render_header(walk: Walkthrough) -> list[str]:
    found = f" (found while exploring {walk.machine_property})" if walk.machine_property != walk.property_id else ""
    capacity = f", capacity {walk.config.capacity} ({walk.config.policy})" if walk.config.capacity is not None else ""
    durable = walk.config.journal_phrase()
    return [
        f"{walk.property_id} {walk.title} on {terminal(walk.target)}{found}: {len(walk.steps)} "
        f"step{'s' if len(walk.steps) != 1 else ''}, "
        f"starting from {shown_repr(walk.config.initial)}{capacity}{durable}.",
        LEGEND,
        "The journal lists the live inverse records as the model keeps them (what the log should hold).",
    ]


def render_history(walk: Walkthrough) -> str:
    """An R7 walkthrough: the program, the lanes, the longest order, the call that
    cannot come next — all from the recorded history."""
    assert walk.history is not None
    found = f" (found while exploring {walk.machine_property})" if walk.machine_property != walk.property_id else ""
    lines = [
        f"{walk.property_id} {walk.title} on {terminal(walk.target)}{found}: a history of {len(walk.history.calls)} calls "
        f"on {len({c.thread for c in walk.history.calls if c.thread != 'prefix'})} threads, "
        f"starting from {shown_repr(walk.config.initial)}.",
        "",
        terminal_lines(walk.explanation),
        "",
        f"  Broken:   {walk.rule}",
        f"  Why:      {terminal(walk.why)}",
        "",
        f"Run again: {terminal(walk.replay)} (which run fails depends on how the threads were scheduled; the longest "
        "order's steps alone replay without failing)",
    ]
    return "\n".join(lines)


def render_text(walk: Walkthrough) -> str:
    """The whole walkthrough at once (``--all``, or when not on a terminal)."""
    if walk.history is not None:
        return render_history(walk)
    lines = render_header(walk)
    for drawn in walk.steps:
        lines += ["", *render_step(walk, drawn)]
    lines += ["", f"Replay: {terminal(walk.replay)}"]
    return "\n".join(lines)


def run_interactive(walk: Walkthrough, read_line: Callable[[str], str] = input) -> None:
    """One step per Enter; end of input shows the rest."""
    if walk.history is not None:  # one picture, not steps
        print(render_history(walk))
        return
    print("\n".join(render_header(walk)))
    for position, drawn in enumerate(walk.steps):
        print()
        print("\n".join(render_step(walk, drawn)))
        if position + 1 < len(walk.steps):
            try:
                read_line("  [Enter] next step ")
            except EOFError:
                for rest in walk.steps[position + 1 :]:
                    print()
                    print("\n".join(render_step(walk, rest)))
                break
    print()
    print(f"Replay: {terminal(walk.replay)}")


def explain_main(source: str, wanted: str | None, show_all: bool, *, profile: str = "quick", seed: int = 0) -> int:
    """``rollcert explain``: 1 when a counterexample was explained (a violation, as
    ``certify`` and ``replay`` report it), 2 when there was nothing to explain."""
    try:
        walks = load_all(source, wanted, profile=profile, seed=seed)
    except ExplainError as error:
        print(f"rollcert explain: {error}")
        return 2
    interactive = not show_all and sys.stdin.isatty() and sys.stdout.isatty()
    for position, walk in enumerate(walks, 1):
        if len(walks) > 1:  # every violated property, every finding (issue 43)
            print(("\n" if position > 1 else "") + finding_heading(walk, position, len(walks)))
        if interactive:
            run_interactive(walk)
        else:
            print(render_text(walk))
    return 1


def finding_heading(walk: Walkthrough, position: int, total: int) -> str:
    """The line above each of several walkthroughs: which finding, of which property, what harm."""
    signature = f": {terminal(walk.signature)}" if walk.signature else ""
    return f"=== Finding {position} of {total} — {walk.property_id}{signature} ==="
