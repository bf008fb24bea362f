"""The judge: run one operation on the model and on the SUT, and compare.

This is the single place where R0 is decided. After every operation the SUT's
observable state (bytes, and depth and revision where it reports them) must
equal the model's, and the SUT must have raised exactly the documented error
the model raised. The state machines, the replay command and the bounded
exhaustive search all judge through :class:`Session`, so a counterexample means
the same thing wherever it was found.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rollcert.model.errors import error_kind
from rollcert.model.operations import (
    AdoptCurrent,
    ArmJournalFault,
    Compact,
    CorruptRecord,
    CrashDuring,
    Operation,
    OutOfLogWrite,
    Restart,
    Rollback,
    RollbackTo,
    RollbackToForeign,
    Splice,
    TakeCheckpoint,
)
from rollcert.model.reference import ModelState, Outcome, initial_state, step
from rollcert.stateful_tests.adapter import BufferConfig, Capability, HarnessError, SystemUnderTest, Target


@dataclass(frozen=True)
class Observed:
    """What could be seen of one side after a step."""

    error: str | None
    buffer: bytes
    depth: int | None
    revision: int | None

    def describe(self) -> str:
        parts = [repr(self.buffer)]
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.revision is not None:
            parts.append(f"revision {self.revision}")
        outcome = f"raised {self.error}" if self.error else "succeeded"
        return f"{outcome}; buffer {', '.join(parts)}"


@dataclass(frozen=True)
class StepRecord:
    """One judged step: the model's prediction and what the SUT did."""

    index: int
    operation: Operation
    before: bytes
    expected: Observed
    actual: Observed
    ok: bool
    sut_message: str = ""


class Violation(AssertionError):
    """The SUT disagreed with the model. Carries the whole trace, for the certificate."""

    def __init__(self, config: BufferConfig, steps: list[StepRecord], explanation: str) -> None:
        super().__init__(explanation)
        self.config = config
        self.steps = list(steps)
        self.explanation = explanation


def first_difference(expected: bytes, actual: bytes) -> tuple[int, int, int] | None:
    """``(start, expected_end, actual_end)`` of the differing span, or ``None`` if equal.

    The span is what remains after stripping the common prefix and suffix, so it
    marks exactly the bytes a reader should look at.
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


def explain(record: StepRecord) -> str:
    """A plain-words account of why a step is a violation ("Let … Then …")."""
    expected, actual = record.expected, record.actual
    lines = [
        f"Let the buffer be {record.before!r} before step {record.index}, {record.operation.describe()}.",
        f"The model {expected.describe()}.",
        f"The implementation {actual.describe()}.",
    ]
    if expected.error != actual.error:
        if expected.error is None:
            lines.append(f"Then the implementation refused ({actual.error}) an operation the rules allow.")
        elif actual.error is None:
            lines.append(
                f"Then the implementation accepted an operation the rules refuse with {expected.error}: "
                "whatever it produced is a state that should not exist."
            )
        else:
            lines.append(f"Then it raised {actual.error} where the rules say {expected.error}.")
    span = first_difference(expected.buffer, actual.buffer)
    if span is not None:
        start, end_e, end_a = span
        lines.append(
            f"Then the bytes differ at [{start}, {max(end_e, end_a)}): expected "
            f"{expected.buffer[start:end_e]!r}, got {actual.buffer[start:end_a]!r} — "
            "a buffer that never existed in this history, a contradiction."
        )
    if expected.depth != actual.depth:
        lines.append(f"Then the depth is {actual.depth}, not {expected.depth}: the log and the buffer disagree.")
    if expected.revision != actual.revision:
        lines.append(f"Then the revision is {actual.revision}, not {expected.revision}.")
    return " ".join(lines)


def observe(
    sut: SystemUnderTest, error: str | None, tracks_depth: bool, tracks_revision: bool, revision_base: int
) -> Observed:
    """What can be seen of the SUT: its bytes, and its depth and revision (counted
    from ``revision_base``) where it reports them. A non-bytes read is the
    adapter's fault, not a verdict."""
    buffer = sut.read()
    if not isinstance(buffer, bytes):
        raise HarnessError(f"read() returned {type(buffer).__name__}, not bytes")
    return Observed(
        error,
        buffer,
        sut.depth() if tracks_depth else None,
        sut.revision() - revision_base if tracks_revision else None,
    )


@dataclass
class Session:
    """One model and one SUT, stepped together."""

    target: Target
    config: BufferConfig
    sut: SystemUnderTest = field(init=False)
    model: ModelState = field(init=False)
    tokens: list[object] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    _revision_base: int = 0
    _foreign: SystemUnderTest | None = None
    #: What the SUT reported about the last durability operation: whether the
    #: crash interrupted it, or whether there was a record to corrupt.
    _durability_report: bool = True

    def __post_init__(self) -> None:
        self.model = initial_state(self.config.initial, self.config.capacity, self.config.policy)
        self.sut = self.target.factory(self.config)
        self._tracks_depth = Capability.DEPTH in self.target.capabilities
        self._tracks_revision = Capability.REVISIONS in self.target.capabilities
        if self._tracks_revision:
            self._revision_base = self.sut.revision()
        initial = self.observe_sut(None)
        if initial.buffer != self.config.initial:
            raise HarnessError(
                f"the SUT started with {initial.buffer!r} instead of the initial buffer {self.config.initial!r}"
            )

    def close(self) -> None:
        for sut in (self.sut, self._foreign):
            if sut is not None:
                sut.close()

    # -- observation -------------------------------------------------------------

    def observe_model(self, state: ModelState, error: str | None) -> Observed:
        return Observed(
            error,
            state.current,
            state.depth if self._tracks_depth else None,
            state.revision if self._tracks_revision else None,
        )

    def observe_sut(self, error: str | None) -> Observed:
        return observe(self.sut, error, self._tracks_depth, self._tracks_revision, self._revision_base)

    # -- stepping ------------------------------------------------------------------

    def _perform(self, operation: Operation) -> None:
        sut = self.sut
        if isinstance(operation, Splice):
            sut.splice(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, OutOfLogWrite):
            sut.write_out_of_log(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, TakeCheckpoint):
            self.tokens.append(sut.checkpoint())
        elif isinstance(operation, RollbackTo):
            sut.rollback_to(self.tokens[operation.checkpoint])
        elif isinstance(operation, RollbackToForeign):
            if self._foreign is None:
                self._foreign = self.target.factory(self.config)
            sut.rollback_to(self._foreign.checkpoint())
        elif isinstance(operation, Rollback):
            sut.rollback(operation.steps)
        elif isinstance(operation, ArmJournalFault):
            sut.arm_journal_fault()
        elif isinstance(operation, AdoptCurrent):
            sut.adopt_current()
        elif isinstance(operation, Compact):
            sut.compact(operation.keep)
        elif isinstance(operation, CrashDuring):
            refusals: list[Exception] = []

            def interrupted_operation() -> None:
                # A refusal is kept for after the recovery; the adapter's crash
                # signal (a BaseException) passes through to the adapter.
                try:
                    self._perform(operation.operation)
                except Exception as refusal:
                    refusals.append(refusal)

            self._durability_report = sut.run_with_crash(
                interrupted_operation, operation.io_event, operation.lost
            )
            if refusals:
                raise refusals[0]
        elif isinstance(operation, Restart):
            sut.restart()
        elif isinstance(operation, CorruptRecord):
            self._durability_report = sut.corrupt_committed_record()
            try:
                sut.restart()
            except Exception:
                sut.repair_corruption()  # recovery refused, as it must: carry on from the same state
                raise
        else:  # pragma: no cover - every operation kind is handled above
            raise HarnessError(f"no way to perform {operation!r}")

    def predict(self, operation: Operation) -> tuple[Outcome, str | None]:
        """The model's outcome; bad arguments are an expected ValueError/TypeError."""
        try:
            outcome = step(self.model, operation)
        except (ValueError, TypeError) as error:
            return Outcome(self.model, type(error), message=str(error)), error_kind(error)
        return outcome, (error_kind(outcome.error) if outcome.error else None)

    def _narrow(
        self, operation: Operation, before: ModelState, outcome: Outcome, expected_error: str | None
    ) -> tuple[Outcome, str | None]:
        """Sharpen the model's prediction with what only the SUT can know: a crash
        that came after the operation completed leaves no excuse to lose it, and
        a journal with no record but the last has nothing that can be corrupt."""
        if isinstance(operation, CrashDuring) and not self._durability_report:
            return Outcome(outcome.state, outcome.error, message="the crash came after the operation"), expected_error
        if isinstance(operation, CrashDuring) and outcome.error is not None:
            # The operation was failing (say, a write refused) when the crash hit:
            # the process died before it could report the error; nothing changed.
            return Outcome(outcome.state, message="the crash pre-empted the error"), None
        if isinstance(operation, CorruptRecord) and not self._durability_report:
            return Outcome(before, message="no committed record but the last to corrupt"), None
        return outcome, expected_error

    def execute(self, operation: Operation) -> StepRecord:
        """Run ``operation`` on both sides; raise :class:`Violation` if they disagree."""
        if isinstance(operation, TakeCheckpoint) and len(self.tokens) != len(self.model.checkpoints):
            raise HarnessError("checkpoint tokens and model checkpoints out of step")
        before = self.model
        outcome, expected_error = self.predict(operation)
        sut_error: str | None = None
        sut_message = ""
        self._durability_report = True
        try:
            self._perform(operation)
        except HarnessError:
            raise
        except Exception as error:  # the SUT's answer, judged below
            sut_error = error_kind(error)
            sut_message = f"{type(error).__name__}: {error}"
        actual = self.observe_sut(sut_error)
        outcome, expected_error = self._narrow(operation, before, outcome, expected_error)
        candidates = [outcome.state]
        if outcome.also_acceptable is not None:
            candidates.append(outcome.also_acceptable)
        matched = next(
            (state for state in candidates if self.observe_model(state, expected_error) == actual), None
        )
        record = StepRecord(
            index=len(self.steps) + 1,
            operation=operation,
            before=before.current,
            expected=self.observe_model(outcome.state, expected_error),
            actual=actual,
            ok=matched is not None,
            sut_message=sut_message,
        )
        self.steps.append(record)
        if matched is None:
            raise Violation(self.config, self.steps, explain(record))
        self.model = matched
        return record


def replay(target: Target, config: BufferConfig, operations: list[Operation]) -> list[StepRecord]:
    """Run a saved trace; raise :class:`Violation` at the first disagreement."""
    session = Session(target, config)
    try:
        for operation in operations:
            session.execute(operation)
        return session.steps
    finally:
        session.close()
