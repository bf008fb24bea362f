"""The compound rules that set up a story's lure, run once with fixed draws (issue 16).

Two specimens were found on 9 seeds in 10 by a quick run: the rule meant to set
their lure up usually did not. ``checkpoint_then_crash`` flushed only when
something was waiting, so its crash rarely had a flushed operation to keep
(flush_without_sync); ``branch``'s new edit rarely left the buffer as long as
the state it replaced, so a snapshot of that state rarely had the live depth
*and* length (revision_reuse). Each test calls the rule itself with fixed
draws on a fresh example, the way the machine would, and fails on the old rule.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis.errors import UnsatisfiedAssumption

from rollcert.model.contract import Hunk
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.specimens import load_all
from rollcert.stateful_tests import harness
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.diff_machine import _keeping_length
from rollcert.stateful_tests.diff_machine import apply_diff
from rollcert.stateful_tests.diff_machine import branch
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.harness import FamilyMachine
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.machines import checkpoint_before_eviction
from rollcert.stateful_tests.machines import checkpoint_then_crash
from rollcert.stateful_tests.machines import edit_then_undo
from rollcert.stateful_tests.machines import flush_after_rollback_then_crash
from rollcert.stateful_tests.machines import rules_for
from rollcert.stateful_tests.machines import splice
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.resolve import resolve_target


class FixedDraws:
    """A ``st.data()`` stand-in answering each draw by its label (8 zero bytes
    for a rollback-family word)."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers

    def draw(self, strategy: object, label: str | None = None) -> Any:
        return self.answers.get(label or "", bytes(8))


@pytest.fixture(autouse=True)
def no_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis's ``note`` works only inside a test it runs; these call rules directly."""
    monkeypatch.setattr(harness, "note", lambda *_: None)


def started(family: Any, specimen: str, property_id: str, config: BufferConfig) -> Iterator[FamilyMachine]:
    target = load_all()[specimen].target
    assert target is not None
    machine = family.build_machine(target, property_id, Tracker(property_id))()
    machine.begin(config)
    try:
        yield machine
    finally:
        machine.teardown()


BATCHED = BufferConfig(b"", durable=True, durability="batched")


def test_checkpoint_then_crash_always_has_a_flushed_operation_for_the_crash_to_keep() -> None:
    # A fresh batched buffer: nothing waits to be flushed when the rule starts.
    for machine in started(ROLLBACK, "flush_without_sync", "R5", BATCHED):
        with pytest.raises(Violation) as caught:
            checkpoint_then_crash(machine, FixedDraws())
        kinds = [step.operation.kind for step in caught.value.steps]
        assert kinds[:2] == ["splice", "flush"] and kinds[-1] == "restart"


def test_checkpoint_then_crash_passes_a_journal_whose_flush_syncs() -> None:
    for machine in started(ROLLBACK, "torn_tail_applied", "R5", BATCHED):
        checkpoint_then_crash(machine, FixedDraws())
        assert [step.operation.kind for step in machine.live.steps][:2] == ["splice", "flush"]


def test_branch_in_the_s3_machine_keeps_the_length_of_the_state_it_rolls_away() -> None:
    for machine in started(DIFFS, "revision_reuse", "S3", BufferConfig(b"ab")):
        machine.run(Splice(1, 1, b"a"))  # 'aa'
        machine.run(TakeSnapshot())
        # Drawn freely, the new edit would insert a byte: 'aab', not as long as 'aa'.
        branch(machine, FixedDraws(edit=(0, 0, b"a")))
        state = machine.live.model
        assert state.depth == 1 and len(state.content) == 2 and state.content != b"aa"
        # The lure: a counter stepped back to the snapshot's number, a size that matches.
        with pytest.raises(Violation):
            machine.run(ApplyDiff(0, "positional", (Hunk(2, 2, b"Y"),)))


def test_the_s3_machine_draws_the_rolled_away_snapshot_first() -> None:
    for machine in started(DIFFS, "revision_reuse", "S3", BufferConfig(b"ab")):
        machine.run(TakeSnapshot())  # #0, of 'ab' at depth 0: still in the history later
        machine.run(Splice(0, 1, b"b"))  # 'bb'
        machine.run(TakeSnapshot())  # #1, of 'bb' at depth 1
        branch(machine, FixedDraws(edit=(0, 1, b"a")))  # 'ab' at depth 1: #1 is the lure
        draws = FixedDraws(snapshot=0, mode="positional", hunks=[(2, 2, b"Y")], reads=[])
        # The failing apply is the S3 machine's own finding or, where only S1's clause
        # broke, recorded for S1 and the example ended: either way it was drawn on the lure.
        with pytest.raises((Violation, UnsatisfiedAssumption)):
            apply_diff(machine, draws)
        assert machine.live.steps[-1].operation.snapshot == 1  # the lure, not the first in the list


@pytest.mark.parametrize(
    ("content", "wanted", "edit", "kept"),
    [
        (b"ab", 2, (0, 0, b"a"), (0, 1, b"b")),  # an insert cut to nothing, made a substitution
        (b"ab", 3, (1, 0, b""), (1, 0, b"a")),  # padded
        (b"abc", 2, (1, 0, b"xy"), (1, 1, b"")),  # the delete lengthened
        (b"abc", 4, (0, 1, b"xyz"), (0, 1, b"xy")),  # cut
        (b"ab", 0, (2, 0, b"x"), (2, 0, b"x")),  # no delete of two bytes starts at the end: as drawn
    ],
)
def test_keeping_length(content: bytes, wanted: int, edit: tuple[int, int, bytes], kept: tuple[int, int, bytes]) -> None:
    assert _keeping_length(content, wanted, *edit, b"ab") == kept


def test_flush_after_rollback_then_crash_crashes_right_after_the_flush_of_a_rollback() -> None:
    # A fresh batched buffer: an edit to undo, its flush, the rollback, the flush
    # that promises the rolled-back state, the crash (sync_skipped_after_rollback).
    for machine in started(ROLLBACK, "sync_skipped_after_rollback", "R5", BATCHED):
        with pytest.raises(Violation) as caught:
            flush_after_rollback_then_crash(machine, FixedDraws())
        kinds = [step.operation.kind for step in caught.value.steps]
        assert kinds == ["splice", "flush", "rollback", "flush", "restart"]


def test_flush_after_rollback_then_crash_passes_a_journal_whose_flush_syncs() -> None:
    for machine in started(ROLLBACK, "torn_tail_applied", "R5", BATCHED):
        flush_after_rollback_then_crash(machine, FixedDraws())
        assert machine.live.model.depth == 0 and not machine.live.model.since_flush


BOUNDED_EVICTING = BufferConfig(b"", 2, "evict_oldest")


@pytest.mark.parametrize(
    ("word", "error"),
    [
        (bytes(8), None),  # one eviction: the checkpoint is live, one record lower
        (b"\x01" + bytes(7), "UnreachableRollbackError"),  # three: its state was evicted
    ],
)
def test_checkpoint_before_eviction_aims_at_a_checkpoint_an_eviction_moved(word: bytes, error: str | None) -> None:
    for machine in started(ROLLBACK, "eviction_keeps_checkpoint_positions", "R6", BOUNDED_EVICTING):
        with pytest.raises(Violation) as caught:
            checkpoint_before_eviction(machine, word)
        steps = caught.value.steps
        assert [step.operation.kind for step in steps][-1] == "rollback_to"
        assert steps[-1].expected.error == error
        assert all(step.before != step.expected.buffer for step in steps if step.operation.kind == "splice")


def test_the_story_rules_of_round_two_are_in_their_own_machines_only() -> None:
    every = frozenset(Capability)
    assert "checkpoint_before_eviction" in rules_for("R6", every)
    assert "flush_after_rollback_then_crash" in rules_for("R5", every)
    assert not {"checkpoint_before_eviction", "flush_after_rollback_then_crash"} & set(rules_for("R0", every))


#: Words as the machine would draw them, the same on every run.
_WORDS = [random.Random(seed).randbytes(8) for seed in range(200)]


def _met_in_a_rollback(rule: Any, specimen: str, property_id: str, word: bytes) -> bool:
    """Run ``rule`` once with ``word`` on a fresh example of ``specimen``: whether it
    met the bug (always in the rule's closing rollback); if not, the rule made its
    paste, its edit and its rollback."""
    for machine in started(ROLLBACK, specimen, property_id, BufferConfig(b"abab")):
        try:
            rule(machine, word)
        except Violation as violation:
            assert [step.operation.kind for step in violation.steps][-1] == "rollback"
            return True
        except UnsatisfiedAssumption:
            # A finding of another rule than the machine's own: recorded for
            # that rule and the example ended (the harness's reject()).
            assert machine.live.steps[-1].operation.kind == "rollback"
            return True
        assert [step.operation.kind for step in machine.live.steps] == ["splice", "splice", "rollback"]
    return False


@pytest.mark.slow
@pytest.mark.parametrize(
    ("specimen", "property_id"),
    [
        ("crlf_normalising_undo", "R0"),
        ("record_cut_at_128", "R0"),
        ("text_decoded_log", "R0"),
        ("character_column", "R0"),
    ],
)
def test_edit_then_undo_meets_a_log_that_keeps_removed_text_wrong(specimen: str, property_id: str) -> None:
    # Issue 23: these logs are wrong only about removed text past a threshold of the
    # data (a CRLF pair, more than 128 bytes, a byte past 0x7F); R0's other rules met
    # such a removal and its undo on 2-7 seeds of 10. On a small-scope buffer, the
    # rule alone must meet one on a fair share of its draws.
    killed = sum(_met_in_a_rollback(edit_then_undo, specimen, property_id, word) for word in _WORDS)
    # Measured: 56, 35, 57 and 60 of the 200.
    assert killed >= len(_WORDS) // 20, f"{killed} of {len(_WORDS)} draws met the bug"


def test_edit_then_undo_passes_the_bundled_buffer() -> None:
    for word in _WORDS:
        machine = ROLLBACK.build_machine(resolve_target("bundled"), "R0", Tracker("R0"))()
        machine.begin(BufferConfig(b"abab"))
        try:
            edit_then_undo(machine, word)
            assert [step.operation.kind for step in machine.live.steps] == ["splice", "splice", "rollback"]
        finally:
            machine.teardown()


def test_one_splice_rule_in_the_share_is_undone_at_once_and_never_a_zero_word() -> None:
    chosen = sum(strategies.undone_at_once(word) for word in _WORDS)
    # About one in UNDO_AT_ONCE_SHARE of 200 hashed words.
    share = strategies.UNDO_AT_ONCE_SHARE
    assert len(_WORDS) // share // 2 <= chosen <= 2 * len(_WORDS) // share, chosen
    assert not strategies.undone_at_once(bytes(8))


def test_only_r2s_splice_rule_undoes_at_once_and_it_meets_a_character_column() -> None:
    """Issue 23: a column counted in characters is undone right only where the line
    is as it was; R2's splice rule now and then pastes wide text, edits it and undoes
    that edit at once, so the character-column log is met there."""
    bundled = resolve_target("bundled")
    rollback_ids = ("R0", "R1", "R2", "R3", "R4", "R5", "R6")
    undoing = [pid for pid in rollback_ids if ROLLBACK.build_machine(bundled, pid, Tracker(pid)).undoes_at_once]
    assert undoing == ["R2"]
    words = [word for word in _WORDS if strategies.history_length(word) == 1 and strategies.undone_at_once(word)]
    assert words
    killed = sum(_met_in_a_rollback(splice, "character_column", "R2", word) for word in words)
    assert killed >= 1, f"none of {len(words)} draws met the bug"


def test_an_ascii_world_keeps_r2s_plain_splices() -> None:
    """Without a multi-byte character to draw, the undo at once has nothing to meet and
    would only thin out the plain splices pycrdt's own R2 finding needs."""
    bundled = resolve_target("bundled")
    ascii_only = replace(bundled, alphabet=bytes(range(128)))
    assert not ROLLBACK.build_machine(ascii_only, "R2", Tracker("R2")).undoes_at_once
    pytest.importorskip("pycrdt")
    assert not ROLLBACK.build_machine(resolve_target("pycrdt"), "R2", Tracker("R2")).undoes_at_once
