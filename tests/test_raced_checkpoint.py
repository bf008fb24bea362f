"""The raced checkpoint: R7's programs reach it, and the specimen that needs it
is wrong only when raced.

The kill itself (real threads, seeds) is tests/test_specimens.py's; these tests
are cheap and deterministic: the race is played out by hand in one thread, and
the programs are only drawn, never run.
"""

from __future__ import annotations

import random

import pytest

from rollcert.model.errors import UnreachableRollbackError
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens.checkpoint_reads_depth_unlocked import CheckpointReadsDepthUnlockedBuffer
from rollcert.stateful_tests import concurrency
from rollcert.stateful_tests.concurrency import RACED_CHECKPOINT_SHARE
from rollcert.stateful_tests.concurrency import _kinds
from rollcert.stateful_tests.concurrency import program_from
from rollcert.stateful_tests.linearizability import Checkpoint
from rollcert.stateful_tests.linearizability import RollbackToLabel
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.targets.adapters.bundled import TARGET as BUNDLED


class _SpliceInsideCheckpoint(CheckpointReadsDepthUnlockedBuffer):
    """The specimen with another thread's splice played out at the one moment it
    matters: after checkpoint() has read the depth, before it takes the lock."""

    armed = False

    @property
    def depth(self) -> int:
        depth = LockedNaiveBuffer.depth.fget(self)  # type: ignore[attr-defined]
        if self.armed:
            self.armed = False
            self.splice(0, 0, b"x")  # the other thread's splice
        return depth


def test_a_splice_inside_checkpoint_makes_a_token_that_is_dead_on_arrival() -> None:
    buffer = _SpliceInsideCheckpoint(b"ab")
    buffer.splice(2, 0, b"1")
    buffer.armed = True
    token = buffer.checkpoint()
    # Both states the checkpoint could have named (b"ab1" and b"xab1") are in the log.
    assert buffer.read() == b"xab1" and buffer.depth == 2
    with pytest.raises(UnreachableRollbackError):
        buffer.rollback_to(token)
    assert buffer.read() == b"xab1"


@pytest.mark.parametrize("capacity", [None, 2])
def test_one_thread_at_a_time_the_specimen_keeps_its_checkpoints(capacity: int | None) -> None:
    # Sequentially the two reads agree: tokens survive eviction and die on adopt, as R3/R6 ask.
    buffer = CheckpointReadsDepthUnlockedBuffer(b"ab", capacity=capacity, policy="evict_oldest")
    buffer.splice(0, 0, b"1")
    token = buffer.checkpoint()
    buffer.splice(0, 0, b"2")
    buffer.splice(0, 0, b"3")  # with capacity 2, evicts the oldest record: the token's state is the horizon
    buffer.rollback_to(token)
    assert buffer.read() == b"1ab"
    buffer.adopt_current()
    with pytest.raises(UnreachableRollbackError):
        buffer.rollback_to(token)


def test_a_share_of_programs_race_a_checkpoint_and_the_rest_are_drawn_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kinds = _kinds(BUNDLED)
    words = range(400)
    drawn = [program_from(random.Random(word), kinds, True) for word in words]
    raced = [
        program
        for program in drawn
        if any(
            len(thread) >= 2 and isinstance(thread[0], Checkpoint) and thread[-1] == RollbackToLabel(thread[0].label)
            and all(isinstance(other[0], SpliceCall) for other in program.threads if other is not thread)
            for thread in program.threads
        )
    ]
    assert all(program.is_valid() for program in drawn)
    assert abs(len(raced) / len(drawn) - RACED_CHECKPOINT_SHARE) < 0.08
    # The race is drawn last: with no raced programs, the same words draw the same
    # programs, except those that were raced.
    monkeypatch.setattr(concurrency, "RACED_CHECKPOINT_SHARE", 0.0)
    plain = [program_from(random.Random(word), kinds, True) for word in words]
    changed = [program for program, before in zip(drawn, plain, strict=True) if program != before]
    assert all(program in raced for program in changed)
    assert abs(len(changed) / len(drawn) - RACED_CHECKPOINT_SHARE) < 0.08
