"""Unit tests of the specimens, without the certification machines.

Two things must hold for the specimens to mean anything:

1. their common base, ``NaiveJournaledBuffer``, agrees with the reference model
   on every operation (a Hypothesis differential test over random operation
   sequences, bounded journals with both policies, faults, checkpoints,
   out-of-log writes and adoption);
2. each specimen's planted bug shows on a short hand-written scenario, which
   the base passes (so the scenario blames the bug, not the harness).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import pytest
from _helpers import perform
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import error_kind
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Flush
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.model.reference import Policy
from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.model.reference import step
from rollcert.specimens import load_all
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.specimens.best_effort_log import BestEffortLogBuffer
from rollcert.specimens.character_column import CharacterColumnBuffer
from rollcert.specimens.chunk_boundary_64k import ChunkBoundary64kBuffer
from rollcert.specimens.crlf_normalising_undo import CrlfNormalisingUndoBuffer
from rollcert.specimens.depth_checkpoints import DepthCheckpointBuffer
from rollcert.specimens.evict_newest import EvictNewestBuffer
from rollcert.specimens.eviction_keeps_checkpoint_positions import EvictionKeepsCheckpointPositionsBuffer
from rollcert.specimens.fifo_replay import FifoReplayBuffer
from rollcert.specimens.first_match_scan import FirstMatchScanBuffer
from rollcert.specimens.nfc_normalised_inserts import NfcNormalisedInsertsBuffer
from rollcert.specimens.no_divergence_check import NoDivergenceCheckBuffer
from rollcert.specimens.non_atomic_rollback import NonAtomicRollbackBuffer
from rollcert.specimens.record_cut_at_128 import RecordCutAt128Buffer
from rollcert.specimens.snapshot_jump import SnapshotJumpBuffer
from rollcert.specimens.sync_skipped_after_rollback import SyncSkippedAfterRollback
from rollcert.specimens.text_decoded_log import TextDecodedLogBuffer
from rollcert.stateful_tests.family import HARMS
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapters.durable import BATCHED

Observed = tuple[bytes, int, int]


@dataclass(frozen=True)
class Scenario:
    """A buffer configuration and the operations to run on it."""

    operations: tuple[Operation, ...]
    initial: bytes = b""
    capacity: int | None = None
    policy: Policy = "reject"


def _model_view(state: ModelState) -> Observed:
    return (state.current, state.depth, state.revision)


def _sut_view(buffer: Any) -> Observed:
    return (bytes(buffer.read()), int(buffer.depth), int(buffer.revision))


def _predict(state: ModelState, operation: Operation) -> tuple[Outcome, str | None]:
    """The model's outcome and the error kind it expects (None for success)."""
    try:
        outcome = step(state, operation)
    except (ValueError, TypeError) as bad_argument:
        return Outcome(state, type(bad_argument)), error_kind(bad_argument)
    if outcome.error is None:
        return outcome, None
    return outcome, error_kind(outcome.error("predicted"))


def _foreign(buffer_class: type[Any]) -> Callable[[], object]:
    """The checkpoint of another buffer of ``buffer_class``, made when a step asks."""
    return lambda: buffer_class(b"").checkpoint()


def _performed(buffer: Any, operation: Operation, tokens: list[object], buffer_class: type[Any]) -> str | None:
    """Perform ``operation`` on ``buffer``; the kind of error it raised (None for success)."""
    try:
        perform(buffer, operation, tokens, _foreign(buffer_class))
    except Exception as raised:
        return error_kind(raised)
    return None


def first_discrepancy(buffer_class: type[Any], scenario: Scenario) -> str | None:
    """Run ``scenario`` on the model and on ``buffer_class``; describe the first
    step where they disagree (error kind, bytes, depth or revision), or None."""
    state = initial_state(scenario.initial, scenario.capacity, scenario.policy)
    buffer = buffer_class(scenario.initial, capacity=scenario.capacity, policy=scenario.policy)
    tokens: list[object] = []
    for index, operation in enumerate(scenario.operations):
        outcome, expected_kind = _predict(state, operation)
        actual_kind = _performed(buffer, operation, tokens, buffer_class)
        observed = _sut_view(buffer)
        where = f"step {index} {operation.describe()}"
        if actual_kind != expected_kind:
            return f"{where}: expected {expected_kind or 'success'}, got {actual_kind or 'success'}"
        allowed = [_model_view(outcome.state)]
        if outcome.also_acceptable is not None:
            allowed.append(_model_view(outcome.also_acceptable))
        if observed not in allowed:
            return f"{where}: expected (bytes, depth, revision) in {allowed}, got {observed}"
        state = outcome.state
        if outcome.also_acceptable is not None and observed == _model_view(outcome.also_acceptable):
            state = outcome.also_acceptable
    return None


# ---------------------------------------------------------------------------
# (a) the base agrees with the model


_ALPHABET = b"ab"
_short_bytes = st.lists(st.sampled_from(_ALPHABET), max_size=3).map(bytes)
_OPERATION_KINDS = (
    ["splice"] * 6
    + ["rollback"] * 3
    + ["checkpoint", "rollback_to", "rollback_to", "foreign", "fault", "tamper", "adopt", "bad"]
)


def _draw_operation(data: st.DataObject, state: ModelState) -> Operation:
    kind = data.draw(st.sampled_from(_OPERATION_KINDS), label="kind")
    length = len(state.current)
    if kind in ("splice", "tamper"):
        offset = data.draw(st.integers(0, length), label="offset")
        delete_length = data.draw(st.integers(0, length - offset), label="delete_length")
        insert = data.draw(_short_bytes, label="insert")
        if kind == "splice":
            return Splice(offset, delete_length, insert)
        # The model marks a barrier for every out-of-log write, even one that
        # changes nothing; a digest cannot see those, so only real changes are
        # generated, and never a second one at a depth that already has a barrier.
        if state.depth in state.barriers:
            return TakeCheckpoint()
        if splice_bytes(state.current, offset, delete_length, insert) == state.current:
            return OutOfLogWrite(offset, 0, b"z")
        return OutOfLogWrite(offset, delete_length, insert)
    if kind == "rollback":
        return Rollback(data.draw(st.integers(-1, state.depth + 1), label="steps"))
    if kind == "rollback_to" and state.checkpoints:
        return RollbackTo(data.draw(st.integers(0, len(state.checkpoints) - 1), label="checkpoint"))
    if kind in ("checkpoint", "rollback_to"):
        return TakeCheckpoint()
    if kind == "foreign":
        return RollbackToForeign()
    if kind == "fault":
        return ArmJournalFault()
    if kind == "adopt":
        return AdoptCurrent()
    # "bad": a splice the model refuses with ValueError
    return data.draw(
        st.sampled_from([Splice(length + 1, 0, b"a"), Splice(0, length + 1, b""), Splice(-1, 0, b"")]),
        label="bad splice",
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    initial=st.lists(st.sampled_from(_ALPHABET), max_size=6).map(bytes),
    capacity=st.one_of(st.none(), st.integers(1, 3)),
    policy=st.sampled_from(["reject", "evict_oldest"]),
    data=st.data(),
)
@pytest.mark.slow
def test_naive_buffer_agrees_with_the_model(
    initial: bytes, capacity: int | None, policy: Policy, data: st.DataObject
) -> None:
    state = initial_state(initial, capacity, policy)
    buffer = NaiveJournaledBuffer(initial, capacity=capacity, policy=policy)
    tokens: list[object] = []
    for _ in range(data.draw(st.integers(0, 30), label="length")):
        operation = _draw_operation(data, state)
        before = _sut_view(buffer)
        assert before == _model_view(state)
        outcome, expected_kind = _predict(state, operation)
        actual_kind = _performed(buffer, operation, tokens, NaiveJournaledBuffer)
        assert actual_kind == expected_kind, operation.describe()
        observed = _sut_view(buffer)
        if expected_kind is None:
            assert observed == _model_view(outcome.state), operation.describe()
        else:
            acceptable = {before}
            if outcome.also_acceptable is not None:
                acceptable.add(_model_view(outcome.also_acceptable))
            assert observed in acceptable, operation.describe()
            if outcome.also_acceptable is not None and observed == _model_view(outcome.also_acceptable):
                outcome = Outcome(outcome.also_acceptable)
        state = outcome.state


def test_naive_buffer_refuses_bad_construction_and_tokens() -> None:
    with pytest.raises(ValueError):
        NaiveJournaledBuffer(b"", capacity=0)
    with pytest.raises(TypeError):
        NaiveJournaledBuffer(b"", capacity=True)
    with pytest.raises(ValueError):
        NaiveJournaledBuffer(b"", policy="evict_newest")
    with pytest.raises(TypeError):
        NaiveJournaledBuffer("text")  # type: ignore[arg-type]
    buffer = NaiveJournaledBuffer(b"abc")
    with pytest.raises(TypeError):
        buffer.rollback_to(0)
    with pytest.raises(TypeError):
        buffer.rollback(1.0)  # type: ignore[arg-type]
    assert _sut_view(buffer) == (b"abc", 0, 0)


def test_barrier_survives_records_made_on_top_of_it() -> None:
    """An out-of-log write at depth 1, then a splice: undoing the splice works,
    undoing record 1 is refused (the top record's digest alone could not see it)."""
    scenario = Scenario(
        (
            Splice(0, 0, b"a"),
            OutOfLogWrite(1, 0, b"x"),
            Splice(0, 0, b"b"),
            Rollback(1),
            Rollback(1),
            Splice(0, 0, b"c"),
            Rollback(2),
            AdoptCurrent(),
            Rollback(1),
        )
    )
    assert first_discrepancy(NaiveJournaledBuffer, scenario) is None


# ---------------------------------------------------------------------------
# (b) each specimen's bug shows on a short scenario that the base passes


SPECIMEN_SCENARIOS: dict[str, tuple[type[Any], Scenario]] = {
    # The armed fault must make the splice fail and change nothing; the
    # specimen splices anyway and reports success (buffer b"a", revision 1).
    "best_effort_log": (
        BestEffortLogBuffer,
        Scenario((ArmJournalFault(), Splice(0, 0, b"a"))),
    ),
    # "" -> "a" -> "b"; rollback(2) must give "". Oldest first: the first record
    # cuts the "b", the second puts its "a" back: the result is "a".
    "fifo_replay": (
        FifoReplayBuffer,
        Scenario((Splice(0, 0, b"a"), Splice(0, 1, b"b"), Rollback(2))),
    ),
    # "aaaaa|bbbb" gets a "b" at 5; its anchors ("aaaa" before, "bbbb" after)
    # also match at 4, so the undo deletes the "a" at 4: "aaaabbbbb".
    "first_match_scan": (
        FirstMatchScanBuffer,
        Scenario((Splice(5, 0, b"b"), Rollback(1)), initial=b"aaaaabbbb"),
    ),
    # The checkpoint's state ("a" at depth 1) is rolled away, a new state takes
    # depth 1, and rollback_to "succeeds" on it instead of being refused.
    "depth_checkpoints": (
        DepthCheckpointBuffer,
        Scenario((Splice(0, 0, b"a"), TakeCheckpoint(), Rollback(1), Splice(0, 0, b"b"), RollbackTo(0))),
    ),
    # Undoing the splice would cross the out-of-log "b": it must be refused.
    # The specimen removes one byte at offset 0 and hands back "a" at depth 0.
    "no_divergence_check": (
        NoDivergenceCheckBuffer,
        Scenario((Splice(0, 0, b"a"), OutOfLogWrite(0, 0, b"b"), Rollback(1))),
    ),
    # Capacity 1: the record of the second splice is the one dropped, so
    # rollback(1) undoes the first record instead: "b" rather than "a".
    "evict_newest": (
        EvictNewestBuffer,
        Scenario((Splice(0, 0, b"a"), Splice(1, 0, b"b"), Rollback(1)), capacity=1, policy="evict_oldest"),
    ),
    # Capacity 1: the checkpoint names "a" at depth 1; the splice of "b" evicts
    # the record under it, so "a" is now the horizon, at depth 0. The specimen
    # still points at position 1, undoes nothing and hands back "ab".
    "eviction_keeps_checkpoint_positions": (
        EvictionKeepsCheckpointPositionsBuffer,
        Scenario(
            (Splice(0, 0, b"a"), TakeCheckpoint(), Splice(1, 0, b"b"), RollbackTo(0)),
            capacity=1,
            policy="evict_oldest",
        ),
    ),
    # One record, rollback(2): refused, nothing changes. The specimen undoes the
    # record first and only then raises: the error arrives with "" at depth 0.
    "non_atomic_rollback": (
        NonAtomicRollbackBuffer,
        Scenario((Splice(0, 0, b"a"), Rollback(2))),
    ),
    # Undoing back to the checkpoint would cross the out-of-log "z": refused.
    # The specimen puts its stored copy back and the "z" is silently gone.
    "snapshot_jump": (
        SnapshotJumpBuffer,
        Scenario((TakeCheckpoint(), Splice(0, 0, b"a"), OutOfLogWrite(0, 0, b"z"), RollbackTo(0))),
    ),
    # The world specimens (issue 23): each needs data past the small scope.
    "record_cut_at_128": (RecordCutAt128Buffer, Scenario((Splice(0, 129, b""), Rollback(1)), initial=b"a" * 129)),
    "text_decoded_log": (TextDecodedLogBuffer, Scenario((Splice(0, 1, b""), Rollback(1)), initial=b"\xff")),
    "crlf_normalising_undo": (CrlfNormalisingUndoBuffer, Scenario((Splice(0, 2, b""), Rollback(1)), initial=b"\r\n")),
    "character_column": (
        CharacterColumnBuffer, Scenario((Splice(2, 1, b""), Rollback(1)), initial="é".encode() + b"a")
    ),
    # Issue 42's: text that NFC changes, and a removal across the undeclared 64 KiB seam.
    "nfc_normalised_inserts": (NfcNormalisedInsertsBuffer, Scenario((Splice(0, 0, "e\u0301".encode()),))),
    "chunk_boundary_64k": (ChunkBoundary64kBuffer, Scenario((Splice(65_500, 100, b""),), initial=b"a" * 65_600)),
}

#: One scenario per ``also_caught_by`` claim, built only from the operations of
#: the machine that claim names, showing that it can indeed see the bug.
ALSO_CAUGHT_SCENARIOS: dict[tuple[str, str], Scenario] = {
    ("best_effort_log", "R6"): Scenario((Splice(0, 0, b"a"), Splice(0, 0, b"a")), capacity=1),
    # A world specimen after an eviction: an edit evicted, the story's edit undone
    # one column off. (Those whose bytes only come back wrong at the right place
    # are R0's alone after an eviction too: test_a_wrong_restore_after_an_eviction_is_not_r6.)
    ("character_column", "R6"): Scenario(
        (Splice(0, 0, b"b"), Splice(3, 1, b""), Rollback(1)), "é".encode() + b"a", capacity=1, policy="evict_oldest"
    ),
    # Issue 42's, the story's splice on a full journal that evicts.
    ("nfc_normalised_inserts", "R6"): Scenario(
        (Splice(0, 0, b"b"), Splice(0, 0, "e\u0301".encode())), capacity=1, policy="evict_oldest"
    ),
    ("chunk_boundary_64k", "R6"): Scenario(
        (Splice(0, 0, b"b"), Splice(65_500, 100, b"")), b"a" * 65_600, capacity=1, policy="evict_oldest"
    ),
    ("depth_checkpoints", "R6"): Scenario(
        (Splice(0, 0, b"a"), TakeCheckpoint(), Splice(0, 0, b"a"), RollbackTo(0)),
        capacity=1,
        policy="evict_oldest",
    ),
    # The checkpoint's position (1) outlives the eviction and equals the depth, so
    # rollback_to undoes nothing and never meets the out-of-log write it must refuse.
    ("eviction_keeps_checkpoint_positions", "R4"): Scenario(
        (Splice(0, 0, b"b"), TakeCheckpoint(), Splice(0, 0, b"c"), OutOfLogWrite(0, 1, b""), RollbackTo(0)),
        b"a",
        capacity=1,
        policy="evict_oldest",
    ),
}

_CLASSES: dict[str, type[Any]] = {name: cls for name, (cls, _) in SPECIMEN_SCENARIOS.items()}


def test_every_registered_specimen_has_a_scenario() -> None:
    # The in-memory rollback specimens, built on NaiveJournaledBuffer. The crash
    # specimens have theirs in tests/test_durable_specimens.py; the diff
    # specimens are judged in tests/test_diffs_certify.py and the kill matrix.
    registry = {
        name: specimen
        for name, specimen in load_all().items()
        if specimen.breaks <= {"R0", "R1", "R2", "R3", "R4", "R6"}
    }
    assert set(registry) == set(SPECIMEN_SCENARIOS)
    for name, specimen in registry.items():
        assert specimen.target is not None
        assert specimen.story, name
    claims = {(name, prop) for name, s in registry.items() for prop in s.also_caught_by}
    assert claims == set(ALSO_CAUGHT_SCENARIOS)


@pytest.mark.parametrize("name", sorted(SPECIMEN_SCENARIOS))
def test_the_base_passes_the_scenario(name: str) -> None:
    _, scenario = SPECIMEN_SCENARIOS[name]
    assert first_discrepancy(NaiveJournaledBuffer, scenario) is None


@pytest.mark.parametrize("name", sorted(SPECIMEN_SCENARIOS))
def test_the_specimen_fails_the_scenario(name: str) -> None:
    specimen_class, scenario = SPECIMEN_SCENARIOS[name]
    discrepancy = first_discrepancy(specimen_class, scenario)
    assert discrepancy is not None, f"{name} behaved like the model"
    # the bug shows at the last step, not earlier by accident
    assert discrepancy.startswith(f"step {len(scenario.operations) - 1} "), discrepancy


@pytest.mark.parametrize(("name", "property_id"), sorted(ALSO_CAUGHT_SCENARIOS))
def test_also_caught_by_claims_hold_on_a_scenario(name: str, property_id: str) -> None:
    scenario = ALSO_CAUGHT_SCENARIOS[(name, property_id)]
    assert first_discrepancy(NaiveJournaledBuffer, scenario) is None
    discrepancy = first_discrepancy(_CLASSES[name], scenario)
    assert discrepancy is not None, f"{name} behaved like the model"
    assert discrepancy.startswith(f"step {len(scenario.operations) - 1} "), discrepancy


def _attribution(name: str, scenario: Scenario) -> tuple[str, ...]:
    """The rules the judge says the scenario's failing step broke, on the registered specimen."""
    target = load_all()[name].target
    assert target is not None
    config = BufferConfig(scenario.initial, scenario.capacity, scenario.policy)
    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, config, list(scenario.operations))
    assert len(caught.value.steps) == len(scenario.operations)
    assert caught.value.harm in HARMS
    return caught.value.broken


@pytest.mark.parametrize("name", sorted(SPECIMEN_SCENARIOS))
def test_the_story_scenario_breaks_the_story_rule(name: str) -> None:
    # SPEC §6a: the failing step breaks the clause of the property the story names.
    _, scenario = SPECIMEN_SCENARIOS[name]
    assert load_all()[name].breaks <= set(_attribution(name, scenario))


@pytest.mark.parametrize(("name", "property_id"), sorted(ALSO_CAUGHT_SCENARIOS))
def test_also_caught_by_claims_are_attributed(name: str, property_id: str) -> None:
    # An also-caught-by claim names a property whose own clause breaks there.
    assert property_id in _attribution(name, ALSO_CAUGHT_SCENARIOS[(name, property_id)])


@pytest.mark.parametrize(
    ("name", "initial", "edit"),
    [
        ("record_cut_at_128", b"a" * 129, Splice(1, 129, b"")),
        ("text_decoded_log", b"\xff", Splice(1, 1, b"")),
        ("crlf_normalising_undo", b"\r\n", Splice(1, 2, b"")),
    ],
)
def test_a_wrong_restore_after_an_eviction_is_not_r6(name: str, initial: bytes, edit: Splice) -> None:
    # Issue 42: the journal kept the right record (the story's edit, the newest) and
    # the rollback undid it at its place; only the bytes it put back are wrong. R6's
    # "the journal kept the wrong records" does not hold, so the finding is R0's.
    evicted = Scenario((Splice(0, 0, b"b"), edit, Rollback(1)), initial, capacity=1, policy="evict_oldest")
    assert _attribution(name, evicted) == ("R0",)


@pytest.mark.parametrize("name", ["text_decoded_log", "crlf_normalising_undo", "record_cut_at_128"])
def test_an_adoption_is_not_an_eviction(name: str) -> None:
    # adopt_current on a bounded journal moves the horizon but drops no record a
    # rollback still owes: the story's edit undone after it breaks R0 alone, not
    # R6's "the journal kept the wrong records" (it did: the minimiser then kept
    # the adoption as a step, to hold on to an R6 it was never owed).
    initial, edit = {
        "text_decoded_log": (b"\xff", Splice(0, 1, b"")),
        "crlf_normalising_undo": (b"\r\n", Splice(0, 2, b"")),
        "record_cut_at_128": (b"a" * 129, Splice(0, 129, b"")),
    }[name]
    adopted = Scenario((AdoptCurrent(), edit, Rollback(1)), initial, capacity=1)
    assert _attribution(name, adopted) == ("R0",)


def _final_bytes(buffer_class: type[Any], scenario: Scenario) -> bytes:
    buffer = buffer_class(scenario.initial, capacity=scenario.capacity, policy=scenario.policy)
    tokens: list[object] = []
    for operation in scenario.operations:
        perform(buffer, operation, tokens, _foreign(buffer_class))
    return bytes(buffer.read())


@pytest.mark.parametrize(
    ("name", "wrong_bytes"),
    [
        ("best_effort_log", b"a"),
        ("fifo_replay", b"a"),
        ("first_match_scan", b"aaaabbbbb"),
        ("depth_checkpoints", b"b"),
        ("no_divergence_check", b"a"),
        ("evict_newest", b"b"),
        ("eviction_keeps_checkpoint_positions", b"ab"),
        ("snapshot_jump", b""),
    ],
)
def test_the_specimen_hands_back_these_bytes_without_an_error(name: str, wrong_bytes: bytes) -> None:
    """The plausible but wrong buffers, spelled out for the docs."""
    specimen_class, scenario = SPECIMEN_SCENARIOS[name]
    assert _final_bytes(specimen_class, scenario) == wrong_bytes


# ---------------------------------------------------------------------------
# (c) the other faces of the specimens of issue 23's second round


@pytest.mark.parametrize(
    ("operations", "capacity"),
    [
        # The horizon's checkpoint, taken at depth 0: two evictions later its state
        # is gone and rollback_to must be refused; the specimen's position 0 is
        # still in range and it rolls back to the new horizon.
        ((TakeCheckpoint(), Splice(0, 0, b"a"), Splice(1, 0, b"b"), RollbackTo(0)), 1),
        # Live after one eviction, but a rollback went below its stale position
        # (2 > depth 1) and dropped it: the specimen refuses a live checkpoint.
        ((Splice(0, 0, b"a"), Splice(1, 0, b"b"), TakeCheckpoint(), Splice(2, 0, b"c"), Rollback(1), RollbackTo(0)), 2),
    ],
)
def test_eviction_keeps_checkpoint_positions_accepts_a_dead_checkpoint_and_refuses_a_live_one(
    operations: tuple[Operation, ...], capacity: int
) -> None:
    scenario = Scenario(operations, capacity=capacity, policy="evict_oldest")
    assert first_discrepancy(NaiveJournaledBuffer, scenario) is None
    discrepancy = first_discrepancy(EvictionKeepsCheckpointPositionsBuffer, scenario)
    assert discrepancy is not None and discrepancy.startswith(f"step {len(operations) - 1} "), discrepancy
    assert "UnreachableRollbackError" in discrepancy


@pytest.mark.parametrize(("journal_class", "survives"), [(SyncSkippedAfterRollback, False), (FileJournal, True)])
def test_a_flushed_rollback_survives_a_batched_crash_only_if_the_flush_synced(
    journal_class: type[FileJournal], survives: bool
) -> None:
    """sync_skipped_after_rollback: the flush after a rollback returns without
    the fsync, and the crash brings the undone edit back."""
    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc", journal_class=journal_class, durability=BATCHED)
    buffer.splice(3, 0, b"!")
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    journal.flush()
    buffer.rollback(1)
    journal.flush()  # returned: the caller may rely on "abc" now
    disk.crash()
    disk.restart()
    assert open_durable_buffer(disk).read() == (b"abc" if survives else b"abc!")


def test_sync_skipped_after_rollback_breaks_r5_on_the_judges_replay() -> None:
    """The same story through the judge: the model keeps the rolled-back state,
    the specimen recovers the one before the rollback, and the failing step
    breaks R5's own clause. Per-operation mode syncs every record: no bug."""
    target = load_all()["sync_skipped_after_rollback"].target
    assert target is not None
    operations = [Splice(0, 0, b"a"), Flush(), Rollback(1), Flush(), Restart()]
    batched = BufferConfig(b"", durable=True, durability="batched")
    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, batched, operations)
    assert len(caught.value.steps) == len(operations) and "R5" in caught.value.broken
    assert caught.value.steps[-1].actual.buffer == b"a"  # the undone edit is back
    replay(ROLLBACK, target, replace(batched, durability="per_operation"), operations)
