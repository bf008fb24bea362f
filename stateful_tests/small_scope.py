"""The rollback family's small scope for the minimiser's last, non-greedy move.

:func:`rollcert.stateful_tests.shrink.small_scope_search` tries every short
trace over an alphabet; this module says which alphabet, for the rollback
family: a handful of representative operations of each kind (an empty and a
one-letter edit, a rollback of one step, each checkpoint, each damage, a crash
before and after an edit's record is written) — enough to spell the shortest
counterexample of every rollback-class specimen, few enough that all traces of
two steps are a few hundred replays.

Only kinds the property's machine issues are tried, or the search would "find"
a trace no machine of that property could have drawn. The minimiser does not
know the property, only the trace, so :func:`shared_kinds` takes the kinds
that *every* machine able to issue the trace issues: a subset of the real
machine's, whichever it was.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence

from rollcert.model.operations import DAMAGES
from rollcert.model.operations import DISK_FAULTS
from rollcert.model.operations import Compact
from rollcert.model.operations import CorruptRecord
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import DiskFault
from rollcert.model.operations import Flush
from rollcert.model.operations import Interruptible
from rollcert.model.operations import Operation
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import ModelState
from rollcert.stateful_tests.strategies import AFTER_THE_LAST_IO_CALL
from rollcert.targets.adapter import BufferConfig

#: The operation kinds each machine rule issues (``Operation.kind``).
RULE_OPERATION_KINDS: dict[str, frozenset[str]] = {
    "splice": frozenset({"splice"}),
    "bad_arguments": frozenset({"splice", "rollback", "compact"}),
    "edit_then_undo": frozenset({"splice", "rollback"}),
    "rollback_one": frozenset({"rollback"}),
    "rollback_many": frozenset({"rollback"}),
    "branch": frozenset({"rollback", "splice"}),
    "checkpoint": frozenset({"checkpoint"}),
    "rollback_to": frozenset({"rollback_to", "rollback_to_foreign"}),
    "arm_journal_fault": frozenset({"arm_journal_fault"}),
    "out_of_log_write": frozenset({"out_of_log_write"}),
    "adopt_current": frozenset({"adopt_current"}),
    "write_behind_checkpoint": frozenset({"checkpoint", "splice", "out_of_log_write"}),
    "compact": frozenset({"compact"}),
    "crash_during": frozenset({"crash_during"}),
    "restart": frozenset({"restart"}),
    "corrupt_record": frozenset({"corrupt_record"}),
    "flush": frozenset({"flush"}),
    "checkpoint_then_crash": frozenset({"flush", "splice", "checkpoint", "restart"}),
    "flush_after_rollback_then_crash": frozenset({"restart", "splice", "flush", "rollback"}),
    "checkpoint_before_eviction": frozenset({"splice", "checkpoint", "rollback_to"}),
    "disk_fault": frozenset({"disk_fault"}),
    "reopen": frozenset({"reopen"}),
    "refused_then_reopen": frozenset({"disk_fault", "splice", "reopen"}),
}

#: The bytes lost by the crashes tried: none (the record reached the disk whole)
#: and one (its end torn off).
_LOST = (0, 1)
#: The I/O calls the crashes hit: the first (the record's write) and none (after the operation).
_CRASH_POINTS = (0, AFTER_THE_LAST_IO_CALL)


def machine_kinds(rules: Iterable[str]) -> frozenset[str]:
    """The operation kinds a machine with these rules issues."""
    return frozenset(kind for rule in rules for kind in RULE_OPERATION_KINDS.get(rule, ()))


def shared_kinds(
    config: BufferConfig, operations: Sequence[Operation], rules_by_property: Mapping[str, Iterable[str]]
) -> frozenset[str]:
    """The operation kinds issued by every machine that could have issued ``operations``
    (``rules_by_property``: each property's rules, R0's included).

    Only the R5 machine builds durable buffers and only R6's and R0's bounded
    ones; any other trace may come from any machine but those two whose kinds
    cover it."""
    kinds_of = {pid: machine_kinds(rules) for pid, rules in rules_by_property.items()}
    if config.durable:
        possible = ["R5"]
    elif config.capacity is not None:
        possible = ["R6", "R0"]
    else:
        possible = [pid for pid in kinds_of if pid not in ("R5", "R6")]
    used = {operation.kind for operation in operations}
    covering = [kinds_of[pid] for pid in possible if pid in kinds_of and used <= kinds_of[pid]]
    return frozenset.intersection(*covering) if covering else frozenset(used)


def alphabet(kinds: frozenset[str]) -> Callable[[ModelState], list[Operation]]:
    """The operations tried from a model state, of ``kinds`` only, each one its
    machine could draw there (the rules' preconditions: a rollback, compaction or
    corruption needs a record; a flush, something to flush)."""

    def operations_at(state: ModelState) -> list[Operation]:
        edits: list[Splice] = [Splice(0, 0, b""), Splice(0, 0, b"a")]
        if state.current:
            edits += [Splice(0, 1, b""), Splice(len(state.current), 0, b"a")]
        found: list[Operation] = []
        if "splice" in kinds:
            found += edits
        if "flush" in kinds and (state.since_flush if state.durability == "batched" else state.depth >= 1):
            found.append(Flush())
        if "restart" in kinds:
            found.append(Restart())
        if "corrupt_record" in kinds and state.depth >= 1:
            found += [CorruptRecord(damage) for damage in DAMAGES]
        if "rollback" in kinds and state.depth >= 1:
            found.append(Rollback(1))
        if "checkpoint" in kinds:
            found.append(TakeCheckpoint())
        if "rollback_to" in kinds:
            found += [RollbackTo(index) for index in range(len(state.checkpoints))]
        if "compact" in kinds and state.depth >= 1:
            found.append(Compact(0))
        if "crash_during" in kinds:
            interrupted: list[Interruptible] = [*edits[:2]]
            if state.depth >= 1:
                interrupted += [Rollback(1), Compact(0)]
            found += [
                CrashDuring(inner, io_event, lost)
                for inner in interrupted
                for io_event in _CRASH_POINTS
                for lost in _LOST
            ]
        if "disk_fault" in kinds and not state.fault_armed and state.disk_fault is None:
            found += [DiskFault(fault) for fault in DISK_FAULTS]
        if "reopen" in kinds:
            found.append(Reopen())
        return found

    return operations_at
