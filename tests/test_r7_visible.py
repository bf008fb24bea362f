"""An R7 counterexample shows text that visibly goes wrong (issue 43): the
minimiser makes a program's data visible letters and never cuts a pure insert
down to ``b''`` (a splice that inserts nothing changes no byte a reader sees)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.stateful_tests.concurrency import VISIBLE
from rollcert.stateful_tests.concurrency import Program
from rollcert.stateful_tests.concurrency import programs
from rollcert.stateful_tests.concurrency import shrink_candidates
from rollcert.stateful_tests.concurrency import visible_letters
from rollcert.stateful_tests.linearizability import Observe
from rollcert.stateful_tests.linearizability import RollbackCall
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.stateful_tests.world import world_of
from rollcert.targets.adapters.bundled import TARGET as BUNDLED

LETTERS = visible_letters(world_of(BUNDLED))

#: unlocked_between_journal_and_mutation's counterexample in docs/specimens.md before issue 43.
UNSEEN = Program(
    b"b\xf0\x9f",
    (),
    ((Observe("length"), SpliceCall(Splice(0, 0, b"\n\xe2\x82\xac\xe2"))), (RollbackCall(Rollback(1)),)),
)


def _inserts(program: Program) -> list[bytes]:
    actions = [*program.prefix, *(a for thread in program.threads for a in thread)]
    return [a.operation.insert for a in actions if isinstance(a, SpliceCall)]


def test_the_bundled_world_gives_visible_letters() -> None:
    assert LETTERS and all(b in VISIBLE for b in LETTERS)


def test_data_a_reader_cannot_see_is_made_of_visible_letters_as_a_simpler_candidate() -> None:
    candidates = list(shrink_candidates(UNSEEN, LETTERS))
    assert all(candidate.size <= UNSEEN.size for candidate in candidates)
    initials = {c.initial for c in candidates if len(c.initial) == len(UNSEEN.initial) and c.initial != UNSEEN.initial}
    assert len(initials) == 1
    initial = initials.pop()
    assert all(b in VISIBLE for b in initial) and initial[:1] == b"b"
    inserts = {i for c in candidates for i in _inserts(c) if len(i) == 5 and i != b"\n\xe2\x82\xac\xe2"}
    assert len(inserts) == 1 and all(b in VISIBLE for b in inserts.pop())
    # the whole program made visible at once comes right after the cuts of whole threads
    at_once = candidates[len(UNSEEN.threads)]
    assert all(b in VISIBLE for b in at_once.initial + b"".join(_inserts(at_once)))
    # without letters (a world with no visible letter), nothing is rewritten
    assert all(c.initial == UNSEEN.initial[: len(c.initial)] for c in shrink_candidates(UNSEEN))


def test_a_pure_insert_is_never_cut_to_nothing_but_a_deletion_may_insert_nothing() -> None:
    pure = Program(b"ab", (), ((SpliceCall(Splice(0, 0, b"a")), Observe("read")),))
    assert all(_inserts(c) != [b""] for c in shrink_candidates(pure, LETTERS))
    deleting = Program(b"ab", (), ((SpliceCall(Splice(0, 1, b"a")), Observe("read")),))
    assert any(_inserts(c) == [b""] for c in shrink_candidates(deleting, LETTERS))


def test_a_splice_that_changes_nothing_is_offered_one_visible_letter() -> None:
    nothing = Program(b"ab", (), ((SpliceCall(Splice(0, 0, b"")), Observe("read")),))
    assert [LETTERS[:1]] in [_inserts(c) for c in shrink_candidates(nothing, LETTERS)]


@pytest.mark.slow
@settings(max_examples=10, database=None, deadline=None)
@given(programs(BUNDLED))
def test_making_data_visible_always_ends(program: Program) -> None:
    """A candidate that rewrites data without cutting it has fewer bytes a reader
    cannot see, so the greedy minimiser cannot go round in circles."""

    def unseen(p: Program) -> int:
        actions = [*p.prefix, *(a for thread in p.threads for a in thread)]
        no_ops = sum(isinstance(a, SpliceCall) and not (a.operation.delete_length or a.operation.insert) for a in actions)
        return no_ops + sum(b not in VISIBLE for b in p.initial + b"".join(_inserts(p)))

    def lengths(p: Program) -> tuple[int, ...]:
        return (p.size, len(p.initial), *map(len, _inserts(p)))

    for candidate in shrink_candidates(program, LETTERS):
        rewritten = (candidate.initial, _inserts(candidate)) != (program.initial, _inserts(program))
        grown = sum(map(len, _inserts(candidate))) > sum(map(len, _inserts(program)))
        if rewritten and (lengths(candidate) == lengths(program) or grown):
            assert unseen(candidate) < unseen(program)
