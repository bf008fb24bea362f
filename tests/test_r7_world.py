"""R7's world: its programs draw from the target's declared world, stay inside its
limits whatever order the threads' calls run in, and R7 counts the world its
histories reached as the other families count theirs.

Cheap on purpose: programs are drawn, never run; the one history is made by hand.
(The whole run's world, on the bundled buffer, is certified by ``rollcert certify
--only R7`` and by tests/test_concurrency.py's control test.)
"""

from __future__ import annotations

import random

import pytest

from rollcert.model.operations import Splice
from rollcert.stateful_tests import concurrency
from rollcert.stateful_tests.concurrency import Program
from rollcert.stateful_tests.concurrency import _kinds
from rollcert.stateful_tests.concurrency import _short_data
from rollcert.stateful_tests.concurrency import program_from
from rollcert.stateful_tests.concurrency import r7_beyond
from rollcert.stateful_tests.concurrency import situations_reached
from rollcert.stateful_tests.linearizability import Call
from rollcert.stateful_tests.linearizability import History
from rollcert.stateful_tests.linearizability import Observe
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.stateful_tests.linearizability import check
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import WorldTally
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

KINDS = _kinds(BUNDLED)


def _inserts(program: Program) -> list[bytes]:
    actions = [*program.prefix, *(a for thread in program.threads for a in thread)]
    return [a.operation.insert for a in actions if isinstance(a, SpliceCall)]


def _drawn(world: World, count: int = 400) -> list[Program]:
    return [program_from(random.Random(word), KINDS, True, world) for word in range(count)]


def test_wide_programs_reach_every_byte_and_every_threshold_in_the_default_world() -> None:
    drawn = _drawn(World(chunk=1024))
    sent = b"".join(program.initial + b"".join(_inserts(program)) for program in drawn)
    assert len(set(sent)) > 200 and b"\r\n" in sent and "€".encode() in sent
    assert max(len(p.initial) for p in drawn) > 1024  # past the declared chunk
    assert max(len(i) for p in drawn for i in _inserts(p)) > 4096
    assert all(program.is_valid() for program in drawn)


def test_a_declared_world_bounds_every_program_in_any_order_of_its_calls() -> None:
    world = World(letters=b"xy\n", wide=b"xy\n", max_insert=40, max_buffer=300)
    for program in _drawn(world):
        inserts = _inserts(program)
        assert set(program.initial + b"".join(inserts)) <= set(b"xy\n")
        assert all(len(insert) <= 40 for insert in inserts)
        # The worst order: every insert lands, nothing is removed.
        assert len(program.initial) + sum(map(len, inserts)) <= 300


def test_a_text_target_is_sent_ascii_only_and_told_why() -> None:
    drawn = _drawn(World(text=True))
    assert all((program.initial + b"".join(_inserts(program))).isascii() for program in drawn)
    beyond = r7_beyond(World(text=True))
    assert {"multibyte_utf8", "character_boundary", "high_byte"} <= set(beyond)
    assert "blind" in beyond["multibyte_utf8"]


def test_r7_states_what_it_does_not_ask_and_why() -> None:
    assert set(r7_beyond(World())) == {"depth_past_16", "depth_past_64"}
    limited = r7_beyond(World(max_buffer=300))
    assert {"removed_past_256", "buffer_past_256", "inserted_past_256"} <= set(limited)
    assert "removed_past_128" not in limited and "300 bytes" in limited["removed_past_256"]


def test_the_world_is_counted_along_the_order_that_explains_the_history() -> None:
    insert = b"\r\n" + "é".encode() + b"\xff" * 8
    calls = (
        Call(0, "T1", 0, 10, SpliceCall(Splice(1, 1, insert))),
        Call(1, "T2", 5, 20, Observe("length"), value=len(insert) + 3),
    )
    history = History(b"a\x00bc", calls)
    result = check(history)
    assert result.verdict == "linearizable"
    world = WorldTally()
    situations_reached(history, result.order, world)
    for name in ("line_break", "crlf", "nul", "high_byte", "invalid_utf8", "inserted_past_8", "buffer_past_8"):
        assert world.reached[name], name  # NUL: the byte the splice removed
    assert (world.largest_insert, world.largest_delete, world.deepest) == (len(insert), 1, 1)


def test_a_share_of_programs_is_wide_and_the_rest_are_drawn_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = _drawn(World())
    monkeypatch.setattr(concurrency, "WIDE_PROGRAM_SHARE", 0.0)
    narrow = _drawn(World())
    changed = sum(a != b for a, b in zip(drawn, narrow, strict=True))
    assert abs(changed / len(drawn) - 0.25) < 0.08
    assert all(len(a.threads) == len(b.threads) for a, b in zip(drawn, narrow, strict=True))


def test_a_wide_failure_is_first_tried_with_small_data() -> None:
    wide = next(p for p in _drawn(World()) if len(p.initial) > 4096)
    short = _short_data(wide)
    assert len(short.initial) <= 8 and all(len(i) <= 8 for i in _inserts(short))
    assert [len(t) for t in short.threads] == [len(t) for t in wide.threads] and short.is_valid()


@pytest.mark.slow
@pytest.mark.parametrize(("programs_for_a_pass", "programs_run"), [(10**9, 200), (100, 100)])
def test_a_pass_takes_two_rounds_unless_its_first_ran_enough_programs(
    monkeypatch: pytest.MonkeyPatch, programs_for_a_pass: int, programs_run: int
) -> None:
    """quick's rounds are 100 programs: two of them for a pass, as before; a round as
    large as PROGRAMS_FOR_A_PASS (thorough's 2000) is enough by itself."""
    from rollcert.stateful_tests.profiles import PROFILES

    monkeypatch.setattr(concurrency, "PROGRAMS_FOR_A_PASS", programs_for_a_pass)
    result = concurrency.certify_linearizability(BUNDLED, PROFILES["quick"], 0)
    assert result.verdict == "passed", result.reason
    assert result.examples == programs_run


def test_only_thoroughs_first_round_runs_enough_programs_for_a_pass() -> None:
    from rollcert.stateful_tests.profiles import PROFILES

    assert PROFILES["ci"].max_examples * 2 < concurrency.PROGRAMS_FOR_A_PASS <= PROFILES["thorough"].max_examples
