"""The diff machine: self-authored diffs against the model, with a second writer.

An author snapshots the buffer and later applies diffs against its snapshots
(positional and content-anchored, with read-sets that do and do not overlap
what happens next); a tool writes into the same buffer in between; rollbacks
and rollbacks of applied diffs are interleaved. After every step the SUT is
compared with :mod:`rollcert.model.diffs`, in both directions:

- **soundness** (the verdict): the SUT must never accept a diff the rule
  rejects, never produce other bytes than the model (after an apply, a
  rollback of an applied diff, or anything else), and never report another
  revision or depth;
- **precision** (a figure): of the diffs the rule accepts, the share the SUT
  accepted. A ``StaleBaseError`` where the rule accepts, with nothing changed,
  is sound but imprecise: the run goes on from the unchanged state.

Diff steps do not fit :class:`rollcert.stateful_tests.judge.Session` (snapshots and
diff handles, the precision tally), so this module has its own session, step
records (which carry the snapshot B0 and the diff, for the counterexample),
replay, minimiser and trace format; a :class:`~rollcert.stateful_tests.judge.Violation`
it raises is the same kind the certificate already renders.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from rollcert.model.diffs import (
    DIFF_PROPERTIES,
    ApplyDiff,
    DiffModelState,
    DiffOperation,
    DiffOutcome,
    Hunk,
    Region,
    RollbackDiff,
    TakeSnapshot,
    ToolWrite,
    diff_operation_from_json,
    diff_operation_to_json,
    diff_step,
    initial_diff_state,
    locate,
    reject_apply,
)
from rollcert.model.errors import StaleBaseError, error_kind
from rollcert.model.operations import Rollback, Splice
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.adapter import (
    BufferConfig,
    Capability,
    HarnessError,
    KnownFinding,
    SystemUnderTest,
    Target,
)
from rollcert.stateful_tests.certify import PropertyResult, run_to_verdict
from rollcert.stateful_tests.judge import Observed, StepRecord, Violation, explain, observe
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.shrink import greedy_minimise

DIFF_TRACE_SCHEMA = "rollcert-diff-trace/1"

#: The rules of each diff property's machine.
RULES_BY_PROPERTY: dict[str, tuple[str, ...]] = {
    "S1": ("snapshot", "agent_edit", "tool_write", "apply_diff", "rollback"),
    "S2": ("snapshot", "agent_edit", "tool_write", "apply_diff", "rollback_diff"),
    "S3": ("snapshot", "agent_edit", "rollback", "branch", "apply_diff"),
}

#: Snapshots per example: more only lengthen traces without new situations.
MAX_SNAPSHOTS = 3

#: What each diff property needs. A *diff applier* (GNU patch, git apply,
#: diff-match-patch) declares DIFFS without CORE: it reads, writes and applies
#: diffs but keeps no log, so it has neither ``rollback`` nor ``rollback_diff``.
#: S1 judges applies only and is assessed on it; S2 (rolling an applied diff
#: back) and S3 (snapshots of rolled-away states) need the log and are
#: *not assessed* there, never passed.
DIFF_REQUIRED_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "S1": frozenset({Capability.DIFFS}),
    "S2": frozenset({Capability.DIFFS, Capability.CORE}),
    "S3": frozenset({Capability.DIFFS, Capability.CORE}),
}

#: The capability each optional diff rule needs (as machines.RULE_CAPABILITY):
#: without CORE the S1 machine runs without its rollback rule.
DIFF_RULE_CAPABILITY: dict[str, Capability] = {"rollback": Capability.CORE, "branch": Capability.CORE}


def set_aside(target: Target, state: DiffModelState, operation: DiffOperation) -> bool:
    """Whether a focused target sets this step aside (see ``adapter.KnownFinding``).

    The diff machine hands its own state and operations to the findings: a
    finding meant for diff targets (e.g. :data:`POSITIONAL_ON_MOVED_BASE`)
    takes any state; the core findings look for core operations only, so they
    never match a diff step by accident.
    """
    return bool(target.set_aside) and target.sets_aside(state, operation)  # type: ignore[arg-type]


def _snapshot_moved(state: DiffModelState, operation: ApplyDiff) -> bool:
    index = operation.snapshot
    return 0 <= index < len(state.snapshots) and state.snapshots[index].content != state.content


def _positional_on_moved_base(state: object, operation: object) -> bool:
    return (
        isinstance(state, DiffModelState)
        and isinstance(operation, ApplyDiff)
        and operation.mode == "positional"
        and _snapshot_moved(state, operation)
    )


def _declared_read_changed(state: object, operation: object) -> bool:
    """A content diff on a moved base whose declared reads the rule would find changed."""
    if not (isinstance(state, DiffModelState) and isinstance(operation, ApplyDiff)) or not operation.reads:
        return False
    if operation.mode != "content" or not _snapshot_moved(state, operation):
        return False
    base = state.snapshots[operation.snapshot].cells
    return any(
        0 <= r.start < r.end <= len(base) and locate(base[r.start : r.end], state.current) is None
        for r in operation.reads
    )


#: What a diff applier (a patch file, a dmp patch) cannot be told, set aside by
#: its focused target so that the run reaches the tool's own staleness rule.
POSITIONAL_ON_MOVED_BASE = KnownFinding(
    "positional_on_moved_base",
    "a positional diff on a moved base: a patch cannot say it is positional, so the tool places it by its context",
    _positional_on_moved_base,  # takes any state: the diff machine hands it a DiffModelState
)
DECLARED_READ_CHANGED = KnownFinding(
    "declared_read_changed",
    "a content diff whose declared read changed: a patch cannot carry its read-set, so the tool never checks it",
    _declared_read_changed,
)


class NotGenerable(Exception):
    """A trace step the machine could never have produced (e.g. a diff whose
    hunks no longer fit its snapshot after shrinking changed an earlier step)."""


@dataclass(frozen=True)
class DiffStepRecord(StepRecord):
    """A judged diff-machine step; an apply also records B0 and the diff."""

    snapshot_base: bytes | None = None
    diff: str = ""
    expected_result: str = ""
    imprecise: bool = False

    def context_lines(self) -> list[str]:
        """The lines a person needs to judge an apply: B0, the live base B, the diff."""
        if self.snapshot_base is None:
            return []
        return [
            f"       base B0   {_show(self.snapshot_base)}   (the snapshot the diff was authored on)",
            f"       live B    {_show(self.before)}",
            f"       diff      {self.diff}",
            f"       rule      {self.expected_result}",
        ]


def _show(data: bytes) -> str:
    return "'" + repr(data)[2:-1] + "'"


class DiffSession:
    """One diff model and one SUT, stepped together."""

    def __init__(self, target: Target, config: BufferConfig) -> None:
        self.target = target
        self.config = config
        self.model: DiffModelState = initial_diff_state(config.initial)
        self.sut: SystemUnderTest = target.factory(config)
        self.snapshots: list[object] = []
        self.handles: list[object | None] = []
        self.steps: list[DiffStepRecord] = []
        self.model_accepts = 0
        self.sut_accepts = 0
        self._tracks_depth = Capability.DEPTH in target.capabilities
        self._tracks_revision = Capability.REVISIONS in target.capabilities
        self._revision_base = self.sut.revision() if self._tracks_revision else 0
        if self.sut.read() != config.initial:
            raise HarnessError(f"the SUT did not start with the initial buffer {config.initial!r}")

    def close(self) -> None:
        self.sut.close()

    def observe_model(self, state: DiffModelState, error: str | None) -> Observed:
        return Observed(
            error,
            state.content,
            state.depth if self._tracks_depth else None,
            state.revision if self._tracks_revision else None,
        )

    def observe_sut(self, error: str | None) -> Observed:
        return observe(self.sut, error, self._tracks_depth, self._tracks_revision, self._revision_base)

    def predict(self, operation: DiffOperation) -> DiffOutcome:
        if set_aside(self.target, self.model, operation):
            raise NotGenerable(f"step {len(self.steps) + 1}, {operation.describe()}: a finding set aside")
        try:
            return diff_step(self.model, operation)
        except (ValueError, TypeError) as error:
            raise NotGenerable(f"step {len(self.steps) + 1}, {operation.describe()}: {error}") from None

    def _perform(self, operation: DiffOperation) -> None:
        sut = self.sut
        if isinstance(operation, (Splice, ToolWrite)):
            sut.splice(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, Rollback):
            sut.rollback(operation.steps)
        elif isinstance(operation, TakeSnapshot):
            self.snapshots.append(sut.snapshot())
        elif isinstance(operation, ApplyDiff):
            self.handles.append(None)
            self.handles[-1] = sut.apply_diff(
                self.snapshots[operation.snapshot],
                operation.mode,
                [(h.start, h.end, h.replacement) for h in operation.hunks],
                [(r.start, r.end) for r in operation.reads],
            )
        elif isinstance(operation, RollbackDiff):
            handle = self.handles[operation.applied]
            if handle is None:
                raise NotGenerable(f"apply #{operation.applied} was not applied by the implementation")
            sut.rollback_diff(handle)
        else:  # pragma: no cover - every operation kind is handled above
            raise HarnessError(f"no way to perform {operation!r}")

    def execute(self, operation: DiffOperation) -> DiffStepRecord:
        """Run ``operation`` on both sides; raise :class:`Violation` if the SUT is unsound."""
        before = self.model
        outcome = self.predict(operation)
        expected_error = error_kind(outcome.error) if outcome.error else None
        sut_error: str | None = None
        sut_message = ""
        try:
            self._perform(operation)
        except (HarnessError, NotGenerable):
            raise
        except Exception as error:  # the SUT's answer, judged below
            sut_error = error_kind(error)
            sut_message = f"{type(error).__name__}: {error}"
        actual = self.observe_sut(sut_error)
        expected = self.observe_model(outcome.state, expected_error)
        is_apply = isinstance(operation, ApplyDiff)
        imprecise = False
        matched: DiffModelState | None = outcome.state if actual == expected else None
        if is_apply and outcome.error is None:
            self.model_accepts += 1
            if matched is not None:
                self.sut_accepts += 1
            elif sut_error == "StaleBaseError" and actual == self.observe_model(before, sut_error):
                # Sound but imprecise: refused what the rule allows, changed nothing.
                matched, imprecise = reject_apply(before), True
        record = DiffStepRecord(
            index=len(self.steps) + 1,
            operation=operation,  # type: ignore[arg-type]  # a diff-machine operation
            before=before.content,
            expected=expected,
            actual=actual,
            ok=matched is not None,
            sut_message=sut_message,
            snapshot_base=outcome.diff.base.content if outcome.diff is not None else None,
            diff=outcome.diff.describe() if outcome.diff is not None else "",
            expected_result=_rule_says(before, outcome) if is_apply else "",
            imprecise=imprecise,
        )
        self.steps.append(record)
        if matched is None:
            raise Violation(self.config, list(self.steps), _explain(record, before, operation, outcome))
        self.model = matched
        return record


def _rule_says(before: DiffModelState, outcome: DiffOutcome) -> str:
    if outcome.error is StaleBaseError:
        where = f"region {outcome.conflict.describe()} of B0 changed" if outcome.conflict else outcome.message
        return f"reject (StaleBaseError): {where}"
    return f"accept, giving {_show(outcome.state.content)}"


def _explain(record: DiffStepRecord, before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> str:
    general = explain(record)
    if isinstance(operation, ApplyDiff) and outcome.diff is not None:
        base = outcome.diff.base.content
        story = (
            f"The diff was authored on B0 = {_show(base)} (revision {outcome.diff.base.revision}) and applied "
            f"to the live base B = {_show(before.content)}; S1 says: {record.expected_result}."
        )
        if outcome.diff.base.serial not in before.serials:
            story += (
                " B0's state was rolled away since the snapshot (S3): a revision number or a size"
                " that happens to match cannot vouch for it, only content and history can."
            )
        if outcome.error is not None and record.actual.error is None:
            story += " The implementation applied it anyway: its result rests on bytes the diff's author never saw."
        return f"{story} {general}"
    if isinstance(operation, RollbackDiff):
        return (
            f"Rolling back an applied diff must give back the live base it was applied to "
            f"({_show(outcome.state.content)}), never the author's snapshot. {general}"
        )
    return general


def replay_diff(target: Target, config: BufferConfig, operations: list[DiffOperation]) -> list[DiffStepRecord]:
    """Run a saved diff trace; raise :class:`Violation` at the first unsound step."""
    session = DiffSession(target, config)
    try:
        for operation in operations:
            session.execute(operation)
        return session.steps
    finally:
        session.close()


# -- traces ----------------------------------------------------------------------------------


def diff_trace_json(config: BufferConfig, operations: list[DiffOperation]) -> dict[str, Any]:
    return {
        "schema": DIFF_TRACE_SCHEMA,
        "initial": base64.b64encode(config.initial).decode("ascii"),
        "operations": [diff_operation_to_json(op) for op in operations],
    }


def parse_diff_trace(record: dict[str, Any]) -> tuple[BufferConfig, list[DiffOperation]]:
    """Parse a diff trace (already decoded JSON); ValueError/TypeError saying what is wrong."""
    if record.get("schema") != DIFF_TRACE_SCHEMA:
        raise ValueError(f"not a {DIFF_TRACE_SCHEMA} trace")
    initial = record.get("initial")
    if not isinstance(initial, str):
        raise TypeError("trace field 'initial' must be base64 text")
    operations = record.get("operations")
    if not isinstance(operations, list):
        raise TypeError("trace field 'operations' must be a list")
    return BufferConfig(base64.b64decode(initial, validate=True)), [diff_operation_from_json(op) for op in operations]


def is_diff_trace(text: str) -> bool:
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and record.get("schema") == DIFF_TRACE_SCHEMA


# -- the machine -------------------------------------------------------------------------------


class DiffTracker:
    """What one diff property's run did: examples, steps, situations, precision."""

    def __init__(self, property_id: str) -> None:
        self.property = DIFF_PROPERTIES[property_id]
        self.examples = 0
        self.steps = 0
        self.reached: Counter[str] = Counter()
        self.model_accepts = 0
        self.sut_accepts = 0


@dataclass(frozen=True)
class DiffAlphabets:
    """The bytes each writer uses: the agent (and the initial buffer), a tool, a hunk."""

    agent: bytes = strategies.DIFF_ALPHABET
    tool: bytes = strategies.TOOL_ALPHABET
    hunk: bytes = strategies.HUNK_ALPHABET
    #: Bytes the target adds to every writer's letters (e.g. ``\n`` for a line tool).
    shared: bytes = b""


def diff_alphabets(target: Target) -> DiffAlphabets:
    """The writers' letters for ``target``.

    With no ``Target.alphabet`` they are the defaults. A target that names an
    alphabet keeps each writer's letters that lie in it and adds its other bytes
    to every writer: a line-based diff applier names ``ab12XY\n`` so that the
    buffers, the tool's writes and the hunks all contain line breaks (on text
    without them the whole buffer is one line, and every diff replaces it).
    """
    if target.alphabet is None:
        return DiffAlphabets()
    allowed = target.alphabet
    roles = strategies.DIFF_ALPHABET + strategies.TOOL_ALPHABET + strategies.HUNK_ALPHABET
    shared = bytes(sorted({b for b in allowed if b not in roles}))
    writers = (strategies.DIFF_ALPHABET, strategies.TOOL_ALPHABET, strategies.HUNK_ALPHABET)
    kept = [bytes(b for b in role if b in allowed) for role in writers]
    if not all(kept):
        raise HarnessError(
            f"target {target.name}: alphabet {allowed!r} leaves a writer of the diff machine no letter of {roles!r}"
        )
    return DiffAlphabets(kept[0] + shared, kept[1] + shared, kept[2] + shared, shared)


def _initial_buffers(alphabets: DiffAlphabets) -> st.SearchStrategy[bytes]:
    """Initial buffers for a target that adds shared bytes: lines of distinct
    letters (``a\nb\nc\n``) and short random text over the agent's letters."""
    separator = alphabets.shared[:1]
    lines = st.integers(2, 12).map(lambda n: b"".join(bytes([c]) + separator for c in b"abcdefghijkl"[:n]))
    repeated = st.lists(st.sampled_from(list(alphabets.agent)), min_size=3, max_size=8).map(bytes)
    return st.one_of(lines, repeated)


class DiffMachine(RuleBasedStateMachine):
    """Base of the generated diff machines; :func:`build_diff_machine` attaches the rules."""

    target: Target
    tracker: DiffTracker
    alphabets: DiffAlphabets = DiffAlphabets()
    #: Draw length-preserving edits half the time (the S3 machine: see
    #: strategies.diff_substitutions).
    same_length_edits: bool = False

    def __init__(self) -> None:
        super().__init__()
        self.session: DiffSession | None = None

    @property
    def live(self) -> DiffSession:
        assert self.session is not None
        return self.session

    @initialize(initial=strategies.diff_initial_buffers())
    def start(self, initial: bytes) -> None:
        self.begin(initial)

    def begin(self, initial: bytes) -> None:
        note(f"initial buffer: {initial!r}")
        self.session = DiffSession(self.target, BufferConfig(initial))
        self.tracker.examples += 1

    def run(self, operation: DiffOperation) -> None:
        note(f"step {len(self.live.steps) + 1}: {operation.describe()}")
        before = self.live.model
        outcome = self.live.predict(operation)
        accepts = (self.live.model_accepts, self.live.sut_accepts)
        self.live.execute(operation)
        self.tracker.steps += 1
        self.tracker.model_accepts += self.live.model_accepts - accepts[0]
        self.tracker.sut_accepts += self.live.sut_accepts - accepts[1]
        for situation in self.tracker.property.situations:
            if situation.reached(before, operation, outcome):
                self.tracker.reached[situation.name] += 1

    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()


@initialize(data=st.data())
def start_over_target_alphabet(machine: DiffMachine, data: st.DataObject) -> None:
    """The ``start`` of a machine whose target adds shared bytes (see :func:`diff_alphabets`)."""
    machine.begin(data.draw(_initial_buffers(machine.alphabets), label="initial"))


def _edit(machine: DiffMachine, data: st.DataObject, alphabet: bytes) -> tuple[int, int, bytes]:
    content = machine.live.model.content
    edits = strategies.diff_edits(content, alphabet)
    if machine.same_length_edits and content:
        edits = st.one_of(strategies.diff_substitutions(content, alphabet), edits)
    return data.draw(edits, label="edit")


@precondition(lambda machine: machine.session is not None and len(machine.live.model.snapshots) < MAX_SNAPSHOTS)
@rule()
def snapshot(machine: DiffMachine) -> None:
    machine.run(TakeSnapshot())


@rule(data=st.data())
def agent_edit(machine: DiffMachine, data: st.DataObject) -> None:
    machine.run(Splice(*_edit(machine, data, machine.alphabets.agent)))


@rule(data=st.data())
def tool_write(machine: DiffMachine, data: st.DataObject) -> None:
    machine.run(ToolWrite(*_edit(machine, data, machine.alphabets.tool)))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def rollback(machine: DiffMachine, data: st.DataObject) -> None:
    steps = data.draw(st.integers(1, machine.live.model.depth), label="steps")
    machine.run(Rollback(steps))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def branch(machine: DiffMachine, data: st.DataObject) -> None:
    """Roll back one step and edit again: the new state is as deep as the old one."""
    machine.run(Rollback(1))
    machine.run(Splice(*_edit(machine, data, machine.alphabets.agent)))


@precondition(lambda machine: machine.session is not None and bool(machine.live.model.snapshots))
@rule(data=st.data())
def apply_diff(machine: DiffMachine, data: st.DataObject) -> None:
    snapshots = machine.live.model.snapshots
    index = data.draw(st.integers(0, len(snapshots) - 1), label="snapshot")
    base = snapshots[index].content
    mode = data.draw(strategies.anchor_modes(), label="mode")
    hunks = data.draw(strategies.hunk_lists(base), label="hunks")
    if machine.alphabets.shared:  # the same places, replacements drawn over the target's letters too
        letters = list(machine.alphabets.hunk)
        hunks = [
            (start, end, bytes(data.draw(st.lists(st.sampled_from(letters), min_size=int(end == start), max_size=2))))
            for start, end, _ in hunks
        ]
    reads = data.draw(strategies.read_region_lists(base), label="reads")
    operation = ApplyDiff(
        index,
        mode,  # type: ignore[arg-type]  # drawn from the anchor modes
        tuple(Hunk(*h) for h in hunks),
        tuple(Region(*r) for r in reads),
    )
    if not set_aside(machine.target, machine.live.model, operation):
        machine.run(operation)


@precondition(
    lambda machine: machine.session is not None and any(h is not None for h in machine.live.handles)
)
@rule(data=st.data())
def rollback_diff(machine: DiffMachine, data: st.DataObject) -> None:
    applied = [i for i, handle in enumerate(machine.live.handles) if handle is not None]
    machine.run(RollbackDiff(data.draw(st.sampled_from(applied[::-1]), label="applied diff")))


DIFF_RULES: dict[str, Callable[..., Any]] = {
    "snapshot": snapshot,
    "agent_edit": agent_edit,
    "tool_write": tool_write,
    "rollback": rollback,
    "branch": branch,
    "apply_diff": apply_diff,
    "rollback_diff": rollback_diff,
}


def build_diff_machine(target: Target, property_id: str, tracker: DiffTracker) -> type[DiffMachine]:
    names = [
        name
        for name in RULES_BY_PROPERTY[property_id]
        if name not in DIFF_RULE_CAPABILITY or DIFF_RULE_CAPABILITY[name] in target.capabilities
    ]
    namespace: dict[str, Any] = {name: DIFF_RULES[name] for name in names}
    alphabets = diff_alphabets(target)
    namespace.update(target=target, tracker=tracker, alphabets=alphabets, same_length_edits=property_id == "S3")
    if alphabets.shared:
        namespace["start"] = start_over_target_alphabet
    return type(f"{property_id}DiffMachine", (DiffMachine,), namespace)


# -- shrinking ---------------------------------------------------------------------------------

#: Replays allowed for one counterexample.
REPLAY_BUDGET = 3000


def _renumbered(operations: list[DiffOperation], index: int) -> list[DiffOperation] | None:
    """``operations`` without step ``index``, snapshot and apply numbers fixed
    up; ``None`` if a later step refers to the removed one."""
    removed = operations[index]
    rest = operations[:index] + operations[index + 1 :]
    if isinstance(removed, TakeSnapshot):
        number = sum(isinstance(op, TakeSnapshot) for op in operations[:index])
        result: list[DiffOperation] = []
        for op in rest:
            if isinstance(op, ApplyDiff):
                if op.snapshot == number:
                    return None
                if op.snapshot > number:
                    op = replace(op, snapshot=op.snapshot - 1)
            result.append(op)
        return result
    if isinstance(removed, ApplyDiff):
        number = sum(isinstance(op, ApplyDiff) for op in operations[:index])
        result = []
        for op in rest:
            if isinstance(op, RollbackDiff):
                if op.applied == number:
                    return None
                if op.applied > number:
                    op = RollbackDiff(op.applied - 1)
            result.append(op)
        return result
    return rest


def _simpler(operation: DiffOperation) -> Iterator[DiffOperation]:
    if isinstance(operation, (Splice, ToolWrite)):
        for i in range(len(operation.insert)):
            yield replace(operation, insert=operation.insert[:i] + operation.insert[i + 1 :])
        if operation.delete_length:
            yield replace(operation, delete_length=operation.delete_length - 1)
        if operation.offset:
            yield replace(operation, offset=operation.offset - 1)
    elif isinstance(operation, Rollback) and operation.steps > 1:
        yield Rollback(operation.steps - 1)
    elif isinstance(operation, ApplyDiff):
        for i in range(len(operation.reads)):
            yield replace(operation, reads=operation.reads[:i] + operation.reads[i + 1 :])
        if len(operation.hunks) > 1:
            for i in range(len(operation.hunks)):
                yield replace(operation, hunks=operation.hunks[:i] + operation.hunks[i + 1 :])
        for i, hunk in enumerate(operation.hunks):
            for j in range(len(hunk.replacement)):
                smaller = Hunk(hunk.start, hunk.end, hunk.replacement[:j] + hunk.replacement[j + 1 :])
                yield replace(operation, hunks=operation.hunks[:i] + (smaller,) + operation.hunks[i + 1 :])
        for i, region in enumerate(operation.reads):
            if region.end - region.start > 1:
                for shorter in (Region(region.start + 1, region.end), Region(region.start, region.end - 1)):
                    yield replace(operation, reads=operation.reads[:i] + (shorter,) + operation.reads[i + 1 :])


def _candidates(
    config: BufferConfig, operations: list[DiffOperation]
) -> Iterator[tuple[BufferConfig, list[DiffOperation]]]:
    for index in range(len(operations)):
        shorter = _renumbered(operations, index)
        if shorter is not None:
            yield config, shorter
    # A block of consecutive steps (edits that only set up offsets a later diff
    # was drawn against must go together, or the diff no longer fits its base).
    for length in range(len(operations) - 1, 1, -1):
        for first in range(len(operations) - length + 1):
            block: list[DiffOperation] | None = operations
            for index in range(first + length - 1, first - 1, -1):
                block = _renumbered(block, index) if block is not None else None
            if block is not None:
                yield config, block
    for first in range(len(operations)):
        for second in range(first + 1, len(operations)):
            without_second = _renumbered(operations, second)
            both = _renumbered(without_second, first) if without_second is not None else None
            if both is not None:
                yield config, both
    for index, operation in enumerate(operations):
        for simpler in _simpler(operation):
            yield config, operations[:index] + [simpler] + operations[index + 1 :]
    initial = config.initial
    for i in range(len(initial)):
        yield replace(config, initial=initial[:i] + initial[i + 1 :]), operations


def generable(config: BufferConfig, operations: list[DiffOperation]) -> bool:
    """Whether the machine could have drawn this trace: no empty buffer, no
    edit that changes nothing, no hunk that inserts nothing at a point.
    Shrinking must not wander into steps that only confuse a reader."""
    if not config.initial:
        return False
    for operation in operations:
        if isinstance(operation, (Splice, ToolWrite)) and not (operation.delete_length or operation.insert):
            return False
        if isinstance(operation, ApplyDiff) and any(
            h.start == h.end and not h.replacement for h in operation.hunks
        ):
            return False
    return True


def minimise_diff(target: Target, violation: Violation) -> Violation:
    """The smallest failing trace reachable from ``violation`` by greedy deletions
    and simplifications, each checked by deterministic replay."""
    return greedy_minimise(
        violation,
        candidates=_candidates,
        generable=generable,
        replay=lambda config, operations: replay_diff(target, config, operations),
        not_a_trace=(NotGenerable,),
        budget=REPLAY_BUDGET,
    )


# -- certification -------------------------------------------------------------------------------


def certify_diff_property(target: Target, property_id: str, profile: Profile, seed: int) -> PropertyResult:
    """Run the diff machine of S1, S2 or S3 and decide its verdict.

    The verdict is soundness; the precision figure (``figures["precision"]``,
    the share of rule-accepted diffs the SUT accepted) never makes it fail.
    """
    prop = DIFF_PROPERTIES[property_id]
    missing = DIFF_REQUIRED_CAPABILITIES[property_id] - target.capabilities
    if missing:
        names = ", ".join(sorted(c.value for c in missing))
        return PropertyResult(property_id, "not_assessed", prop.title, reason=f"the target lacks the capability: {names}")
    tracker = DiffTracker(property_id)
    machine = build_diff_machine(target, property_id, tracker)
    result = run_to_verdict(
        machine, tracker, prop.situations, PropertyResult(property_id, "passed", prop.title),
        target=target, profile=profile, seed=seed, minimise=lambda violation: minimise_diff(target, violation),
    )
    result.figures = precision_figures(tracker.model_accepts, tracker.sut_accepts)
    return result


def precision_figures(model_accepts: int, sut_accepts: int) -> dict[str, float]:
    """Precision: the share of the diffs the rule accepts that the SUT accepted."""
    figures: dict[str, float] = {"rule_accepts": float(model_accepts), "sut_accepts": float(sut_accepts)}
    if model_accepts:
        figures["precision"] = round(sut_accepts / model_accepts, 4)
    return figures

