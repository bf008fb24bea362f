"""The properties, each stated once, by its ID (SPEC §4): R0–R6 for rollback logs, S1–S3 for self-authored diffs.

Every property is a :class:`Property`: its ID, a one-line title, a paragraph
that teaches the invariant, and the *situations* a test run must reach before a
pass means anything. A situation is a named predicate over one step of the
model (state before, operation, predicted outcome). A run that never reached
one of its property's situations proves nothing about it, so the certificate
says ``unknown`` rather than ``passed`` (the "sometimes" properties of
stateright, the coverage of TLA+ runs).

The invariant itself is always the same comparison, made after every step:
the implementation's observable state equals the model's, or it raised the
documented error the model raised and nothing changed (R0). ``stateful_tests``
runs one machine per property with the operations that exercise it, but a
machine is not a verdict: when a step goes wrong, each property's ``broken``
predicate (stated next to its rule) says whether *its own clause* broke there,
and the violation is reported under every property whose predicate holds, or
under R0 when none does (SPEC §6a, Attribution). So "R1 violated" means a
mutation went through without its inverse, never merely that the R1 machine
was running when something else went wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Generic
from typing import TypeVar

from rollcert.model.diffs import Accepted
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import DiffOutcome
from rollcert.model.diffs import Rejected
from rollcert.model.diffs import applied_base
from rollcert.model.diffs import apply
from rollcert.model.diffs import content_of
from rollcert.model.diffs import effective_regions
from rollcert.model.diffs import locate
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Compact
from rollcert.model.operations import CorruptRecord
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import ToolWrite
from rollcert.model.reference import LOST_SERIAL
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome

StateT = TypeVar("StateT")
OperationT = TypeVar("OperationT")
OutcomeT = TypeVar("OutcomeT")


@dataclass(frozen=True)
class Situation(Generic[StateT, OperationT, OutcomeT]):
    """A named predicate over one step of a model: (state before, operation,
    predicted outcome) -> was this interesting case reached?"""

    name: str
    description: str
    reached: Callable[[StateT, OperationT, OutcomeT], bool]


@dataclass(frozen=True)
class Seen:
    """What a target showed after a step: the documented error it raised (by
    kind name, ``None``: it succeeded), its bytes, and its depth and revision
    where it reports them (``None``: it does not)."""

    error: str | None
    buffer: bytes
    depth: int | None
    revision: int | None


@dataclass(frozen=True)
class FailingStep(Generic[StateT, OperationT]):
    """A step the target got wrong, as the attribution predicates see it: the
    operation, the model's state before it, every outcome the rules allowed
    (state and error kind; the model's own first) and what the target showed.

    "Rk violated" must mean that rule k's own clause broke here (SPEC §6a), not
    that Rk's machine happened to be the one running. Each property says, with
    its ``broken`` predicate, what its clause breaking looks like at one step;
    a mismatch no predicate claims is a finding of R0, the master property."""

    operation: OperationT
    before: StateT
    allowed: tuple[tuple[StateT, str | None], ...]
    seen: Seen

    def allowed_errors(self) -> set[str | None]:
        return {error for _, error in self.allowed}

    def refused_by_rules(self, kind: str) -> bool:
        """Every outcome the rules allow raises ``kind``."""
        return self.allowed_errors() == {kind}


@dataclass(frozen=True)
class Property(Generic[StateT, OperationT, OutcomeT]):
    """One invariant: its ID, a title, the paragraph that teaches it, the
    situations a run must reach before a pass means anything, and the
    predicate that says a failing step broke this rule's own clause
    (``None``: only R0's comparison, and R7's histories, judge it). R0–R6 are
    stated over :mod:`rollcert.model.reference`'s steps, S1–S3 over
    :mod:`rollcert.model.diffs`'s (identity-tagged bytes)."""

    id: str
    title: str
    statement: str
    situations: tuple[Situation[StateT, OperationT, OutcomeT], ...]
    broken: Callable[[FailingStep[StateT, OperationT]], bool] | None = None
    #: What the predicate looks for, in a few words (for explanations).
    broken_when: str = ""


#: The rollback properties' forms (R0–R6): over the reference model's steps.
RollbackSituation = Situation[ModelState, Operation, Outcome]
RollbackProperty = Property[ModelState, Operation, Outcome]
#: The diff properties' forms (S1–S3): over the diff model's steps.
DiffSituation = Situation[DiffModelState, DiffOperation, DiffOutcome]
DiffProperty = Property[DiffModelState, DiffOperation, DiffOutcome]
SituationPredicate = Callable[[ModelState, Operation, Outcome], bool]


def _undone_edits(before: ModelState, outcome: Outcome) -> list[Splice]:
    """The edits a successful rollback undid, newest first."""
    if outcome.error is not None:
        return []
    undone = before.depth - outcome.state.depth
    if undone <= 0 or outcome.state.states[0] != before.states[0]:
        return []
    return [e for e in reversed(before.edits[before.depth - undone + 1 :]) if e is not None]


def _is_rollback(operation: Operation) -> bool:
    return isinstance(operation, (Rollback, RollbackTo))


def _rollback_after_shift(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A rollback undid a record made *after* a length-changing edit that lies at or
    before its offset: the record's offset is only right if that shift is honoured."""
    if not _is_rollback(operation) or outcome.error is not None:
        return False
    undone = before.depth - outcome.state.depth
    live = before.edits[1 : before.depth + 1]
    for position in range(len(live) - undone, len(live)):
        record = live[position]
        earlier = live[:position]
        if record is not None and any(
            e is not None and len(e.insert) != e.delete_length and e.offset <= record.offset
            for e in earlier
        ):
            return True
    return False


def _rollback_over_repeated_text(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A rollback step restored a span whose inserted bytes also occur elsewhere in
    the buffer it was undone from: a content search could pick the wrong copy."""
    if not isinstance(operation, Rollback) or outcome.error is not None or operation.steps != 1:
        return False
    edits = _undone_edits(before, outcome)
    if not edits or not edits[0].insert:
        return False
    edit, buffer = edits[0], before.current
    return buffer.find(edit.insert) != edit.offset or buffer.find(edit.insert, edit.offset + 1) != -1


#: Anchor width for the "ambiguous context" situation: the incident's buffer used 16-byte anchors;
#: any width shows the same bug, and 4 keeps the buffers a search must build short.
AMBIGUITY_WIDTH = 4

#: The look-alike scan below compares a restore at every other position: quadratic in the
#: buffer's length. In a buffer of one repeated letter every position looks alike, and a
#: 1.25 MiB start took hours. The situation needs only a few bytes to arise, so buffers
#: past this length are not scanned (the situation is reached in smaller ones).
AMBIGUITY_SCAN_LIMIT = 1 << 16


def _rollback_with_ambiguous_context(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A single-step rollback of an edit whose surroundings (AMBIGUITY_WIDTH bytes
    before and after the inserted span) also surround another position, where
    restoring would give different bytes: a search by content anchors has two
    candidates, and only the recorded offset is right."""
    if not isinstance(operation, Rollback) or outcome.error is not None or operation.steps != 1:
        return False
    edits = _undone_edits(before, outcome)
    if not edits:
        return False
    edit, buffer, width = edits[0], before.current, AMBIGUITY_WIDTH
    if len(buffer) > AMBIGUITY_SCAN_LIMIT:
        return False
    length = len(edit.insert)

    def context(position: int) -> tuple[bytes, bytes] | None:
        if position < width or position + length + width > len(buffer):
            return None
        return buffer[position - width : position], buffer[position + length : position + length + width]

    mine = context(edit.offset)
    if mine is None:
        return False
    restored = outcome.state.current
    removed = restored[edit.offset : edit.offset + edit.delete_length]
    # Only look-alikes where restoring at the wrong place gives different bytes.
    return any(
        context(p) == mine and buffer[:p] + removed + buffer[p + length :] != restored
        for p in range(len(buffer) - length + 1)
        if p != edit.offset
    )


def _multi_step_rollback(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return (
        _is_rollback(operation)
        and outcome.error is None
        and before.depth - outcome.state.depth >= 2
    )


def _dead_checkpoint_refused(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A rollback_to a dead checkpoint taken at the depth the buffer has again: a
    different state now sits at that depth, so only identity tells them apart."""
    if not isinstance(operation, RollbackTo) or outcome.error is not UnreachableRollbackError:
        return False
    serial, depth_taken = before.checkpoints[operation.checkpoint]
    return serial not in before.serials and depth_taken == before.depth


def _past_horizon_refused(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, (Rollback, RollbackToForeign)) and outcome.error is UnreachableRollbackError


def _fault_spent(before: ModelState, outcome: Outcome) -> bool:
    return before.fault_armed and not outcome.state.fault_armed


def _journal_refused(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, Splice) and outcome.error is JournalError and _fault_spent(before, outcome)


def _divergence_met(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return _is_rollback(operation) and outcome.error is DivergenceError


def _rollback_to_meets_write(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A rollback_to refused because the way back crosses an out-of-log write:
    a checkpoint is no licence to jump over it."""
    return isinstance(operation, RollbackTo) and outcome.error is DivergenceError


def _undo_above_write(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A record made on top of an out-of-log write was undone normally."""
    return (
        _is_rollback(operation)
        and outcome.error is None
        and any(b <= outcome.state.depth < before.depth for b in before.barriers)
    )


def _adopt_after_divergence(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, AdoptCurrent) and bool(before.barriers)


def _out_of_log_write(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, OutOfLogWrite) and before.depth > 0


def _eviction(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return (
        isinstance(operation, Splice)
        and outcome.error is None
        and outcome.state.serials[0] != before.serials[0]
    )


def _full_journal_refused(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return (
        isinstance(operation, Splice)
        and outcome.error is JournalError
        and not _fault_spent(before, outcome)
    )


def _rollback_to_horizon_after_eviction(
    before: ModelState, operation: Operation, outcome: Outcome
) -> bool:
    return (
        _is_rollback(operation)
        and outcome.error is None
        and outcome.state.depth == 0
        and before.serials[0] != 0
        and before.capacity is not None
    )


def _any_rollback(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return _is_rollback(operation) and outcome.error is None and before.depth > outcome.state.depth


def _error_changed_nothing(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return outcome.error is not None


# -- attribution: the clause each rollback rule states, broken at one step ----------------
#
# Each predicate below looks at one failing step (FailingStep) and answers one
# question: did *this* rule's own clause break here? They are deliberately
# narrow. A rollback that lands on bytes no reading allows is R2's only if the
# bytes are those of a record restored at another place, R3's only if they are
# those of another order, a skipped record or another state of the history, and
# so on; a mismatch none of them explains is R0's (the master property).

RollbackStep = FailingStep[ModelState, Operation]
#: How many candidate buffers an attribution search keeps per undo step: the
#: machines' buffers are short, and a failing step is judged once.
ATTRIBUTION_CANDIDATES = 512
#: Past this many bytes a buffer is searched at its look-alike places only, and at
#: most ATTRIBUTION_WIDE_CANDIDATES buffers are carried: every place of every
#: candidate of a 32 KiB buffer (the wide draws of issue 23) took minutes per
#: failing step. A misplacement elsewhere in so long a buffer is then R0's alone.
ATTRIBUTION_SCAN_BYTES = 4096
ATTRIBUTION_WIDE_CANDIDATES = 16
#: Restorations tried at most (weighted by KiB) before only recorded places are: a
#: long rollback over every place of 512 candidates is otherwise unbounded.
ATTRIBUTION_WORK = 200_000


def _undo_at(buffer: bytes, below: bytes, edit: Splice, at: int) -> bytes | None:
    """``buffer`` with the inverse of ``edit`` (made from ``below``) applied at
    ``at``: the inserted span (as far as the buffer reaches, as a slice
    assignment cuts it, past the end: at the end) replaced by the bytes the
    edit removed. ``None`` for a negative ``at``."""
    if at < 0:
        return None
    return buffer[:at] + below[edit.offset : edit.offset + edit.delete_length] + buffer[at + len(edit.insert) :]


def _rollback_depths(step: RollbackStep) -> int:
    """How many records the rollback the rules allow undoes (0: none succeeds)."""
    undone = [step.before.depth - state.depth for state, error in step.allowed if error is None]
    return max(undone, default=0)


def _wrong_success(step: RollbackStep) -> bool:
    """The target succeeded where the rules let the operation succeed, and its
    bytes are none of the allowed ones."""
    return (
        step.seen.error is None
        and None in step.allowed_errors()
        and all(step.seen.buffer != state.current for state, _ in step.allowed)
    )


def _records(before: ModelState, count: int) -> list[tuple[Splice, bytes]]:
    """The top ``count`` live records, newest first: each edit and the state it was made from."""
    found = []
    for depth in range(before.depth, before.depth - count, -1):
        edit = before.edits[depth]
        if edit is None:
            return []
        found.append((edit, before.states[depth - 1]))
    return found


def _look_alikes(buffer: bytes, edit: Splice) -> list[int]:
    """The places of ``buffer`` a search could take for where ``edit`` put its
    bytes: the recorded offset, and every other place whose bytes are the
    inserted ones, or whose surroundings (AMBIGUITY_WIDTH bytes each side,
    clipped at the ends) are the recorded place's."""
    length, width, home = len(edit.insert), AMBIGUITY_WIDTH, edit.offset

    def around(at: int) -> tuple[bytes, bytes]:
        return buffer[max(0, at - width) : at], buffer[at + length : at + length + width]

    def occurrences(needle: bytes) -> Iterator[int]:
        # Where ``needle`` starts, lowest first: ``find`` instead of a slice per position
        # (a rule checked on every failing replay of a 64 KiB buffer spent minutes here;
        # tests/test_model_look_alikes.py checks this against the slice-per-position definition).
        found = buffer.find(needle)
        while found != -1:
            yield found
            found = buffer.find(needle, found + 1)

    last = len(buffer) - length
    same_insert = set(occurrences(edit.insert)) if length else set()
    before, after = around(home)
    same_surroundings: set[int] = set()
    if len(before) == width:  # else only ``home`` has so few bytes before it (no other place can match)
        same_surroundings = {at + width for at in occurrences(before) if around(at + width) == (before, after)}
    return [home, *sorted(at for at in same_insert | same_surroundings if at != home and at <= last)]


def _misplaced_restorations(before: ModelState, count: int, *, anywhere: bool) -> set[bytes]:
    """Every buffer reached by undoing the top ``count`` records newest first,
    each at its recorded offset or elsewhere: at any place (``anywhere``) or at
    a look-alike place only (:func:`_look_alikes`: where a search by content or
    anchors could land)."""
    buffers = {before.current}
    work = 0
    for edit, below in _records(before, count):
        reached: set[bytes] = set()
        for buffer in buffers:
            big = len(buffer) > ATTRIBUTION_SCAN_BYTES
            if work > ATTRIBUTION_WORK:
                places: Sequence[int] = (edit.offset,)  # out of budget: the recorded place only
            elif anywhere and not big:
                places = range(len(buffer) - len(edit.insert) + 1)
            else:
                places = _look_alikes(buffer, edit)
            limit = ATTRIBUTION_WIDE_CANDIDATES if big else ATTRIBUTION_CANDIDATES
            cost = 1 + len(buffer) // 1024
            for tried, at in enumerate(places):
                if len(reached) >= limit:
                    # Full: no place adds a buffer now. The work is counted as if
                    # each were tried (the budget decides the same), without
                    # building a buffer per place (a 1.3 KB start in one-byte
                    # chunks took minutes of copies per minimisation).
                    work += cost * (len(places) - tried)
                    break
                work += cost
                undone = _undo_at(buffer, below, edit, at)
                if undone is not None:
                    reached.add(undone)
        buffers = reached
    return buffers


def _replayed(before: ModelState, records: list[tuple[Splice, bytes]]) -> bytes | None:
    """The current buffer with ``records``' inverses applied in the order given, each at its recorded offset."""
    buffer: bytes | None = before.current
    for edit, below in records:
        if buffer is None:
            return None
        buffer = _undo_at(buffer, below, edit, edit.offset)
    return buffer


def _skipping_one(before: ModelState, count: int, *, below: bool) -> set[bytes]:
    """The buffers a replay of the top ``count`` records leaves when one of them
    is missing from the log (with ``below``, also when the newest is missing and
    the record under the batch is replayed in its place, as a journal that
    dropped its newest record does): the newest-first replay of the others, at
    their recorded offsets."""
    records = _records(before, min(count + 1, before.depth) if below else count)
    results = set()
    for missing in range(len(records) if below else count):
        rest = records[:missing] + records[missing + 1 :]
        replayed = _replayed(before, rest[:count])
        if replayed is not None:
            results.add(replayed)
    return results


def _evicted(before: ModelState) -> bool:
    """The journal is bounded and its horizon has moved (the oldest records were
    evicted, or compacted away) since the log started. An ``adopt_current``
    starts a new log: it moves the horizon too, but drops no record a rollback
    could still owe, so what goes wrong after it is not R6's."""
    return before.capacity is not None and before.serials[0] != before.log_start


def _evicted_checkpoint(step: RollbackStep) -> bool:
    """A rollback_to a checkpoint that died because eviction moved the horizon past it."""
    operation, before = step.operation, step.before
    if not isinstance(operation, RollbackTo) or not _evicted(before) or not 0 <= operation.checkpoint < len(before.checkpoints):
        return False
    serial, _ = before.checkpoints[operation.checkpoint]
    return 0 <= serial < before.serials[0] and step.refused_by_rules("UnreachableRollbackError")


def _r1_broken(step: RollbackStep) -> bool:
    """R1's clause: a splice whose inverse could not be committed (the journal
    fault) went through anyway, or changed the buffer or the log. (A durable
    journal's failed disk write or sync is R5's: see :func:`_r5_broken`.)"""
    before, seen = step.before, step.seen
    if not isinstance(step.operation, Splice) or not before.fault_armed:
        return False
    if not step.refused_by_rules("JournalError") or any(state.fault_armed for state, _ in step.allowed):
        return False  # refused for another reason (a full journal: R6)
    return seen.error is None or seen.buffer != before.current or (seen.depth is not None and seen.depth != before.depth)


def _other_orders(step: RollbackStep) -> set[bytes]:
    """The buffers a rollback that is not n LIFO steps leaves (R3): a jump to
    another state of the history (where a checkpoint that is just a depth
    lands); and, for two or more records, the records undone oldest first or
    one of them skipped (unless evictions could explain a missing record: R6).

    A ``rollback(1)`` is one LIFO step by its very words: bytes of another state
    of the history are a jump only when the target also reports that state's
    depth. Without that they are a wrong undo whose bytes happen to match an
    earlier state (a delete of ``"xab"`` undone as ``"xa"`` on a buffer that was
    ``"xa"`` before), R0's, not an ordering bug (issue 42)."""
    before = step.before
    count = _rollback_depths(step)
    single = isinstance(step.operation, Rollback) and count == 1
    orders = {
        before.states[depth]
        for depth in range(before.depth)
        if depth != before.depth - count and (not single or step.seen.depth == depth)
    }
    if count >= 2:
        oldest_first = _replayed(before, list(reversed(_records(before, count))))
        if oldest_first is not None:
            orders.add(oldest_first)
        if not _evicted(before):
            orders |= _skipping_one(before, count, below=False)
    return orders


def _r2_broken(step: RollbackStep) -> bool:
    """R2's clause: a rollback the rules allow, its records undone newest
    first, restored a record's bytes away from its recorded place (an order
    bug that happens to give the same bytes is R3's). After evictions only a
    look-alike place counts: a journal that kept the wrong records (R6) puts
    bytes at unrelated places too."""
    if not _is_rollback(step.operation) or not _wrong_success(step):
        return False
    seen, before = step.seen.buffer, step.before
    misplaced = _misplaced_restorations(before, _rollback_depths(step), anywhere=not _evicted(before))
    return seen in misplaced and seen not in _other_orders(step)


def _r3_broken(step: RollbackStep) -> bool:
    """R3's clause: a rollback the rules refuse (past the horizon, a dead or
    foreign checkpoint) went through or changed something; or a rollback that
    is not n LIFO steps (see :func:`_other_orders`)."""
    operation, before, seen = step.operation, step.before, step.seen
    if isinstance(operation, (Rollback, RollbackTo, RollbackToForeign)) and step.refused_by_rules(
        "UnreachableRollbackError"
    ):
        if _evicted_checkpoint(step):
            return False  # the horizon never moved: R6's
        return seen.error != "UnreachableRollbackError" or seen.buffer != before.current or (
            seen.depth is not None and seen.depth != before.depth
        )
    return _is_rollback(operation) and _wrong_success(step) and seen.buffer in _other_orders(step)


def _r4_broken(step: RollbackStep) -> bool:
    """R4's clause: a rollback whose way back crosses an out-of-log write went
    through (or changed something) instead of raising DivergenceError; or one
    that crosses none was refused with DivergenceError."""
    operation, before, seen = step.operation, step.before, step.seen
    if isinstance(operation, AdoptCurrent):
        return True
    if not _is_rollback(operation):
        return False
    if "DivergenceError" in step.allowed_errors():
        return seen.error != "DivergenceError" or seen.buffer != before.current
    return seen.error == "DivergenceError" and None in step.allowed_errors() and bool(before.barriers)


def _r5_broken(step: RollbackStep) -> bool:
    """R5's clause: a crash, a restart, a reopen or a damaged journal recovered
    something other than the state before or after (or refused, or failed to
    refuse); a journal poisoned by a failed sync or cut-back that did not
    refuse (after a clean refusal the rules also allow taking the operation,
    so there is nothing to break unless every reading refuses);
    a splice whose record's write or sync failed that went through anyway."""
    operation, before = step.operation, step.before
    if isinstance(operation, (CrashDuring, Restart, CorruptRecord, Flush, Compact, Reopen)):
        return True
    if before.poisoned and step.refused_by_rules("JournalError"):
        return True
    return isinstance(operation, Splice) and before.disk_fault is not None


def _r6_broken(step: RollbackStep) -> bool:
    """R6's clause: a splice on a full bounded journal that neither refused nor
    evicted the oldest record; after evictions, a rollback that shows the
    journal kept the wrong records; a checkpoint below the moved horizon that
    still works."""
    operation, before, seen = step.operation, step.before, step.seen
    full = before.capacity is not None and before.depth >= before.capacity
    if isinstance(operation, Splice) and full and (before.policy == "reject" or not before.fault_armed):
        return True
    if _evicted_checkpoint(step):
        return seen.error != "UnreachableRollbackError" or seen.buffer != before.current
    if not _is_rollback(operation) or not _evicted(before) or not _wrong_success(step):
        return False
    # After evictions, a rollback that replays the wrong records: one missing
    # (the newest dropped instead of the oldest), or records the model evicted
    # still replayed — bytes no placement (R2) or order (R3) of the kept records gives.
    count = _rollback_depths(step)
    if seen.buffer in _other_orders(step):
        return False  # another order of the kept records gives these bytes: R3's
    if seen.buffer in _skipping_one(before, count, below=True):
        return True
    misplaced = _misplaced_restorations(before, count, anywhere=False)
    if _wrong_only_where_restored(step):
        return False  # the right records, undone at their places, with wrong bytes: R0's (issue 42)
    return seen.buffer not in misplaced and seen.buffer not in _other_orders(step)


def first_difference(expected: Sequence[Any], actual: Sequence[Any]) -> tuple[int, int, int] | None:
    """``(start, expected_end, actual_end)`` of the differing span, or ``None`` if equal.

    The span is what remains after stripping the common prefix and suffix, so it
    marks exactly the bytes a reader should look at. It takes any sequence: on
    the diff model's cells (identity-tagged bytes) it is exact, never fooled by
    repeated text.
    """
    if expected == actual:
        return None
    start = 0
    limit = min(len(expected), len(actual))
    while start < limit and expected[start] == actual[start]:
        start += 1
    end_e, end_a = len(expected), len(actual)
    while end_e > start and end_a > start and expected[end_e - 1] == actual[end_a - 1]:
        end_e -= 1
        end_a -= 1
    return start, end_e, end_a


def _differing_span(expected: bytes, actual: bytes) -> tuple[int, int] | None:
    """``[start, end)`` of ``expected`` that ``actual`` does not share: what is left
    of it once their common prefix and suffix are stripped (``None``: equal)."""
    span = first_difference(expected, actual)
    return None if span is None else (span[0], span[1])


def _wrong_only_where_restored(step: RollbackStep) -> bool:
    """The target's buffer differs from a right rollback's only inside the span
    that rollback puts back, at that rollback's depth (where the target reports
    one): the records the rules name were undone, at their
    places, and the bytes they restored came back wrong (cut short, line
    endings rewritten). That is no journal keeping the wrong records (R6), which
    undoes some other record and leaves bytes wrong outside that span."""
    before, seen = step.before, step.seen.buffer
    if seen == before.current:
        return False  # nothing was undone: not the right records (a checkpoint aimed elsewhere, say)
    for state, error in step.allowed:
        if error is not None or step.seen.depth not in (None, state.depth):
            continue  # a depth the right rollback does not leave: it undid another number of records
        restored = _differing_span(state.current, before.current)
        wrong = _differing_span(state.current, seen)
        if restored is not None and wrong is not None and restored[0] <= wrong[0] and wrong[1] <= restored[1]:
            return True
    return False


R0 = Property(
    "R0",
    "No silent corruption",
    """After every operation of every interleaving, the implementation's
    observable state (bytes, depth, revision) equals the model's, or the
    operation raised the documented error the model raised and nothing changed.
    A successful rollback yields, byte for byte, a state that existed before.
    This is the master property: every other one is a way of keeping it.""",
    (
        Situation("rollback", "a rollback that undid at least one record", _any_rollback),
        Situation("refusal", "an operation refused with a documented error", _error_changed_nothing),
    ),
)

R1 = Property(
    "R1",
    "Log completeness (write-ahead)",
    """The inverse record is committed before, or atomically with, the
    mutation. If the journal cannot take the record, the splice raises
    JournalError and neither the buffer nor the log changes: an operation
    refused with JournalError is not in the history, and no recovery may bring
    it back. The buffer of the incident mutated first and treated the append
    as best-effort: the buffer ran ahead of its log, and a later rollback
    restored a state that never existed. Dropping records rarely is not better
    than dropping them often: it is the same bug. What a durable journal does
    after a failed write, sync or cut-back (poisoned, or ready for the retry)
    is R5's rule.""",
    (
        Situation("journal_refused", "a splice whose inverse append failed", _journal_refused),
        Situation("rollback", "a rollback (after refusals, the log must still be exact)", _any_rollback),
    ),
    broken=_r1_broken,
    broken_when='a splice refused by the journal went through, or changed the buffer or the log',
)

R2 = Property(
    "R2",
    "Offset stability",
    """Each inverse restores its bytes exactly where they were removed, whatever
    length changes happened in between. An absolute offset is only valid under
    strict LIFO replay; a search by content anchors is only valid when the match
    is unique. A scan that takes the first position whose anchors match picks
    the wrong copy of repeated text and silently edits the wrong place. Checking
    the anchors (or a digest) at the recorded offset is both faster and sound.""",
    (
        Situation("shifted", "a rollback of a record made after an earlier length-changing edit at or before it", _rollback_after_shift),
        Situation("repeated_text", "a single-step rollback whose inserted bytes occur elsewhere in the buffer", _rollback_over_repeated_text),
        Situation(
            "ambiguous_context",
            "a single-step rollback whose 4-byte anchors also match at a position where restoring would differ",
            _rollback_with_ambiguous_context,
        ),
    ),
    broken=_r2_broken,
    broken_when="a rollback restored a record's bytes away from its recorded place",
)

R3 = Property(
    "R3",
    "Ordering discipline",
    """rollback(n) and rollback_to(checkpoint) equal n single LIFO steps, newest
    first. They never skip a record, never jump to a stored snapshot past a
    check, kill the checkpoints they pass, and refuse (UnreachableRollbackError,
    changing nothing) a target past the horizon, a dead checkpoint, or a
    checkpoint of another buffer. A checkpoint that is "just a depth" lets a
    token from a rolled-away state land on a different state at the same depth:
    the ABA bug.""",
    (
        Situation("multi_step", "a rollback of two or more steps", _multi_step_rollback),
        Situation(
            "dead_checkpoint",
            "a rollback_to a dead checkpoint whose depth was reached again, refused",
            _dead_checkpoint_refused,
        ),
        Situation("past_horizon", "a rollback past the horizon (or to a foreign checkpoint), refused", _past_horizon_refused),
    ),
    broken=_r3_broken,
    broken_when='a rollback that is not n LIFO steps, or a refused rollback that went through',
)

R4 = Property(
    "R4",
    "Divergence detection",
    """An out-of-log write made while the depth is t puts a barrier at t.
    Records made on top of it still undo normally; the step that would undo
    record t — crossing the write — raises DivergenceError and changes nothing,
    instead of manufacturing a state that never existed. The barrier stays
    until the caller adopts the current buffer as the new horizon, discarding
    the log on purpose. Strict detection notices any out-of-log write; local
    detection only writes that touch the span being restored.""",
    (
        Situation("divergence_met", "a rollback that met an out-of-log write", _divergence_met),
        Situation(
            "rollback_to_meets_write",
            "a rollback_to refused because the way back crosses an out-of-log write",
            _rollback_to_meets_write,
        ),
        Situation("undo_above_write", "a record made on top of an out-of-log write undone normally", _undo_above_write),
        Situation("adopt", "the current buffer adopted after a divergence", _adopt_after_divergence),
        Situation("write_below_records", "an out-of-log write with records below it", _out_of_log_write),
    ),
    broken=_r4_broken,
    broken_when='a rollback crossed an out-of-log write, or refused without crossing one',
)

def _crash_interrupted(kinds: tuple[type, ...]) -> SituationPredicate:
    def reached(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
        return (
            isinstance(operation, CrashDuring)
            and isinstance(operation.operation, kinds)
            and outcome.error is None
            and outcome.also_acceptable is not None
            and outcome.state != before
        )

    return reached


def _torn_record(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A crash while a splice's record was being written that tore off part of
    its new bytes (a redo record ends with them): the record arrived, all but
    its end."""
    return (
        _crash_interrupted((Splice,))(before, operation, outcome)
        and isinstance(operation, CrashDuring)
        and isinstance(operation.operation, Splice)
        and operation.io_event == 0
        and 0 < operation.lost <= len(operation.operation.insert)
    )


def _restart_with_records(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, Restart) and before.depth >= 1


def _per_operation_restart(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """An idle crash where nothing may be lost: the per-operation mode's promise."""
    return _restart_with_records(before, operation, outcome) and before.durability == "per_operation"


def _batched_crash_unflushed(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A crash in batched mode with operations since the last flush: recovery may
    go back before the crash point, so the whole window is judged."""
    return isinstance(operation, (Restart, CrashDuring)) and before.durability == "batched" and bool(outcome.window)


def _batched_flush(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, Flush) and bool(before.since_flush)


def _lost_checkpoint_refused(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """A rollback_to a checkpoint of a state a batched crash lost, taken at a
    depth the buffer has reached again, refused: a journal that hands the lost
    serial out a second time would land on the new state that got it."""
    if not isinstance(operation, RollbackTo) or outcome.error is not UnreachableRollbackError:
        return False
    serial, depth_taken = before.checkpoints[operation.checkpoint]
    return serial == LOST_SERIAL and depth_taken <= before.depth


def _corruption_met(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, CorruptRecord) and operation.damage == "bit_flip" and before.depth >= 2


def _record_out_of_place(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    """Whole records out of place: every frame's checksum still holds, so only the
    chain (sequence, previous checksum, salt) can tell."""
    return (
        isinstance(operation, CorruptRecord)
        and operation.damage in ("duplicate", "drop", "swap", "transplant")
        and before.depth >= 2
    )


def _second_writer(before: ModelState, operation: Operation, outcome: Outcome) -> bool:
    return isinstance(operation, CorruptRecord) and operation.damage == "second_writer" and before.depth >= 1


R5 = Property(
    "R5",
    "Durability and crash atomicity",
    """A durable journal commits each operation as a record written and
    synced before the buffer is touched, so a crash at any instant of
    operation k — at any write or fsync, with the last record torn at any byte,
    with unsynced data lost — recovers the state before k or the state after
    k, and an operation that returned is never lost. Recovery drops only a torn
    final record; a checksum failure anywhere else is corruption, and recovery
    refuses it with RecoveryError instead of skipping the record (which would
    replay later records onto the wrong bytes) or guessing. Applying a
    half-written record, or mutating before the record is synced, both
    recover a state that never existed. A failed sync or cut-back poisons the
    journal: after a failed fsync the kernel may have dropped the pages it
    could not write, so every later operation is refused with JournalError
    (changing nothing) until the journal is reopened and read back. A clean
    refusal — the record's append failed and nothing of it is in the file —
    may poison the journal the same way, or leave it usable for the retry;
    either is right, and the certificate counts which the target did. The
    operation that met the failure is refused and never recovered,
    by a reopen or after a crash — unless it said its outcome was unknown (its
    cut-back failed too, so the file may hold it): then the reopen yields the
    state before it or the state after it, nothing else. A journal in batched
    mode keeps a weaker promise (R5_BATCHED: a state from the last flush up to
    the crash point); the same machine judges both modes.""",
    (
        Situation("torn_record", "a crash that tore off the end of a splice's record (its new bytes)", _torn_record),
        Situation(
            "crash_during_rollback",
            "a crash during a rollback that undoes records",
            _crash_interrupted((Rollback, RollbackTo)),
        ),
        Situation("crash_during_compaction", "a crash during a compaction", _crash_interrupted((Compact,))),
        Situation("restart", "a crash while idle with live records, per-operation mode", _per_operation_restart),
        Situation("corruption", "a bit flipped in a committed record before the last", _corruption_met),
        Situation(
            "record_out_of_place",
            "a whole record duplicated, dropped, swapped or copied from another journal",
            _record_out_of_place,
        ),
        Situation("second_writer", "a second writer opening the journal while it is in use", _second_writer),
        Situation(
            "batched_crash_unflushed",
            "a crash in batched mode with operations not yet flushed (recovery may yield a state before the crash point)",
            _batched_crash_unflushed,
        ),
        Situation("batched_flush", "a flush in batched mode with operations waiting", _batched_flush),
        Situation(
            "lost_checkpoint_refused",
            "a rollback_to a checkpoint of a state a batched crash lost, at a depth reached again, refused",
            _lost_checkpoint_refused,
        ),
    ),
    broken=_r5_broken,
    broken_when='a crash, a reopen or a damaged journal recovered a state outside before/after, or a poisoned journal did not refuse',
)

#: R5 in batched durability mode, a variant with its own, weaker promise,
#: stated in the model by :func:`rollcert.model.reference.recovery_window`
#: (``ModelState.since_flush``). The R5 machine draws the mode per example and
#: judges both; ``tests/test_journal_batched.py`` also crashes every I/O call of
#: batched traces against the same window. A counterexample names the mode.
R5_BATCHED = Property(
    "R5",
    "Durability and crash atomicity, batched mode",
    """In batched mode a journal still writes each record before the buffer
    is touched, but syncs only on flush(), every N records or every T
    milliseconds, so an operation that returned may be lost in a crash. What
    may be lost is bounded and ordered: recovery yields a state of the history
    at or after the last completed flush and at or before the crash point —
    a prefix of the operations, never a state outside the history. Everything
    else of R5 stands: a torn record is dropped, a record that is corrupt, out
    of place or does not fit is refused with RecoveryError. Revisions of the
    lost states were never durable and may be handed out again after the
    crash. A checkpoint of a lost state names nothing afterwards: rollback_to
    it is refused with UnreachableRollbackError, even once the buffer is back
    at its depth, so whatever a checkpoint names its state by must never be
    handed out again (S3), not even after the crash lost it. The poisoning
    rule is the same in both modes: a splice whose automatic sync failed is
    refused and its record removed, and the operations acknowledged since the
    last completed flush may be lost, as in a crash.""",
    (
        Situation("restart", "a crash while idle with live records (some perhaps not yet flushed)", _restart_with_records),
        Situation(
            "batched_crash_unflushed",
            "a crash with operations not yet flushed (recovery may yield a state before the crash point)",
            _batched_crash_unflushed,
        ),
        Situation(
            "lost_checkpoint_refused",
            "a rollback_to a checkpoint of a state a crash lost, at a depth reached again, refused",
            _lost_checkpoint_refused,
        ),
    ),
    broken=_r5_broken,
    broken_when='a crash, a reopen or a damaged journal recovered a state outside before/after, or a poisoned journal did not refuse',
)

R6 = Property(
    "R6",
    "Bounded log",
    """A bounded journal, when full, either refuses the new record
    (JournalError, nothing changes) or evicts the *oldest* record and moves the
    horizon, killing the checkpoints below it. It never drops the newest record
    or one in the middle: either would make a later rollback restore a state
    that never existed.""",
    (
        Situation("eviction", "a splice that evicted the oldest record", _eviction),
        Situation("refused_full", "a splice refused by a full journal", _full_journal_refused),
        Situation("rollback_to_horizon", "a rollback down to a horizon moved by eviction", _rollback_to_horizon_after_eviction),
    ),
    broken=_r6_broken,
    broken_when='a full journal dropped a record other than the oldest, or kept an evicted checkpoint alive',
)

# -- S1-S3: self-authored diffs, over the diff model (identity-tagged bytes) ----------------

def _stale(before: DiffModelState, outcome: DiffOutcome) -> bool:
    return outcome.diff is not None and outcome.diff.base.content != before.content


def _stale_content_accepted(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, ApplyDiff) and operation.mode == "content" and outcome.error is None and _stale(before, outcome)


def _read_region_changed(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """Rejected because a *declared read* changed while every hunk's own
    surroundings are intact: the case a write-set check lets through."""
    if not isinstance(operation, ApplyDiff) or outcome.error is not StaleBaseError or outcome.diff is None:
        return False
    diff = outcome.diff
    hunk_regions = effective_regions(len(diff.base.cells), diff.hunks, ())
    return operation.mode == "content" and all(
        locate(diff.base.cells[r.start : r.end], before.current) is not None for r in hunk_regions if r.end > r.start
    )


def _positional_rejected(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, ApplyDiff) and operation.mode == "positional" and outcome.error is StaleBaseError


def _moved_content_diff(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A content diff accepted whose hunks landed somewhere else than in the snapshot."""
    if not _stale_content_accepted(before, operation, outcome) or outcome.diff is None:
        return False
    result = apply(outcome.diff, before.current, before.next_identity)
    return isinstance(result, Accepted) and any(
        placed[0] != hunk.start for placed, hunk in zip(result.placed, outcome.diff.hunks, strict=True)
    )


def _rolled_back_onto_moved_base(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A rollback_diff of a diff that was applied to a base other than its
    snapshot: restoring the snapshot would erase the writes in between."""
    if not isinstance(operation, RollbackDiff) or outcome.error is not None:
        return False
    base = applied_base(before, operation.applied)
    record = before.applied[operation.applied]
    return base is not None and record is not None and content_of(base) != before.snapshots[record[1]].content


def _rolled_back_after_writes(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    if not isinstance(operation, RollbackDiff) or outcome.error is not None:
        return False
    record = before.applied[operation.applied]
    return record is not None and before.serials[-1] != record[0]


def _dead_diff_refused(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, RollbackDiff) and outcome.error is UnreachableRollbackError


def _rolled_away_snapshot(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A diff on a snapshot whose state was rolled away, applied to a live base
    with other content of the same length at the same depth: a counter that
    steps back on rollback would show the snapshot's revision again, a size
    check would agree, and together they would call the stale base current."""
    if not isinstance(operation, ApplyDiff) or outcome.diff is None:
        return False
    snapshot = outcome.diff.base
    tempting = (
        snapshot.serial not in before.serials
        and snapshot.depth == before.depth
        and len(snapshot.cells) == len(before.current)
        and snapshot.content != before.content
    )
    # ... and where it matters: the rule does not simply apply the diff where it was written.
    original = tuple((h.start, h.end, h.replacement) for h in outcome.diff.hunks)
    result = apply(outcome.diff, before.current, before.next_identity)
    return tempting and (isinstance(result, Rejected) or result.placed != original)


def _revision_after_branch(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """An edit made after a rollback: the new state must get a new revision."""
    return (
        isinstance(operation, (Splice, ToolWrite))
        and outcome.error is None
        and before.revision > before.start_revision
        and before.depth < before.revision - before.start_revision
    )


# -- attribution for the diff rules (see the rollback rules' above) ------------------------

DiffStep = FailingStep[DiffModelState, DiffOperation]


def _bytes_unexplained(step: DiffStep) -> bool:
    """The target's bytes are none of the allowed outcomes', or it succeeded where every outcome is a refusal."""
    seen = step.seen
    return all(seen.buffer != state.content for state, _ in step.allowed) or (
        seen.error is None and None not in step.allowed_errors()
    )


def _s1_broken(step: DiffStep) -> bool:
    """S1's clause: an apply_diff that went wrong in content — a stale diff
    accepted (reads changed, or positional on a moved base), hunks placed
    elsewhere than where their regions stand, or a partial apply."""
    return isinstance(step.operation, ApplyDiff) and _bytes_unexplained(step)


def _s2_broken(step: DiffStep) -> bool:
    """S2's clause: a rollback of an applied diff that did not give back the
    live base it was applied to (nor refused, changing nothing)."""
    return isinstance(step.operation, RollbackDiff) and _bytes_unexplained(step)


def _treated_as_current(step: DiffStep) -> bool:
    """A diff on a snapshot of a rolled-away state, at the depth that state had,
    applied at the snapshot's own offsets although the bytes its hunks were
    written against (each widened by one byte) changed there: what a counter
    that stepped back on rollback vouches for. (A check of the write-set alone
    would have refused this one; a stale diff accepted over changed *reads*
    only is S1's whatever the cause.)"""
    operation, before, seen = step.operation, step.before, step.seen
    if not isinstance(operation, ApplyDiff) or not 0 <= operation.snapshot < len(before.snapshots):
        return False
    snapshot = before.snapshots[operation.snapshot]
    if snapshot.serial in before.serials or snapshot.depth != before.depth or seen.error is not None:
        return False
    old, live = snapshot.content, before.content
    written = live
    for hunk in sorted(operation.hunks, key=lambda h: h.start, reverse=True):
        if hunk.end > len(written):
            return False
        written = written[: hunk.start] + hunk.replacement + written[hunk.end :]
    regions = effective_regions(len(old), operation.hunks, ())
    changed = any(old[r.start : r.end] != live[r.start : r.end] for r in regions)
    return changed and seen.buffer == written and _bytes_unexplained(step)


def _s3_broken(step: DiffStep) -> bool:
    """S3's clause: a step that made a new state (an edit, a rollback, an
    applied diff) named it with a revision already handed out; or a diff on a
    rolled-away snapshot treated as current (:func:`_treated_as_current`)."""
    before, seen = step.before, step.seen
    advanced = any(state.revision > before.revision for state, _ in step.allowed)
    reused = seen.revision is not None and advanced and seen.revision <= before.revision
    return reused or _treated_as_current(step)


S1 = Property(
    "S1",
    "Read-set staleness rule",
    """A diff authored against snapshot B0 may be applied to the live base B
    only if what it depended on is still there. If B's content equals B0's, it
    applies where it was written. Otherwise a positional diff (offsets, line
    numbers) is rejected: its numbers point into a text that no longer exists.
    A content diff applies iff every region of its effective read-set (the
    declared reads, and each hunk widened by one byte) is unchanged between B0
    and B — the same bytes, contiguous, in order, traced through every edit
    and rollback, never guessed by searching for similar text — and its hunks
    are moved to where those regions now stand. Anything else is
    StaleBaseError naming the first changed region, and nothing changes.
    Checking only the write-set is the classic mistake: it applies a diff whose
    reasoning rests on text a tool has just replaced. Rejecting more than the
    rule does is sound but imprecise (a figure on the certificate, not a
    violation).""",
    (
        Situation("stale_content_accepted", "a content diff accepted on a base that changed elsewhere", _stale_content_accepted),
        Situation("moved_hunks", "a content diff accepted with its hunks moved to new positions", _moved_content_diff),
        Situation(
            "read_region_changed",
            "a content diff rejected because a declared read changed while its hunks' surroundings did not",
            _read_region_changed,
        ),
        Situation("positional_rejected", "a positional diff rejected on a moved base", _positional_rejected),
    ),
    broken=_s1_broken,
    broken_when='a stale diff accepted, a hunk placed elsewhere, or a partial apply',
)

S2 = Property(
    "S2",
    "Rollback-conflict asymmetry",
    """A forward conflict is cheap: reject, and the author re-authors against
    the live base. A backward conflict cannot be re-authored: once tools have
    written around an applied diff, there is nobody to ask what the undo
    should have meant. So an applied diff is one transaction in the log, and
    rolling it back yields exactly the live base it was applied to — never the
    author's snapshot B0, which would silently erase every write that landed
    between the snapshot and the apply — or raises UnreachableRollbackError
    (its state was rolled away or evicted) and changes nothing.""",
    (
        Situation(
            "rolled_back_onto_moved_base",
            "a rollback of a diff that was applied to a base other than its snapshot",
            _rolled_back_onto_moved_base,
        ),
        Situation("rolled_back_after_writes", "a rollback of a diff with later writes on top of it", _rolled_back_after_writes),
        Situation("dead_diff_refused", "a rollback of a diff whose state was rolled away, refused", _dead_diff_refused),
    ),
    broken=_s2_broken,
    broken_when='a rollback of an applied diff that did not give back its live base',
)

S3 = Property(
    "S3",
    "No ABA",
    """Revisions are never reused, not even after a rollback. A snapshot, a
    diff or a checkpoint from a state that was rolled away is judged by content
    and history, never by a counter that happens to match: after rolling back
    and editing again, the buffer may be exactly as deep as it was when the
    snapshot was taken, and a counter that stepped back on rollback shows the
    snapshot's revision again. Trusting it applies a stale diff as if nothing
    had changed, onto text its author never saw.""",
    (
        Situation(
            "rolled_away_snapshot",
            "a diff on a rolled-away snapshot, at the depth and length its state had, that the rule "
            "rejects or moves",
            _rolled_away_snapshot,
        ),
        Situation("edit_after_rollback", "an edit after a rollback (a revision a stepping-back counter would reuse)", _revision_after_branch),
    ),
    broken=_s3_broken,
    broken_when='a revision handed out again, or a rolled-away snapshot treated as current',
)


# -- R7: linearizability (the concurrent family) ----------------------------------------
#
# R7 is a property of *histories of concurrent calls*, not of single steps, so its
# situations look at one call of a history at a time together with the calls of
# other threads that overlapped it in real time. The checker
# (rollcert.stateful_tests.linearizability) finds a sequential order of the
# history; the situations are evaluated on that order's steps, each with the model
# state before it and the model's outcome, exactly like R0–R6's.

#: The observations a concurrent history may contain besides the model's operations.
OBSERVATIONS: tuple[str, ...] = ("read", "length", "depth", "revision")


@dataclass(frozen=True)
class ConcurrentCall:
    """One call of a concurrent history, as R7's situations see it.

    ``action`` is a model operation (a mutation or a checkpoint) or the name of an
    observation (one of :data:`OBSERVATIONS`); ``overlapping`` lists the actions of
    the calls of *other* threads whose [call, return] interval intersected this
    one's (a call whose outcome is unknown never returned, so its interval is open).
    """

    thread: str
    action: Operation | str
    overlapping: tuple[Operation | str, ...]


def _is_mutation(action: Operation | str) -> bool:
    return isinstance(action, (Splice, Rollback, RollbackTo))


def _overlapped(before: ModelState, call: ConcurrentCall, outcome: Outcome) -> bool:
    return bool(call.overlapping)


def _mutations_overlapped(before: ModelState, call: ConcurrentCall, outcome: Outcome) -> bool:
    """Two mutations of different threads were in flight at once: the case a lock
    taken per step, or released between the journal and the bytes, gets wrong."""
    return _is_mutation(call.action) and any(_is_mutation(other) for other in call.overlapping)


def _observed_multi_step_rollback(before: ModelState, call: ConcurrentCall, outcome: Outcome) -> bool:
    """A rollback that undid two or more records while another thread observed the
    buffer: an observer that looks between the steps sees a state that is neither
    before nor after (length 5 at depth 2 on the way from 9 bytes back to 3)."""
    return (
        isinstance(call.action, (Rollback, RollbackTo))
        and outcome.error is None
        and before.depth - outcome.state.depth >= 2
        and any(isinstance(other, str) for other in call.overlapping)
    )


R7 = Property(
    "R7",
    "Linearizability",
    """Concurrent callers see whole operations. For every program — a
    sequential prefix, then a few threads each running a short sequence of
    splices, rollbacks, checkpoints, rollbacks to a checkpoint, reads and
    observations of length, depth and revision — every history observed has a
    sequential order that respects real time (a call that returned before
    another was called comes first) and replays through the model with exactly
    the results observed. A call whose outcome is unknown (a request that timed
    out) may be placed anywhere after its call, or nowhere. A lock taken once
    per rollback step, a lock released between the journal append and the
    mutation, or an observation read without the lock each let a caller see a
    state that never existed between two whole operations: a buffer that is
    neither before nor after, which no sequential history explains. The check
    is a Wing–Gong search with memoisation of (operations placed, model state);
    a search that runs out of budget is unknown, never passed.""",
    (
        Situation("overlap", "two operations of different threads overlapped in real time", _overlapped),
        Situation(
            "mutations_overlapped",
            "a splice or rollback overlapped another thread's splice or rollback",
            _mutations_overlapped,
        ),
        Situation(
            "observed_multi_step_rollback",
            "an observation overlapped a rollback that undid two or more records",
            _observed_multi_step_rollback,
        ),
    ),
)

#: Every property this release can assess, in certificate order. Each family
#: states its properties over its own model's steps (R7 over concurrent calls).
PROPERTIES: dict[str, RollbackProperty | DiffProperty | Property[ModelState, ConcurrentCall, Outcome]] = {
    p.id: p for p in (R0, R1, R2, R3, R4, R5, R6, S1, S2, S3, R7)
}
ALL_PROPERTY_IDS: tuple[str, ...] = tuple(PROPERTIES)


def broken_rules(property_ids: tuple[str, ...], step: FailingStep[object, object]) -> tuple[str, ...]:
    """The properties among ``property_ids`` whose own clause ``step`` broke, in
    certificate order; ``("R0",)`` when none claims it: a mismatch that breaks
    no specific clause is a finding of the master property (SPEC §6a). So is a
    step the rules refuse as bad input (only a TypeError or ValueError allowed):
    SPEC §2 is no property's own clause, whatever the step meets besides (a
    full journal is R6's, a compaction R5's, only for arguments they take)."""
    if step.allowed_errors() <= {"TypeError", "ValueError"}:
        return ("R0",)
    broken = tuple(
        pid for pid in property_ids if pid != "R0" and (rule := PROPERTIES[pid].broken) is not None and rule(step)  # type: ignore[arg-type]
    )
    return broken or ("R0",)
