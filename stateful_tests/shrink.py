"""A last shrinking pass over a counterexample, by deterministic replay.

Hypothesis shrinks well, but a state machine whose draws depend on the state
can leave harmless steps behind (a no-op splice and its rollback). Because a
trace is plain data that replays deterministically, this pass finishes the job
the way quickcheck-state-machine and delta debugging do: delete any step, or
simplify any argument or initial byte, as long as the trace still fails; repeat
until nothing more can go. The result is 1-minimal: no single step can be
removed and no argument made simpler while it still fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from rollcert.model.operations import (
    ArmJournalFault,
    Compact,
    CorruptRecord,
    CrashDuring,
    Operation,
    OutOfLogWrite,
    Restart,
    Rollback,
    RollbackTo,
    Splice,
    TakeCheckpoint,
)
from rollcert.model.reference import initial_state, splice_bytes, step
from rollcert.stateful_tests.adapter import BufferConfig, HarnessError, Target
from rollcert.stateful_tests.judge import Violation, replay
from rollcert.stateful_tests.strategies import AFTER_THE_LAST_IO_CALL

#: Replays allowed for one counterexample; each is a few milliseconds at most.
REPLAY_BUDGET = 2000


def _without_step(operations: list[Operation], index: int) -> list[Operation] | None:
    """Delete one step, renumbering checkpoints; ``None`` if a later step needs it."""
    removed = operations[index]
    if not isinstance(removed, TakeCheckpoint):
        return operations[:index] + operations[index + 1 :]
    number = sum(isinstance(op, TakeCheckpoint) for op in operations[:index])
    result: list[Operation] = []
    for op in operations[:index] + operations[index + 1 :]:
        if isinstance(op, RollbackTo):
            if op.checkpoint == number:
                return None
            if op.checkpoint > number:
                op = RollbackTo(op.checkpoint - 1)
        result.append(op)
    return result


def _simpler(operation: Operation) -> Iterator[Operation]:
    if isinstance(operation, (Splice, OutOfLogWrite)):
        insert = operation.insert
        for i in range(len(insert)):
            yield replace(operation, insert=insert[:i] + insert[i + 1 :])
        for i, byte in enumerate(insert):
            if byte != ord("a"):
                yield replace(operation, insert=insert[:i] + b"a" + insert[i + 1 :])
        if operation.delete_length:
            yield replace(operation, delete_length=0)
            yield replace(operation, delete_length=operation.delete_length - 1)
        if operation.offset:
            yield replace(operation, offset=0)
            yield replace(operation, offset=operation.offset - 1)
    elif isinstance(operation, Rollback) and operation.steps > 1:
        yield Rollback(operation.steps - 1)
    elif isinstance(operation, Compact) and operation.keep:
        yield Compact(0)
        yield Compact(operation.keep - 1)
    elif isinstance(operation, CorruptRecord):
        yield Restart()  # a plain crash is the simpler story
    elif isinstance(operation, CrashDuring):
        yield operation.operation  # no crash at all
        for lost in sorted({0, 1, operation.lost // 2, operation.lost - 1}):
            if 0 <= lost < operation.lost:
                yield replace(operation, lost=lost)
        if operation.io_event:
            yield replace(operation, io_event=0)
            yield replace(operation, io_event=operation.io_event - 1)
        for inner in _simpler(operation.operation):
            if isinstance(inner, (Splice, Rollback, RollbackTo, Compact)):
                yield replace(operation, operation=inner)


def _candidates(config: BufferConfig, operations: list[Operation]) -> Iterator[tuple[BufferConfig, list[Operation]]]:
    for index in range(len(operations)):
        shorter = _without_step(operations, index)
        if shorter is not None:
            yield config, shorter
    # Deleting an edit that a later multi-step rollback undoes needs that rollback
    # shortened by one in the same move, or the trace changes meaning.
    for index, operation in enumerate(operations):
        if not isinstance(operation, Splice):
            continue
        for later in range(index + 1, len(operations)):
            rollback = operations[later]
            if isinstance(rollback, Rollback) and rollback.steps >= 2:
                shortened = list(operations)
                shortened[later] = Rollback(rollback.steps - 1)
                yield config, shortened[:index] + shortened[index + 1 :]
    # A rollback_to a live checkpoint is a rollback(n); once rewritten, the checkpoint
    # itself can go in a later pass.
    yield from ((config, candidate) for candidate in _rollback_to_as_rollback(config, operations))
    # An operation followed by an idle crash is one step: the same operation with a
    # crash scheduled after its last I/O call (R5).
    for index in range(len(operations) - 1):
        operation, following = operations[index], operations[index + 1]
        if isinstance(following, Restart) and isinstance(operation, (Splice, Rollback, RollbackTo, Compact)):
            merged = CrashDuring(operation, AFTER_THE_LAST_IO_CALL, 0)
            yield config, operations[:index] + [merged] + operations[index + 2 :]
    # Two steps that only make sense together (an edit and the rollback that undoes it).
    for first in range(len(operations)):
        for second in range(first + 1, len(operations)):
            without_second = _without_step(operations, second)
            both = _without_step(without_second, first) if without_second is not None else None
            if both is not None:
                yield config, both
    for index, operation in enumerate(operations):
        for simpler in _simpler(operation):
            yield config, operations[:index] + [simpler] + operations[index + 1 :]
    initial = config.initial
    for i in range(len(initial)):
        yield replace(config, initial=initial[:i] + initial[i + 1 :]), operations
    for i, byte in enumerate(initial):
        if byte != ord("a"):
            yield replace(config, initial=initial[:i] + b"a" + initial[i + 1 :]), operations
    if config.capacity is not None and config.capacity > 1:
        smaller = replace(config, capacity=config.capacity - 1)
        yield smaller, operations
        # A smaller journal fills one edit sooner: drop an edit in the same move.
        for index in range(len(operations)):
            shorter = _without_step(operations, index)
            if shorter is not None:
                yield smaller, shorter


def generable(config: BufferConfig, operations: list[Operation], target: Target | None = None) -> bool:
    """Whether the machines could have produced this trace (their preconditions).

    Shrinking must not wander outside what the rules generate: an out-of-log write
    that changes nothing, say, is a step no machine takes, and a counterexample
    built on it would confuse more than it explains. Nor may it bring back a
    known finding that ``target`` sets aside."""
    try:
        state = initial_state(config.initial, config.capacity, config.policy)
        for operation in operations:
            if isinstance(operation, OutOfLogWrite) and (
                state.depth in state.barriers
                or splice_bytes(state.current, operation.offset, operation.delete_length, operation.insert)
                == state.current
            ):
                return False
            if isinstance(operation, ArmJournalFault) and state.fault_armed:
                return False
            if isinstance(operation, Rollback) and state.depth == 0:
                return False  # every rollback rule waits for a record to undo
            if target is not None and target.sets_aside(state, operation):
                return False
            if isinstance(operation, RollbackTo) and not 0 <= operation.checkpoint < len(state.checkpoints):
                return False
            try:
                state = step(state, operation).state
            except (ValueError, TypeError):
                if isinstance(operation, (CrashDuring, Compact)):
                    return False  # the R5 machine only draws valid arguments
                continue  # a bad-argument step (R0's bad_splice): refused, nothing changes
    except (ValueError, TypeError):
        return False  # a bad configuration
    return True


def _rollback_to_as_rollback(config: BufferConfig, operations: list[Operation]) -> Iterator[list[Operation]]:
    try:
        state = initial_state(config.initial, config.capacity, config.policy)
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


def minimise(target: Target, violation: Violation) -> Violation:
    """The smallest failing trace reachable from ``violation`` by greedy steps."""
    return greedy_minimise(
        violation,
        candidates=_candidates,
        generable=lambda config, operations: generable(config, operations, target),
        replay=lambda config, operations: replay(target, config, operations),
    )


def greedy_minimise(
    violation: Violation,
    *,
    candidates: Callable[[BufferConfig, list[Any]], Iterator[tuple[BufferConfig, list[Any]]]],
    generable: Callable[[BufferConfig, list[Any]], bool],
    replay: Callable[[BufferConfig, list[Any]], object],
    not_a_trace: tuple[type[Exception], ...] = (),
    budget: int = REPLAY_BUDGET,
) -> Violation:
    """Take the first candidate (a shorter or simpler trace) that still fails on
    replay, and start again from it, until none does or the replay budget is
    spent. Shared by the rollback and the diff machines; each brings its own
    candidates and its own idea of a trace the machine could have drawn."""
    skipped: tuple[type[Exception], ...] = (HarnessError, ValueError, TypeError, IndexError, *not_a_trace)
    best = violation
    improved = True
    while improved and budget > 0:
        improved = False
        operations = [step.operation for step in best.steps]
        for config, candidate in candidates(best.config, operations):
            if not generable(config, candidate):
                continue
            budget -= 1
            if budget <= 0:
                break
            try:
                replay(config, candidate)
            except Violation as found:
                best = found
                improved = True
                break
            except skipped:  # not a runnable trace for this target
                continue
    return best
