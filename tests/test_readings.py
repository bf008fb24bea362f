"""What a target can observe (SPEC §6a): readings the judge keeps where content
cannot tell two model outcomes apart, each allowed and never required, each
counted on the certificate; and buggy targets that stay violated under them.

Two targets are correct only under such a reading. A *content-only* diff
applier learns of an edit from the bytes it leaves and places it where it
likes among the alignments that leave those bytes (deleting one ``a`` of
``aa``); a *digest-checking* buffer verifies that each undo yields exactly the
state its record names and so cannot see an out-of-log write that changed only
bytes the record itself removes.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis.errors import UnsatisfiedAssumption

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import content_alignments
from rollcert.model.diffs import same_bytes_alignments
from rollcert.model.errors import DivergenceError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.reference import content_verified_rollback
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens import load_all
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.specimens.write_set_only import WriteSetOnlyBuffer
from rollcert.stateful_tests import harness
from rollcert.stateful_tests import judge
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.certify import figures_of
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.family import Unjudgeable
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import HunkTriples
from rollcert.targets.adapter import ReadPairs
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled_diffs import DIFF_SPECIMEN_CAPABILITIES
from rollcert.targets.adapters.bundled_diffs import BundledDiffAdapter
from rollcert.targets.adapters.python_object import PythonBufferAdapter

# -- S1: an edit seen only as the bytes it leaves --------------------------------------------


class _ContentOnly(BundledDiffAdapter):
    """Sees an edit only as the bytes it leaves, and puts it at the last offset
    that leaves them (a line-diffing editor picks one alignment or another)."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        others = same_bytes_alignments(bytes(self.read()), offset, delete_length, insert)
        super().splice(max((offset, *others)), delete_length, insert)


class _ContentOnlyWriteSetOnly(_ContentOnly):
    """The same, over the write-set-only staleness check (an S1 bug)."""

    diff_layer = WriteSetOnlyBuffer


def _diff_target(cls: type[BundledDiffAdapter]) -> Target:
    return Target(f"test:{cls.__name__}", "test", DIFF_SPECIMEN_CAPABILITIES, cls)


def _judged(family: PropertyFamily[object, object, object], target: Target, config: BufferConfig,
            operations: list[Operation]) -> Counter[str]:
    tallies: Counter[str] = Counter()
    session = Session(family, target, config, tallies)
    try:
        for operation in operations:
            session.execute(operation)
    finally:
        session.close()
    return tallies


#: 'aaxyz', a tool deletes one 'a' (the model: the first; the target: the second),
#: then a diff on the snapshot that read the first 'a' and rewrites the 'z'.
ALIGNED_TRACE: list[Operation] = [
    TakeSnapshot(),
    ToolWrite(0, 1, b""),
    ApplyDiff(0, "content", (Hunk(4, 5, b"Z"),), (Region(0, 1),)),
]


def test_the_alignments_of_an_edit_are_the_offsets_that_leave_the_same_bytes() -> None:
    assert same_bytes_alignments(b"a\nd\nb", 1, 2, b"") == (2,)  # '\nd' or 'd\n'
    assert same_bytes_alignments(b"aa", 0, 0, b"a") == (1, 2)
    assert same_bytes_alignments(b"abc", 0, 1, b"") == ()
    assert same_bytes_alignments(b"ab", 5, 1, b"") == ()  # not an edit of this buffer: none


def test_an_insertion_slides_as_a_deletion_does() -> None:
    """Inserting '\nb' before the last line break of 'aaaaaaa\n' leaves the bytes that
    inserting 'b\n' after it leaves: content cannot tell which line break is the new
    one. The deletion's dual ('\nd' or 'd\n' deleted), read with the bytes at the
    other place; the same-bytes alignments leave it out."""
    assert content_alignments(b"aaaaaaa\n", 7, 0, b"\nb") == ((8, b"b\n"),)
    assert same_bytes_alignments(b"aaaaaaa\n", 7, 0, b"\nb") == ()
    assert content_alignments(b"a\nd\nb", 1, 2, b"") == ((2, b""),)
    assert content_alignments(b"xay", 1, 1, b"bc") == ()  # a replacement that cannot slide


class _RotatedContentOnly(BundledDiffAdapter):
    """Sees an edit only as the bytes it leaves, and makes it at the last place of
    :func:`content_alignments` (with the bytes read there): a tool that rewrites the
    whole file and diffs it by lines."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        last = max(((offset, insert), *content_alignments(bytes(self.read()), offset, delete_length, insert)))
        super().splice(last[0], delete_length, last[1])


#: 'aaaaaaa\n', the agent inserts '\nb' at 7 (before the line break); a diff on the
#: snapshot inserts 'X' at 7, reading the 'a' and the line break around it.
ROTATED_TRACE: list[Operation] = [
    TakeSnapshot(),
    Splice(7, 0, b"\nb"),
    ApplyDiff(0, "content", (Hunk(7, 7, b"X"),)),
]


def test_a_rotated_insertion_is_a_reading_of_the_same_bytes() -> None:
    # The model's alignment splits the read region (refuse); the target's keeps it whole
    # (accept, giving 'aaaaaaaX\nb\n'): allowed, counted, never a violation.
    tallies = _judged(DIFFS, _diff_target(_RotatedContentOnly), BufferConfig(b"aaaaaaa\n"), ROTATED_TRACE)
    assert tallies["optional_reading_needed"] == 1
    assert DIFFS.figures(tallies)["alignment_accepted"] == 1.0


def test_a_content_only_applier_is_judged_under_the_alignment_it_chose() -> None:
    # The rule, under the model's alignment, refuses (the 'a' it read is gone); under the
    # target's, the 'a' it read is still there and the diff applies: allowed, counted.
    tallies = _judged(DIFFS, _diff_target(_ContentOnly), BufferConfig(b"aaxyz"), ALIGNED_TRACE)
    assert tallies["optional_reading_needed"] == 1
    assert DIFFS.figures(tallies)["alignment_accepted"] == 1.0


def test_without_the_alignment_the_same_step_would_be_a_violation() -> None:
    # The model's own outcome refuses the diff: only the reading makes the target right.
    state = DIFFS.initial_state(BufferConfig(b"aaxyz"))
    for operation in ALIGNED_TRACE:
        prediction = DIFFS.predict(state, operation)
        state = prediction.readings[0].state
    assert prediction.readings[0].error == "StaleBaseError"


@pytest.mark.slow
def test_a_content_only_applier_correct_under_readings_passes_s1_and_counts_them() -> None:
    # Seed 2: four applies right only under the target's own alignment of an edit
    # (seeds 5 and 6 too; seeds 0, 1, 3, 4, 7 pass without needing one: measured
    # 2026-12-06, after the generator gained 64 KiB starts and rollback(0)).
    result = certify(_diff_target(_ContentOnly), profile="quick", seed=2, only=("S1",)).results["S1"]
    assert result.verdict == "passed", result.reason
    assert result.figures.get("alignment_accepted", 0) >= 1, result.figures


#: Seed 3 of the run above, shrunk: 'cb' * 637, a tool deletes the first 'cb' (the
#: target: the last of 637 alignments), a diff on the snapshot deletes B0[1196].
LONG_RUN_TRACE: list[Operation] = [
    TakeSnapshot(),
    ToolWrite(0, 2, b""),
    ApplyDiff(0, "content", (Hunk(1196, 1197, b""),)),
]


def test_an_alignment_past_the_first_sixty_four_is_not_blamed() -> None:
    # The false blame of 2026-12-03: the judge kept the first 64 alignments only. (The
    # last ones are among those it tries first now: see the next tests for the middle.)
    tallies = _judged(DIFFS, _diff_target(_ContentOnly), BufferConfig(b"cb" * 637), LONG_RUN_TRACE)
    assert tallies["optional_reading_needed"] >= 1


class _ContentOnlyInTheMiddle(_ContentOnly):
    """Content-only, and it puts an edit at the middle one of the places that leave
    the same bytes: neither end, where the judge looks first."""

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        places = sorted((offset, *same_bytes_alignments(bytes(self.read()), offset, delete_length, insert)))
        BundledDiffAdapter.splice(self, places[len(places) // 2], delete_length, insert)


class _ContentOnlyInTheMiddleMissingAByte(_ContentOnlyInTheMiddle):
    """The same, and its apply deletes the byte after the one each hunk names (a 'b'
    for a 'c' here): bytes no alignment of anything could leave."""

    def apply_diff(self, snapshot: object, mode: str, hunks: HunkTriples, reads: ReadPairs) -> object:
        return super().apply_diff(snapshot, mode, [(start + 1, end + 1, text) for start, end, text in hunks], reads)


#: 'cb' * 200; a tool deletes a 'cb' (the target: in the middle, bytes 199-200); a
#: diff on the snapshot declares reads over the first and last 70 bytes, where the
#: 64 alignments the judge keeps all lie: under each of them the rule refuses, under
#: the target's (and any other outside the reads) it accepts.
MIDDLE_TRACE: list[Operation] = [
    TakeSnapshot(),
    ToolWrite(0, 2, b""),
    ApplyDiff(0, "content", (Hunk(250, 251, b""),), (Region(0, 70), Region(330, 400))),
]


def test_an_alignment_none_of_the_kept_ones_is_looked_for_before_blaming() -> None:
    tallies = _judged(DIFFS, _diff_target(_ContentOnlyInTheMiddle), BufferConfig(b"cb" * 200), MIDDLE_TRACE)
    assert tallies["optional_reading_needed"] == 1


def test_bytes_no_alignment_leaves_are_still_blamed_after_readings_were_left_out() -> None:
    # The wide look tries every alignment (two model steps each, within its budget)
    # and none fits: a violation, backed by every reading.
    with pytest.raises(Violation):
        _judged(DIFFS, _diff_target(_ContentOnlyInTheMiddleMissingAByte), BufferConfig(b"cb" * 200), MIDDLE_TRACE)


@pytest.mark.parametrize("target", [_ContentOnlyInTheMiddle, _ContentOnlyInTheMiddleMissingAByte])
def test_past_the_wide_budget_the_step_is_not_judged_rather_than_blamed(
    monkeypatch: pytest.MonkeyPatch, target: type[BundledDiffAdapter]
) -> None:
    # With a wide look too short to find the target's alignment or to try them all,
    # the judge must say so (Unjudgeable), right or wrong target alike, never raise a
    # Violation it cannot back.
    monkeypatch.setattr(judge, "WIDE_LOOK_BUDGET", 5)
    with pytest.raises(Unjudgeable, match="5 model steps"):
        _judged(DIFFS, _diff_target(target), BufferConfig(b"cb" * 200), MIDDLE_TRACE)


@pytest.mark.filterwarnings("ignore:Using `reject` outside a property-based test")
def test_a_machine_counts_the_steps_it_could_not_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    # Through the machine (a FamilyMachine rule): the example ends, counted, no verdict.
    # (Driven by hand, outside a Hypothesis test, so its note()s go nowhere.)
    monkeypatch.setattr(judge, "WIDE_LOOK_BUDGET", 5)
    monkeypatch.setattr(harness, "note", lambda text: None)
    machine = DIFFS.build_machine(_diff_target(_ContentOnlyInTheMiddle), "S1", tracker := Tracker("S1"))
    runner = machine()
    runner.begin(BufferConfig(b"cb" * 200))
    try:
        for operation in MIDDLE_TRACE[:-1]:
            runner.run(operation)
        with pytest.raises(UnsatisfiedAssumption):
            runner.run(MIDDLE_TRACE[-1])
    finally:
        runner.teardown()
    assert tracker.tallies["steps_not_judged"] == 1
    assert figures_of(DIFFS, tracker.tallies)["steps_not_judged"] == 1.0


@pytest.mark.slow
def test_a_content_only_write_set_check_is_still_violated_on_s1() -> None:
    result = certify(_diff_target(_ContentOnlyWriteSetOnly), profile="quick", seed=0, only=("S1",)).results["S1"]
    assert result.verdict == "violated" and result.counterexample is not None
    assert "S1" in result.counterexample.broken


# -- R4: an out-of-log write the records cannot see ------------------------------------------


class _DigestChecking(NaiveJournaledBuffer):
    """Keeps no barriers: each record carries the digest of the state it restores,
    and an undo that does not give exactly that state is refused (DivergenceError),
    the whole rollback with it. Strict for every write a record can see."""

    check_length_only = False

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._restores: dict[int, bytes] = {}

    def _make_record(self, offset: int, delete_length: int, insert: bytes) -> InverseRecord:
        record = super()._make_record(offset, delete_length, insert)
        self._restores[record.serial] = self._fingerprint(bytes(self._bytes))
        return record

    def _fingerprint(self, data: bytes) -> bytes:
        return len(data).to_bytes(8, "big") if self.check_length_only else hashlib.sha256(data).digest()

    def _notice_out_of_log_writes(self) -> None:
        """Nothing: the digests decide."""

    def _refuse_crossing_barriers(self, steps: int) -> None:
        trial = bytearray(self._bytes)
        for record in reversed(self._records[len(self._records) - steps :]):
            trial[record.offset : record.offset + record.inserted_length] = record.removed
            if self._fingerprint(bytes(trial)) != self._restores[record.serial]:
                raise DivergenceError("undoing a record would not give the state it names")


class _LengthChecking(_DigestChecking):
    """The same, but it checks only each restored state's length (a bug: a write of
    the same length elsewhere goes unseen)."""

    check_length_only = True


def _buffer_target(cls: type[NaiveJournaledBuffer]) -> Target:
    def factory(config: BufferConfig) -> SystemUnderTest:
        return PythonBufferAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))

    return Target(f"test:{cls.__name__}", "test", SPECIMEN_CAPABILITIES, factory)


#: 'ab' inserted, then written over with 'cb' behind the log: undoing the record
#: removes exactly the bytes the write changed, giving back '' as the record says.
IDENTICAL_TRACE: list[Operation] = [Splice(0, 0, b"ab"), OutOfLogWrite(0, 1, b"c"), Rollback(1)]
#: The write lands outside the record's bytes: undoing it cannot give '' back.
VISIBLE_TRACE: list[Operation] = [Splice(0, 0, b"ab"), OutOfLogWrite(2, 0, b"z"), Rollback(1)]


def test_the_model_names_the_state_a_content_verified_rollback_reaches() -> None:
    state = initial_state(b"")
    for operation in IDENTICAL_TRACE[:2]:
        state = step(state, operation).state
    assert step(state, Rollback(1)).error is DivergenceError  # the model's own answer
    reached = content_verified_rollback(state, Rollback(1))
    assert reached is not None and reached.current == b"" and reached.depth == 0 and not reached.barriers
    state = initial_state(b"")
    for operation in VISIBLE_TRACE[:2]:
        state = step(state, operation).state
    assert content_verified_rollback(state, Rollback(1)) is None


def test_a_digest_checking_buffer_crosses_a_write_it_cannot_see_and_it_is_counted() -> None:
    tallies = _judged(ROLLBACK, _buffer_target(_DigestChecking), BufferConfig(b""), IDENTICAL_TRACE)
    assert tallies["identical_write_crossed"] == 1
    assert ROLLBACK.figures(tallies)["identical_write_crossed"] == 1.0
    # ... and refuses the one it can see, as the model does.
    assert "identical_write_crossed" not in _judged(
        ROLLBACK, _buffer_target(_DigestChecking), BufferConfig(b""), VISIBLE_TRACE
    )


def test_a_buffer_without_a_check_is_still_violated_where_the_write_is_visible() -> None:
    target = load_all()["no_divergence_check"].target
    assert target is not None
    _judged(ROLLBACK, target, BufferConfig(b""), IDENTICAL_TRACE)  # the reading covers this one
    with pytest.raises(Violation) as caught:
        _judged(ROLLBACK, target, BufferConfig(b""), VISIBLE_TRACE)
    assert caught.value.broken == ("R4",)


@pytest.mark.slow
def test_a_digest_checking_buffer_passes_r4() -> None:
    """Over four seeds (one alone may never draw the content-identical case since the
    wide draws joined the small ones: seed 0 does not): every run passes, and the
    reading was needed on at least one of them."""
    results = [
        certify(_buffer_target(_DigestChecking), profile="quick", seed=seed, only=("R4",)).results["R4"]
        for seed in range(4)
    ]
    assert [result.verdict for result in results] == ["passed"] * 4, [result.reason for result in results]
    crossed = sum(result.figures.get("identical_write_crossed", 0) for result in results)
    assert crossed >= 1, [result.figures for result in results]


#: What R4's machine found on the length-checking buffer (quick, seed 3; seed 0 drew
#: it before the starts past 64 KiB joined the draws): a same-length write over the
#: whole buffer, under a record that removed nothing, crossed by its rollback.
LENGTH_ONLY_TRACE: list[Operation] = [Splice(0, 0, b""), OutOfLogWrite(0, 3, b"aaa"), Rollback(1)]


def test_a_length_checking_buffer_is_still_violated_on_r4() -> None:
    """The content-verified reading excuses only a rollback that yields the state it
    names; a length check lets one through that yields another (replayed, not searched)."""
    with pytest.raises(Violation) as caught:
        _judged(ROLLBACK, _buffer_target(_LengthChecking), BufferConfig(b"aac"), LENGTH_ONLY_TRACE)
    assert "R4" in caught.value.broken
    # The same trace on the digest-checking buffer is refused, as the model says.
    _judged(ROLLBACK, _buffer_target(_DigestChecking), BufferConfig(b"aac"), LENGTH_ONLY_TRACE)
