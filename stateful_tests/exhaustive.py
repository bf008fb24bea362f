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

from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import operation_to_json
from rollcert.model.reference import POLICIES
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import REQUIRED_CAPABILITIES
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
    ``property_id`` is the smallest-ID property whose machine could have issued
    every operation of that trace (``R0`` if none).
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

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float(self.states)

    def summary(self) -> str:
        """The one line a certificate shows (SPEC §6 / issue 5)."""
        verdict = self.verdict if self.verdict != "violated" else f"violated ({self.property_id})"
        return (
            f"exhaustive: depth {self.depth}, {self.states} states, {verdict}"
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


# -- which property a counterexample belongs to ------------------------------------------------


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


def attribute(target: Target, config: BufferConfig, operations: Sequence[Operation]) -> str:
    """The property a counterexample is reported against.

    Candidates are the properties the target can be assessed on whose machine
    can issue every operation of the trace. Only the R6 machine (and R0's)
    builds bounded buffers, and R6's builds nothing else, so a trace on a
    bounded buffer can only be R6's, one on an unbounded buffer anything but.
    Among the candidates, those whose operation set strictly contains another
    candidate's are dropped (the most specific machine wins: a splice and a
    rollback(1) are R2's trace, not R1's, although R1's machine can issue them
    too); of the rest, the smallest ID wins. No candidate: ``R0``, whose machine
    issues everything.
    """
    used = {_operation_kind(op) for op in operations}
    candidates: dict[str, frozenset[str]] = {}
    for property_id in sorted(RULES_BY_PROPERTY):
        if not REQUIRED_CAPABILITIES[property_id] <= target.capabilities:
            continue
        if (property_id == "R6") != (config.capacity is not None):
            continue
        kinds = machine_kinds(property_id)
        if used <= kinds:
            candidates[property_id] = kinds
    specific = [
        property_id
        for property_id, kinds in candidates.items()
        if not any(other < kinds for other in candidates.values())
    ]
    return min(specific, default="R0")


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


def _readings_key(
    config: BufferConfig, readings: list[ModelState], observed: tuple[object, ...]
) -> tuple[object, ...]:
    """The key of a node: the keys of all its readings (usually one)."""
    return tuple(_state_key(config, state, observed) for state in readings)


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


class _Budget(Exception):
    """The state or time budget ran out."""


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
) -> ExhaustiveResult:
    """Try every trace of up to ``depth`` operations; stop at the first (shortest) violation.

    ``properties`` narrows the operation alphabet to the union of those
    properties' machine rules (``None``: every operation the target supports).
    ``bounded=False`` leaves out the bounded starting configurations. If
    ``max_states`` judged steps or ``time_budget_s`` seconds run out before a
    level is finished, the verdict is ``unknown`` and ``depth`` is the last
    level completed.
    """
    started = time.perf_counter()
    capabilities = target.capabilities
    kinds: frozenset[str] | None = None
    if properties is not None and "R0" not in properties:
        kinds = frozenset(kind for pid in properties for kind in machine_kinds(pid))
    configs = configurations(target, initial_buffers)
    if not bounded:
        configs = [c for c in configs if c.capacity is None]
    states = 0
    seen: set[tuple[object, ...]] = set()
    frontier: list[_Node] = []
    completed = 0

    def result(verdict: Verdict, **extra: Any) -> ExhaustiveResult:
        return ExhaustiveResult(
            target=target.name,
            verdict=verdict,
            depth=extra.pop("reached", completed),
            requested_depth=depth,
            states=states,
            distinct_states=len(seen),
            seconds=time.perf_counter() - started,
            **extra,
        )

    try:
        for config in configs:
            session = Session(ROLLBACK, target, config)
            try:
                key = _readings_key(config, session.readings, (session.observe_sut(None),))
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
                for operation in operations_at(
                    node.state, capabilities, alphabet=alphabet, max_length=max_length, kinds=kinds, scope=scope
                ):
                    if target.sets_aside(node.state, operation):
                        continue  # a known finding the target sets aside, as the machines skip it
                    if states >= max_states or (deadline is not None and time.perf_counter() > deadline):
                        raise _Budget
                    states += 1
                    session = _fast_forward(target, node)
                    try:
                        record = session.execute(operation)
                    except Violation:
                        # Judge the whole trace again, every step through the
                        # judge, so the counterexample carries every step.
                        return _confirm(result, target, node, operation, level)
                    finally:
                        session.close()
                    if last_level:
                        continue
                    actual = record.actual
                    key = _readings_key(node.config, session.readings, (actual.buffer, actual.depth, actual.revision))
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
    return result("passed")


def _fast_forward(target: Target, node: _Node) -> Session[ModelState, Operation, Outcome]:
    """A session whose SUT has performed ``node.trace`` again, and whose model is ``node.state``.

    The prefix was judged when the node was made, so it is replayed on the SUT
    alone (about half the cost of judging it again); only the new operation is
    judged. A SUT that is not deterministic is caught by :func:`_confirm`,
    which replays a failing trace through the judge from the start.
    """
    session: Session[ModelState, Operation, Outcome] = Session(ROLLBACK, target, node.config)
    try:
        for operation in node.trace:
            try:
                ROLLBACK.perform(session, operation)
            except HarnessError:
                raise
            except Exception:  # a documented refusal, judged when the node was made
                continue
    except BaseException:
        session.close()
        raise
    session.readings = list(node.readings)
    return session


def _confirm(
    result: Any, target: Target, node: _Node, operation: Operation, level: int
) -> ExhaustiveResult:
    trace = [*node.trace, operation]
    try:
        replay(ROLLBACK, target, node.config, trace)
    except Violation as violation:
        if len(violation.steps) < len(trace):
            return result(  # type: ignore[no-any-return]
                "error", reason="the SUT is not deterministic: a prefix that passed before failed on replay"
            )
        return result(  # type: ignore[no-any-return]
            "violated",
            reached=level,
            violation=violation,
            property_id=attribute(target, node.config, trace),
        )
    return result(  # type: ignore[no-any-return]
        "error", reason="the SUT is not deterministic: a failing trace passed on replay"
    )
