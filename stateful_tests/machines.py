"""The rollback family (R0–R6): one Hypothesis rule-based state machine per property.

Each property is exercised by the operations that can break it (R0, the
master property, uses every rule). What a machine finds is reported under the
rules whose own clause the failing step broke (``Property.broken``), not
under the machine's: the R2 machine that meets an R0-only mismatch records it
for R0 and goes on exploring R2. Rules whose capability the target lacks are
left out; a property whose required capabilities are missing is not assessed.

Only what is the family's own lives here: the rules, which properties use
which, how each operation is done to a SUT (:meth:`RollbackFamily.perform`),
and the minimisation moves that know what a checkpoint or a crash is. The
generic machine (:class:`rollcert.stateful_tests.harness.FamilyMachine`) judges
every step through :class:`rollcert.stateful_tests.judge.Session` and counts the
situations of :mod:`rollcert.model.properties` the run reached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from typing import ClassVar

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.stateful import initialize
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from rollcert.model.errors import DivergenceError
from rollcert.model.errors import error_kind
from rollcert.model.operations import DAMAGES
from rollcert.model.operations import DISK_FAULTS
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Compact
from rollcert.model.operations import CorruptRecord
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import DiskFault
from rollcert.model.operations import Flush
from rollcert.model.operations import Interruptible
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import FAULT_KEPT
from rollcert.model.reference import LOST_SERIAL
from rollcert.model.reference import POISONED
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.model.reference import compaction_may_refuse
from rollcert.model.reference import content_verified_rollback
from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.model.reference import step
from rollcert.stateful_tests import shrink
from rollcert.stateful_tests import small_scope
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.family import Candidates
from rollcert.stateful_tests.family import LiveSession
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import Prediction
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Reading
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.harness import FamilyMachine
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import world_of
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target

#: The note of a reading that a batched crash went back before the crash point.
BEFORE_THE_CRASH_POINT = "a state since the last flush, before the crash point (batched mode)"
#: The figures a run reports: batched crashes with operations waiting, and how
#: many of them the SUT recovered to a state before the crash point.
BATCHED_FIGURES = ("batched_crashes_with_window", "batched_recovered_before_crash_point")
#: The note of a reading that a rollback crossed an out-of-log write its records
#: cannot see (the bytes they check are as they should be), yielding exactly the
#: state it names (R4; allowed, never required). Counted as ``identical_write_crossed``.
CONTENT_IDENTICAL = "crossed an out-of-log write that left the bytes its records check as they were (allowed)"
#: The note of a reading in which a reopen yielded the state after an
#: operation whose outcome was unknown (its record stayed in the file).
IN_DOUBT = "the operation whose outcome was unknown took effect"
#: The note of a reading in which a durable journal stayed usable after a clean
#: refusal (nothing of the refused record in the file), ready for the retry
#: (R1, R5; allowed, never required: ``rollcert.model.reference``).
RETRY_ALLOWED = "the journal stayed usable after a refusal that wrote nothing (allowed)"
#: The figures of clean refusals: how many a run met, how many retries the
#: target took after one, and how many operations it refused after one (it
#: stayed poisoned). Which of the two a target does is its choice; the
#: certificate says which it saw.
RETRY_FIGURES = ("clean_refusals", "retries_accepted", "poisoned_after_refusal")
#: The note of a reading in which a splice refused for another reason (a full
#: reject journal, a poisoned one) spent the armed fault too (allowed:
#: ``rollcert.model.reference``, "a fault armed across a refusal").
FAULT_SPENT = "the refusal spent the armed fault too (allowed)"
#: A compaction that keeps a record above an out-of-log write, refused with
#: DivergenceError and nothing changed (R0, R4; allowed: ``compaction_may_refuse``).
COMPACTION_REFUSED = "refused a compaction whose kept records cross an out-of-log write (allowed)"
#: How a target treated an armed fault across such a refusal, counted where it
#: shows (the next splice): kept it for that splice, or had spent it. Both allowed.
FAULT_FIGURES = ("fault_kept_through_refusal", "fault_spent_on_refusal")

#: The rules of each property's machine (R0 gets all of them).
RULES_BY_PROPERTY: dict[str, tuple[str, ...]] = {
    "R1": ("splice", "rollback_one", "arm_journal_fault"),
    # Not edit_then_undo as a rule of its own: tried, it met a column counted in
    # characters sooner, but thinned out the runs of splices and one-step rollbacks
    # an anchor bug needs, and pycrdt's finding 4 went unfound at ci seed 0 (issue
    # 23 notes). R2's splice rule does the same edit undone at once now and then
    # instead (RollbackMachine.undoes_at_once).
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
    "R6": ("splice", "rollback_many", "checkpoint", "rollback_to", "checkpoint_before_eviction"),
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
        "flush",
        "checkpoint_then_crash",
        "flush_after_rollback_then_crash",
        "disk_fault",
        "reopen",
        "refused_then_reopen",
    ),
}

#: Capabilities without which a property cannot be assessed at all.
REQUIRED_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "R0": frozenset({Capability.CORE}),
    "R1": frozenset({Capability.JOURNAL_FAULTS}),
    "R2": frozenset({Capability.CORE}),
    "R3": frozenset({Capability.CHECKPOINTS}),
    # Adoption is the only way *past* a divergence, not a condition for detecting
    # one: a target without it is judged on every rollback that meets a write.
    "R4": frozenset({Capability.OUT_OF_LOG_WRITES}),
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
    "flush": Capability.DURABILITY,
    "checkpoint_then_crash": Capability.DURABILITY,
    "flush_after_rollback_then_crash": Capability.DURABILITY,
    "checkpoint_before_eviction": Capability.BOUNDED,
    "disk_fault": Capability.DISK_FAULTS,
    "reopen": Capability.DISK_FAULTS,
    "refused_then_reopen": Capability.DISK_FAULTS,
}

#: Situations a run can reach only with a capability beyond the property's own;
#: a target without it is not asked to reach them (its run simply cannot).
SITUATION_CAPABILITY: dict[str, Capability] = {
    "rollback_to_meets_write": Capability.CHECKPOINTS,
    "adopt": Capability.ADOPT,
    "dead_checkpoint": Capability.CHECKPOINTS,
    "lost_checkpoint_refused": Capability.CHECKPOINTS,
}

#: Rules made of operations of two capabilities need the second one as well.
RULE_SECOND_CAPABILITY: dict[str, Capability] = {
    "write_behind_checkpoint": Capability.CHECKPOINTS,
    "checkpoint_then_crash": Capability.CHECKPOINTS,
    "checkpoint_before_eviction": Capability.CHECKPOINTS,
}


class RollbackMachine(FamilyMachine):
    """Base of the rollback family's generated machines; :meth:`RollbackFamily.build_machine`
    attaches the rules a property uses."""

    #: "never", "sometimes" (R0: bounded and unbounded buffers) or "always" (R6).
    bounded: ClassVar[str] = "never"
    #: Ask for a durable journal (the R5 machine).
    durable: ClassVar[bool] = False

    #: Whether a single splice is now and then rolled back by its own rule
    #: (strategies.undone_at_once): R2's machine, whose only other rule is a
    #: one-step rollback, when its world holds multi-byte characters; set by
    #: build_machine.
    undoes_at_once: ClassVar[bool] = False

    #: What the generated buffers and edits are drawn from: the target's declared
    #: world (rollcert.stateful_tests.world), set by build_machine.
    world: ClassVar[World] = strategies.DEFAULT_WORLD

    @initialize(word=strategies.WORD)
    def start(self, word: bytes) -> None:
        # One choice for the whole start. Durable machines take both durability
        # modes in one run, one per example: each has its own promise (R5, R5_BATCHED).
        # The search for further findings (a tracker that knows findings) starts small.
        small = self.tracker.known is not None
        start = strategies.start_from(word, self.world, self.bounded, self.durable, small)
        self.wide = start.wide
        config = BufferConfig(start.initial, durable=self.durable)
        if start.durability is not None:
            config = replace(config, durability=start.durability)
        if start.capacity is not None and start.policy is not None:
            config = BufferConfig(start.initial, start.capacity, start.policy)
        # Now and then storage in chunks of a few bytes, on a target that can be
        # asked for it (not a durable journal: recovery rebuilds its own storage).
        chunk = None if small or self.durable or not self.target.sets_chunk_bytes else strategies.chunk_bytes_from(word)
        if chunk is not None:
            initial = strategies.initial_in_small_chunks(word, self.world, chunk, start.initial)
            config = replace(config, initial=initial, chunk_bytes=chunk)
        self.begin(config, word)
        # A start past 64 KiB crosses the seam first (strategies.seam_edit_of).
        seam = strategies.seam_edit_of(start.initial, word[::-1], self.world)
        if seam is not None:
            self.run(Splice(*seam))
        # Now and then a long history first, whatever rules this property's machine has.
        for further in strategies.history_words(word, strategies.start_history_length(word)):
            self.run(Splice(*strategies.edit_from(self.live.model, further, self.world, self.wide)))


# -- the rules ---------------------------------------------------------------------
# Each is a plain function; build_machine attaches the ones a property uses.


# The simple rules take their one choice (a strategies.WORD) as a rule argument,
# drawn with the rule: cheaper than a ``data.draw`` in the rule's body.


@rule(word=strategies.WORD)
def splice(machine: RollbackMachine, word: bytes) -> None:
    """One splice; now and then a long history of them (strategies.history_length),
    so every property's run reaches depths past 16 and 64; in R2's machine, now and
    then an edit undone at once instead (strategies.undone_at_once)."""
    count = strategies.history_length(word)
    if count == 1 and machine.undoes_at_once and _room_for_two_records(machine) and strategies.undone_at_once(word):
        _paste_edit_undo(machine, word)
        return
    machine.run(Splice(*strategies.edit_from(machine.live.model, word, machine.world, machine.wide)))
    if count > 1:
        for further in strategies.history_words(word, count - 1):
            machine.run(Splice(*strategies.edit_from(machine.live.model, further, machine.world, machine.wide)))


def _room_for_two_records(machine: RollbackMachine) -> bool:
    """A journal that will take two more records: not a nearly full one that rejects."""
    model = machine.live.model
    return machine.session is not None and not (
        model.capacity is not None and model.policy == "reject" and model.depth + 2 > model.capacity
    )


@precondition(_room_for_two_records)
@rule(word=strategies.WORD)
def edit_then_undo(machine: RollbackMachine, word: bytes) -> None:
    """Wide text pasted (lines ending in CRLF or LF, any byte, a run past a size
    threshold), then a wide edit of the buffer that now holds it, undone at once
    — what an editor's user does most. Its rollback must bring back
    exactly the removed text, so a log that keeps removed text wrong (cut to a
    fixed field, CRLF normalised, decoded as text) is met here on every run, not
    only when a later rollback happens to reach that record before a bounded
    journal refuses or evicts it. Not taken when a nearly full journal would
    refuse the edit (its undo would then take back some other record)."""
    _paste_edit_undo(machine, word)


def _paste_edit_undo(machine: RollbackMachine, word: bytes) -> None:
    paste, edit = strategies.history_words(word, 2)
    machine.run(Splice(*strategies.paste_of(machine.live.model.current, paste, machine.world)))
    machine.run(Splice(*strategies.wide_edit_of(machine.live.model, edit, machine.world)))
    machine.run(Rollback(1))


@precondition(lambda machine: machine.session is not None)
@rule()
def rollback_one(machine: RollbackMachine) -> None:
    # At depth 0 too: a rollback past the horizon, refused, is a branch of the
    # model (rollcert.stateful_tests.model_coverage) every rollback machine must reach.
    machine.run(Rollback(1))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(word=strategies.WORD)
def rollback_many(machine: RollbackMachine, word: bytes) -> None:
    # rollback(0) on a non-empty log (issue 42), not on a durable journal: there a
    # rollback after a poisoning is R5's rarer case, and zero steps crowded it out.
    machine.run(Rollback(strategies.rollback_steps_from(machine.live.model, word, zero=not machine.live.model.durable)))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def branch(machine: RollbackMachine, data: st.DataObject) -> None:
    """Roll back, then edit again: history branches, and the old branch's
    checkpoints (and snapshots, and revisions) must stay dead."""
    machine.run(Rollback(strategies.draw_branch_steps(data, machine.live.model)))
    _splice_from(machine, data)


def _draw_edit(machine: RollbackMachine, data: st.DataObject) -> tuple[int, int, bytes]:
    """(offset, delete_length, insert) for a splice or an out-of-log write."""
    # One draw, not three: each ``data.draw`` costs more than the choices it makes.
    return strategies.draw_edit(data, machine.live.model, machine.world, machine.wide)


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
    # again — where a checkpoint that is "just a depth" lands on the wrong state,
    # and a checkpoint of a state a batched crash lost lands on whichever new
    # state got its serial if the journal hands serials out again — and a live
    # one whose way back crosses an out-of-log write, which a rollback_to that
    # jumps to a stored copy would erase without a word.
    state: ModelState = machine.live.model
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
    index = order[strategies.draw_index(data, len(order), "checkpoint")]
    machine.run(RollbackToForeign() if index is None else RollbackTo(index))


def _no_fault_armed(machine: RollbackMachine) -> bool:
    """Neither an R1 journal fault nor a disk fault waits (one at a time)."""
    return machine.session is not None and not machine.live.model.fault_armed and machine.live.model.disk_fault is None


@precondition(_no_fault_armed)
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


#: Draws of an out-of-log write before giving up on one that changes the bytes.
_WRITE_ATTEMPTS = 3


def _out_of_log_write_from(machine: RollbackMachine, data: st.DataObject) -> None:
    # A write that changes nothing is drawn again rather than assume()d away at
    # once: the edits lean to empty inserts and copies of nearby text, so about
    # one in four changes nothing, and assume() throws the whole example out.
    state = machine.live.model
    for _ in range(_WRITE_ATTEMPTS):
        offset, delete_length, insert = _draw_edit(machine, data)
        if splice_bytes(state.current, offset, delete_length, insert) != state.current:
            break
    else:
        assume(False)
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


# -- bounded logs (R6) ----------------------------------------------------------------


def _changing_splice(machine: RollbackMachine, words: Iterator[bytes]) -> None:
    """A splice read out of the next of ``words``, drawn again (up to
    _WRITE_ATTEMPTS times) while it would leave the bytes as they are: a record
    that changes nothing makes a rollback that stops one record short look right."""
    state: ModelState = machine.live.model
    for _ in range(_WRITE_ATTEMPTS):
        edit = strategies.edit_from(state, next(words), machine.world, machine.wide)
        if splice_bytes(state.current, *edit) != state.current:
            break
    machine.run(Splice(*edit))


def _evicting_journal(machine: RollbackMachine) -> bool:
    return machine.session is not None and strategies.evicting_journal(machine.live.model)


@precondition(_evicting_journal)
@rule(word=strategies.WORD)
def checkpoint_before_eviction(machine: RollbackMachine, word: bytes) -> None:
    """An evict_oldest journal: edits until it is full, a checkpoint, then the
    edits that evict past it — one (the checkpoint's state is still there, one
    record lower: rollback_to must undo exactly that record) or, half the time,
    one per record and one more (its state was evicted: rollback_to must be
    refused) — and the rollback_to. A journal that stores a checkpoint as an
    index into its record list must shift it down with every eviction, or the
    live one lands a record short and the dead one still answers. The rules
    alone reach it (a checkpoint, edits, a rollback_to), but rarely with the
    journal full at the checkpoint, and with edits that left the bytes as they
    were the judge sees only a wrong depth (R0's, not R6's): a quick run missed
    eviction_keeps_checkpoint_positions on 1 seed in 10. So each edit is one
    that changes the bytes, if three draws find one. On a long history's
    capacity (66-73) the story fills the journal past depth 64 as well, which
    R6's runs used to reach too rarely (depth_past_64 unknown on 2 seeds in 10)."""
    capacity = machine.live.model.capacity
    assert capacity is not None  # the precondition
    kill = strategies.Word(word).pick(2) == 1
    words = strategies.history_word_stream(word)
    for _ in range(capacity - machine.live.model.depth):
        _changing_splice(machine, words)
    taken = len(machine.live.model.checkpoints)
    machine.run(TakeCheckpoint())
    if len(machine.live.model.checkpoints) == taken:
        return  # the target set the checkpoint aside
    for _ in range(capacity + 1 if kill else 1):
        _changing_splice(machine, words)
    machine.run(RollbackTo(taken))


@rule(word=strategies.WORD)
def bad_arguments(machine: RollbackMachine, word: bytes) -> None:
    """SPEC §2: bad input is a TypeError or ValueError that changes nothing. One
    rule for every operation that takes arguments (a rule each would thin out
    R0's others): a splice out of range, or with an offset, delete_length or
    insert of the wrong type or sign; a rollback of a negative, bool or float
    count; a compaction keeping -1, more than the depth, or a bool, where the
    target can compact — all but a splice's range only to a target that
    declares it checks them (``Target.checks_arguments``), and no argument of
    another type over a typed wire (``Target.typed_wire``). Now and then
    instead, to such a target, an edit whose insert is a bytearray or
    memoryview, which must be taken exactly as bytes are."""
    state, target = machine.live.model, machine.target
    compacts = Capability.DURABILITY in target.capabilities
    drawn = strategies.bad_argument_from(
        state, word, compacts=compacts, strict=target.checks_arguments, wrong_types=not target.typed_wire
    )
    if drawn is bytearray or drawn is memoryview:
        offset, delete_length, insert = strategies.edit_from(state, word[::-1], machine.world, machine.wide)
        machine.run(Splice(offset, delete_length, drawn(insert)))  # type: ignore[arg-type]  # bytes-like, on purpose
    else:
        machine.run(drawn)


#: Model-branch coverage (``model_coverage.machine_traits``): this rule's machine
#: is the one that takes the model's range checks of a rollback and a compaction.
bad_arguments.sends_bad_arguments = True  # type: ignore[attr-defined]


# -- durability (R5) ---------------------------------------------------------------


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def compact(machine: RollbackMachine, data: st.DataObject) -> None:
    """Fold the oldest records into the base. R5's machine, and R0's of a target
    that can compact (capability DURABILITY) on its in-memory journal too, where
    it meets capacities, out-of-log writes and adoption — and a compaction that
    keeps records above an out-of-log write, which the model allows to succeed
    or to be refused (``model.reference.compaction_may_refuse``)."""
    state = machine.live.model
    machine.run(Compact(data.draw(st.integers(0, state.depth), label="keep")))


@precondition(lambda machine: machine.session is not None and machine.live.model.disk_fault is None)
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
    kind = kinds[strategies.draw_index(data, len(kinds), "interrupted operation")]
    inner: Interruptible
    if kind == "splice":
        inner = Splice(*_draw_edit(machine, data))
    elif kind == "rollback":
        inner = Rollback(strategies.draw_rollback_steps(data, state))
    elif kind == "compact":
        inner = Compact(data.draw(st.integers(0, state.depth), label="keep"))
    else:
        inner = RollbackTo(data.draw(st.integers(0, len(state.checkpoints) - 1), label="checkpoint"))
    io_event = data.draw(strategies.crash_points(), label="I/O call")
    if isinstance(inner, Splice) and inner.insert and strategies.draw_index(data, 2, "tear the new bytes") == 0:
        # Half the time a splice with new bytes loses part of them and no more:
        # the torn record whose end recovery must drop (a count drawn without
        # the insert's length in view mostly lost all of it or none).
        lost = data.draw(st.integers(1, len(inner.insert)), label="lost bytes")
    else:
        lost = data.draw(strategies.lost_unsynced_bytes(), label="lost bytes")
    machine.run(CrashDuring(inner, io_event, lost))


@rule()
def restart(machine: RollbackMachine) -> None:
    machine.run(Restart())


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def corrupt_record(machine: RollbackMachine, data: st.DataObject) -> None:
    # A bit flip first (the commonest damage, and what shrinking falls back to),
    # the records out of place as often between them.
    damage = DAMAGES[strategies.draw_index(data, len(DAMAGES), "damage")]
    machine.run(CorruptRecord(damage))


def _something_to_flush(machine: RollbackMachine) -> bool:
    """Batched: operations since the last flush. Per-operation: a record (a flush
    that must change nothing). A flush of nothing is a step wasted."""
    if machine.session is None:
        return False
    state: ModelState = machine.live.model
    return bool(state.since_flush) if state.durability == "batched" else state.depth >= 1


@precondition(_something_to_flush)
@rule()
def flush(machine: RollbackMachine) -> None:
    """An explicit flush: the point a batched crash may not go back beyond."""
    machine.run(Flush())


def _batched_without_a_lost_checkpoint(machine: RollbackMachine) -> bool:
    """Batched mode, and no checkpoint lost yet: one per example is enough for
    rollback_to to aim at, and the other rules keep their share of the steps."""
    if machine.session is None:
        return False
    state: ModelState = machine.live.model
    return (
        state.durability == "batched"
        and all(serial != LOST_SERIAL for serial, _ in state.checkpoints)
        and not state.fault_armed  # a waiting fault would refuse the story's first edit
        and state.disk_fault is None
    )


@precondition(_batched_without_a_lost_checkpoint)
@rule(data=st.data())
def checkpoint_then_crash(machine: RollbackMachine, data: st.DataObject) -> None:
    """Batched mode: an edit if nothing is waiting, a flush, two edits, a
    checkpoint of the newest state, an idle crash, and edits until the buffer
    is back at the checkpoint's depth. Two records since a flush are fewer than
    the adapter's journal waits for before it syncs by itself, so the crash
    loses the checkpointed state, and the checkpoint names nothing ever again.
    Back at its depth, a journal that hands the lost serial out a second time
    would let a rollback_to land on the new state that got it (S3): the story
    ends with one. (It used to leave the rollback_to to the rule, which aims at
    such checkpoints first; once the R5 machine had more rules, a short run
    could miss it.) The flush always has an operation to make durable,
    which the crash must then keep: a flush that does not sync loses it. (The
    rule used to flush only when something was waiting, and it is mostly drawn
    first or right after a crash, when nothing is: the flush rule alone then
    carried that promise, and a quick run missed flush_without_sync on 1 seed in 10.)
    A journal poisoned by an earlier failure is restarted first: it would
    refuse every step of the story."""
    if machine.live.model.poisoned:
        machine.run(Restart())  # an earlier failure left the journal refusing everything
    if not machine.live.model.since_flush:
        _splice_from(machine, data)
    machine.run(Flush())
    _splice_from(machine, data)
    _splice_from(machine, data)
    machine.run(TakeCheckpoint())
    taken, depth_taken = len(machine.live.model.checkpoints) - 1, machine.live.model.depth
    machine.run(Restart())
    while machine.live.model.depth < depth_taken:
        _splice_from(machine, data)
    machine.run(RollbackTo(taken))


def _batched_without_a_fault(machine: RollbackMachine) -> bool:
    """Batched mode, and no fault waiting to refuse the story's first edit."""
    if machine.session is None:
        return False
    state: ModelState = machine.live.model
    return state.durability == "batched" and not state.fault_armed and state.disk_fault is None


@precondition(_batched_without_a_fault)
@rule(data=st.data())
def flush_after_rollback_then_crash(machine: RollbackMachine, data: st.DataObject) -> None:
    """Batched mode: an edit if there is nothing to undo, a flush if anything
    waits, a rollback, a flush, and an idle crash. The second flush promised
    the rolled-back state, so the crash must keep it. A journal that thinks a
    rollback only takes state away, so a batch that ends in one (or holds
    nothing else) needs no sync, loses it: the undone edit comes back. The
    first flush leaves the rollback alone in the batch, the case a journal
    that counts only splices as records to sync gets wrong too. The rules
    alone reach rollback, flush, crash, but the flush and checkpoint_then_crash
    mostly follow an edit or a crash, and a quick run missed
    sync_skipped_after_rollback on 3 seeds in 10. A journal poisoned by an
    earlier failure is restarted first."""
    if machine.live.model.poisoned:
        machine.run(Restart())  # an earlier failure left the journal refusing everything
    if not machine.live.model.depth:
        _splice_from(machine, data)
    if not machine.live.model.depth:
        return  # the edit was refused or set aside: nothing to undo
    if machine.live.model.since_flush:
        machine.run(Flush())
    machine.run(Rollback(strategies.draw_branch_steps(data, machine.live.model)))
    machine.run(Flush())
    machine.run(Restart())


#: The disk faults as drawn: a failed sync twice as often as each other (the
#: fault the batched mode got wrong: its record stayed in the file), and first,
#: where shrinking goes.
_DRAWN_DISK_FAULTS = (DISK_FAULTS[0], *DISK_FAULTS)


def _draw_disk_fault(data: st.DataObject) -> str:
    return _DRAWN_DISK_FAULTS[strategies.draw_index(data, len(_DRAWN_DISK_FAULTS), "disk fault")]


@precondition(_no_fault_armed)
@rule(data=st.data())
def disk_fault(machine: RollbackMachine, data: st.DataObject) -> None:
    """The disk fails at the next splice's record: its write or its sync, and
    perhaps the cut-back after it too (two faults in a row)."""
    machine.run(DiskFault(_draw_disk_fault(data)))


#: One reopen in this many (of a target that can adopt) adopts the buffer first.
ADOPT_BEFORE_REOPEN_SHARE = 4


@rule(word=strategies.WORD)
def reopen(machine: RollbackMachine, word: bytes) -> None:
    """A new process opens the journal, no crash: the way out of a poisoned
    journal, and where a refused record left in the file would come back.

    Now and then the buffer is adopted first (``adopt_current``): adoption
    rewrites the durable journal's base, and the reopen must read that base
    back. Issue 42's mutation run found a base that recovery refuses, and one
    at the wrong position, passing while no durable run adopted; adoption as a
    rule of its own in R5's machine thinned out its other stories (a second
    writer unreached on quick seed 0)."""
    if machine.target.supports(Capability.ADOPT) and strategies.Word(word).pick(ADOPT_BEFORE_REOPEN_SHARE) == 0:
        machine.run(AdoptCurrent())
    machine.run(Reopen())


@precondition(_no_fault_armed)
@rule(data=st.data())
def refused_then_reopen(machine: RollbackMachine, data: st.DataObject) -> None:
    """A disk fault, the splice that meets it (refused), one more operation
    (refused too: the journal is poisoned) — a splice, a rollback or a flush,
    none of which may write or sync anything — and the reopen the error
    recommends: the refused splice must not come back, in either mode. An
    idle crash instead would lose the record whatever the journal did with
    it, and tell nothing."""
    machine.run(DiskFault(_draw_disk_fault(data)))
    _splice_from(machine, data)
    then = ("splice", "flush", *(("rollback",) if machine.live.model.depth else ()))
    kind = then[strategies.draw_index(data, len(then), "then")]
    if kind == "rollback":
        machine.run(Rollback(strategies.draw_rollback_steps(data, machine.live.model)))
    elif kind == "flush":
        machine.run(Flush())
    else:
        _splice_from(machine, data)
    machine.run(Reopen())


RULES: dict[str, Callable[..., Any]] = {
    "splice": splice,
    "edit_then_undo": edit_then_undo,
    "rollback_one": rollback_one,
    "rollback_many": rollback_many,
    "branch": branch,
    "checkpoint": checkpoint,
    "rollback_to": rollback_to,
    "arm_journal_fault": arm_journal_fault,
    "out_of_log_write": out_of_log_write,
    "adopt_current": adopt_current,
    "write_behind_checkpoint": write_behind_checkpoint,
    "bad_arguments": bad_arguments,
    "compact": compact,
    "crash_during": crash_during,
    "restart": restart,
    "corrupt_record": corrupt_record,
    "flush": flush,
    "checkpoint_then_crash": checkpoint_then_crash,
    "flush_after_rollback_then_crash": flush_after_rollback_then_crash,
    "checkpoint_before_eviction": checkpoint_before_eviction,
    "disk_fault": disk_fault,
    "reopen": reopen,
    "refused_then_reopen": refused_then_reopen,
}


#: Durability rules R0 takes as well: compaction needs no crash, and issue 42's
#: mutation run found it certified nowhere but on the durable journal.
_IN_MEMORY_TOO = frozenset({"compact"})

#: Rules only their own property's machine takes (not R0's: see rules_for).
_STORY_RULES_OF_ONE_PROPERTY = frozenset({"checkpoint_before_eviction"})


def rules_for(property_id: str, capabilities: frozenset[Capability]) -> tuple[str, ...]:
    # R0 takes every rule except the crashes (compaction it takes: _IN_MEMORY_TOO): those need a durable journal, which
    # rules out out-of-log writes, adoption and capacities, so they get their own
    # machine (R5), whose violations are folded into R0's verdict. Nor does it take
    # R6's story of a checkpoint taken before an eviction: its precondition (a small
    # evict_oldest journal) holds in few R0 examples, and it would only thin out
    # R0's other rules; R6's violations are folded into R0's verdict too.
    every_rule = tuple(
        name
        for name in RULES
        if (RULE_CAPABILITY.get(name) not in (Capability.DURABILITY, Capability.DISK_FAULTS) or name in _IN_MEMORY_TOO)
        and name not in _STORY_RULES_OF_ONE_PROPERTY
    )
    names = RULES_BY_PROPERTY.get(property_id, every_rule)
    return tuple(
        n
        for n in names
        if (n not in RULE_CAPABILITY or RULE_CAPABILITY[n] in capabilities)
        and (n not in RULE_SECOND_CAPABILITY or RULE_SECOND_CAPABILITY[n] in capabilities)
    )


class RollbackFamily(PropertyFamily[ModelState, Operation, Outcome]):
    """R0–R6 over :mod:`rollcert.model.reference`: the rules above, how each
    operation is done to a SUT, and this family's minimisation moves."""

    name = "rollback"
    property_ids = ("R0", "R1", "R2", "R3", "R4", "R5", "R6")
    operation_types = Operation
    legacy_trace_schemas = ("rollcert-trace/1",)

    # -- the model ---------------------------------------------------------------------

    def initial_state(self, config: BufferConfig) -> ModelState:
        return _initial(config)

    def predict(self, state: ModelState, operation: Operation) -> Prediction[ModelState, Outcome]:
        """The model's outcome; bad arguments are an expected ValueError/TypeError
        that changes nothing. A rollback that meets an out-of-log write may
        also stop there (the model's ``also_acceptable``)."""
        try:
            outcome = step(state, operation)
        except (ValueError, TypeError) as error:
            if not isinstance(operation, CrashDuring):
                return Prediction(Outcome(state, type(error), message=str(error)), (Reading(state, error_kind(error)),))
            # The crash comes all the same: the adapter crashes the machine once the
            # operation is over, refused or not. The machines draw no such crash, but
            # a shrunk trace can name one where the SUT followed another reading than
            # the first (a batched crash that recovered a shorter state): predicted
            # as nothing but the refusal, its idle crash lost the unsynced records of
            # a correct journal and showed as an R5 violation of the bundled one.
            outcome = replace(step(state, Restart()), error=type(error), message=str(error))
        kind = error_kind(outcome.error) if outcome.error else None
        readings: tuple[Reading[ModelState], ...] = (Reading(outcome.state, kind),)
        if outcome.also_acceptable is not None:
            readings += (Reading(outcome.also_acceptable, kind, "the other outcome the rules allow"),)
        if outcome.error is None and compaction_may_refuse(state, operation):
            readings += (Reading(state, error_kind(DivergenceError), COMPACTION_REFUSED),)
        if outcome.error is DivergenceError:
            # R4, what a target can observe: a write that left every crossed record's
            # bytes as it checks them, crossed by a rollback that yields exactly the
            # state it names (allowed, never required).
            verified = content_verified_rollback(state, operation)
            if verified is not None:
                readings += (Reading(verified, None, CONTENT_IDENTICAL, optional=True),)
        # Batched mode: after a crash, every state since the last flush (R5_BATCHED).
        readings += tuple(Reading(state, kind, BEFORE_THE_CRASH_POINT) for state in reversed(outcome.window))
        if outcome.in_doubt is not None:  # a refusal whose outcome was unknown (R1, R5)
            readings += (Reading(outcome.in_doubt, kind, IN_DOUBT),)
        if outcome.retry is not None:  # a clean refusal: the journal may stay usable (R1, R5)
            readings += (Reading(outcome.retry, kind, RETRY_ALLOWED),)
        # A refusal for another reason that met the armed fault too (R1, R6; allowed).
        readings += tuple(Reading(spent, kind, FAULT_SPENT) for spent in outcome.fault_spent)
        return Prediction(outcome, readings)

    def content(self, state: ModelState) -> bytes:
        return state.current

    # -- the system under test -----------------------------------------------------------

    def perform(self, live: LiveSession, operation: Operation) -> None:
        sut = live.sut
        if isinstance(operation, Splice):
            sut.splice(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, OutOfLogWrite):
            sut.write_out_of_log(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, TakeCheckpoint):
            live.handles.setdefault("checkpoint", []).append(sut.checkpoint())
        elif isinstance(operation, RollbackTo):
            tokens = live.handles.get("checkpoint", [])
            if not 0 <= operation.checkpoint < len(tokens):
                raise NotGenerable(f"{operation.describe()}: only {len(tokens)} checkpoints were taken")
            sut.rollback_to(tokens[operation.checkpoint])
        elif isinstance(operation, RollbackToForeign):
            sut.rollback_to(live.other_sut().checkpoint())
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
                    self.perform(live, operation.operation)
                except Exception as refusal:
                    refusals.append(refusal)

            live.sut_report = sut.run_with_crash(interrupted_operation, operation.io_event, operation.lost)
            if refusals:
                raise refusals[0]
        elif isinstance(operation, Restart):
            sut.restart()
        elif isinstance(operation, Flush):
            sut.flush()
        elif isinstance(operation, DiskFault):
            sut.arm_disk_fault(operation.fault)
        elif isinstance(operation, Reopen):
            sut.reopen()
        elif isinstance(operation, CorruptRecord):
            live.sut_report = sut.corrupt_committed_record(operation.damage)
            try:
                sut.restart()
            except Exception:
                sut.repair_corruption()  # recovery refused, as it must: carry on from the same state
                raise
        else:  # pragma: no cover - every operation kind is handled above
            raise HarnessError(f"no way to perform {operation!r}")

    def narrow(
        self, live: LiveSession, operation: Operation, before: ModelState, prediction: Prediction[ModelState, Outcome]
    ) -> Prediction[ModelState, Outcome]:
        """Sharpen the model's prediction with what only the SUT can know: a crash
        that came after the operation completed leaves no excuse to lose it, and
        a journal with no record but the last has nothing that can be corrupt."""
        main = prediction.readings[0]
        if before.durability == "batched" and isinstance(operation, (CrashDuring, CorruptRecord)):
            return self._narrow_batched(live, operation, prediction)
        # A reopen may yield the state after an earlier operation whose outcome
        # was unknown whatever this step did: that reading always stays.
        in_doubt = tuple(reading for reading in prediction.readings if reading.note == IN_DOUBT)
        if isinstance(operation, CrashDuring) and main.error is not None and live.sut_report:
            # The operation was failing (say, a write refused) when the crash hit:
            # the process died before it could report the error; nothing changed
            # but, maybe, the armed fault it spent (the model's other reading).
            return replace(prediction, readings=tuple(replace(reading, error=None) for reading in prediction.readings))
        if isinstance(operation, CrashDuring) and not live.sut_report:
            return replace(prediction, readings=(main, *in_doubt))  # the crash came after the operation
        if isinstance(operation, CorruptRecord) and not live.sut_report:
            # Nothing but the last record to corrupt: a plain restart, which
            # reopens a poisoned journal too.
            return replace(prediction, readings=tuple(replace(reading, error=None) for reading in (main, *in_doubt)))
        return prediction

    @staticmethod
    def _narrow_batched(
        live: LiveSession, operation: CrashDuring | CorruptRecord, prediction: Prediction[ModelState, Outcome]
    ) -> Prediction[ModelState, Outcome]:
        """Batched mode: a crash that came after the operation still loses what
        was not flushed, so no reading is dropped. A crash that interrupted a
        failing operation, or a corruption that found no record, raises nothing."""
        if isinstance(operation, CrashDuring):
            quiet = live.sut_report and prediction.readings[0].error is not None
        else:
            quiet = not live.sut_report
        if not quiet:
            return prediction
        return replace(prediction, readings=tuple(replace(reading, error=None) for reading in prediction.readings))

    def tally(self, tallies: Counter[str], operation: Operation, prediction: Prediction[ModelState, Outcome], matched: Reading[ModelState] | None) -> None:
        """Count the batched crashes whose recovery went back before the crash
        point (the SUT's doing; the situations only say the window was open)."""
        if isinstance(operation, (Restart, CrashDuring, CorruptRecord)) and prediction.outcome.window:
            tallies["batched_crashes_with_window"] += 1
            if matched is not None and matched.note == BEFORE_THE_CRASH_POINT:
                tallies["batched_recovered_before_crash_point"] += 1
        if matched is not None and matched.note == CONTENT_IDENTICAL:
            tallies["identical_write_crossed"] += 1
        self._tally_retries(tallies, prediction.outcome, matched)
        if matched is not None and prediction.outcome.message == FAULT_KEPT:
            tallies[FAULT_FIGURES[0] if matched.error is not None else FAULT_FIGURES[1]] += 1

    @staticmethod
    def _tally_retries(tallies: Counter[str], outcome: Outcome, matched: Reading[ModelState] | None) -> None:
        """RETRY_FIGURES. The judge's first reading stays the poisoned one after a
        clean refusal; an operation that reading refuses shows the target's
        choice: taken (only the usable reading explains it) or refused. A
        refusal counts only with no fault waiting, which would refuse the
        operation in the usable reading too and so show nothing."""
        if matched is None:
            return
        state = outcome.state
        if outcome.retry is not None:
            tallies["clean_refusals"] += 1
        elif outcome.message == POISONED and state.clean_refusal:
            if matched.error is None:
                tallies["retries_accepted"] += 1
            elif not state.fault_armed and state.disk_fault is None:
                tallies["poisoned_after_refusal"] += 1

    def figures(self, tallies: Counter[str]) -> dict[str, float]:
        named = (*BATCHED_FIGURES, "identical_write_crossed", *RETRY_FIGURES, *FAULT_FIGURES)
        return {name: float(tallies[name]) for name in named if name in tallies}

    # -- certification ---------------------------------------------------------------------

    def required_capabilities(self, property_id: str) -> frozenset[Capability]:
        return REQUIRED_CAPABILITIES[property_id]

    def situations(self, property_id: str, target: Target) -> tuple[Any, ...]:
        return tuple(
            situation
            for situation in super().situations(property_id, target)
            if SITUATION_CAPABILITY.get(situation.name, Capability.CORE) in target.capabilities
        )

    def build_machine(self, target: Target, property_id: str, tracker: Tracker) -> type[RollbackMachine]:
        """A machine class with exactly the rules ``property_id`` uses on ``target``."""
        namespace: dict[str, Any] = {name: RULES[name] for name in rules_for(property_id, target.capabilities)}
        world = world_of(target)
        namespace.update(
            family=self,
            target=target,
            tracker=tracker,
            bounded=(
                "never"
                if Capability.BOUNDED not in target.capabilities
                else {"R0": "sometimes", "R6": "always"}.get(property_id, "never")
            ),
            durable=property_id == "R5",
            # Only where a multi-byte character can be drawn: the records the undo at
            # once is for misplace themselves only after one, and in an ASCII world
            # (pycrdt's) it only thinned the runs of plain splices that pycrdt's own
            # R2 finding needs (found at ci seed 0 on one run of three, was every run).
            undoes_at_once=property_id == "R2" and bool(world.characters()),
            world=world,
        )
        return type(f"{property_id}Machine", (RollbackMachine,), namespace)

    # -- minimisation ---------------------------------------------------------------------

    def without_step(self, operations: list[Operation], index: int) -> list[Operation] | None:
        """Delete one step, renumbering checkpoints; ``None`` if a later step needs it."""
        if not isinstance(operations[index], TakeCheckpoint):
            return operations[:index] + operations[index + 1 :]
        return shrink.without_numbered(
            operations,
            index,
            lambda op: op.checkpoint if isinstance(op, RollbackTo) else None,
            lambda op, number: RollbackTo(number),
        )

    def simpler(self, operation: Operation) -> Iterator[Operation]:
        if isinstance(operation, (Splice, OutOfLogWrite)):
            if isinstance(operation.insert, (bytearray, memoryview)):
                # The same bytes as bytes, in case the story is not the insert's type.
                yield replace(operation, insert=bytes(operation.insert))
            yield from shrink.simpler_edits(operation)
        elif isinstance(operation, Rollback) and type(operation.steps) is int and operation.steps > 1:
            yield Rollback(operation.steps - 1)
        elif isinstance(operation, Compact) and type(operation.keep) is int and operation.keep > 0:
            yield Compact(0)
            yield Compact(operation.keep - 1)
        elif isinstance(operation, CorruptRecord):
            yield Restart()  # a plain crash is the simpler story
            if operation.damage != "bit_flip":
                yield CorruptRecord()  # ... or the commonest damage
        elif isinstance(operation, CrashDuring):
            yield operation.operation  # no crash at all
            for lost in sorted({0, 1, operation.lost // 2, operation.lost - 1}):
                if 0 <= lost < operation.lost:
                    yield replace(operation, lost=lost)
            if operation.io_event:
                yield replace(operation, io_event=0)
                yield replace(operation, io_event=operation.io_event - 1)
            for inner in self.simpler(operation.operation):
                if isinstance(inner, (Splice, Rollback, RollbackTo, Compact)):
                    yield replace(operation, operation=inner)

    def candidates(self, config: BufferConfig, operations: list[Operation]) -> Candidates:
        if config.durability == "batched":
            yield replace(config, durability="per_operation"), operations  # the stronger promise, if it fails too
        yield from shrink.large_start_halved(config, operations)
        yield from shrink.chunk_bytes_moves(config, operations)
        yield from shrink.start_revision_moves(config, operations)
        if len(operations) > LONG_TRACE:
            # A long bounded history: a much smaller journal first, so the edits it
            # no longer needs go one by one in the cheap deletions that follow.
            yield from _much_smaller_capacity(config, operations)
            yield from _undone_blocks_deleted(config, operations)
            yield from shrink.halving_deletions(self, config, operations)
        yield from shrink.single_deletions(self, config, operations)
        if len(operations) > LONG_TRACE:
            # A long history (strategies.history_length): a rollback over fewer of its
            # records, then its prefix folded into the start, before the moves whose
            # count grows with the trace (pairs, simpler steps) spend the replay budget.
            yield from _shorter_rollbacks(config, operations)
            yield from shrink.folded_setup(self, config, operations, _builds_bytes)
        yield from shrink.cuts_with_shift(config, operations)
        yield from shrink.edit_with_its_rollback_shortened(config, operations, (Splice,))
        yield from ((config, candidate) for candidate in _rollback_to_as_rollback(config, operations))
        yield from _idle_crash_merged(config, operations)
        # A step fewer before the moves that only make a trace plainer: those accept
        # sideways moves one byte at a time, and on the kilobytes of a wide paste
        # they spent the replay budget before the fold below was ever tried.
        yield from shrink.folded_setup(self, config, operations, _builds_bytes)
        yield from shrink.pair_deletions(self, config, operations)
        yield from shrink.simpler_operations(self, config, operations)
        yield from shrink.shorter_initial(config, operations)
        yield from shrink.plainer_initial(config, operations)
        yield from self._smaller_capacity(config, operations)
        # Last: folding trades steps for a longer starting buffer, so it is tried only
        # on a trace no other move improves.
        yield from shrink.folded_setup(self, config, operations, _builds_bytes)
        # After every greedy move failed: the shortest traces over a small alphabet,
        # from an empty buffer (and the trace's own), for the dead ends no one move leaves.
        yield from self._small_scope(config, operations)

    def _small_scope(self, config: BufferConfig, operations: list[Operation]) -> Candidates:
        starts = [replace(config, initial=b"")] + ([config] if config.initial else [])
        every_machine = {pid: rules_for(pid, frozenset(Capability)) for pid in self.property_ids}
        kinds = small_scope.shared_kinds(config, operations, every_machine)
        yield from shrink.small_scope_search(self, starts, operations, small_scope.alphabet(kinds))

    def _smaller_capacity(self, config: BufferConfig, operations: list[Operation]) -> Candidates:
        if config.capacity is not None and config.capacity > 1:
            smaller = replace(config, capacity=config.capacity - 1)
            yield smaller, operations
            # A smaller journal fills one edit sooner: drop an edit in the same move.
            for _, shorter in shrink.single_deletions(self, config, operations):
                yield smaller, shorter

    def generable(self, config: BufferConfig, operations: Sequence[Operation], target: Target) -> bool:
        """Whether the machines could have produced this trace (their preconditions):
        an out-of-log write that changes nothing, say, is a step no machine takes,
        and a counterexample built on it would confuse more than it explains."""
        try:
            state = _initial(config)
            for operation in operations:
                if isinstance(operation, OutOfLogWrite) and (
                    state.depth in state.barriers
                    or splice_bytes(state.current, operation.offset, operation.delete_length, operation.insert)
                    == state.current
                ):
                    return False
                if isinstance(operation, (ArmJournalFault, DiskFault)) and (
                    state.fault_armed or state.disk_fault is not None
                ):
                    return False  # one fault waits at a time
                if isinstance(operation, CrashDuring) and state.disk_fault is not None:
                    return False  # the machines crash no splice that meets a disk fault
                if isinstance(operation, Rollback) and state.depth == 0:
                    return False  # every rollback rule waits for a record to undo
                if target.sets_aside(state, operation):
                    return False
                if (target.typed_wire or not target.checks_arguments) and _of_another_type(operation):
                    return False  # bad_arguments sends wrong types only where checked (Target.checks_arguments)
                needed = RULE_CAPABILITY.get(operation.kind)
                if needed is not None and needed not in target.capabilities:
                    return False  # the small-scope search proposes every kind; the target lacks this one
                if isinstance(operation, RollbackTo) and not 0 <= operation.checkpoint < len(state.checkpoints):
                    return False
                named = _checkpoint_named(operation)
                if named is not None and not 0 <= named < len(state.checkpoints):
                    return False
                try:
                    state = step(state, operation).state
                except (ValueError, TypeError):
                    if isinstance(operation, CrashDuring):
                        return False  # the crash rules only draw valid arguments
                    continue  # a bad-argument step (R0's bad_arguments): refused, nothing changes
        except (ValueError, TypeError):
            return False  # a bad configuration
        return True


def _of_another_type(operation: Operation) -> bool:
    """Whether an argument of ``operation`` is of another type than the one it
    takes (an int, or a bytes-like insert): what R0's bad_arguments sends only to
    a target that declares it checks its arguments (``Target.checks_arguments``)
    and not over a typed wire (``Target.typed_wire``)."""
    inner = operation.operation if isinstance(operation, CrashDuring) else operation
    if isinstance(inner, Splice):
        plain = type(inner.offset) is int and type(inner.delete_length) is int
        return not (plain and isinstance(inner.insert, (bytes, bytearray, memoryview)))
    if isinstance(inner, Rollback):
        return type(inner.steps) is not int
    return isinstance(inner, Compact) and type(inner.keep) is not int


def _builds_bytes(operation: Operation) -> bool:
    """Steps a trace may start from the bytes of instead (:func:`shrink.folded_setup`):
    splices, out-of-log writes and adoptions; the replay decides whether the
    story needed their records."""
    return isinstance(operation, (Splice, OutOfLogWrite, AdoptCurrent))


def _initial(config: BufferConfig) -> ModelState:
    """The model of a fresh buffer of ``config``; the durability mode counts only on a durable journal."""
    durability = config.durability if config.durable else "per_operation"
    return initial_state(
        config.initial,
        config.capacity,
        config.policy,
        durability,
        durable=config.durable,
        start_revision=config.start_revision,
    )


def _checkpoint_named(operation: Operation) -> int | None:
    """The checkpoint a rollback_to (or the one a crash interrupts) names."""
    inner = operation.operation if isinstance(operation, CrashDuring) else operation
    return inner.checkpoint if isinstance(inner, RollbackTo) else None


#: A trace longer than this is shrunk long-history moves first (see RollbackFamily.candidates).
LONG_TRACE = 12


def _shorter_rollbacks(config: BufferConfig, operations: list[Operation]) -> Candidates:
    """A multi-step rollback over two records, or over half as many."""
    for index, operation in enumerate(operations):
        if isinstance(operation, Rollback) and type(operation.steps) is int and operation.steps > 2:
            for steps in sorted({2, operation.steps // 2}):
                yield config, [*operations[:index], Rollback(steps), *operations[index + 1 :]]


def _undone_blocks_deleted(config: BufferConfig, operations: list[Operation]) -> Candidates:
    """A block of the edits a later rollback(n) undoes, taken out together with as
    many of its steps (halves first): a rollback over fifty records that misplaces
    one keeps failing with fewer, but neither a deletion alone (the rollback then
    reaches past the log and is refused) nor a shorter rollback alone (it stops
    before the record) shows it. Only runs of splices, each of which the rollback undoes."""
    for index, operation in enumerate(operations):
        if not isinstance(operation, Rollback) or type(operation.steps) is not int or operation.steps < 4:
            continue
        reach = max(0, index - operation.steps)  # the first step whose record this rollback undoes
        if not all(isinstance(earlier, Splice) for earlier in operations[reach:index]):
            continue
        size = operation.steps // 2
        while size >= 2:
            for first in range(reach, index - size + 1, size):
                yield config, [
                    *operations[:first], *operations[first + size : index],
                    Rollback(operation.steps - size), *operations[index + 1 :],
                ]
            size //= 2


def _much_smaller_capacity(config: BufferConfig, operations: list[Operation]) -> Candidates:
    """A long bounded history's journal at capacity 1, or half its capacity: the
    same edits then evict more, and the edits a smaller journal does not need
    can go one by one. (One record less per move, as :meth:`RollbackFamily._smaller_capacity`
    does, takes some sixty moves down from a long history's 66, each after a pass
    of failing deletions: the replay budget ran out with a 71-step trace whose
    story — a checkpoint evicted, then a rollback_to — needs four, and a 135-step
    one with kilobyte buffers ran for minutes.)"""
    if config.capacity is not None and config.capacity > 2:
        for capacity in (1, config.capacity // 2):
            yield replace(config, capacity=capacity), operations


def _rollback_to_as_rollback(config: BufferConfig, operations: list[Operation]) -> Iterator[list[Operation]]:
    """A rollback_to a live checkpoint is a rollback(n); once rewritten, the
    checkpoint itself can go in a later pass."""
    try:
        state = _initial(config)
    except (ValueError, TypeError):
        return
    for index, operation in enumerate(operations):
        if isinstance(operation, RollbackTo) and 0 <= operation.checkpoint < len(state.checkpoints):
            serial, _ = state.checkpoints[operation.checkpoint]
            if serial in state.serials:
                steps = state.depth - state.serials.index(serial)
                yield operations[:index] + [Rollback(steps)] + operations[index + 1 :]
        try:
            state = step(state, operation).state
        except (ValueError, TypeError):
            continue


def _idle_crash_merged(config: BufferConfig, operations: list[Operation]) -> Candidates:
    """An operation followed by an idle crash is one step: the same operation
    with a crash scheduled after its last I/O call (R5)."""
    for index in range(len(operations) - 1):
        operation, following = operations[index], operations[index + 1]
        if isinstance(following, Restart) and isinstance(operation, (Splice, Rollback, RollbackTo, Compact)):
            merged = CrashDuring(operation, strategies.AFTER_THE_LAST_IO_CALL, 0)
            yield config, operations[:index] + [merged] + operations[index + 2 :]


#: The rollback family: one object serves every run.
ROLLBACK = RollbackFamily()
