"""One Hypothesis rule-based state machine per property.

Each property is exercised by the operations that can break it, and only
those, so a violation found by the R2 machine is an R2 violation (R0, the
master property, uses every rule). Rules whose capability the target lacks are
left out; a property whose required capabilities are missing is not assessed.

The machine delegates every step to :class:`rollcert.stateful_tests.judge.Session`,
notes each operation (so Hypothesis prints a readable trace), and counts the
situations of :mod:`rollcert.model.properties` that the run reached, so a run that never
got anywhere interesting reports ``unknown`` instead of ``passed``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import assume, note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from rollcert.model.operations import (
    AdoptCurrent,
    ArmJournalFault,
    Compact,
    CorruptRecord,
    CrashDuring,
    Interruptible,
    Operation,
    OutOfLogWrite,
    Restart,
    Rollback,
    RollbackTo,
    RollbackToForeign,
    Splice,
    TakeCheckpoint,
)
from rollcert.model.properties import PROPERTIES, Property
from rollcert.model.reference import splice_bytes
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.adapter import BufferConfig, Capability, Target
from rollcert.stateful_tests.judge import Session

#: The rules of each property's machine (R0 gets all of them).
RULES_BY_PROPERTY: dict[str, tuple[str, ...]] = {
    "R1": ("splice", "rollback_one", "arm_journal_fault"),
    "R2": ("splice", "rollback_one"),
    "R3": ("splice", "rollback_many", "checkpoint", "rollback_to", "branch"),
    # rollback_to is a rollback too: it must meet an out-of-log write the same way.
    "R4": (
        "splice",
        "rollback_many",
        "out_of_log_write",
        "adopt_current",
        "checkpoint",
        "rollback_to",
        "write_behind_checkpoint",
    ),
    "R6": ("splice", "rollback_many", "checkpoint", "rollback_to"),
    "R5": (
        "splice",
        "rollback_many",
        "checkpoint",
        "rollback_to",
        "compact",
        "crash_during",
        "restart",
        "corrupt_record",
        "arm_journal_fault",
    ),
}

#: Capabilities without which a property cannot be assessed at all.
REQUIRED_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "R0": frozenset({Capability.CORE}),
    "R1": frozenset({Capability.JOURNAL_FAULTS}),
    "R2": frozenset({Capability.CORE}),
    "R3": frozenset({Capability.CHECKPOINTS}),
    "R4": frozenset({Capability.OUT_OF_LOG_WRITES, Capability.ADOPT}),
    "R6": frozenset({Capability.BOUNDED}),
    "R5": frozenset({Capability.DURABILITY}),
}

#: The capability each optional rule needs.
RULE_CAPABILITY: dict[str, Capability] = {
    "checkpoint": Capability.CHECKPOINTS,
    "rollback_to": Capability.CHECKPOINTS,
    "arm_journal_fault": Capability.JOURNAL_FAULTS,
    "out_of_log_write": Capability.OUT_OF_LOG_WRITES,
    "adopt_current": Capability.ADOPT,
    "write_behind_checkpoint": Capability.OUT_OF_LOG_WRITES,
    "compact": Capability.DURABILITY,
    "crash_during": Capability.DURABILITY,
    "restart": Capability.DURABILITY,
    "corrupt_record": Capability.DURABILITY,
}

#: Rules made of operations of two capabilities need the second one as well.
RULE_SECOND_CAPABILITY: dict[str, Capability] = {
    "write_behind_checkpoint": Capability.CHECKPOINTS,
}


class Tracker:
    """What one property's run did: examples, steps, and situations reached."""

    def __init__(self, property_id: str) -> None:
        rollback_property = PROPERTIES[property_id]
        if not isinstance(rollback_property, Property):  # S1-S3 have their own machine
            raise TypeError(f"{property_id} is not judged by the rollback machines")
        self.property = rollback_property
        self.examples = 0
        self.steps = 0
        self.reached: Counter[str] = Counter()


class RollbackMachine(RuleBasedStateMachine):
    """Base of the generated machines; the rules are attached by :func:`build_machine`."""

    target: Target
    tracker: Tracker
    #: "never", "sometimes" (R0: bounded and unbounded buffers) or "always" (R6).
    bounded: str
    #: Ask for a durable journal (the R5 machine).
    durable: bool = False

    def __init__(self) -> None:
        super().__init__()
        self.session: Session | None = None

    @property
    def alphabet(self) -> bytes:
        """The bytes generated text is made of (the target may narrow or widen it)."""
        return self.target.alphabet or strategies.WIDE_ALPHABET

    @property
    def live(self) -> Session:
        assert self.session is not None
        return self.session

    @initialize(data=st.data())
    def start(self, data: st.DataObject) -> None:
        initial = data.draw(strategies.initial_buffers(self.alphabet), label="initial buffer")
        config = BufferConfig(initial, durable=self.durable)
        if self.bounded == "always" or (
            self.bounded == "sometimes" and data.draw(st.booleans(), label="bounded")
        ):
            config = BufferConfig(
                initial,
                data.draw(strategies.capacities(), label="capacity"),
                data.draw(strategies.policies(), label="policy"),
            )
        note(f"config: {config}")
        self.session = Session(self.target, config)
        self.tracker.examples += 1

    def run(self, operation: Operation) -> None:
        if self.target.sets_aside(self.live.model, operation):
            return  # a known finding this focused target sets aside; not taken
        note(f"step {len(self.live.steps) + 1}: {operation.describe()}")
        before = self.live.model
        outcome, _ = self.live.predict(operation)
        self.live.execute(operation)
        self.tracker.steps += 1
        for situation in self.tracker.property.situations:
            if situation.reached(before, operation, outcome):
                self.tracker.reached[situation.name] += 1

    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()


# -- the rules ---------------------------------------------------------------------
# Each is a plain function; build_machine attaches the ones a property uses.


@rule(data=st.data())
def splice(machine: RollbackMachine, data: st.DataObject) -> None:
    _splice_from(machine, data)


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule()
def rollback_one(machine: RollbackMachine) -> None:
    machine.run(Rollback(1))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def rollback_many(machine: RollbackMachine, data: st.DataObject) -> None:
    steps = data.draw(strategies.rollback_steps(machine.live.model, single=False), label="steps")
    machine.run(Rollback(steps))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def branch(machine: RollbackMachine, data: st.DataObject) -> None:
    """Roll back, then edit again: history branches, and the old branch's
    checkpoints (and snapshots, and revisions) must stay dead."""
    # One step back is the common case (and the one that brings a dead
    # checkpoint's depth back); sometimes further.
    steps = data.draw(st.just(1) | st.integers(1, machine.live.model.depth), label="steps")
    machine.run(Rollback(steps))
    _splice_from(machine, data)


def _draw_edit(machine: RollbackMachine, data: st.DataObject) -> tuple[int, int, bytes]:
    """(offset, delete_length, insert) for a splice or an out-of-log write."""
    state = machine.live.model
    offset = data.draw(strategies.offsets(state), label="offset")
    delete_length = data.draw(strategies.delete_lengths(state, offset), label="delete_length")
    insert = data.draw(strategies.inserts(state, offset, machine.alphabet), label="insert")
    return offset, delete_length, insert


def _splice_from(machine: RollbackMachine, data: st.DataObject) -> None:
    machine.run(Splice(*_draw_edit(machine, data)))


@rule()
def checkpoint(machine: RollbackMachine) -> None:
    machine.run(TakeCheckpoint())


@precondition(lambda machine: machine.session is not None and bool(machine.live.model.checkpoints))
@rule(data=st.data())
def rollback_to(machine: RollbackMachine, data: st.DataObject) -> None:
    # Two kinds of checkpoint are worth most, and are drawn three times as often
    # (and shrunk to first): a dead one taken at a depth the buffer has reached
    # again — where a checkpoint that is "just a depth" lands on the wrong state —
    # and a live one whose way back crosses an out-of-log write, which a
    # rollback_to that jumps to a stored copy would erase without a word.
    state = machine.live.model
    count = len(state.checkpoints)
    live = set(state.serials)

    def lure(index: int) -> bool:
        serial, depth_taken = state.checkpoints[index]
        if serial not in live:
            return depth_taken <= state.depth
        target_depth = state.serials.index(serial)
        return any(target_depth < barrier <= state.depth for barrier in state.barriers)

    ranked: list[int] = sorted(range(count), key=lambda index: (not lure(index), -index))
    lures = [index for index in ranked if lure(index)]
    order: list[int | None] = [*lures, *lures, *ranked]
    # Last (and rarest to shrink to): a checkpoint of another buffer.
    if Capability.CHECKPOINTS in machine.target.capabilities:
        order.append(None)
    index = data.draw(st.sampled_from(order), label="checkpoint")
    machine.run(RollbackToForeign() if index is None else RollbackTo(index))


@precondition(lambda machine: machine.session is not None and not machine.live.model.fault_armed)
@rule()
def arm_journal_fault(machine: RollbackMachine) -> None:
    machine.run(ArmJournalFault())


@precondition(
    lambda machine: machine.session is not None
    and machine.live.model.depth not in machine.live.model.barriers
)
@rule(data=st.data())
def out_of_log_write(machine: RollbackMachine, data: st.DataObject) -> None:
    # Only writes that change the bytes, and at most one barrier per depth: a
    # write that changes nothing, or undoes an earlier one, is not a divergence
    # a content check could see, and the rules do not ask it to.
    _out_of_log_write_from(machine, data)


def _out_of_log_write_from(machine: RollbackMachine, data: st.DataObject) -> None:
    state = machine.live.model
    offset, delete_length, insert = _draw_edit(machine, data)
    assume(splice_bytes(state.current, offset, delete_length, insert) != state.current)
    machine.run(OutOfLogWrite(offset, delete_length, insert))


@rule(data=st.data())
def write_behind_checkpoint(machine: RollbackMachine, data: st.DataObject) -> None:
    """A checkpoint, an edit on top of it, then a write behind the journal's
    back: the way back to that checkpoint now crosses the write, and a
    rollback_to must refuse it rather than jump to what the checkpoint named."""
    machine.run(TakeCheckpoint())
    _splice_from(machine, data)
    if machine.live.model.depth not in machine.live.model.barriers:
        _out_of_log_write_from(machine, data)


@rule()
def adopt_current(machine: RollbackMachine) -> None:
    machine.run(AdoptCurrent())


@rule(data=st.data())
def bad_splice(machine: RollbackMachine, data: st.DataObject) -> None:
    offset, delete_length = data.draw(strategies.out_of_range_splices(machine.live.model), label="bad range")
    machine.run(Splice(offset, delete_length, b"x"))


# -- durability (R5) ---------------------------------------------------------------


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def compact(machine: RollbackMachine, data: st.DataObject) -> None:
    machine.run(Compact(data.draw(st.integers(0, machine.live.model.depth), label="keep")))


@rule(data=st.data())
def crash_during(machine: RollbackMachine, data: st.DataObject) -> None:
    """Crash in the middle of an operation that writes to the journal: at one of
    its first I/O calls, losing some of the unsynced bytes (a few lost bytes
    tear the end off the record being written)."""
    state = machine.live.model
    kinds = ["splice", "splice"]  # the record most worth tearing: it carries new bytes
    if state.depth:
        kinds += ["rollback", "compact"]
    if state.checkpoints:
        kinds.append("rollback_to")
    kind = data.draw(st.sampled_from(kinds), label="interrupted operation")
    inner: Interruptible
    if kind == "splice":
        inner = Splice(*_draw_edit(machine, data))
    elif kind == "rollback":
        inner = Rollback(data.draw(strategies.rollback_steps(state, single=False), label="steps"))
    elif kind == "compact":
        inner = Compact(data.draw(st.integers(0, state.depth), label="keep"))
    else:
        inner = RollbackTo(data.draw(st.integers(0, len(state.checkpoints) - 1), label="checkpoint"))
    io_event = data.draw(strategies.crash_points(), label="I/O call")
    lost = data.draw(strategies.lost_unsynced_bytes(), label="lost bytes")
    machine.run(CrashDuring(inner, io_event, lost))


@rule()
def restart(machine: RollbackMachine) -> None:
    machine.run(Restart())


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule()
def corrupt_record(machine: RollbackMachine) -> None:
    machine.run(CorruptRecord())


RULES: dict[str, Callable[..., Any]] = {
    "splice": splice,
    "rollback_one": rollback_one,
    "rollback_many": rollback_many,
    "branch": branch,
    "checkpoint": checkpoint,
    "rollback_to": rollback_to,
    "arm_journal_fault": arm_journal_fault,
    "out_of_log_write": out_of_log_write,
    "adopt_current": adopt_current,
    "write_behind_checkpoint": write_behind_checkpoint,
    "bad_splice": bad_splice,
    "compact": compact,
    "crash_during": crash_during,
    "restart": restart,
    "corrupt_record": corrupt_record,
}


def rules_for(property_id: str, capabilities: frozenset[Capability]) -> tuple[str, ...]:
    # R0 takes every rule except the crashes: those need a durable journal, which
    # rules out out-of-log writes, adoption and capacities, so they get their own
    # machine (R5), whose violations are folded into R0's verdict.
    every_rule = tuple(name for name in RULES if RULE_CAPABILITY.get(name) is not Capability.DURABILITY)
    names = RULES_BY_PROPERTY.get(property_id, every_rule)
    return tuple(
        n
        for n in names
        if (n not in RULE_CAPABILITY or RULE_CAPABILITY[n] in capabilities)
        and (n not in RULE_SECOND_CAPABILITY or RULE_SECOND_CAPABILITY[n] in capabilities)
    )


def missing_capabilities(property_id: str, target: Target) -> frozenset[Capability]:
    return REQUIRED_CAPABILITIES[property_id] - target.capabilities


def build_machine(target: Target, property_id: str, tracker: Tracker) -> type[RollbackMachine]:
    """A machine class with exactly the rules ``property_id`` uses on ``target``."""
    namespace: dict[str, Any] = {name: RULES[name] for name in rules_for(property_id, target.capabilities)}
    namespace.update(
        target=target,
        tracker=tracker,
        bounded=(
            "never"
            if Capability.BOUNDED not in target.capabilities
            else {"R0": "sometimes", "R6": "always"}.get(property_id, "never")
        ),
        durable=property_id == "R5",
    )
    return type(f"{property_id}Machine", (RollbackMachine,), namespace)
