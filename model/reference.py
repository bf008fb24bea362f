"""The reference model: a pure step function over an immutable history.

Read this file to learn what a correct rollback log *means*. It keeps the whole
buffer after every live edit, so rollback is a pointer move and can never be
wrong; it is the oracle every implementation is compared with, and it is never
optimised. Each rule below is marked with the property it states (see
``rollcert.model.properties`` for the prose of R0–R6).

``step(state, operation)`` returns an :class:`Outcome`: the state after the
operation and the documented error it raised, if any. On an error the state is
the one before (an error changes nothing), with one documented exception: a
multi-step rollback stopped by an out-of-log write may stop at the write
(``Outcome.also_acceptable``), because that state is itself a consistent
earlier state.

A durable journal has a *durability mode* (``ModelState.durability``). In
``per_operation`` mode every operation is durable when it returns. In
``batched`` mode only an explicit flush is relied on: the model keeps every
state since the last flush (``ModelState.since_flush``), and a crash may
recover any of them (:func:`recovery_window`, R5's batched variant).

A durable journal (``ModelState.durable``) is *poisoned* by a failed write or
sync (R1, R5): the operation that met the failure is refused with
``JournalError`` and is not in the history, and every later operation that
would write to the journal is refused too, changing nothing, until the journal
is reopened (a ``Reopen``, or the recovery after a crash). If the failure left
the file possibly holding the refused record (its cut-back failed too), its
outcome is unknown: the buffer shows the state before it, and the reopen may
yield that state or the one after it (``ModelState.in_doubt``).

**Clean refusals: poisoned, or usable for the retry.** Poisoning is the safe
answer to a failure whose effect on the file nobody can vouch for. Two
failures leave such a doubt: a failed fsync (the kernel may have dropped
dirty pages, of this record or earlier ones, and will not say so again) and a
failed cut-back (the file may still hold the record). A *clean refusal* leaves
none: the record's append failed and nothing of it is in the file — the
failed write wrote nothing or was cut back durably, and no sync failed. The
clean refusals are exactly an armed journal fault (``ArmJournalFault``: the
append is refused) and a disk fault in ``CLEAN_REFUSAL_FAULTS`` (a failed
write, cut back). After a clean refusal the rules allow both answers to what
comes next: the journal stays poisoned (refusing until reopened, as after
any failure), or it stays usable and takes the retry of the same splice or any
other operation, as SQLite does after a failed commit (the seed: a failed
append "forces the agent to retry"). The model keeps the poisoned state as its
outcome and the usable one beside it (``Outcome.retry``); the judge carries
both until the target shows which it is. After a failed sync, a failed
cut-back or a failed flush only poisoning is allowed.

**A fault armed across a refusal for another reason: kept, or spent.** An
armed journal fault makes "the next append of an inverse record" fail. A
splice that a full journal with the reject policy refuses, or that a poisoned
journal refuses, may never reach the append (the check comes first, as in the
model's main outcome: the fault stays armed for the next splice), or may try
it and meet the fault (the capacity or poison check comes after the append
attempt, or the target's fault hook sits at its API, before both). Both refuse
the splice with ``JournalError`` and change nothing a reader sees; they differ
only in whether the *next* splice fails. Neither the rules nor the seeds order
the checks, so both are allowed (``Outcome.fault_spent``): the judge carries
both until the target shows which, and the certificate counts which it saw
(``ModelState.fault_kept``, the figures ``fault_kept_through_refusal`` and
``fault_spent_on_refusal``). On a durable journal a fault met by such an
append is a clean refusal like any other: poisoned, or usable.
"""


from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from typing import Literal

from rollcert.model.contract import check_integer
from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import RecoveryError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import CLEAN_REFUSAL_FAULTS
from rollcert.model.operations import DISK_FAULTS
from rollcert.model.operations import UNCLEANED_FAULTS
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Compact
from rollcert.model.operations import CorruptRecord
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import DiskFault
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint

Policy = Literal["reject", "evict_oldest"]
POLICIES: tuple[Policy, ...] = ("reject", "evict_oldest")
DurabilityMode = Literal["per_operation", "batched"]
DURABILITY_MODES: tuple[DurabilityMode, ...] = ("per_operation", "batched")
#: The serial of a checkpoint whose state a batched crash lost: it names no
#: state, ever again (the journal may hand the lost serial out a second time).
LOST_SERIAL = -1


def splice_bytes(buffer: bytes, offset: int, delete_length: int, insert: bytes) -> bytes:
    """``B[:o] + s + B[o+d:]`` — the whole meaning of a splice."""
    return buffer[:offset] + insert + buffer[offset + delete_length :]


@dataclass(frozen=True)
class ModelState:
    """Everything the model knows, immutable.

    ``states[0]`` is the horizon (the oldest reachable state), ``states[-1]`` the
    current buffer; the depth is ``len(states) - 1``. ``serials[i]`` is a unique
    identity for ``states[i]``: a checkpoint names a serial, so it dies exactly
    when its state leaves the history, even if another state later has the same
    depth or the same bytes (S3, no ABA). ``checkpoints`` holds, per checkpoint
    taken, the pair (serial, depth when taken): the depth is never used to find
    the state, only to recognise the tempting case of a dead checkpoint whose
    depth has been reached again. ``edits[i]`` is the splice that made
    ``states[i]`` from ``states[i-1]`` (``None`` for the horizon); it is kept only
    to explain counterexamples and measure coverage. ``barriers`` holds the
    depths at which an out-of-log write happened (R4). ``log_start`` is the
    serial of the state the log was started from (0, or the state adopted by
    ``adopt_current``): the horizon has moved by eviction or compaction exactly
    when ``serials[0]`` differs from it (R6 tells an eviction from an adoption).

    ``durability`` is the journal's mode (R5). In ``batched`` mode
    ``since_flush`` holds the states this buffer was in since the last flush,
    oldest first — the first is the flushed one — each with an empty
    ``since_flush`` of its own; the current state is not in it. A crash may
    recover any of them or the current state (:func:`recovery_window`). In
    ``per_operation`` mode it is always empty: nothing that returned can be lost.

    ``durable`` says the journal is on a disk; a failed write or sync then
    ``poisoned`` it (it refuses every operation that would write until it is
    reopened). ``disk_fault`` is the disk failure armed for the next splice's
    record (one of ``DISK_FAULTS``). ``in_doubt`` is the state after an
    operation that was refused with its outcome unknown (its record may be in
    the file): a reopen may yield it instead of the current state.
    ``clean_refusal`` says the poisoning came from a clean refusal (see the
    module's docstring), so that the journal might as well have stayed usable
    (``Outcome.retry``); it changes nothing the model predicts, and lets a
    certificate count which of the two a target showed.
    """

    states: tuple[bytes, ...]
    serials: tuple[int, ...]
    next_serial: int
    revision: int = 0
    barriers: frozenset[int] = frozenset()
    log_start: int = 0
    capacity: int | None = None
    policy: Policy = "reject"
    fault_armed: bool = False
    checkpoints: tuple[tuple[int, int], ...] = ()
    edits: tuple[Splice | None, ...] = (None,)
    durability: DurabilityMode = "per_operation"
    since_flush: tuple[ModelState, ...] = ()
    durable: bool = False
    poisoned: bool = False
    disk_fault: str | None = None
    in_doubt: ModelState | None = None
    clean_refusal: bool = False
    #: An armed fault stayed armed through a splice refused for another reason
    #: (a full reject journal, a poisoned one), which a target may as well have
    #: spent (``Outcome.fault_spent``); cleared when the fault is spent. Like
    #: ``clean_refusal`` it changes nothing the model predicts, and lets the
    #: certificate say which of the two a target showed.
    fault_kept: bool = False

    @property
    def current(self) -> bytes:
        return self.states[-1]

    @property
    def depth(self) -> int:
        return len(self.states) - 1


def initial_state(
    initial: bytes,
    capacity: int | None = None,
    policy: Policy = "reject",
    durability: DurabilityMode = "per_operation",
    durable: bool = False,
    start_revision: int = 0,
) -> ModelState:
    """The model of a fresh buffer: one state, depth 0, revision 0 (or
    ``start_revision``: a buffer may start as if that many mutations had
    happened; revisions only grow from there). A new journal is created
    synced, so nothing precedes it in ``since_flush``. ``durable``: the journal
    is on a disk, where a failed write poisons it."""
    if not isinstance(initial, (bytes, bytearray)):
        raise TypeError(f"initial buffer must be bytes, got {type(initial).__name__}")
    if capacity is not None and (check_integer("capacity", capacity) < 1):
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if durability not in DURABILITY_MODES:
        raise ValueError(f"durability must be one of {DURABILITY_MODES}, got {durability!r}")
    if check_integer("start_revision", start_revision) < 0:
        raise ValueError(f"start_revision must be >= 0, got {start_revision}")
    return ModelState(
        revision=start_revision,
        states=(bytes(initial),),
        serials=(0,),
        next_serial=1,
        capacity=capacity,
        policy=policy,
        durability=durability,
        durable=bool(durable),
    )


@dataclass(frozen=True)
class Outcome:
    """What the model predicts for one operation.

    ``error`` is ``None`` on success. ``also_acceptable`` is a second state an
    implementation may end in (a rollback interrupted by divergence; the state
    before an operation a crash interrupted). ``window`` holds the further
    states a recovery in batched mode may yield: every state since the last
    flush before the crash point, oldest first, as recovered (R5, batched).
    ``in_doubt`` is the state a reopen may also yield because an earlier
    operation's outcome was unknown (R1, R5). ``retry`` is, after a clean
    refusal on a durable journal, the state in which the journal stayed usable
    (the fault spent, nothing recorded, not poisoned): allowed, never required.
    """

    state: ModelState
    error: type[Exception] | None = None
    also_acceptable: ModelState | None = None
    message: str = ""
    window: tuple[ModelState, ...] = ()
    in_doubt: ModelState | None = None
    retry: ModelState | None = None
    #: A splice refused for another reason than its armed fault (a full reject
    #: journal, a poisoned one): the states in which the refusal spent the fault
    #: as well (see the module's docstring). Allowed, never required.
    fault_spent: tuple[ModelState, ...] = ()


#: The message of a splice that meets an armed fault kept through an earlier
#: refusal (``ModelState.fault_kept``): where a target that spent it there differs.
FAULT_KEPT = "journal append failed (the fault was armed before an earlier refusal, and kept)"
#: The message of an operation a poisoned journal refuses.
POISONED = "the journal is poisoned by an earlier I/O failure: it refuses until reopened"


def _refused_by_poison(state: ModelState) -> Outcome:
    """R1/R5: a poisoned journal refuses, recording nothing and changing nothing."""
    return Outcome(state, JournalError, message=POISONED)


def _refused_cleanly(spent: ModelState, message: str) -> Outcome:
    """R1/R5: a record refused with nothing of it in the file (a clean refusal,
    see the module's docstring). ``spent`` is the state before, the fault used
    up. An in-memory journal is simply unchanged; a durable one is poisoned, or
    may stay usable and take the retry (``Outcome.retry``)."""
    if not spent.durable:
        return Outcome(spent, JournalError, message=message)
    poisoned = replace(spent, poisoned=True, clean_refusal=True)
    return Outcome(poisoned, JournalError, message=message, retry=spent)


def _fault_met_anyway(state: ModelState, outcome: Outcome) -> Outcome:
    """``outcome``, a splice refused before its append (a full reject journal, a
    poisoned one), with an armed fault kept (``fault_kept``) and, beside it, the
    states in which the refusal met and spent the fault as well: unchanged, or
    on a durable journal not yet poisoned, poisoned by that clean refusal (see
    the module's docstring: both orders of the checks are allowed)."""
    if not state.fault_armed:
        return outcome
    spent = replace(state, fault_armed=False, fault_kept=False)
    also: tuple[ModelState, ...] = (spent,)
    if state.durable and not state.poisoned:
        also += (replace(spent, poisoned=True, clean_refusal=True),)
    return replace(outcome, state=replace(outcome.state, fault_kept=True), fault_spent=also)


def _splice(state: ModelState, operation: Splice) -> Outcome:
    offset, delete_length, insert = check_splice_arguments(
        len(state.current), operation.offset, operation.delete_length, operation.insert
    )
    full = state.capacity is not None and state.depth >= state.capacity
    # R6 (bounded log): a full journal with the reject policy refuses the record
    # before trying to store it (or, allowed too, meets an armed fault on the way).
    if full and state.policy == "reject":
        return _fault_met_anyway(state, Outcome(state, JournalError, message="journal full"))
    if state.poisoned:
        # An armed fault waits: nothing reached the disk (or, allowed too, it was met).
        return _fault_met_anyway(state, _refused_by_poison(state))
    # R1 (log completeness): if the inverse record cannot be committed, the splice
    # fails and nothing changes (not even an eviction). The armed fault is spent;
    # the refusal is clean, so a durable journal is poisoned or takes the retry (R5).
    if state.fault_armed:
        message = FAULT_KEPT if state.fault_kept else "journal append failed"
        return _refused_cleanly(replace(state, fault_armed=False, fault_kept=False), message)
    if state.disk_fault is not None:
        # R1/R5: the record's write or sync failed. Refused; if its cut-back
        # failed too, the file may hold it, and a reopen may yield it. Only a
        # failed write that was cut back is a clean refusal.
        fault, after = state.disk_fault, _spliced(state, offset, delete_length, insert)
        if fault in CLEAN_REFUSAL_FAULTS:
            return _refused_cleanly(replace(state, disk_fault=None), f"the record's {fault} failed: refused, nothing recorded")
        refused = replace(state, disk_fault=None, poisoned=True)
        if fault in UNCLEANED_FAULTS:
            refused = replace(refused, in_doubt=replace(after, disk_fault=None))
            return Outcome(refused, JournalError, message=f"the {fault.replace('_', ' ')} failed: outcome unknown")
        return Outcome(refused, JournalError, message=f"the record's {fault} failed: refused, nothing recorded")
    return Outcome(_spliced(state, offset, delete_length, insert))


def _spliced(state: ModelState, offset: int, delete_length: int, insert: bytes) -> ModelState:
    """The state after a splice the journal took."""
    full = state.capacity is not None and state.depth >= state.capacity
    states, serials, edits, barriers = state.states, state.serials, state.edits, state.barriers
    # R6: the evict policy drops the *oldest* record and moves the horizon.
    if full:
        states, serials, edits = states[1:], serials[1:], (None,) + edits[2:]
        barriers = frozenset(b - 1 for b in barriers if b >= 1)
    new_buffer = splice_bytes(state.current, offset, delete_length, insert)
    return replace(
        state,
        states=states + (new_buffer,),
        serials=serials + (state.next_serial,),
        edits=edits + (Splice(offset, delete_length, insert),),
        next_serial=state.next_serial + 1,
        revision=state.revision + 1,
        barriers=barriers,
    )


def _rollback_steps(state: ModelState, steps: int) -> Outcome:
    """R3: n single LIFO steps. R4: the step from a depth with a barrier raises."""
    if steps > state.depth:
        return Outcome(
            state,
            UnreachableRollbackError,
            message=f"rollback({steps}) goes past the horizon (depth {state.depth})",
        )
    reached = state
    for _ in range(steps):
        if reached.depth in reached.barriers:
            # R4: undoing this record would cross an out-of-log write.
            return Outcome(
                state,
                DivergenceError,
                also_acceptable=reached if reached != state else None,
                message=f"out-of-log write at depth {reached.depth}",
            )
        reached = replace(
            reached,
            states=reached.states[:-1],
            serials=reached.serials[:-1],
            edits=reached.edits[:-1],
            revision=reached.revision + 1,
        )
    return Outcome(reached)


def compaction_may_refuse(state: ModelState, operation: Operation) -> bool:
    """R0 and R4: whether a compaction may also be refused with DivergenceError,
    changing nothing — when a record it keeps lies above an out-of-log write.

    The model keeps every state whole, so it folds records into a base
    truthfully whatever happened between them, and succeeds. A journal of
    inverses cannot: it computes the new base by undoing the kept records from
    the live buffer, and undoing one that sits above an out-of-log write crosses
    that write — the same crossing R4 forbids a rollback — giving a base that
    never existed. Refusing is then the honest answer, and it loses nothing
    (the journal keeps growing; a later compaction that keeps fewer records
    succeeds). So both are allowed: succeed, as the model does, or refuse and
    change nothing. A write at the depth compaction folds down to is not
    crossed (the base is the state with the write in it)."""
    if not isinstance(operation, Compact) or type(operation.keep) is not int:
        return False
    if not 0 < operation.keep <= state.depth:
        return False
    folded_down_to = state.depth - operation.keep
    return any(folded_down_to < barrier <= state.depth for barrier in state.barriers)


def content_verified_rollback(state: ModelState, operation: Operation) -> ModelState | None:
    """R4, what a target can observe: the state a rollback the rules refuse
    (it crosses an out-of-log write) may still reach, or ``None``.

    A target that verifies content (a digest of the state each record must
    restore) cannot see an out-of-log write that leaves the bytes a record
    checks as they should be: say the write changed only bytes the record
    itself removes. If undoing every record, newest first at its recorded
    offset, gives exactly the state the log names before it at every step,
    the rollback yields the state it names, and refusing is not the only
    answer the rules allow (SPEC §6a). Allowed, never required: the model's
    own outcome stays DivergenceError. The crossed barriers go with the
    records above them."""
    if isinstance(operation, Rollback):
        steps = operation.steps
    elif isinstance(operation, RollbackTo) and 0 <= operation.checkpoint < len(state.checkpoints):
        serial, _ = state.checkpoints[operation.checkpoint]
        if serial not in state.serials:
            return None
        steps = state.depth - state.serials.index(serial)
    else:
        return None
    if not 0 < steps <= state.depth:
        return None
    reached, buffer = state, state.current
    for _ in range(steps):
        depth = reached.depth
        edit, below = reached.edits[depth], reached.states[depth - 1]
        if edit is None:
            return None
        if edit.offset > len(buffer):
            return None
        # The inserted span is cut as far as the (diverged) buffer reaches: the
        # check that counts is the one on the state the undo gives.
        end = edit.offset + len(edit.insert)
        buffer = buffer[: edit.offset] + below[edit.offset : edit.offset + edit.delete_length] + buffer[end:]
        if buffer != below:
            return None
        reached = replace(
            reached,
            states=reached.states[:-1],
            serials=reached.serials[:-1],
            edits=reached.edits[:-1],
            revision=reached.revision + 1,
            barriers=reached.barriers - {depth},
        )
    return reached


def _rollback_to(state: ModelState, operation: RollbackTo) -> Outcome:
    index = check_integer("checkpoint", operation.checkpoint)
    if not 0 <= index < len(state.checkpoints):
        raise ValueError(f"no checkpoint #{index} was taken in this run")  # unreachable: the machines name only checkpoints they took
    serial, _ = state.checkpoints[index]
    # R3 / S3: a checkpoint lives exactly as long as the state it named.
    if serial not in state.serials:
        return Outcome(state, UnreachableRollbackError, message=f"checkpoint #{index} is dead")
    return _rollback_steps(state, state.depth - state.serials.index(serial))


def _out_of_log_write(state: ModelState, operation: OutOfLogWrite) -> Outcome:
    offset, delete_length, insert = check_splice_arguments(
        len(state.current), operation.offset, operation.delete_length, operation.insert
    )
    # R4: the system cannot prevent this write, but it must remember that the
    # log's picture of this depth is now false.
    changed = splice_bytes(state.current, offset, delete_length, insert)
    return Outcome(
        replace(
            state,
            states=state.states[:-1] + (changed,),
            barriers=state.barriers | {state.depth},
        )
    )


def _compact(state: ModelState, operation: Compact) -> Outcome:
    """The oldest ``depth - keep`` records are folded into the base: the horizon
    moves (like an eviction, R6), the buffer and revision do not change.

    SPEC §2: a ``keep`` that is no int (a bool included) is a TypeError, one
    outside ``[0, depth]`` a ValueError, both before anything else (a poisoned
    journal's refusal included): bad input is refused for what it is."""
    keep = check_integer("keep", operation.keep)
    if not 0 <= keep <= state.depth:
        raise ValueError(f"keep must be in [0, {state.depth}] (the depth), got {keep}")
    dropped = state.depth - keep
    return Outcome(
        replace(
            state,
            states=state.states[dropped:],
            serials=state.serials[dropped:],
            edits=(None,) + state.edits[dropped + 1 :],
            barriers=frozenset(b - dropped for b in state.barriers if b >= dropped),
        )
    )


def recovery_window(state: ModelState) -> tuple[ModelState, ...]:
    """R5: the states a crash in ``state`` may recover, oldest first.

    Per-operation mode: only ``state`` (an operation that returned is durable).
    Batched mode: every state from the last flush up to ``state`` — a prefix of
    the operations, never a state outside the history (``R5_BATCHED``).

    The journal also syncs by itself (every N records, every T ms, when it cuts
    back a failed write); the model does not know when, so it relies on the
    explicit flushes only. The window from the last explicit flush contains the
    one from the last sync of any kind: a sound over-approximation, which can
    only make the check accept a recovery that went back past an automatic
    sync (never refuse a correct one).
    """
    return state.since_flush + (replace(state, since_flush=()),)


def recovered(crashed: ModelState, at: ModelState) -> ModelState:
    """The model after a crash in ``crashed`` whose recovery yielded ``at`` (a
    state of its :func:`recovery_window`): ``at`` as it was — buffer, records,
    serials and revision — and, the recovery having read it back from the
    disk, durable (nothing since a flush). What the run did outside the
    journal stays: the checkpoints taken (numbered by the run) and an armed
    fault (and an armed disk fault). A reopened journal is no longer poisoned.
    A checkpoint of a state the crash lost names nothing ever again:
    its serial was handed out after ``at`` and the journal may hand it out a
    second time (:data:`LOST_SERIAL`)."""
    checkpoints = tuple(
        (serial if serial < at.next_serial else LOST_SERIAL, depth) for serial, depth in crashed.checkpoints
    )
    return replace(
        at,
        since_flush=(),
        checkpoints=checkpoints,
        fault_armed=crashed.fault_armed,
        disk_fault=crashed.disk_fault,
        poisoned=False,
        clean_refusal=False,
        in_doubt=None,
    )


def _recovery(crashed: ModelState, error: type[Exception] | None = None, message: str = "") -> Outcome:
    """A crash in ``crashed`` and its recovery: the current state, or (batched
    mode) any earlier state of the window, or the state after an operation
    whose outcome was unknown."""
    *earlier, current = recovery_window(crashed)
    return Outcome(
        recovered(crashed, current),
        error,
        message=message,
        window=tuple(recovered(crashed, state) for state in earlier),
        in_doubt=None if crashed.in_doubt is None else recovered(crashed, crashed.in_doubt),
    )


def _reopen(state: ModelState) -> Outcome:
    """R1/R5: the process ends without a crash and the journal is opened again:
    everything written is still in the file, so the reopen yields the current
    state, or the state after an operation whose outcome was unknown; never a
    refused operation."""
    return Outcome(
        recovered(state, state),
        in_doubt=None if state.in_doubt is None else recovered(state, state.in_doubt),
    )


def _crash_during(state: ModelState, operation: CrashDuring) -> Outcome:
    """R5: a crash in the middle of operation k recovers to the state before k
    or the state after k — never a mixture, never a guess. If k is refused, it
    changed nothing, so only the state before is acceptable. In batched mode
    the state before k may itself be lost back to the last flush (the window)."""
    check_integer("io_event", operation.io_event)
    check_integer("lost", operation.lost)
    if operation.io_event < 0 or operation.lost < 0:
        raise ValueError("io_event and lost must be >= 0")  # unreachable: the crash rules draw io_event and lost >= 0
    outcome = step(state, operation.operation)
    if outcome.error is not None:
        # Refused: it changed nothing but what the refusal itself changes (a
        # spent fault, a poisoned journal, which the recovery reopens). The
        # crash may also have come first, before the write an armed fault was
        # waiting for: then the fault is still armed, as before k.
        refused = _recovery(outcome.state, outcome.error, outcome.message)
        still_armed = recovered(state, state)
        return refused if still_armed == refused.state else replace(refused, also_acceptable=still_armed)
    if state.durability == "per_operation":
        after = _recovery(outcome.state)  # the recovery reopens a poisoned journal too
        return Outcome(
            after.state,
            also_acceptable=recovered(outcome.state, state),
            message="before or after the interrupted operation",
            in_doubt=after.in_doubt,
        )
    before = _recovery(state)
    return Outcome(
        recovered(outcome.state, outcome.state),
        also_acceptable=before.state,
        message="after the interrupted operation, or any state since the last flush",
        window=before.window,
        in_doubt=before.in_doubt,
    )


def _batched_commit(before: ModelState, outcome: Outcome) -> Outcome:
    """Batched mode: an operation that wrote a record (it moved the revision)
    leaves ``before`` in the window, unflushed. Nothing else changes it."""
    if before.durability != "batched" or outcome.error is not None or outcome.state.revision == before.revision:
        return outcome
    since = before.since_flush + (replace(before, since_flush=()),)
    return replace(outcome, state=replace(outcome.state, since_flush=since))


def step(state: ModelState, operation: Operation) -> Outcome:
    """Apply one operation to the model. Bad arguments raise ValueError/TypeError."""
    if isinstance(operation, (Splice, Rollback, RollbackTo)):
        outcome = _commit(state, operation)
        if state.poisoned and outcome.error is None and outcome.state.revision != state.revision:
            return _refused_by_poison(state)  # R1/R5: the rollback would write a record
        return _batched_commit(state, outcome)
    if isinstance(operation, Flush):
        if state.poisoned:
            return _refused_by_poison(state)
        # R5 (batched): what a flush returned from is durable; the window closes.
        return Outcome(replace(state, since_flush=()))
    if isinstance(operation, DiskFault):
        if operation.fault not in DISK_FAULTS:
            raise ValueError(f"a disk fault is one of {', '.join(DISK_FAULTS)}, got {operation.fault!r}")  # unreachable: the disk_fault rule draws from DISK_FAULTS
        return Outcome(replace(state, disk_fault=operation.fault))
    if isinstance(operation, Reopen):
        return _reopen(state)
    return _other(state, operation)


def _commit(state: ModelState, operation: Splice | Rollback | RollbackTo) -> Outcome:
    """The operations that write a record to the journal."""
    if isinstance(operation, Splice):
        return _splice(state, operation)
    if isinstance(operation, Rollback):
        steps = check_integer("steps", operation.steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        return _rollback_steps(state, steps)
    return _rollback_to(state, operation)


def _other(state: ModelState, operation: Operation) -> Outcome:
    """The operations that write no record (or rewrite the whole journal, synced)."""
    if isinstance(operation, TakeCheckpoint):
        return Outcome(replace(state, checkpoints=state.checkpoints + ((state.serials[-1], state.depth),)))
    if isinstance(operation, RollbackToForeign):
        return Outcome(state, UnreachableRollbackError, message="checkpoint of another buffer")
    if isinstance(operation, OutOfLogWrite):
        return _out_of_log_write(state, operation)
    if isinstance(operation, ArmJournalFault):
        return Outcome(replace(state, fault_armed=True))
    if isinstance(operation, AdoptCurrent):
        if state.poisoned:
            return _refused_by_poison(state)
        # R4: the only way past a divergence. The log is discarded on purpose, and
        # with it every checkpoint (the adopted state gets a fresh identity).
        return Outcome(
            replace(
                state,
                states=(state.current,),
                serials=(state.next_serial,),
                log_start=state.next_serial,
                edits=(None,),
                next_serial=state.next_serial + 1,
                barriers=frozenset(),
                since_flush=(),  # the log is rewritten, synced
            )
        )
    if isinstance(operation, Compact):
        # A compaction rewrites the journal and syncs it: a flush too (R5, batched).
        outcome = _compact(state, operation)
        if state.poisoned:
            return _refused_by_poison(state)
        return replace(outcome, state=replace(outcome.state, since_flush=()))
    if isinstance(operation, CrashDuring):
        return _crash_during(state, operation)
    if isinstance(operation, Restart):
        # R5: every operation that returned was durable; a crash loses none of it
        # (batched mode: none of it up to the last flush).
        return _recovery(state)
    if isinstance(operation, CorruptRecord):
        # R5: a checksum failure anywhere but in the final record is corruption,
        # not a torn write: recovery refuses, skipping nothing and guessing nothing.
        # The run goes on from what was durable (batched: the window).
        return _recovery(state, RecoveryError, "a committed record is corrupt")
    raise TypeError(f"not an operation: {operation!r}")  # unreachable: every Operation kind is dispatched above

