"""What the generic harness needs to know about one family of properties.

rollcert certifies several *families* of properties, each over its own model:
the rollback family (R0–R6) over :mod:`rollcert.model.reference`, the diff
family (S1–S3) over the identity-tagged :mod:`rollcert.model.diffs`. Everything
that does not depend on the model — stepping a model and a system under test
together and comparing them (:mod:`rollcert.stateful_tests.judge`), the
Hypothesis machine's bookkeeping (:mod:`rollcert.stateful_tests.harness`),
minimising a counterexample (:mod:`rollcert.stateful_tests.shrink`), traces,
certificates and the command line — is written once, against the small
interface below. A family brings only what is its own: how the model predicts
a step, how a step is performed on a SUT, its Hypothesis rules, its
minimisation moves and its explanations. A new family is one module that
subclasses :class:`PropertyFamily` and one line in
:mod:`rollcert.stateful_tests.families`.

This module also holds the plain records every family's steps produce
(:class:`Observed`, :class:`StepRecord`) and the plain-words explanation of a
step that went wrong, so that a counterexample reads the same whatever family
found it.
"""

from __future__ import annotations

import time
from abc import ABC
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import Protocol
from typing import TypeVar

from rollcert.model.properties import PROPERTIES
from rollcert.model.properties import Property
from rollcert.model.properties import first_difference
from rollcert.stateful_tests.world import WorldTally
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target

if TYPE_CHECKING:  # typing only: the harness module imports this one
    from hypothesis.stateful import RuleBasedStateMachine

StateT = TypeVar("StateT")
OperationT = TypeVar("OperationT")
OutcomeT = TypeVar("OutcomeT")


class NotGenerable(Exception):
    """A trace step this family's machine could never have produced (say, a diff
    whose hunks no longer fit its snapshot after shrinking changed an earlier
    step). Not a verdict: the trace is not a test of this target."""


class SearchSpent(BaseException):
    """The search for further findings (``certify``'s second pass, issue 43) spent
    its examples or its time: raised from the machine to end that Hypothesis run
    at once. A ``BaseException``, as :class:`~rollcert.targets.adapter.CallTimeout`
    is: Hypothesis takes an ``Exception`` from a test for a failure to report,
    and lets this through untouched."""


class Unjudgeable(Exception):
    """A step the judge cannot decide within its bounds: no reading it kept matches
    what the target showed, but it had to leave readings out on the way (more
    alignments or lineages than :data:`WIDE_LOOK_BUDGET` model steps could try),
    so a reading it dropped might have matched. Not a verdict either: blaming
    the target would blame it for the judge's bound. The machines skip the rest
    of the example and count it (``steps_not_judged`` on the certificate)."""



#: How many model readings a session carries at most (``judge.Session``), and how
#: many second readings of one step it takes. Each split needs a step the target
#: cannot be seen through; past this the run is not worth judging step by step
#: (the rest are remembered as left out, for a wider look if a step fails).
MAX_READINGS = 64
#: How many model steps (a prediction, or one second reading built) the wide
#: look may take (``judge.Session._find_a_lineage``) before the judge declares a
#: failing step :class:`Unjudgeable`. The wide look is taken only when a step
#: matched no reading and readings were left out on the way, so the fast bound
#: above can make a step slower to judge, never wrongly judged. A model step on
#: a buffer of some KiB costs a few milliseconds: this bounds the look at a few
#: seconds, spent on every example a wrong target fails this way.
WIDE_LOOK_BUDGET = 1000

@dataclass(frozen=True)
class Observed:
    """What could be seen of one side after a step: the documented error it
    raised (by kind name), its bytes, and its depth and revision where the
    target reports them."""

    error: str | None
    buffer: bytes
    depth: int | None
    revision: int | None

    def status(self) -> str:
        """The outcome and the counters, without the bytes: "raised X, depth 1, revision 4"."""
        parts = [f"raised {self.error}" if self.error else "succeeded"]
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.revision is not None:
            parts.append(f"revision {self.revision}")
        return ", ".join(parts)

    def describe(self) -> str:
        parts = [shown_repr(self.buffer)]
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.revision is not None:
            parts.append(f"revision {self.revision}")
        outcome = f"raised {self.error}" if self.error else "succeeded"
        return f"{outcome}; buffer {', '.join(parts)}"


@dataclass(frozen=True)
class StepRecord:
    """One judged step: the model's prediction and what the SUT did.

    ``context`` holds the labelled lines a reader needs to judge the step that
    are not the buffer itself (for an apply_diff: the snapshot B0, the live
    base, the diff, what the rule says). ``note`` names the reading of the
    model the SUT matched when it was not the model's first one (for example
    ``imprecise``: a refusal the rule did not require, with nothing changed).
    ``allowed`` holds every outcome the model allowed at the step, its own
    (``expected``) first, so that a certificate carries what a reader needs to
    judge the step without replaying it on the target (SPEC §6a); empty means
    only ``expected``.
    """

    index: int
    operation: Any
    before: bytes
    expected: Observed
    actual: Observed
    ok: bool
    sut_message: str = ""
    context: tuple[tuple[str, str], ...] = ()
    note: str = ""
    allowed: tuple[Observed, ...] = ()
    #: On the failing step: what the target's outcome did to its caller (one of :data:`HARMS`).
    harm: str = ""


#: The harm classes of a failing step, most harmful first (SPEC §6a). The
#: minimiser keeps, among counterexamples of one length, the most harmful:
#: bytes no allowed state has, or a refusal the caller relies on that never
#: came, teach more than a depth or a revision that is off by one.
LOST_STATE = "lost acknowledged state"
WENT_THROUGH = "refused operation went through"
WRONG_BYTES = "wrong bytes"
REFUSED = "allowed operation refused"
WRONG_ERROR = "wrong error"
WRONG_DEPTH = "wrong depth"
WRONG_REVISION = "wrong revision"
#: R7: concurrent callers saw a state between two whole operations.
NO_SEQUENTIAL_ORDER = "no sequential order explains what callers saw"
HARMS: tuple[str, ...] = (
    LOST_STATE, WENT_THROUGH, WRONG_BYTES, NO_SEQUENTIAL_ORDER, REFUSED, WRONG_ERROR, WRONG_DEPTH, WRONG_REVISION,
)
#: The operations after which the target recovers from a journal (R5): bytes
#: of an earlier state there mean acknowledged work was lost.
RECOVERIES = ("crash_during", "restart", "corrupt_record")


def harm_of(
    operation: Any, allowed: Sequence[Observed], actual: Observed, earlier: Sequence[bytes], before: bytes | None = None
) -> str:
    """The harm class of a step whose outcome ``actual`` matches none of the
    ``allowed`` ones; ``earlier`` are the buffers the run went through before it,
    ``before`` the buffer just before the step.

    A typed refusal that left the buffer as it was (``before``) changed no byte:
    it is a refusal (allowed operation refused, or the wrong error), never
    "wrong bytes", though its bytes differ from those the allowed success makes."""
    errors = {seen.error for seen in allowed}
    refused_cleanly = (
        actual.error is not None and not actual.error.startswith("undocumented:") and actual.buffer == before
    )
    if refused_cleanly:
        return REFUSED if None in errors else WRONG_ERROR
    bytes_wrong = all(actual.buffer != seen.buffer for seen in allowed)
    if bytes_wrong and getattr(operation, "kind", "") in RECOVERIES and actual.buffer in earlier:
        return LOST_STATE
    if actual.error is None and None not in errors:
        return WENT_THROUGH
    if bytes_wrong:
        return WRONG_BYTES
    if actual.error is not None and None in errors and actual.error not in errors:
        return REFUSED
    if actual.error not in errors:
        return WRONG_ERROR
    matching = [seen for seen in allowed if seen.buffer == actual.buffer and seen.error == actual.error]
    if matching and all(seen.depth != actual.depth for seen in matching):
        return WRONG_DEPTH
    return WRONG_REVISION


def harm_rank(harm: str) -> int:
    """Higher is more harmful (an unnamed harm ranks lowest)."""
    return len(HARMS) - HARMS.index(harm) if harm in HARMS else 0


def byte_class(byte: int) -> str:
    """The class of one byte a finding's signature names: the bytes whose
    mishandling is a bug of its own (line endings, tabs, NUL, non-ASCII) each
    have theirs; every other byte is ``other``."""
    named = {0x0D: "CR", 0x0A: "LF", 0x09: "tab", 0x00: "NUL"}
    if byte in named:
        return named[byte]
    return "high" if byte >= 0x80 else "other"


def operation_kind(operation: Any) -> str:
    """What kind of step failed, as a signature names it: a splice is an insert,
    a delete or a replace (a bug that drops CRs from inserted text and one that
    loses bytes of a long delete both fail on a splice); any other operation
    by its kind (``rollback``, ``rollback_to``, ``crash_during``, ...)."""
    kind = str(getattr(operation, "kind", type(operation).__name__))
    if kind != "splice":
        return kind
    deletes, inserts = bool(operation.delete_length), bool(operation.insert)
    return "replace" if deletes and inserts else "delete" if deletes else "insert" if inserts else "empty splice"


@dataclass(frozen=True)
class HarmSignature:
    """What tells one bug's findings from another's (issue 43), computed from a
    failing step's allowed outcomes and the target's actual one.

    Hypothesis tells bugs apart by where the exception came from; a target
    under certification raises nothing, it hands back wrong bytes, so rollcert
    tells them apart by the harm instead: the harm class (:data:`HARMS`); the
    kind of operation that failed (:func:`operation_kind`); relative to the
    nearest allowed outcome, whether bytes were ``lost``, ``added`` or
    ``changed`` (same length); and the classes of the bytes in that difference
    (:func:`byte_class`). A target that drops CRs from inserts and rolls back
    a long delete short fails on inserts losing CR and on rollbacks losing
    other bytes: two signatures. The same bug met many times gives one, once
    its findings are minimised (the minimiser makes every byte the bug does
    not need an ``a``); but a finding left long (the budget for further
    findings is small) keeps the bytes it was met on, and one FIFO replay met on
    twenty buffers named twenty byte mixes. So findings are told apart by the
    :meth:`coarse` part (harm, operation, direction) and the byte classes only
    describe each one; the minimiser of a further finding keeps the coarse part."""

    harm: str
    operation: str
    direction: str = ""
    classes: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"{self.harm or 'mismatch'} on {self.operation}"
        if self.direction:
            text += f": {self.direction} {'+'.join(self.classes) or 'nothing'}"
        return text

    def coarse(self) -> str:
        """What minimising a finding may not change: the signature without its byte
        classes, a splice of any shape (a CR dropped from a replace shrinks to one
        dropped from an insert, and is then told to be the same finding), and an
        undo of either kind: ``rollback_to`` replays the same inverse records as
        ``rollback(n)``, so one wrong inverse fails both (a short restore met as
        "on rollback" and "on rollback_to" was two findings of one bug)."""
        splice = self.operation in ("insert", "delete", "replace", "empty splice")
        undo = self.operation in ("rollback", "rollback_to")
        operation = "splice" if splice else "undo" if undo else self.operation
        return str(HarmSignature(self.harm, operation, self.direction))


#: The bytes of each side of a failing step's difference whose classes a harm
#: signature names: the classes describe a finding and never tell two apart
#: (``HarmSignature.coarse``), and counting a target's 20 MB wrong buffer byte by
#: byte took a second and more, once per example that met the finding again.
SIGNATURE_WINDOW = 1 << 16


def harm_signature(record: StepRecord, classes: bool = True) -> HarmSignature:
    """The :class:`HarmSignature` of a failing step (see there); without
    ``classes``, only its coarse part is worked out (what tells findings apart),
    and the byte classes of the first :data:`SIGNATURE_WINDOW` bytes of each
    side of the difference otherwise."""
    actual = record.actual
    allowed = record.allowed or (record.expected,)
    spans = [(span, seen) for seen in allowed if (span := first_difference(seen.buffer, actual.buffer)) is not None]
    if len(spans) < len(allowed) or not spans:  # some allowed outcome has the very bytes: nothing to compare
        return HarmSignature(record.harm, operation_kind(record.operation))
    (start, end_e, end_a), nearest = min(spans, key=lambda item: max(item[0][1], item[0][2]) - item[0][0])
    lost, added = end_e - start, end_a - start
    direction = "lost" if added < lost else "added" if added > lost else "changed"
    if not classes:
        return HarmSignature(record.harm, operation_kind(record.operation), direction)
    window = SIGNATURE_WINDOW
    wanted = nearest.buffer[start : min(end_e, start + window)]
    got = actual.buffer[start : min(end_a, start + window)]
    difference = (Counter(wanted) - Counter(got)) + (Counter(got) - Counter(wanted))
    if not difference:  # the same bytes in another order (put back in the wrong place): name them
        difference = Counter(wanted)
    classes = tuple(sorted({byte_class(byte) for byte in difference}))
    return HarmSignature(record.harm, operation_kind(record.operation), direction, classes)


@dataclass(frozen=True)
class Reading(Generic[StateT]):
    """One outcome the model allows for a step: the state it leaves, and the
    documented error the SUT must raise on the way (``None``: success)."""

    state: StateT
    error: str | None
    note: str = ""
    #: A reading kept only because a target cannot see a distinction the model
    #: makes (another alignment of the same bytes): allowed, never required. If
    #: the readings pass the session's bound, the latest of such lineages go first.
    optional: bool = False


@dataclass(frozen=True)
class Prediction(Generic[StateT, OutcomeT]):
    """What the model says of one step. ``readings[0]`` is the model's own
    outcome; any further reading is an outcome the rules also allow (a rollback
    that stops at an out-of-log write, a diff refused by a cautious applier).
    ``outcome`` is the model's raw result, for the situations and explanations."""

    outcome: OutcomeT
    readings: tuple[Reading[StateT], ...]
    context: tuple[tuple[str, str], ...] = ()


class LiveSession(Protocol):
    """What :meth:`PropertyFamily.perform` may use of the session stepping it."""

    target: Target
    config: BufferConfig
    sut: SystemUnderTest
    #: Opaque objects the SUT handed out, by kind ("checkpoint", "snapshot",
    #: "applied"), in the order the trace names them.
    handles: dict[str, list[object | None]]
    #: What the SUT reported about the last operation, where the family asks
    #: (whether a crash interrupted it, whether there was a record to corrupt).
    sut_report: bool

    def other_sut(self) -> SystemUnderTest: ...


#: The most bytes of one buffer a person is shown. The machines' buffers are far
#: shorter; a target that answers with megabytes is shown around the place that
#: matters and the rest is counted, so that its flood cannot swell a certificate
#: (a 20 MB wrong buffer used to make a 40 MB reason and 680 MB of peak memory).
SHOWN_BYTES = 256


def shown_window(length: int, focus: int) -> tuple[int, int]:
    """The ``[start, end)`` of a ``length``-byte buffer to show: all of it when it is
    short, else ``SHOWN_BYTES`` bytes with ``focus`` (the first mark) near the start."""
    if length <= SHOWN_BYTES:
        return 0, length
    start = max(0, min(focus - SHOWN_BYTES // 4, length - SHOWN_BYTES))
    return start, start + SHOWN_BYTES


def elided(text: str, start: int, end: int, length: int) -> str:
    """``text``, the drawing of bytes ``[start, end)`` of a ``length``-byte buffer,
    with the bytes left out before and after it counted."""
    before = f"…{start} bytes… " if start else ""
    after = f" …{length - end} more bytes…" if end < length else ""
    return before + text + after


def shown_repr(data: bytes, focus: int = 0) -> str:
    """``repr(data)``, or of its window around ``focus`` when it is long."""
    start, end = shown_window(len(data), focus)
    return elided(repr(data[start:end]), start, end, len(data))


def explain(record: StepRecord) -> str:
    """A plain-words account of why a step is a violation ("Let … Then …")."""
    expected, actual = record.expected, record.actual
    lines = [
        f"Let the buffer be {shown_repr(record.before)} before step {record.index}, {record.operation.describe()}.",
        f"The model {expected.describe()}.",
        f"The implementation {actual.describe()}.",
    ]
    if expected.error != actual.error:
        if expected.error is None:
            lines.append(f"Then the implementation refused ({actual.error}) an operation the rules allow.")
        elif actual.error is None:
            consequence = (
                "whatever it produced is a state that should not exist"
                if expected.buffer != actual.buffer
                else "its buffer happens to equal the unchanged one, but the refusal the caller relies on never came"
            )
            lines.append(
                f"Then the implementation accepted an operation the rules refuse with {expected.error}: {consequence}."
            )
        else:
            lines.append(f"Then it raised {actual.error} where the rules say {expected.error}.")
    span = first_difference(expected.buffer, actual.buffer)
    refused_cleanly = actual.error is not None and not actual.error.startswith("undocumented:")
    if span is not None and refused_cleanly and actual.buffer == record.before:
        lines.append("The refusal left the buffer as it was: no byte is wrong, but the operation did not happen.")
    elif span is not None:
        start, end_e, end_a = span
        lines.append(
            f"Then the bytes differ at [{start}, {max(end_e, end_a)}): expected "
            f"{shown_repr(expected.buffer[start:end_e])}, got {shown_repr(actual.buffer[start:end_a])} — "
            "a buffer that never existed in this history, a contradiction."
        )
    if expected.depth != actual.depth:
        lines.append(f"Then the depth is {actual.depth}, not {expected.depth}: the log and the buffer disagree.")
    if expected.revision != actual.revision:
        lines.append(f"Then the revision is {actual.revision}, not {expected.revision}.")
    return " ".join(lines)


#: The most distinct findings a property's list holds on a certificate (issue 43);
#: a certificate says when a run met more.
MAX_FINDINGS = 8

#: A finding's identity (issue 43): the rules it broke and its harm signature's
#: coarse part (``HarmSignature.coarse``).
FindingKey = tuple[tuple[str, ...], str]


@dataclass
class SearchLimits:
    """What ``certify``'s search for further findings may spend (issue 43): the
    examples it may start (Hypothesis's own, its replays of a failure included),
    and the process CPU and wall-clock seconds from ``started``. The examples
    bound is the one a run normally meets, so that two runs of one seed list the
    same findings; the seconds are a backstop against slow examples (a 1.25 MiB
    start costs 0.155 s a replay), and a certificate says when they cut a search."""

    examples: int
    cpu_seconds: float
    wall_seconds: float
    started: tuple[float, float] = (0.0, 0.0)
    #: Why the search ended early (``"examples"`` or ``"time"``), once it has.
    spent: str = ""
    #: The examples it started, once it is over.
    examples_run: int = 0

    def start(self) -> None:
        self.started = (time.process_time(), time.perf_counter())

    def used(self) -> tuple[float, float]:
        """CPU and wall-clock seconds since :meth:`start`."""
        return time.process_time() - self.started[0], time.perf_counter() - self.started[1]

    def out_of_time(self) -> bool:
        """Whether the CPU or the wall-clock seconds are spent (and, once they are,
        that the time ended the search: ``spent``)."""
        cpu, wall = self.used()
        if cpu > self.cpu_seconds or wall > self.wall_seconds:
            self.spent = self.spent or "time"
        return self.spent == "time"


def owner_of(property_id: str) -> Callable[[tuple[str, ...]], bool]:
    """Whether a violation that broke these rules is ``property_id``'s own finding:
    one that broke its clause, or any for R0, the master property, whose machine
    owns every violation. Another rule's finding is recorded for that rule
    (:meth:`Tracker.found`), never made this property's verdict."""
    return lambda broken: property_id == "R0" or property_id in broken


class Tracker:
    """What one property's run did: examples, steps, the situations reached, and
    the family's tallies (the diff family counts rule-accepted and SUT-accepted
    diffs for its precision figure)."""

    def __init__(self, property_id: str) -> None:
        self.property: Property[Any, Any, Any] = PROPERTIES[property_id]
        self.examples = 0
        self.steps = 0
        self.reached: Counter[str] = Counter()
        self.tallies: Counter[str] = Counter()
        #: Findings of *other* rules this machine met on the way (SPEC §6a), by
        #: the property they break: the first of each, before minimising (the
        #: first, not the shortest, so that a run split into rounds on several
        #: shards keeps the same one: see ``shards.merge_rounds``).
        self.found_elsewhere: dict[str, Any] = {}
        #: The world the run reached (bytes, sizes, depth: rollcert.stateful_tests.world).
        self.world = WorldTally()
        #: Set for ``certify``'s search for further findings only (issue 43): the
        #: findings already known, whose examples now end without failing the
        #: run; ``None`` in the first pass, which raises on its first own finding.
        self.known: set[FindingKey] | None = None
        #: That search's bounds (checked as each example and step starts).
        self.limits: SearchLimits | None = None
        #: The newest new finding that search met (``is_new``).
        self.met: Any = None

    def owns(self, broken: tuple[str, ...]) -> bool:
        """Whether a violation that broke ``broken`` is this machine's own finding."""
        return owner_of(self.property.id)(broken)

    def found(self, broken: tuple[str, ...], violation: Any) -> None:
        """Keep ``violation`` for each property it broke that has none yet."""
        if self.known is not None:
            return  # the search for further findings looks for this property's only
        for property_id in broken:
            self.found_elsewhere.setdefault(property_id, violation)

    def is_new(self, violation: Any) -> bool:
        """Whether one of this property's own findings fails the run: always in
        the first pass; in the search for further findings only if it is not one
        the search already has (then it is kept as ``met``). A known one ends its
        example as a non-failure and the search goes on, so Hypothesis raises only
        on a new bug: like Hypothesis's multi-bug reporting, but distinct by the
        harm, not by where an exception came from."""
        if self.known is None:
            return True
        if violation.finding_key() in self.known:
            return False
        self.met = violation
        return True

    def check_limits(self) -> None:
        """Raise :class:`SearchSpent` once the search for further findings has
        started as many examples as it may, or run out of time."""
        limits = self.limits
        if limits is None:
            return
        if self.examples >= limits.examples:
            limits.spent = limits.spent or "examples"
        if limits.spent or limits.out_of_time():
            raise SearchSpent(limits.spent)


#: A minimisation move: (family, config, operations) -> candidate traces, each
#: a (config, operations) pair that is shorter or simpler.
Candidates = Iterator[tuple[BufferConfig, list[Any]]]


class PropertyFamily(ABC, Generic[StateT, OperationT, OutcomeT]):
    """The interface between the generic harness and one family's model.

    Subclasses are stateless singletons; every method is a plain function of
    its arguments, so one family object serves every run.
    """

    #: The family's name in traces ("rollback", "diffs").
    name: ClassVar[str]
    #: The properties it certifies, in certificate order.
    property_ids: ClassVar[tuple[str, ...]]
    #: The trace schemas of earlier releases this family still reads.
    legacy_trace_schemas: ClassVar[tuple[str, ...]] = ()

    # -- the model -------------------------------------------------------------------

    @abstractmethod
    def initial_state(self, config: BufferConfig) -> StateT:
        """The model of a fresh buffer built from ``config``."""

    @abstractmethod
    def predict(self, state: StateT, operation: OperationT) -> Prediction[StateT, OutcomeT]:
        """The outcomes the rules allow for ``operation`` from ``state``.
        Raise :class:`NotGenerable` for a step this family cannot judge."""

    #: Whether :meth:`second_readings` offers anything (the judge then takes a
    #: second look at a trace before it declares a violation).
    has_second_readings: ClassVar[bool] = False

    def second_readings(self, state: StateT, operation: OperationT) -> Iterator[Reading[StateT]]:
        """Further outcomes of ``operation`` a target that sees only content cannot
        tell from the model's (SPEC §6a): allowed, never required. Consulted only
        when a trace fails without them, since they multiply the readings.

        Lazily, in the family's order of preference: the judge takes as many as
        its bound allows and knows when it left some out. Each leaves the bytes
        of the prediction's first reading (only where it went differs), so the
        judge asks only when those bytes are what the target shows."""
        return iter(())

    def reading_key(self, state: StateT) -> Hashable:
        """A cheap key for telling surviving readings apart: equal states have
        equal keys (states with equal keys are then compared whole). The state
        itself by default; a family whose states are costly to hash (the diff
        model's: every byte of every state of its history) gives a few fields."""
        return state

    @abstractmethod
    def content(self, state: StateT) -> bytes:
        """The bytes a reader of ``state`` sees."""

    def depth(self, state: StateT) -> int:
        """Live records (every model of this suite names it ``depth``)."""
        return int(getattr(state, "depth"))  # noqa: B009 - StateT is a type variable, not a protocol

    def revision(self, state: StateT) -> int:
        """Successful mutations so far (every model of this suite names it ``revision``)."""
        return int(getattr(state, "revision"))  # noqa: B009

    #: The operation kinds a trace of this family may hold (a type or a union of types).
    operation_types: ClassVar[Any] = object

    def accepts(self, operation: object) -> bool:
        """Whether ``operation`` is one of this family's operation kinds (for traces)."""
        return isinstance(operation, self.operation_types)

    # -- the system under test ----------------------------------------------------------

    @abstractmethod
    def perform(self, live: LiveSession, operation: OperationT) -> None:
        """Do ``operation`` to ``live.sut``; whatever it raises is its answer."""

    def sent_edits(self, before: StateT, operation: OperationT) -> Iterator[tuple[bytes, int, int, bytes]]:
        """The edits ``operation`` sent to the target from ``before``, each as
        ``(buffer it had shown, offset, delete_length, insert)``: what the world's
        dimensions are counted on. By default any operation with an offset, a
        delete length and an insert (a splice, an out-of-log write, a tool's
        write), also when a crash interrupts it."""
        inner = getattr(operation, "operation", None)
        edit = inner if inner is not None else operation
        insert = getattr(edit, "insert", None)
        offset, delete_length = getattr(edit, "offset", 0), getattr(edit, "delete_length", 0)
        # An argument of the wrong type (R0's bad_arguments) sends no edit to count;
        # a bytearray or memoryview insert is an edit like any other.
        if isinstance(insert, (bytes, bytearray, memoryview)) and type(offset) is int and type(delete_length) is int:
            yield self.content(before), offset, delete_length, bytes(insert)

    def narrow(
        self, live: LiveSession, operation: OperationT, before: StateT, prediction: Prediction[StateT, OutcomeT]
    ) -> Prediction[StateT, OutcomeT]:
        """Sharpen the prediction with what only the SUT could report (see
        :attr:`LiveSession.sut_report`). Most families have nothing to add."""
        return prediction

    def tally(
        self, tallies: Counter[str], operation: OperationT, prediction: Prediction[StateT, OutcomeT], matched: Reading[StateT] | None
    ) -> None:
        """Count what the family reports as figures (see :meth:`figures`)."""

    def figures(self, tallies: Counter[str]) -> dict[str, float]:
        """Measured figures that are not verdicts (the diff family's precision)."""
        return {}

    def explain(
        self,
        record: StepRecord,
        before: StateT,
        prediction: Prediction[StateT, OutcomeT],
        readings: Sequence[Reading[StateT]] = (),
    ) -> str:
        """Why ``record`` is a violation, for people. ``readings`` are every
        outcome the rules allowed under every reading still standing: an
        explanation claims no difference that one of them does not have."""
        return explain(record)

    # -- certification ---------------------------------------------------------------------

    @abstractmethod
    def required_capabilities(self, property_id: str) -> frozenset[Capability]:
        """Without these the property is ``not_assessed``."""

    def situations(self, property_id: str, target: Target) -> tuple[Any, ...]:
        """The situations a run on ``target`` must reach before a pass means
        anything: the property's, less those the target cannot reach for lack
        of a capability the property itself does not need, or for the policy
        its history bound does not follow (see ``HistoryBound``)."""
        situations = tuple(PROPERTIES[property_id].situations)
        if target.history_bound is None:
            return situations
        unreachable = target.history_bound.unreachable_situations()
        return tuple(situation for situation in situations if situation.name not in unreachable)

    @abstractmethod
    def build_machine(self, target: Target, property_id: str, tracker: Tracker) -> type[RuleBasedStateMachine]:
        """A Hypothesis machine with exactly the rules ``property_id`` uses on ``target``."""

    # -- minimisation -----------------------------------------------------------------------

    @abstractmethod
    def without_step(self, operations: list[OperationT], index: int) -> list[OperationT] | None:
        """``operations`` without step ``index``, later references renumbered;
        ``None`` if a later step needs the removed one."""

    @abstractmethod
    def simpler(self, operation: OperationT) -> Iterator[OperationT]:
        """Simpler versions of one operation (shorter inserts, smaller numbers)."""

    @abstractmethod
    def candidates(self, config: BufferConfig, operations: list[OperationT]) -> Candidates:
        """Every shorter or simpler trace worth a replay, most promising first
        (composed from :mod:`rollcert.stateful_tests.shrink`'s generic moves)."""

    @abstractmethod
    def generable(self, config: BufferConfig, operations: Sequence[OperationT], target: Target) -> bool:
        """Whether this family's machines could have drawn the trace on ``target``
        (shrinking must not wander outside what the rules generate, nor bring
        back a finding the target sets aside)."""

    #: Replays the minimiser may spend on one counterexample (each takes a few
    #: milliseconds at most).
    replay_budget: ClassVar[int] = 2000
    #: Exceptions that mean a candidate trace is not runnable, not that it passed.
    not_a_trace: ClassVar[tuple[type[Exception], ...]] = (NotGenerable, Unjudgeable)
