"""Bounded exhaustive search: every operation sequence up to depth k, breadth-first.

The state machines sample; this module enumerates. Under the *small-scope
hypothesis* (the bet TLC and Alloy make) most bugs of a rollback log already
show on buffers of a few bytes over a two-letter alphabet, within a handful of
operations. So instead of drawing traces at random we try every trace up to a
depth ``k`` over a finite operation alphabet derived from the model's current
state, against any :class:`~rollcert.targets.adapter.Target`, judging each step
through the same :class:`~rollcert.stateful_tests.judge.Session` the machines use.

Breadth-first order gives the search its one guarantee: the first violation it
meets is a *shortest* counterexample (within the operation alphabet below),
with no shrinking at all. A SUT cannot be cloned (it may live in another
process), so each frontier node is rebuilt by replaying its trace from a fresh
buffer; at depth <= 5 that costs a few judged steps per node.

What is enumerated at each node (all of it gated by the target's capabilities,
exactly as :data:`rollcert.stateful_tests.machines.RULE_CAPABILITY` gates the rules):

- splices, in one of two scopes (see :func:`_splices`). ``wide``: every offset
  ``0..len``, every delete length ``0..min(2, len - o)``, and ``s`` in
  {``b""``, each letter, each 2-byte substring already in the buffer}: ~45
  splices on a 3-byte buffer, so depth 3 is already ~0.9 M judged steps
  (~40 s) and depth 4 is out of reach. ``compact`` (the default): at every
  offset one insert, one delete, one overwrite, plus a no-op record, a 2-byte
  delete and a repeated-text insert: depth 4 is ~0.5 M steps (~20-27 s for the
  bundled buffer). The result may not exceed ``max_length`` bytes;
- ``rollback(n)`` for ``n`` in ``1..depth + 1`` (the last one is one past the
  horizon, and must be refused);
- ``checkpoint()``, ``rollback_to(#i)`` for every checkpoint taken so far, and
  ``rollback_to`` a foreign buffer's checkpoint;
- ``arm_journal_fault()`` when no fault is armed;
- out-of-log writes of one letter inserted or one byte deleted (``compact``:
  at the two ends only), when the current depth carries no barrier yet (as
  the R4 machine does);
- ``adopt_current()``;
- for targets that honour bounded journals: capacities 1 and 2 under both
  policies, as extra starting configurations.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Literal

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import DiffModelState
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import POLICIES
from rollcert.model.reference import ModelState
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Unjudgeable
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.machines import RULE_CAPABILITY
from rollcert.stateful_tests.machines import RULES_BY_PROPERTY
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target

Verdict = Literal["passed", "violated", "unknown", "error"]

#: Starting buffers: empty, two distinct letters, and a repeat (anchors match twice).
DEFAULT_INITIAL_BUFFERS: tuple[bytes, ...] = (b"", b"ab", b"aab")
DEFAULT_ALPHABET = b"ab"
#: Longest buffer the search creates; longer ones add states, not new bug shapes.
DEFAULT_MAX_LENGTH = 5
#: Longest delete of one splice.
MAX_DELETE = 2
#: Bounded configurations tried for targets with the ``bounded`` capability.
BOUNDED_CAPACITIES = (1, 2)
DEFAULT_MAX_STATES = 2_000_000

#: Which machine rules can issue each operation kind. ``rollback(1)`` is issued by
#: the single-step rule as well as the multi-step and branch rules; ``rollback(n)``
#: with n >= 2 only by the latter two. A foreign token is drawn by ``rollback_to``.
_RULES_OF_KIND: dict[str, tuple[str, ...]] = {
    "splice": ("splice",),
    "checkpoint": ("checkpoint",),
    "rollback_to": ("rollback_to",),
    "rollback_to_foreign": ("rollback_to",),
    "arm_journal_fault": ("arm_journal_fault",),
    "out_of_log_write": ("out_of_log_write",),
    "adopt_current": ("adopt_current",),
}


@dataclass(frozen=True)
class ExhaustiveResult:
    """The outcome of one search.

    ``depth`` is the deepest level explored completely (for a violation: the
    length of the counterexample). ``states`` counts judged nodes (every
    operation tried from every kept node), ``distinct_states`` the nodes kept
    after deduplication. ``violation`` is the judge's own exception, so it
    carries ``.config`` and ``.steps`` like any counterexample of the suite;
    ``property_id`` is the first property whose own clause the failing step
    broke (``R0`` if none: SPEC §6a attribution).
    """

    target: str
    verdict: Verdict
    depth: int
    requested_depth: int
    states: int
    distinct_states: int
    seconds: float
    violation: Violation | None = None
    property_id: str | None = None
    reason: str = ""
    #: The property family searched: "rollback" (R0-R6) or "diffs" (S1-S3).
    family: str = "rollback"

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float(self.states)

    def summary(self) -> str:
        """The one line a certificate shows (SPEC §6 / issue 5)."""
        verdict = self.verdict if self.verdict != "violated" else f"violated ({self.property_id})"
        family = "" if self.family == "rollback" else f" ({self.family}: S1-S3)"
        return (
            f"exhaustive{family}: depth {self.depth}, {self.states} states, {verdict}"
            f" [{self.distinct_states} distinct, {self.seconds:.2f} s, {self.states_per_second:,.0f} states/s]"
        )

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "target": self.target,
            "verdict": self.verdict,
            "depth": self.depth,
            "requested_depth": self.requested_depth,
            "states": self.states,
            "distinct_states": self.distinct_states,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "reason": self.reason,
            "family": self.family,
        }
        if self.violation is not None:
            config = self.violation.config
            record["counterexample"] = {
                "property": self.property_id,
                "initial": base64.b64encode(config.initial).decode("ascii"),
                "capacity": config.capacity,
                "policy": config.policy,
                "steps": [operation_to_json(step.operation) for step in self.violation.steps],
                "explanation": self.violation.explanation,
            }
        return record


# -- the operation alphabet -------------------------------------------------------------


def _allowed(kind_rule: str, capabilities: frozenset[Capability]) -> bool:
    """Whether the target declared what ``kind_rule`` sends: rollbacks need the
    core, a splice the core or diffs (a diffs-only server takes it as a write),
    everything else its own capability. Nothing undeclared is ever sent."""
    if kind_rule in ("rollback_one", "rollback_many"):
        return Capability.CORE in capabilities
    if kind_rule == "splice":
        return bool({Capability.CORE, Capability.DIFFS} & capabilities)
    needed = RULE_CAPABILITY.get(kind_rule)
    return needed is None or needed in capabilities


def _inserts(current: bytes, alphabet: bytes) -> list[bytes]:
    """Empty, each letter, and each 2-byte piece of the buffer (repeats), simplest first."""
    found: list[bytes] = [b""] + [bytes([letter]) for letter in alphabet]
    for start in range(len(current) - 1):
        piece = current[start : start + 2]
        if piece not in found:
            found.append(piece)
    return found


Scope = Literal["compact", "wide"]


def _splices(current: bytes, alphabet: bytes, max_length: int, scope: Scope) -> list[Splice]:
    """The splices tried on ``current``.

    ``wide``: every offset, every delete length up to ``MAX_DELETE``, and every
    insert of :func:`_inserts` (about 45 splices on a 3-byte buffer: depth 3
    already means ~0.9 M judged steps). ``compact`` keeps one representative of
    each shape the bug classes need, at every offset: insert a letter
    (length grows), delete a byte (length shrinks), overwrite a byte with the
    other letter (same length), plus one record that changes nothing
    (``splice(0, 0, b"")``), one two-byte delete at 0 and one insert of a copy
    of the buffer's first two bytes at the end (repeated text).
    """
    length = len(current)
    found: list[Splice] = []
    if scope == "wide":
        inserts = _inserts(current, alphabet)
        for offset in range(length + 1):
            for delete_length in range(min(MAX_DELETE, length - offset) + 1):
                found.extend(Splice(offset, delete_length, insert) for insert in inserts)
    else:
        first = alphabet[:1]
        found.append(Splice(0, 0, b""))
        found.extend(Splice(offset, 0, first) for offset in range(length + 1))
        found.extend(Splice(offset, 1, b"") for offset in range(length))
        for offset in range(length):
            other = next((bytes([c]) for c in alphabet if c != current[offset]), None)
            if other is not None:
                found.append(Splice(offset, 1, other))
        if length >= 2:
            found.append(Splice(0, 2, b""))
            found.append(Splice(length, 0, current[:2]))
    return [s for s in found if length - s.delete_length + len(s.insert) <= max_length]


def _out_of_log_writes(current: bytes, alphabet: bytes, max_length: int, scope: Scope) -> list[OutOfLogWrite]:
    """One letter in or one byte out: each changes the bytes (a write that changes
    nothing is no divergence, and the rules do not ask to see it). ``compact``
    tries them at the two ends only."""
    length = len(current)
    offsets = range(length + 1) if scope == "wide" else sorted({0, length})
    letters = alphabet if scope == "wide" else alphabet[-1:]
    found: list[OutOfLogWrite] = []
    if length + 1 <= max_length:
        found.extend(OutOfLogWrite(offset, 0, bytes([letter])) for offset in offsets for letter in letters)
    found.extend(OutOfLogWrite(offset, 1, b"") for offset in offsets if offset < length)
    return found


def operations_at(
    state: ModelState,
    capabilities: frozenset[Capability],
    *,
    alphabet: bytes = DEFAULT_ALPHABET,
    max_length: int = DEFAULT_MAX_LENGTH,
    kinds: frozenset[str] | None = None,
    scope: Scope = "compact",
) -> list[Operation]:
    """Every operation tried from ``state``, simplest first.

    Derived from the *model* state, so the set is finite and the same for every
    target; ``kinds`` (operation kinds) narrows it for a focused search.
    """

    def wanted(kind: str) -> bool:
        return (kinds is None or kind in kinds) and _allowed(kind, capabilities)

    found: list[Operation] = []
    if wanted("splice"):
        found.extend(_splices(state.current, alphabet, max_length, scope))
    if wanted("rollback_one"):
        found.append(Rollback(1))
    if wanted("rollback_many"):
        found.extend(Rollback(steps) for steps in range(2, state.depth + 2))
    if wanted("checkpoint"):
        found.append(TakeCheckpoint())
    if wanted("rollback_to"):
        found.extend(RollbackTo(index) for index in range(len(state.checkpoints)))
    if wanted("rollback_to_foreign") and _allowed("rollback_to", capabilities):
        found.append(RollbackToForeign())
    if wanted("arm_journal_fault") and not state.fault_armed:
        found.append(ArmJournalFault())
    if wanted("out_of_log_write") and state.depth not in state.barriers:
        found.extend(_out_of_log_writes(state.current, alphabet, max_length, scope))
    if wanted("adopt_current"):
        found.append(AdoptCurrent())
    return found


#: Snapshots per trace of the diff search (each multiplies the diffs tried).
MAX_DIFF_SNAPSHOTS = 2


def _diffs_on(snapshot: int, base: bytes) -> list[ApplyDiff]:
    """The diffs tried on snapshot ``snapshot`` of ``base``: one byte rewritten
    (content-anchored, and positional) at every offset, an insert at the start,
    and each content diff once more with a read of the first byte: enough for a
    stale read, a moved hunk and a positional diff on a moved base (S1)."""
    found: list[ApplyDiff] = [ApplyDiff(snapshot, "content", (Hunk(0, 0, b"Z"),))]
    for offset in range(len(base)):
        hunk = (Hunk(offset, offset + 1, b"Z"),)
        found.append(ApplyDiff(snapshot, "content", hunk))
        found.append(ApplyDiff(snapshot, "positional", hunk))
        if offset:
            found.append(ApplyDiff(snapshot, "content", hunk, (Region(0, 1),)))
    return found


def diff_operations_at(
    state: DiffModelState,
    capabilities: frozenset[Capability],
    *,
    alphabet: bytes = DEFAULT_ALPHABET,
    max_length: int = DEFAULT_MAX_LENGTH,
) -> list[DiffOperation]:
    """Every operation the diff search tries from ``state`` (S1-S3), simplest
    first, only of kinds the target declared: the agent's edits and a tool's
    (compact splices), a snapshot, a diff on every snapshot, and with the core
    a rollback of one step and of every applied diff still standing."""
    edits = _splices(state.content, alphabet, max_length, "compact")
    found: list[DiffOperation] = []
    if len(state.snapshots) < MAX_DIFF_SNAPSHOTS:
        found.append(TakeSnapshot())
    found.extend(edits)
    found.extend(ToolWrite(e.offset, e.delete_length, e.insert) for e in edits)
    for index, snapshot in enumerate(state.snapshots):
        found.extend(_diffs_on(index, snapshot.content))
    if Capability.CORE in capabilities:
        if state.depth:
            found.append(Rollback(1))
        found.extend(RollbackDiff(index) for index, made in enumerate(state.applied) if made is not None)
    return found


def configurations(target: Target, initial_buffers: Iterable[bytes]) -> list[BufferConfig]:
    """Unbounded buffers first (the simpler counterexamples), then bounded ones."""
    buffers = list(initial_buffers)
    configs = [BufferConfig(initial) for initial in buffers]
    if Capability.BOUNDED in target.capabilities:
        configs.extend(
            BufferConfig(initial, capacity, policy)
            for capacity in BOUNDED_CAPACITIES
            for policy in (POLICIES if target.history_bound is None else (target.history_bound.policy,))
            for initial in buffers
        )
    return configs


# -- which operations a property's machine issues -----------------------------------------------


def _operation_kind(operation: Operation) -> str:
    """The kind of an operation, with ``rollback(1)`` told apart from ``rollback(n >= 2)``."""
    if isinstance(operation, Rollback):
        return "rollback_one" if operation.steps == 1 else "rollback_many"
    return operation.kind


def machine_kinds(property_id: str) -> frozenset[str]:
    """The operation kinds a property's machine can issue (see :func:`_operation_kind`)."""
    rules = set(RULES_BY_PROPERTY.get(property_id, ()))
    kinds = {kind for kind, kind_rules in _RULES_OF_KIND.items() if rules.intersection(kind_rules)}
    # rollback(1) comes from the single-step rule and from the multi-step and
    # branch rules; rollback(n >= 2) only from the latter two.
    if rules.intersection({"rollback_one", "rollback_many", "branch"}):
        kinds.add("rollback_one")
    if rules.intersection({"rollback_many", "branch"}):
        kinds.add("rollback_many")
    return frozenset(kinds)


# -- the search -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    config: BufferConfig
    trace: tuple[Operation, ...]
    #: Every model state consistent with what the SUT showed (see judge.Session).
    readings: tuple[ModelState, ...]

    @property
    def state(self) -> ModelState:
        return self.readings[0]


def _state_key(config: BufferConfig, state: ModelState, observed: tuple[object, ...]) -> tuple[object, ...]:
    """What makes two nodes the same, for deduplication.

    Kept whole: every state in the history, the live edits (the inverse
    records a SUT holds: two splices that produce the same bytes leave
    *different* records, and FIFO or anchor bugs depend on which), barriers,
    capacity, policy, the armed fault, the revision, and every checkpoint with
    the depth it was taken at (a dead checkpoint whose depth comes back is
    exactly the ABA lure). Normalised: serial *numbers* are renamed to their
    position in the live history (a dead checkpoint's serial becomes ``None``),
    and ``next_serial`` is dropped. That is safe for the model: it only ever
    compares serials for equality, dead serials never come back, and a fresh
    serial is fresh whatever its number. The SUT's observation (bytes, depth,
    revision) is in the key too, and so is the starting configuration.

    The one assumption: a SUT's future behaviour is a function of this key.
    A SUT with hidden state outside it (say, a record it kept from a branch
    that was rolled away) could behave differently from the node that was kept;
    keeping the edits, checkpoints and revision in the key makes that as narrow
    as we can without giving up deduplication altogether.
    """
    rank = {serial: index for index, serial in enumerate(state.serials)}
    checkpoints = tuple((rank.get(serial), depth) for serial, depth in state.checkpoints)
    return (
        config.capacity,
        config.policy,
        state.states,
        state.edits,
        state.revision,
        state.barriers,
        state.fault_armed,
        checkpoints,
        observed,
    )


def _diff_state_key(config: BufferConfig, state: DiffModelState, observed: tuple[object, ...]) -> tuple[object, ...]:
    """As :func:`_state_key`, for the diff model: every state's cells (their
    identities are what the staleness rule traces), the revision, each
    snapshot's cells with its state's place in the live history (``None``: rolled
    away), the applied diffs likewise, and what the SUT showed."""
    rank = {serial: index for index, serial in enumerate(state.serials)}
    snapshots = tuple((s.cells, s.revision, rank.get(s.serial)) for s in state.snapshots)
    applied = tuple(None if made is None else (rank.get(made[0]), made[1]) for made in state.applied)
    return (config.initial, state.states, state.revision, snapshots, applied, observed)


class _Budget(Exception):
    """The state or time budget ran out."""


def search_family(target: Target, properties: Iterable[str] | None = None) -> str:
    """The family a search of ``target`` explores by default: the diff family when
    only diff properties are asked for, or when the target has diffs and no core
    (a diffs-only server: nothing of the rollback family can be sent to it);
    the rollback family otherwise."""
    wanted = set(properties) if properties is not None else None
    if wanted and all(pid in DIFFS.property_ids for pid in wanted):
        return DIFFS.name
    if Capability.CORE not in target.capabilities and Capability.DIFFS in target.capabilities:
        return DIFFS.name
    return ROLLBACK.name


def explore(
    target: Target,
    *,
    depth: int,
    initial_buffers: Iterable[bytes] = DEFAULT_INITIAL_BUFFERS,
    alphabet: bytes = DEFAULT_ALPHABET,
    properties: Iterable[str] | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    time_budget_s: float | None = None,
    max_length: int = DEFAULT_MAX_LENGTH,
    bounded: bool = True,
    scope: Scope = "compact",
    family: str | None = None,
) -> ExhaustiveResult:
    """Try every trace of up to ``depth`` operations; stop at the first (shortest) violation.

    ``family`` is the property family searched ("rollback", R0-R6, or "diffs",
    S1-S3; default: :func:`search_family`). ``properties`` narrows the rollback
    family's operation alphabet to the union of those properties' machine rules
    (``None``: every operation the target supports). Either way only operations
    of capabilities the target declared are sent. ``bounded=False`` leaves out
    the bounded starting configurations. If ``max_states`` judged steps or
    ``time_budget_s`` seconds run out before a level is finished, the verdict is
    ``unknown`` and ``depth`` is the last level completed.
    """
    started = time.perf_counter()
    capabilities = target.capabilities
    chosen = family or search_family(target, properties)
    if chosen not in (ROLLBACK.name, DIFFS.name):
        raise ValueError(f"no exhaustive search of the {chosen!r} family (rollback or diffs)")
    judged: PropertyFamily[Any, Any, Any]
    if chosen == DIFFS.name:
        judged = DIFFS
        configs = [BufferConfig(initial) for initial in initial_buffers]

        def operations(state: Any) -> list[Any]:
            return list(diff_operations_at(state, capabilities, alphabet=alphabet, max_length=max_length))

        state_key: Any = _diff_state_key
    else:
        judged = ROLLBACK
        kinds: frozenset[str] | None = None
        if properties is not None and "R0" not in properties:
            kinds = frozenset(kind for pid in properties for kind in machine_kinds(pid))
        configs = configurations(target, initial_buffers)
        if not bounded:
            configs = [c for c in configs if c.capacity is None]

        def operations(state: Any) -> list[Any]:
            return list(
                operations_at(state, capabilities, alphabet=alphabet, max_length=max_length, kinds=kinds, scope=scope)
            )

        state_key = _state_key
    states = 0
    seen: set[tuple[object, ...]] = set()
    frontier: list[_Node] = []
    completed = 0
    unjudged = 0

    def readings_key(config: BufferConfig, readings: Sequence[Any], observed: tuple[object, ...]) -> tuple[object, ...]:
        return tuple(state_key(config, state, observed) for state in readings)

    def result(verdict: Verdict, **extra: Any) -> ExhaustiveResult:
        return ExhaustiveResult(
            target=target.name,
            verdict=verdict,
            depth=extra.pop("reached", completed),
            requested_depth=depth,
            states=states,
            distinct_states=len(seen),
            seconds=time.perf_counter() - started,
            family=chosen,
            **extra,
        )

    try:
        for config in configs:
            session = Session(judged, target, config)
            try:
                key = readings_key(config, session.readings, (session.observe_sut(None),))
            finally:
                session.close()
            if key not in seen:
                seen.add(key)
                frontier.append(_Node(config, (), tuple(session.readings)))
    except HarnessError as error:
        return result("error", reason=f"the adapter or the SUT broke: {error}")

    deadline = None if time_budget_s is None else started + time_budget_s
    for level in range(1, depth + 1):
        next_frontier: list[_Node] = []
        last_level = level == depth
        try:
            for node in frontier:
                for operation in operations(node.state):
                    if target.sets_aside(node.state, operation):
                        continue  # a known finding the target sets aside, as the machines skip it
                    if judged is DIFFS:
                        try:
                            judged.predict(node.state, operation)
                        except NotGenerable:
                            continue  # not a step the diff machines could take (a diff that does not fit)
                    if states >= max_states or (deadline is not None and time.perf_counter() > deadline):
                        raise _Budget
                    states += 1
                    session = _fast_forward(judged, target, node)
                    try:
                        record = session.execute(operation)
                    except Violation:
                        # Judge the whole trace again, every step through the
                        # judge, so the counterexample carries every step.
                        return _confirm(judged, result, target, node, operation, level)
                    except Unjudgeable:
                        unjudged += 1  # neither a pass nor a violation: the run cannot say passed
                        continue
                    finally:
                        session.close()
                    if last_level:
                        continue
                    actual = record.actual
                    key = readings_key(node.config, session.readings, (actual.buffer, actual.depth, actual.revision))
                    if key in seen:
                        continue
                    seen.add(key)
                    next_frontier.append(_Node(node.config, (*node.trace, operation), tuple(session.readings)))
        except _Budget:
            return result("unknown", reason=f"the budget ran out during level {level}")
        except HarnessError as error:
            return result("error", reason=f"the adapter or the SUT broke: {error}")
        completed = level
        frontier = next_frontier
    if unjudged:
        return result("unknown", reason=f"{unjudged} traces could not be judged within the judge's bound on readings")
    return result("passed")


def _fast_forward(family: PropertyFamily[Any, Any, Any], target: Target, node: _Node) -> Session[Any, Any, Any]:
    """A session whose SUT has performed ``node.trace`` again, and whose model is ``node.state``.

    The prefix was judged when the node was made, so it is replayed on the SUT
    alone (about half the cost of judging it again); only the new operation is
    judged. A SUT that is not deterministic is caught by :func:`_confirm`,
    which replays a failing trace through the judge from the start.
    """
    session: Session[Any, Any, Any] = Session(family, target, node.config)
    try:
        for operation in node.trace:
            refusal: Exception | None = None
            try:
                family.perform(session, operation)
            except HarnessError:
                raise
            except Exception as error:  # a documented refusal, judged when the node was made
                refusal = error
            if family.has_second_readings:
                session.remember(operation, refusal)  # what a second look at a failing step needs
    except BaseException:
        session.close()
        raise
    session.readings = list(node.readings)
    session.lineage_optional = [False] * len(node.readings)
    return session


def _confirm(
    family: PropertyFamily[Any, Any, Any], result: Any, target: Target, node: _Node, operation: Any, level: int
) -> ExhaustiveResult:
    trace = [*node.trace, operation]
    try:
        replay(family, target, node.config, trace)
    except Violation as violation:
        if len(violation.steps) < len(trace):
            return result(  # type: ignore[no-any-return]
                "error", reason="the SUT is not deterministic: a prefix that passed before failed on replay"
            )
        # Reported under the rule whose clause the failing step broke (SPEC §6a).
        return result(  # type: ignore[no-any-return]
            "violated",
            reached=level,
            violation=violation,
            property_id=violation.broken[0],
        )
    return result(  # type: ignore[no-any-return]
        "error", reason="the SUT is not deterministic: a failing trace passed on replay"
    )
