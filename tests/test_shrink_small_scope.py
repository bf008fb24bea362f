"""The minimiser's last move: a breadth-first search over a small alphabet (issue 16).

The greedy moves stop at a trace no single move shortens. Each trace below is
such a dead end, as the machines found it on a specimen (the greedy minimiser
of before this move returned it unchanged); the small-scope search must take it
down to the specimen's known minimal length (benchmarks/suite.py's SHORTEST),
and what it returns must still fail on replay.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.model.operations import Compact
from rollcert.model.operations import CorruptRecord
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import initial_state
from rollcert.specimens import load_all
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.machines import rules_for
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.shrink import small_scope_search
from rollcert.stateful_tests.small_scope import alphabet
from rollcert.stateful_tests.small_scope import shared_kinds
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapters.bundled import TARGET

DURABLE = BufferConfig(b"", durable=True)
BATCHED = BufferConfig(b"", durable=True, durability="batched")
BOUNDED = BufferConfig(b"", 1, "evict_oldest")

#: (specimen, configuration, the dead end the greedy moves left, the known minimal length).
DEAD_ENDS: dict[str, tuple[str, BufferConfig, list[Operation], int]] = {
    # A crash during a compaction the greedy moves cannot drop: the damage must
    # land on the record of an edit whose crash appended the serial floor.
    "skip_bad_record": (
        "skip_bad_record",
        DURABLE,
        [Splice(0, 0, b""), CrashDuring(Compact(0), 0, 0), CorruptRecord("bit_flip")],
        2,
    ),
    # A swap needs the rollback's record; another damage (a transplant) needs one edit.
    "crc_only": (
        "crc_only",
        DURABLE,
        [Splice(0, 0, b""), Rollback(1), Splice(0, 0, b""), CorruptRecord("swap")],
        2,
    ),
    # Two idle crashes make the two floor records the drop needs.
    "crc_only_restarts": ("crc_only", DURABLE, [Restart(), Restart(), CorruptRecord("drop")], 2),
    # A dead checkpoint where an edit and a rollback(1) would do.
    "evict_newest": (
        "evict_newest",
        BOUNDED,
        [TakeCheckpoint(), Splice(0, 0, b""), Splice(0, 0, b""), RollbackTo(0)],
        3,
    ),
    # Three checkpoints and a crash inside a rollback_to, where an edit, a flush and an idle crash do.
    "flush_without_sync": (
        "flush_without_sync",
        BATCHED,
        [
            TakeCheckpoint(),
            TakeCheckpoint(),
            Splice(0, 0, b""),
            TakeCheckpoint(),
            Flush(),
            CrashDuring(RollbackTo(2), 0, 0),
        ],
        3,
    ),
}


def violation_of(specimen: str, config: BufferConfig, operations: list[Operation]) -> Violation:
    target = load_all()[specimen].target
    assert target is not None
    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, config, operations)
    assert len(caught.value.steps) == len(operations), "the dead end must fail at its last step"
    return caught.value


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(DEAD_ENDS))
def test_a_greedy_dead_end_reaches_the_known_minimal_length(case: str) -> None:
    specimen, config, operations, shortest = DEAD_ENDS[case]
    target = load_all()[specimen].target
    assert target is not None
    minimal = minimise(ROLLBACK, target, violation_of(specimen, config, operations))
    steps = [step.operation for step in minimal.steps]
    assert len(steps) == shortest, steps
    # What the search returns is a counterexample because it fails on replay, nothing else.
    with pytest.raises(Violation):
        replay(ROLLBACK, target, minimal.config, steps)
    assert ROLLBACK.generable(minimal.config, steps, target)


def test_the_search_proposes_only_shorter_traces_shortest_first_within_its_limit() -> None:
    operations: list[Operation] = [Splice(0, 0, b"a"), Splice(0, 0, b"b"), Rollback(1), Rollback(1)]
    starts = [BufferConfig(b""), BufferConfig(b"ab")]
    edits_and_undos = alphabet(frozenset({"splice", "rollback"}))
    proposed = list(small_scope_search(ROLLBACK, starts, operations, edits_and_undos))
    lengths = [len(candidate) for _, candidate in proposed]
    assert lengths == sorted(lengths)
    assert set(lengths) == {1, 2, 3}
    assert {config.initial for config, _ in proposed} == {b"", b"ab"}
    assert len(list(small_scope_search(ROLLBACK, starts, operations, edits_and_undos, limit=50))) == 50
    # A trace of one step leaves nothing shorter to try.
    assert list(small_scope_search(ROLLBACK, starts, operations[:1], alphabet(frozenset({"splice"})))) == []


def test_the_alphabet_keeps_to_the_kinds_and_the_rules_preconditions() -> None:
    fresh = initial_state(b"", durability="batched")
    kinds = frozenset({"splice", "rollback", "flush", "compact", "corrupt_record", "crash_during", "restart"})
    at_start = alphabet(kinds)(fresh)
    # Nothing to undo, compact, corrupt or flush on a fresh buffer.
    assert not any(isinstance(op, (Rollback, Compact, CorruptRecord, Flush)) for op in at_start)
    assert all(not isinstance(op, CrashDuring) or isinstance(op.operation, Splice) for op in at_start)
    only_edits = alphabet(frozenset({"splice", "rollback"}))(fresh)
    assert {op.kind for op in only_edits} == {"splice"}


#: Every machine's rules, as on a target with every capability.
EVERY_MACHINE = {pid: rules_for(pid, frozenset(Capability)) for pid in ROLLBACK.property_ids}


def test_the_kinds_are_those_every_machine_that_could_have_drawn_the_trace_draws() -> None:
    edit_and_undo: list[Operation] = [Splice(0, 0, b"a"), Rollback(1)]
    # Unbounded, not durable: R2's machine issues splices and rollbacks only.
    assert shared_kinds(BufferConfig(b""), edit_and_undo, EVERY_MACHINE) == {"splice", "rollback"}
    # Bounded: R6's (and R0's) machine; no crash, no out-of-log write.
    bounded = shared_kinds(BOUNDED, edit_and_undo, EVERY_MACHINE)
    assert bounded == {"splice", "rollback", "checkpoint", "rollback_to", "rollback_to_foreign"}
    # Durable: R5's machine.
    durable = shared_kinds(DURABLE, edit_and_undo, EVERY_MACHINE)
    assert {"crash_during", "restart", "corrupt_record", "flush", "compact"} <= durable
    assert "out_of_log_write" not in durable


def test_an_operation_the_target_cannot_do_is_not_generable() -> None:
    without_checkpoints = replace(TARGET, capabilities=TARGET.capabilities - {Capability.CHECKPOINTS})
    trace: list[Operation] = [Splice(0, 0, b"a"), TakeCheckpoint()]
    assert ROLLBACK.generable(BufferConfig(b""), trace, TARGET)
    assert not ROLLBACK.generable(BufferConfig(b""), trace, without_checkpoints)


#: A paste of wide text (issue 23's edit_then_undo) and a removal of everything
#: from the start, as the machine found it on crlf_normalising_undo (quick, seed
#: 3) before cuts followed removals: the greedy minimiser returned all seven steps,
#: since cutting any byte of the paste left the removal reaching past the end.
PASTE = (
    b"aaaaaabcb\t\t\r\n\xc3\x9f\xe4\xb8\xad\r\rb\xf0\x9f\x98\x80b\n\xe4\xb8\xad\r\n\xe2\x82\xac"
    b"abcb\t\t\r\n\xc3\x9f\xe4\xb8\xad\r\rb\xf0\x9f\x98\x80b\n"
)
PASTE_TRACE: list[Operation] = [
    Splice(0, 0, b"a"),
    OutOfLogWrite(0, 0, b"aa"),
    Splice(0, 0, b"aaa"),
    OutOfLogWrite(0, 0, b"aa"),
    Splice(0, 0, PASTE),
    Splice(0, 65, b"3\xd91"),
    Rollback(1),
]


def test_a_removal_over_a_long_paste_shrinks_with_the_paste() -> None:
    target = load_all()["crlf_normalising_undo"].target
    assert target is not None
    minimal = minimise(ROLLBACK, target, violation_of("crlf_normalising_undo", BufferConfig(b""), PASTE_TRACE))
    steps = [step.operation for step in minimal.steps]
    # The shortest from an empty buffer: a CRLF pair put in, removed, the removal undone.
    assert len(steps) <= 3, steps
    with pytest.raises(Violation):
        replay(ROLLBACK, target, minimal.config, steps)
