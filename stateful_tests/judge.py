"""The judge: run one operation on the model and on the SUT, and compare.

This is the single place where R0 is decided, for every property family.
After every operation the SUT's observable state (bytes, and depth and
revision where it reports them) must equal a state the model allows, and the
SUT must have raised exactly the documented error that outcome carries. The
state machines, the replay command, the smoke test and the bounded exhaustive
search all judge through :class:`Session`, so a counterexample means the same
thing wherever it was found.

**Every reading consistent with what was seen is kept.** Where the model allows
more than one outcome (a rollback may stop at an out-of-log write or refuse
outright) and the target cannot tell them apart (it reports no depth), the
session does not pick one: it carries every model state that matches the
observation, drops each as soon as a later observation contradicts it, and
declares a violation only when none is left — the way Knossos and Porcupine
keep a set of configurations. Picking one reading too early turns a correct
implementation's later, correct answer into a false violation.
"""

from __future__ import annotations

import _signal
import itertools
import math
import os
import signal
import threading
from collections import Counter
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import replace
from types import FrameType
from typing import Any
from typing import Generic

from rollcert.model.errors import error_kind
from rollcert.model.properties import FailingStep
from rollcert.model.properties import Seen
from rollcert.model.properties import broken_rules
from rollcert.stateful_tests.causes import count_call
from rollcert.stateful_tests.family import MAX_READINGS
from rollcert.stateful_tests.family import WIDE_LOOK_BUDGET
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import OperationT
from rollcert.stateful_tests.family import OutcomeT
from rollcert.stateful_tests.family import Prediction
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Reading
from rollcert.stateful_tests.family import StateT
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import Unjudgeable
from rollcert.stateful_tests.family import explain
from rollcert.stateful_tests.family import first_difference
from rollcert.stateful_tests.family import harm_of
from rollcert.stateful_tests.family import harm_signature
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import CallTimeout
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UsageError
from rollcert.targets.adapter import describe_exception
from rollcert.targets.adapter import exact_bytes
from rollcert.targets.adapter import observed_int
from rollcert.targets.adapter import visible

#: The step records and their explanation are defined with the family interface;
#: they are named here too because every consumer of a judged step starts here.
__all__ = [
    "Observed", "Session", "StepRecord", "Violation", "explain", "first_difference", "interrupted_by_user", "observe",
    "replay", "watching_for_ctrl_c",
]

#: The note of a step judged right only on a second look (``Session._look_again``).
SECOND_LOOK = "right under a reading the target cannot tell from the model's (another alignment of an earlier edit)"

#: Up to this many surviving readings a step's matches are told apart by a scan.
_SCAN_UP_TO = 8


#: Seconds one call of an in-process target (an operation and the observation
#: after it, or building a buffer) may take before the run gives up on it.
CALL_TIMEOUT_VARIABLE = "ROLLCERT_CALL_TIMEOUT"
DEFAULT_CALL_TIMEOUT = 60.0


def call_timeout() -> float:
    """``$ROLLCERT_CALL_TIMEOUT`` seconds (``rollcert certify --call-timeout`` sets
    it, so that worker processes inherit it), else 60; 0 turns the watchdog off.
    A value that is not a finite number of seconds is a usage error."""
    text = os.environ.get(CALL_TIMEOUT_VARIABLE)
    if text is None:
        return DEFAULT_CALL_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(f"${CALL_TIMEOUT_VARIABLE} must be a finite number of seconds (0: no limit), got {text!r}")
    return seconds


def _overran(signum: int, frame: FrameType | None) -> None:
    raise CallTimeout()


class call_deadline:  # used as ``with call_deadline(...)``, as when it was a generator
    """Give the target's code inside at most :func:`call_timeout` seconds;
    ``what`` (an operation, or a phrase) names the call if it overruns;
    ``seconds``, when given, is :func:`call_timeout` read earlier (a session reads
    it once: the variable is read and parsed, and the context entered, on every
    step, 8% of a rollback property's time as a generator-based context manager).

    A Python loop that never returns would hang the run with no verdict at all.
    ``setitimer`` delivers SIGALRM to the main thread, whose handler raises
    :class:`CallTimeout` into whatever the target is running; it fires again
    every second in case the target swallows it. Off the main thread (or with
    the limit at 0) nothing is armed. Code that never returns to the
    interpreter (a native loop) is out of its reach: the worker process
    ``rollcert certify`` runs each property in is the last resort."""

    __slots__ = ("armed", "previous", "seconds", "what")

    def __init__(self, what: object, seconds: float | None = None) -> None:
        self.what = what
        self.seconds = seconds
        self.previous: Any = None
        self.armed = False

    def __enter__(self) -> None:
        seconds = self.seconds = call_timeout() if self.seconds is None else self.seconds
        if not seconds or threading.current_thread() is not threading.main_thread():
            return
        # ``_signal.signal`` is what ``signal.signal`` calls, without its
        # conversions to and from enums (a third of this context's cost).
        self.previous = _signal.signal(signal.SIGALRM, _overran)
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> bool:
        if not self.armed:
            return False
        try:
            if kind is not None and issubclass(kind, CallTimeout):
                # an operation is described only now: most calls return, and describing one costs a step's time
                describe = getattr(self.what, "describe", None)
                named = describe() if callable(describe) else str(self.what)
                raise HarnessError(
                    f"{named} did not return within {self.seconds:g} s (the call timeout)"
                ) from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _signal.signal(signal.SIGALRM, self.previous)
        return False


class _CtrlC:
    """Whether the person at the keyboard pressed Ctrl-C while a property ran.

    A target may raise ``KeyboardInterrupt`` itself (a bug, or a library that
    turns its own signal into one); that is its answer to an operation and is
    judged like any undocumented exception. Only a real SIGINT stops the run.
    The two look alike once raised, so the SIGINT handler notes the press."""

    watching = False
    pressed = False


@contextmanager
def watching_for_ctrl_c() -> Iterator[None]:
    """While this runs, a ``KeyboardInterrupt`` no SIGINT caused is the target's.

    Only the main thread can own a signal handler, and only Python's default
    one is replaced; elsewhere (or under a handler someone installed) every
    ``KeyboardInterrupt`` is taken as the user's, as before. A process started
    with SIGINT ignored (a shell's background job: ``rollcert certify … &``)
    cannot be interrupted from the keyboard at all, so there every
    ``KeyboardInterrupt`` is the target's."""
    if _CtrlC.watching or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        _CtrlC.watching, _CtrlC.pressed = True, False
        try:
            yield
        finally:
            _CtrlC.watching = False
        return
    if previous is not signal.default_int_handler:
        yield
        return

    def pressed(signum: int, frame: FrameType | None) -> None:
        _CtrlC.pressed = True
        raise KeyboardInterrupt

    _CtrlC.watching, _CtrlC.pressed = True, False
    signal.signal(signal.SIGINT, pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _CtrlC.watching = False


def interrupted_by_user() -> bool:
    """Whether a ``KeyboardInterrupt`` caught now came from Ctrl-C (see :class:`_CtrlC`)."""
    return _CtrlC.pressed or not _CtrlC.watching


class Violation(AssertionError):
    """The SUT disagreed with the model. Carries the whole trace, for the certificate."""

    def __init__(
        self,
        config: BufferConfig,
        steps: Sequence[StepRecord],
        explanation: str,
        broken: tuple[str, ...] = ("R0",),
    ) -> None:
        super().__init__(explanation)
        self.config = config
        self.steps = list(steps)
        self.explanation = explanation
        #: The properties whose own clause the failing step broke (``("R0",)``:
        #: none in particular), as :func:`rollcert.model.properties.broken_rules` says.
        self.broken = broken

    @property
    def harm(self) -> str:
        return self.steps[-1].harm if self.steps else ""

    @property
    def signature(self) -> str:
        """The failing step's harm signature (``family.HarmSignature``): with the
        rules it broke, what tells this finding from another bug's."""
        return str(harm_signature(self.steps[-1])) if self.steps else ""

    def coarse_signature(self) -> str:
        """The signature without its byte classes (``HarmSignature.coarse``)."""
        return harm_signature(self.steps[-1], classes=False).coarse() if self.steps else ""

    def finding_key(self) -> tuple[tuple[str, ...], str]:
        """Two violations with one key are one finding (issue 43): the rules broken
        and the coarse signature, as ``Counterexample.finding_key``."""
        return tuple(self.broken), self.coarse_signature()


def observe(
    sut: SystemUnderTest, error: str | None, tracks_depth: bool, tracks_revision: bool, revision_base: int
) -> Observed:
    """What can be seen of the SUT: its bytes, and its depth and revision (counted
    from ``revision_base``) where it reports them. An answer of the wrong type is
    the adapter's fault, not a verdict."""
    buffer = exact_bytes(sut.read(), "read()")  # compared as plain bytes, whatever the target's type says
    depth = observed_int("depth", sut.depth()) if tracks_depth else None
    revision = observed_int("revision", sut.revision()) if tracks_revision else None
    return Observed(error, buffer, depth, revision - revision_base if revision is not None else None)


def built(target: Target, config: BufferConfig) -> SystemUnderTest:
    """A fresh buffer from ``target``'s factory, or the adapter's fault said plainly
    (a factory that returns ``None`` or anything without the core methods)."""
    sut = target.factory(config)
    missing = [name for name in ("read", "splice", "rollback") if not callable(getattr(sut, name, None))]
    if missing:
        raise HarnessError(f"the factory returned {type(sut).__name__}, not a buffer: it has no {', '.join(missing)}")
    return sut


@dataclass
class _LeftOut:
    """Whether a look had to leave readings out (past ``MAX_READINGS``)."""

    left_out: bool = False


class Session(Generic[StateT, OperationT, OutcomeT]):
    """One family's model (as the set of readings still consistent with what was
    seen) and one SUT, stepped together."""

    def __init__(
        self,
        family: PropertyFamily[StateT, OperationT, OutcomeT],
        target: Target,
        config: BufferConfig,
        tallies: Counter[str] | None = None,
    ) -> None:
        self.family = family
        self.target = target
        self.config = config
        self.readings: list[StateT] = [family.initial_state(config)]
        #: Per reading: whether it stands only because of an optional reading on
        #: its way (a distinction the target cannot see; see ``Reading.optional``).
        self.lineage_optional: list[bool] = [False]
        self.steps: list[StepRecord] = []
        self.handles: dict[str, list[object | None]] = {}
        self.sut_report = True
        self.tallies: Counter[str] = tallies if tallies is not None else Counter()
        #: The model's outcome for the last step (for the machines' situations).
        self.last_prediction: Prediction[StateT, OutcomeT] | None = None
        self._optional_seen = False
        #: Whether the session judges with the family's second readings (after a
        #: step that only they explained, see :meth:`_look_again`).
        self._second_look = False
        #: Every step judged so far and what the target showed, for a second look.
        self._judged: list[tuple[OperationT, Observed]] = []
        #: Whether readings were left out on the way (past MAX_READINGS): a step
        #: none of the kept ones explains is then looked at again, wider.
        self._left_out = False
        self._tracks_depth = Capability.DEPTH in target.capabilities
        self._tracks_revision = Capability.REVISIONS in target.capabilities
        self._other: SystemUnderTest | None = None
        #: :func:`call_timeout`, read once for the session's calls.
        self._call_timeout = call_timeout()
        with call_deadline("building and reading a fresh buffer", self._call_timeout):
            self.sut: SystemUnderTest = built(target, config)
            self._revision_base = 0
            if self._tracks_revision:
                # Judged from where the model starts (config.start_revision): a
                # target that ignored the start is judged as fairly as one that took it.
                self._revision_base = observed_int("revision", self.sut.revision()) - config.start_revision
            initial = self.observe_sut(None)
        if initial.buffer != config.initial:
            raise HarnessError(
                f"the SUT started with {initial.buffer!r} instead of the initial buffer {config.initial!r}"
            )
        fresh_depth = self.observe_model(self.model, None).depth
        if initial.depth != fresh_depth:  # a factory that hands out a used buffer: its history leaks in
            raise HarnessError(
                f"the SUT started with depth {initial.depth} instead of {fresh_depth}: "
                "the factory must build a fresh buffer for every example"
            )

    @property
    def revision_base(self) -> int | None:
        """The revision the target reported when it was built (``None``: it reports
        none); what it reports later is judged relative to it."""
        return self._revision_base if self._tracks_revision else None

    @property
    def model(self) -> StateT:
        """The model state the machines draw from: the first reading still standing."""
        return self.readings[0]

    def other_sut(self) -> SystemUnderTest:
        """A second buffer of the same target (for a checkpoint of another buffer)."""
        if self._other is None:
            self._other = built(self.target, self.config)
        return self._other

    def close(self) -> None:
        for sut in (self.sut, self._other):
            if sut is not None:
                sut.close()

    # -- observation -------------------------------------------------------------------

    def observe_model(self, state: StateT, error: str | None) -> Observed:
        family = self.family
        return Observed(
            error,
            family.content(state),
            family.depth(state) if self._tracks_depth else None,
            family.revision(state) if self._tracks_revision else None,
        )

    def observe_sut(self, error: str | None) -> Observed:
        return observe(self.sut, error, self._tracks_depth, self._tracks_revision, self._revision_base)

    # -- stepping ------------------------------------------------------------------------

    def execute(self, operation: OperationT) -> StepRecord:
        """Run ``operation`` on both sides; raise :class:`Violation` if no reading
        of the model matches what the SUT did."""
        family = self.family
        before = self.model
        predictions = [(state, family.predict(state, operation)) for state in self.readings]
        sut_error: str | None = None
        sut_message = ""
        self.sut_report = True
        with call_deadline(operation, self._call_timeout):
            try:
                family.perform(self, operation)
            except (HarnessError, NotGenerable, CallTimeout):
                raise
            except BaseException as error:  # the SUT's answer, judged below: a native panic or a
                # sys.exit() inside an operation is what the implementation did, not the end of rollcert
                if isinstance(error, KeyboardInterrupt) and interrupted_by_user():
                    raise
                sut_error = visible(error_kind(error))  # a class name or a wire kind: the target's words
                sut_message = describe_exception(error)
            actual = self.observe_sut(sut_error)
        narrowed = [family.narrow(self, operation, state, prediction) for state, prediction in predictions]
        if self._second_look:
            bound = _LeftOut()
            narrowed = [
                self._with_second_readings(state, operation, p, actual, bound)
                for state, p in zip(self.readings, narrowed, strict=True)
            ]
            self._left_out = self._left_out or bound.left_out
        considered, survivors, survivors_optional, matched, allowed = self._match(narrowed, self.lineage_optional, actual)
        self._judged.append((operation, actual))
        rescued = False
        if not survivors and family.has_second_readings and (not self._second_look or self._left_out):
            looked, looked_at = self._look_again_within_bounds()
            if looked is not None:
                # Right only under a reading the target cannot be told from (another
                # alignment of an earlier edit): from here on every step keeps them.
                rescued, self._second_look = True, True
                survivors, survivors_optional = looked
                self.tallies["optional_reading_needed"] += 1
            else:
                considered = looked_at or considered  # the explanation weighs every reading
        first = narrowed[0]
        self.last_prediction = first
        count_call(self.tallies, getattr(operation, "kind", ""), actual.error is None, first.readings[0].error is None)
        main = first.readings[0]
        harm = ""
        if not survivors:
            earlier = [self.config.initial, *(step.before for step in self.steps)]
            # every allowed outcome, each once
            harm = harm_of(operation, list(allowed), actual, earlier, before=family.content(before))
        record = StepRecord(
            index=len(self.steps) + 1,
            operation=operation,
            before=family.content(before),
            expected=self.observe_model(main.state, main.error),
            actual=actual,
            ok=bool(survivors),
            sut_message=sut_message,
            context=first.context,
            note=SECOND_LOOK if rescued else matched.note if matched is not None else "",
            allowed=tuple(allowed) if len(allowed) > 1 else (),
            harm=harm,
        )
        self.steps.append(record)
        family.tally(self.tallies, operation, first, matched)
        if not survivors:
            explanation = family.explain(record, before, first, tuple(considered))
            if len(considered) > 1 and (more := self._readings_text(considered)):
                explanation += " " + more
            failing = FailingStep(
                operation,
                before,
                tuple((reading.state, reading.error) for reading in considered),
                Seen(actual.error, actual.buffer, actual.depth, actual.revision),
            )
            broken = broken_rules(family.property_ids, failing)
            raise Violation(self.config, self.steps, explanation, broken)
        self._optional_seen = self._optional_seen or rescued or any(reading.optional for reading in considered)
        if not rescued and survivors_optional and all(survivors_optional) and not all(self.lineage_optional):
            # Only a reading the target cannot be told from stands now: counted (like
            # S1's equal_bytes_accepted), so a pass says how often it was needed.
            self.tallies["optional_reading_needed"] += 1
        if len(survivors) > MAX_READINGS:
            if not self._optional_seen:
                raise HarnessError(
                    f"more than {MAX_READINGS} model readings fit what the target shows; it reports too little"
                )
            # Some lineages exist only as optional readings (allowed, never required):
            # the last of them are left out for speed, and remembered as left out,
            # so that a step none of the rest explains is looked at again, wider.
            survivors, survivors_optional = survivors[:MAX_READINGS], survivors_optional[:MAX_READINGS]
            self._left_out = True
        self.readings = survivors
        self.lineage_optional = survivors_optional
        return record

    def remember(self, operation: OperationT, error: BaseException | None) -> None:
        """Note what the target shows after ``operation``, performed outside
        :meth:`execute` (a search replaying a prefix it judged before), so that a
        second look (:meth:`_look_again`) can judge the whole trace."""
        self._judged.append((operation, self.observe_sut(None if error is None else visible(error_kind(error)))))

    def _with_second_readings(
        self,
        state: StateT,
        operation: OperationT,
        prediction: Prediction[StateT, OutcomeT],
        actual: Observed,
        bound: _LeftOut,
    ) -> Prediction[StateT, OutcomeT]:
        """``prediction`` with up to ``MAX_READINGS`` of the family's second readings
        (noting on ``bound`` when it had more); none when they could not match."""
        if not self._second_readings_could_match(prediction, actual):
            return prediction
        offered = self.family.second_readings(state, operation)
        extra = tuple(replace(reading, optional=True) for reading in itertools.islice(offered, MAX_READINGS))
        if next(offered, None) is not None:
            bound.left_out = True
        return replace(prediction, readings=prediction.readings + extra) if extra else prediction

    def _second_readings_could_match(self, prediction: Prediction[StateT, OutcomeT], actual: Observed) -> bool:
        """Second readings leave the bytes of the prediction's first reading and
        raise nothing (``PropertyFamily.second_readings``): unless the target
        shows exactly that, none could match, and there may be thousands to build."""
        return actual.error is None and self.family.content(prediction.readings[0].state) == actual.buffer

    def _match(
        self,
        narrowed: Iterable[Prediction[StateT, OutcomeT]],
        flags: list[bool],
        actual: Observed,
        *,
        enough: int | None = None,
    ) -> tuple[list[Reading[StateT]], list[StateT], list[bool], Reading[StateT] | None, dict[Observed, None]]:
        """Every reading of every prediction, those matching ``actual`` (the states,
        once each, with whether each stands only by an optional reading), the first
        match, and every outcome allowed. With ``enough``, the predictions (a lazy
        iterable then) stop being read once more than ``enough`` states survive:
        the caller keeps only the first ``enough``, so the rest could change nothing."""
        considered: list[Reading[StateT]] = []
        survivors: list[StateT] = []
        survivors_optional: list[bool] = []
        # Past a few survivors, buckets by the family's cheap key instead of a scan
        # per reading: a tool write on a long repetitive buffer has thousands of
        # alignments, and the scan was quadratic in them. (Not a set of the states:
        # hashing a diff state walks every byte of its history, 52 of the 68 s of
        # a minimisation of unchecked_when_live_empty.)
        seen_states: dict[Hashable, list[StateT]] | None = None
        matched: Reading[StateT] | None = None
        allowed: dict[Observed, None] = {}
        for inherited, prediction in zip(flags, narrowed, strict=enough is None):
            if enough is not None and len(survivors) > enough:
                break
            for reading in prediction.readings:
                considered.append(reading)
                seen = self.observe_model(reading.state, reading.error)
                allowed[seen] = None
                if seen != actual:
                    continue
                matched = matched or reading
                if seen_states is None and len(survivors) >= _SCAN_UP_TO:
                    seen_states = {}
                    for survivor in survivors:
                        seen_states.setdefault(self.family.reading_key(survivor), []).append(survivor)
                if seen_states is None:
                    if reading.state in survivors:
                        continue
                else:
                    bucket = seen_states.setdefault(self.family.reading_key(reading.state), [])
                    if reading.state in bucket:
                        continue
                    bucket.append(reading.state)
                survivors.append(reading.state)
                survivors_optional.append(inherited or reading.optional)
        return considered, survivors, survivors_optional, matched, allowed

    def _look_again_within_bounds(self) -> tuple[tuple[list[StateT], list[bool]] | None, list[Reading[StateT]]]:
        """A second look at the whole trace after a step no reading explained.

        First (unless the session already judges with second readings, which
        is the same look) :meth:`_look_again` with the fast bound, keeping up to
        ``MAX_READINGS`` lineages. If none stands but some were left out on the
        way, :meth:`_find_a_lineage` within ``WIDE_LOOK_BUDGET`` model steps;
        if that ran out, the step is :class:`Unjudgeable` (never a violation: a
        reading not tried might have matched). Whether the readings kept are all
        there are is remembered (``_left_out``) for the next failing step."""
        looked: tuple[list[StateT], list[bool]] | None = None
        looked_at: list[Reading[StateT]] = []
        left_out = True
        if not self._second_look:
            looked, looked_at, left_out = self._look_again()
        if looked is None and left_out:
            looked, left_out = self._find_a_lineage(WIDE_LOOK_BUDGET)
            if looked is None and left_out:
                raise Unjudgeable(
                    f"no reading the judge kept matches step {len(self._judged)}; readings of earlier edits "
                    f"(their other alignments) were left out, and {WIDE_LOOK_BUDGET} model steps of a wider look "
                    "did not settle whether one of them fits"
                )
        self._left_out = left_out
        return looked, looked_at

    def _find_a_lineage(self, budget: int) -> tuple[tuple[list[StateT], list[bool]] | None, bool]:
        """One lineage of readings (second readings included) that matches every
        step the target showed, searched depth first within ``budget`` model
        steps, and whether anything was left out (the budget ran out).

        Depth first, because a target right under some alignment is found along
        the first lineage that follows it, without building every other lineage
        at every step (a breadth-first look at 4,096 lineages of a kilobyte
        buffer took 20 s), and the family offers its likeliest alignments first.
        A lineage matching nothing is abandoned at the first step it fails, and
        a state reached twice at one step is explored once. A violation is
        declared only when every lineage was tried; the lineage found is
        returned alone, and counts as leaving the others out."""
        family = self.family
        judged = self._judged
        tried: list[dict[Hashable, list[StateT]]] = [{} for _ in judged]
        spent = 0

        def matching(level: int, state: StateT, optional: bool) -> Iterator[tuple[StateT, bool]]:
            nonlocal spent
            operation, actual = judged[level]
            spent += 1
            prediction = family.predict(state, operation)
            for reading in prediction.readings:
                if self.observe_model(reading.state, reading.error) == actual:
                    yield reading.state, optional or reading.optional
            if not self._second_readings_could_match(prediction, actual):
                return
            for reading in family.second_readings(state, operation):
                spent += 1
                if spent > budget:
                    return
                if self.observe_model(reading.state, reading.error) == actual:
                    yield reading.state, True

        # Called after a failing step, so ``judged`` holds at least that one.
        stack: list[tuple[int, Iterator[tuple[StateT, bool]]]] = [(0, matching(0, family.initial_state(self.config), False))]
        while stack and spent <= budget:
            level, pending = stack[-1]
            found = next(pending, None)
            if found is None:
                stack.pop()
                continue
            state, optional = found
            bucket = tried[level].setdefault(family.reading_key(state), [])
            if state in bucket:
                continue  # reached before by another lineage: explored from there already
            bucket.append(state)
            if level + 1 == len(judged):
                return ([state], [optional]), True
            stack.append((level + 1, matching(level + 1, state, optional)))
        return None, spent > budget

    def _look_again(self) -> tuple[tuple[list[StateT], list[bool]] | None, list[Reading[StateT]], bool]:
        """Judge every step so far once more, from the start, with the family's
        second readings (what a target that sees only content cannot tell apart),
        against what the target showed each time, keeping at most ``MAX_READINGS``
        lineages and as many second readings per lineage and step: the
        readings that stand at the end (``None`` if none does), every outcome
        allowed at the step where none stood, and whether any were left out on
        the way. Nothing is run on the target again; only the model is, so this
        costs nothing until a step fails."""
        family = self.family
        states: list[StateT] = [family.initial_state(self.config)]
        flags = [False]
        bound = _LeftOut()
        for operation, actual in self._judged:
            # Lazily, lineage by lineage: 64 lineages of a long repetitive buffer, each
            # with its 64 alignments, were 4,000 states built and compared per step.
            predictions = (
                self._with_second_readings(state, operation, family.predict(state, operation), actual, bound)
                for state in states
            )
            considered, kept, flags, _, _ = self._match(predictions, flags, actual, enough=MAX_READINGS)
            if not kept:
                return None, considered, bound.left_out
            if len(kept) > MAX_READINGS:  # the latest lineages go first
                kept, flags = kept[:MAX_READINGS], flags[:MAX_READINGS]
                bound.left_out = True
            states = kept
        return (states, flags), [], bound.left_out

    def _readings_text(self, considered: list[Reading[Any]]) -> str:
        # Once each: many readings (alignments of an edit) look the same from outside.
        outcomes = dict.fromkeys(
            f"{self.observe_model(reading.state, reading.error).describe()}"
            + (f" ({reading.note})" if reading.note else "")
            for reading in considered
        )
        if len(outcomes) == 1:
            return ""
        return f"The rules allowed {len(outcomes)} outcomes here, none of which it matches: {'; '.join(outcomes)}."


def replay(
    family: PropertyFamily[StateT, OperationT, OutcomeT],
    target: Target,
    config: BufferConfig,
    operations: Sequence[OperationT],
) -> list[StepRecord]:
    """Run a saved trace; raise :class:`Violation` at the first disagreement.

    A step the target sets aside (a known finding, ``--set-aside``) is skipped,
    as the machines skip it, so the trace replays what lies behind it."""
    session = Session(family, target, config)
    try:
        for operation in operations:
            if target.sets_aside(session.model, operation):
                continue
            session.execute(operation)
        return session.steps
    finally:
        session.close()
