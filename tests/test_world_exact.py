"""Worlds stated exactly (issue 42): what a run drew, never a category it did not.

A certificate's world used to say "UTF-8 text (any code point)" for draws of five
precomposed characters, and nothing of revisions or of sizes past 64 KiB. These
tests feed a tally known inserts and observations and check what the world record
and its phrase then state; and that the ways to reach far cheaply (a buffer started
at a high revision, a start past 64 KiB that crosses the seam) are honoured by the
model, the bundled implementation and the traces. Fast: no certification.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rollcert.model.errors import JournalError
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import Operation
from rollcert.model.operations import Reopen
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import FAULT_KEPT
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.specimens import SPECIMEN_CAPABILITIES
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.stateful_tests.world import DIMENSIONS
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import WorldTally
from rollcert.stateful_tests.world import merge_worlds
from rollcert.stateful_tests.world import world_phrase
from rollcert.stateful_tests.world import world_report
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET as BUNDLED
from rollcert.targets.adapters.python_object import PythonBufferAdapter


def _report(world: World, tally: WorldTally) -> dict[str, object]:
    return world_report(world, tally, DIMENSIONS, chunk_matters=True)


def _tally(*inserts: str) -> WorldTally:
    tally = WorldTally()
    for text in inserts:
        tally.edit(b"", 0, 0, text.encode())
    return tally


def test_a_tally_counts_the_categories_and_normal_forms_of_what_it_was_sent() -> None:
    tally = _tally("e\u0301", "\u212b", "ab", "\ufb01", "\u00e9")
    reach = _report(World(text=True), tally)["reach"]
    assert isinstance(reach, dict)
    assert reach["categories"] == {"Ll": 4, "Lu": 1, "Mn": 1}
    # e + U+0301: NFC composes; U+212B: NFC maps; fi: NFKC only; é: NFD splits (NFKC keeps it).
    assert reach["normal_forms"] == {"combining_mark": 1, "nfc_differs": 2, "nfd_differs": 2, "nfkc_differs": 3}
    phrase = world_phrase(_report(World(text=True), tally))
    assert "1 with a combining mark, 2 changed by NFC, 2 by NFD, 3 by NFKC" in phrase


def test_a_world_that_never_drew_a_combining_mark_does_not_claim_it() -> None:
    phrase = world_phrase(_report(World(text=True), _tally("ab", "\u00e9", "\u4e2d")))
    assert "0 with a combining mark, 0 changed by NFC" in phrase
    assert "(any code point)" not in phrase


def test_a_text_world_names_the_code_points_its_draws_can_hold() -> None:
    world = World(text=True)
    phrase = world.bytes_phrase()
    assert "any code point" not in phrase.replace("not any code point", "")
    assert f"of {len(world.repertoire())} code points" in phrase and "Mn" in phrase
    # what the draws are made of holds what the phrase counts: a combining mark, a decomposable character
    assert "\u0301" in world.repertoire() and "\u00e9" in world.repertoire()
    assert "\u0301" not in World().repertoire()  # a byte world's pieces are as they were measured


def test_revisions_are_stated_as_reached() -> None:
    tally = WorldTally()
    tally.initial(b"")
    for revision in (250, 251, 255, 256, 258):
        tally.observed(0, 0, revision)
    reach = _report(World(), tally)["reach"]
    assert isinstance(reach, dict)
    assert (reach["largest_revision"], reach["largest_revision_gap"]) == (258, 4)
    assert "revisions up to 258 (past 255), largest step 4" in world_phrase(_report(World(), tally))
    low = WorldTally()
    low.observed(0, 0, 3)
    assert "(none past 255)" in world_phrase(_report(World(), low))
    assert "revisions not reported" in world_phrase(_report(World(), WorldTally()))


def test_sizes_past_64_kib_are_stated_as_reached_or_not() -> None:
    short = WorldTally()
    short.observed(34_212, 0)
    assert "nothing past 64 KiB drawn" in world_phrase(_report(World(), short))
    long = WorldTally()
    buffer = b"a" * 70_000
    long.observed(len(buffer), 0)
    long.edit(buffer, 65_530, 10, b"")  # a removal across the seam
    long.edit(buffer, 10, 10, b"")  # one that stays in the first 64 KiB
    phrase = world_phrase(_report(World(), long))
    assert "1 buffers past 64 KiB, 1 edits across it; nothing past 1 MiB drawn" in phrase


def test_merged_reach_is_the_reach_of_the_runs_together() -> None:
    """A sharded certificate's world is the serial one's: merging two records gives
    what one tally fed both runs states."""
    first, second, both = _tally("e\u0301"), _tally("\u212b", "ab"), _tally("e\u0301", "\u212b", "ab")
    for tally, revisions in ((first, (1, 2)), (second, (300, 301)), (both, (1, 2))):
        for revision in revisions:
            tally.observed(70_000 if tally is second else 10, 0, revision)
    both.initial(b"")  # a new example: its revisions start a new sequence
    both.observed(70_000, 0, 300)
    both.observed(70_000, 0, 301)
    merged = merge_worlds([_report(World(), first), _report(World(), second)])
    assert merged["reach"] == _report(World(), both)["reach"]


def test_a_start_past_64_kib_crosses_the_seam_first() -> None:
    buffer = b"ab" * 33_000
    edit = strategies.seam_edit_of(buffer, b"\x01" * 8)
    assert edit is not None
    offset, delete_length, _ = edit
    assert offset < 65_535 and offset + delete_length > 65_536
    assert strategies.seam_edit_of(b"ab" * 1000, b"\x01" * 8) is None


def test_high_revision_starts_sit_just_below_a_wrap() -> None:
    starts = {strategies.start_revision_from(bytes([i & 255, i >> 8, 1, 2, 3, 4, 5, 6])) for i in range(2000)}
    assert 0 in starts and len(starts) > 1
    assert all(start == 0 or any(0 < wrap - start <= 8 for wrap in (256, 65536, 2**31, 2**32)) for start in starts)
    assert strategies.start_revision_from(bytes(8)) == 0


def test_a_trace_keeps_its_start_revision_and_the_model_starts_there() -> None:
    config = BufferConfig(b"a", start_revision=255)
    _, parsed, operations = parse_trace(json.dumps(trace_json(ROLLBACK, config, [Splice(0, 1, b"")])))
    assert parsed.start_revision == 255 and operations == [Splice(0, 1, b"")]
    assert step(initial_state(b"a", start_revision=255), Splice(0, 1, b"")).state.revision == 256
    with pytest.raises(ValueError):
        initial_state(b"", start_revision=-1)


def test_the_bundled_buffer_starts_at_the_asked_revision_and_passes() -> None:
    assert BUNDLED.starts_at_revision
    steps = replay(ROLLBACK, BUNDLED, BufferConfig(b"ab", start_revision=255), [Splice(0, 1, b""), Rollback(1)])
    assert [s.actual.revision for s in steps] == [256, 257]


class _FaultFirst(NaiveJournaledBuffer):
    """Meets the armed fault before it looks at its capacity: a full journal with
    the reject policy spends the fault on the splice it refuses."""

    def _append_record(self, record: InverseRecord) -> None:
        if self._fail_next_append:
            self._fail_next_append = False
            raise JournalError("the journal refused the inverse record (injected fault)")
        super()._append_record(record)


def _target(cls: type[NaiveJournaledBuffer]) -> Target:
    def factory(config: BufferConfig) -> SystemUnderTest:
        return PythonBufferAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))

    return Target(f"test:{cls.__name__}", "test", SPECIMEN_CAPABILITIES, factory)


#: A full one-record journal that rejects: the fault armed, a splice refused as
#: full, a rollback that makes room, and the splice that shows where the fault went.
FULL_THEN_FAULT: list[Operation] = [Splice(0, 0, b"a"), ArmJournalFault(), Splice(0, 0, b"b"), Rollback(1), Splice(0, 0, b"c")]


@pytest.mark.parametrize(
    ("cls", "figure"), [(NaiveJournaledBuffer, "fault_kept_through_refusal"), (_FaultFirst, "fault_spent_on_refusal")]
)
def test_a_fault_armed_across_a_full_refusal_may_be_kept_or_spent(cls: type[NaiveJournaledBuffer], figure: str) -> None:
    tallies: Counter[str] = Counter()
    session = Session(ROLLBACK, _target(cls), BufferConfig(b"", capacity=1, policy="reject"), tallies)
    try:
        for operation in FULL_THEN_FAULT:
            session.execute(operation)
    finally:
        session.close()
    assert ROLLBACK.figures(tallies) == {figure: 1.0}


def test_a_poisoned_journal_may_keep_or_spend_an_armed_fault() -> None:
    state = initial_state(b"", durable=True)
    state = step(state, ArmJournalFault()).state
    poisoned = step(state, Splice(0, 0, b"a")).state  # the fault's clean refusal: poisoned (main reading)
    armed = step(poisoned, ArmJournalFault()).state
    outcome = step(armed, Splice(0, 0, b"b"))
    assert outcome.error is JournalError and outcome.state.fault_armed and outcome.state.fault_kept
    assert [s.fault_armed for s in outcome.fault_spent] == [False] and outcome.fault_spent[0].poisoned
    # The kept fault, met after the reopen, is where the two differ.
    reopened = step(outcome.state, Reopen()).state
    assert step(reopened, Splice(0, 0, b"c")).message == FAULT_KEPT


def test_a_target_that_drops_a_refused_splice_is_still_violated() -> None:
    """The readings allow where the fault went, never a refused splice that went through."""

    class _Ignores(NaiveJournaledBuffer):
        def _append_record(self, record: InverseRecord) -> None:
            self._fail_next_append = False
            self._records.append(record)

    with pytest.raises(Violation):
        replay(ROLLBACK, _target(_Ignores), BufferConfig(b"", capacity=1, policy="reject"), FULL_THEN_FAULT)


def test_the_certificate_says_where_the_fault_went() -> None:
    from rollcert.reports.certificate import retry_phrase

    shown = retry_phrase({"fault_kept_through_refusal": 2.0, "fault_spent_on_refusal": 1.0})
    assert "kept 2 times and spent 1 times; both are allowed" in shown
    assert retry_phrase({}) == ""


def test_declared_sizes_are_stated_against_what_was_reached() -> None:
    tally = WorldTally(chunk=32_768)
    tally.observed(40_000, 0)
    phrase = world_phrase(_report(World(chunk=32_768, max_buffer=50_000), tally))
    assert "1 buffers past the declared chunk of 32768 bytes" in phrase
    assert "largest buffer 40000 of the declared 50000" in phrase


def test_a_stored_certificate_keeps_the_reach_and_drops_what_is_not_a_count() -> None:
    from rollcert.reports.stored_certificate import _world

    record = _report(World(text=True), _tally("e\u0301"))
    stored = _world(json.loads(json.dumps(record)))
    assert stored["reach"] == record["reach"]
    assert world_phrase(stored) == world_phrase(record)
    hostile = _world({"reach": {"largest_revision": "1e9", "categories": {"Mn": -1, "\x1b[2J": 3}, "x": [1]}})
    assert hostile["reach"] == {"categories": {"\\x1b[2J": 3}}
