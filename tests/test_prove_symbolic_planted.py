"""Every new proof of issue 44 fails on a broken variant, and says which check caught it.

Planted in the production code, caught by CrossHair on the real
``impl.JournaledBuffer`` (:mod:`rollcert.proofs.symbolic_refinement`), each run
through the same check ``rollcert prove`` runs by default:

============================================  ====  ===============================
planted bug                                   rule  caught by
============================================  ====  ===============================
no barrier set on an out-of-log write         R4    impl-symbolic/divergence
evicting the newest record                    R6    impl-symbolic/bounded-log
buffer mutated before the record is appended  R1    impl-symbolic/refused-append
revision counted as the log position (reuse)  S3    impl-symbolic/splice-rollback
undo replayed one byte right of its offset    R2    impl-symbolic/splice-rollback
rollback_to by depth, not by the state's id   R3    impl-symbolic/dead-checkpoint
an insert inside a read region not splitting  S1    s1-read-check-exact (impl/diffs)
============================================  ====  ===============================

And the z3 theorems: each fails (z3 finds a model) when the rule it proves
is planted broken in the encoding or in the check's encoding.
"""

from __future__ import annotations

import pytest

from rollcert.command.cli import main as rollcert_main
from rollcert.impl import diffs as impl_diffs
from rollcert.impl.journal import InMemoryJournal
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.model.errors import UnreachableRollbackError
from rollcert.proofs import read_set_check
from rollcert.proofs import symbolic_refinement
from rollcert.proofs.runner import check as check_obligation

pytestmark = pytest.mark.proof


def _found(name: str) -> symbolic_refinement.SymbolicResult:
    symbolic = symbolic_refinement.check_named(name)
    result = symbolic_refinement.check(symbolic.name, symbolic.bounds)
    print(f"\n{name}: {result.status} after {result.paths} paths, {result.seconds:.1f} s: {result.counterexample}")
    return result


def _no_barrier(self: JournaledBuffer) -> None:
    self._expected_version = self._storage.version  # the bug: the write is forgotten


def _evict_newest(self: InMemoryJournal) -> InverseRecord:
    return self._recent.pop()  # the bug: the record just appended


def _mutate_then_log(self: JournaledBuffer, offset: int, delete_length: int, insert: bytes) -> None:
    with self._lock:
        removed = self._storage.read_range(offset, offset + delete_length)
        self._storage.replace(offset, delete_length, insert)  # the bug: the buffer first ...
        self._expected_version = self._storage.version
        self._journal.append(InverseRecord(offset, removed, len(insert), next(self._serials)), insert)
        self._depth += 1
        self._revision += 1


def _undo_one_right(self: JournaledBuffer, steps: int = 1) -> None:
    for _ in range(steps):
        with self._lock:
            if not self._depth:
                raise UnreachableRollbackError("past the horizon")
            offset, removed, inserted_length, _serial = self._journal.pop()
            at = min(offset + 1, len(self._storage) - inserted_length)  # the bug: one byte right
            self._storage.replace(at, inserted_length, removed)
            self._expected_version = self._storage.version
            self._depth -= 1
            self._revision += 1


def _checkpoint_by_depth(self: JournaledBuffer, token: object) -> None:
    with self._lock:
        if token.buffer_id != self._id:  # type: ignore[attr-defined]
            raise UnreachableRollbackError("another buffer")
        depth = token.position - self._base_position  # type: ignore[attr-defined]
        if not 0 <= depth <= self._depth:
            raise UnreachableRollbackError("past the horizon")  # the bug: the serial is not compared
        self._rollback_locked(self._depth - depth)


PLANTED: dict[str, tuple[object, str, object, str]] = {
    # name: (class, attribute, replacement, check that must catch it)
    "R4 no barrier": (JournaledBuffer, "_note_out_of_log_write", _no_barrier, "impl-symbolic/divergence"),
    "R6 evict newest": (InMemoryJournal, "evict_oldest", _evict_newest, "impl-symbolic/bounded-log"),
    "R1 mutate then log": (JournaledBuffer, "splice", _mutate_then_log, "impl-symbolic/refused-append"),
    "S3 reused revision": (
        JournaledBuffer, "revision", property(lambda self: self._base_position + self._depth),
        "impl-symbolic/splice-rollback",
    ),
    "R2 undo one byte right": (JournaledBuffer, "rollback", _undo_one_right, "impl-symbolic/splice-rollback"),
    "R3 checkpoint by depth": (JournaledBuffer, "rollback_to", _checkpoint_by_depth, "impl-symbolic/dead-checkpoint"),
}


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_crosshair_on_the_production_code_finds_the_planted_bug(bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    owner, attribute, replacement, name = PLANTED[bug]
    monkeypatch.setattr(owner, attribute, replacement)
    result = _found(name)
    assert result.status == "FOUND", (bug, result.detail)
    assert result.counterexample and "agrees when replayed" not in result.counterexample


@pytest.mark.slow
def test_the_shipped_code_passes_the_symbolic_checks() -> None:
    for name in ("impl-symbolic/refused-append", "impl-symbolic/splice-rollback"):
        result = _found(name)
        assert result.status == "CONFIRMED", (name, result.detail)
        assert result.paths > 1


@pytest.mark.slow
def test_prove_exits_1_on_a_planted_bug_caught_symbolically(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(JournaledBuffer, "_note_out_of_log_write", _no_barrier)
    status = rollcert_main(["prove", "--only", "impl-symbolic/divergence"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "FOUND" in out and "DivergenceError" in out and "COUNTEREXAMPLE: impl-symbolic/divergence" in out


def _no_split(intervals: list[tuple[int, int]], edits: tuple[tuple[int, int, int], ...]) -> list[tuple[int, int]] | None:
    """map_intervals with the bug: an insertion inside a region widens it instead of splitting it."""
    pieces = intervals
    for offset, removed, inserted in reversed(edits):
        moved = []
        for start, end in pieces:
            if removed and offset < end and start < offset + removed:
                return None
            if offset + removed <= start:
                moved.append((start + inserted - removed, end + inserted - removed))
            elif offset >= end or not inserted:
                moved.append((start, end))
            else:
                moved.append((start, end + inserted))  # the bug
        pieces = moved
    return pieces


def test_the_s1_read_check_finds_a_region_that_is_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(impl_diffs, "map_intervals", _no_split)
    status, _seconds, detail = read_set_check.exhaustive(max_length=3, max_insert=1)
    assert status == "FOUND", detail
    assert "accepted" in detail and "changed" in detail


def test_the_s1_read_check_passes_the_shipped_code_within_small_bounds() -> None:
    status, _seconds, detail = read_set_check.exhaustive(max_length=3, max_insert=1)
    assert status == "CONFIRMED", detail


# -- z3: each theorem fails on a broken rule -------------------------------------------------------


def _plant_encoding(monkeypatch: pytest.MonkeyPatch, bug: str) -> None:
    import z3

    from rollcert.proofs import obligations

    if bug == "read-check-accepts-only-unchanged-regions":
        def accepted_without_split(start: object, end: object, edit: obligations.SymbolicSplice) -> z3.BoolRef:
            return z3.Not(z3.And(edit.delete_length > 0, edit.offset < end, start < edit.offset + edit.delete_length))  # type: ignore[operator]

        monkeypatch.setattr(obligations, "read_region_accepted", accepted_without_split)
    elif bug == "diff-commutes-with-write-outside-read-set":
        # the rebase forgets the deleted bytes: a position after an edit moves by its insert only
        monkeypatch.setattr(obligations.SymbolicSplice, "shift", property(lambda self: self.insert.length))
    else:
        from rollcert.proofs import encoding

        real = encoding.inverse_of

        def off_by_one(buffer: object, offset: object, delete_length: object, insert: object) -> encoding.SymbolicRecord:
            record = real(buffer, offset, delete_length, insert)  # type: ignore[arg-type]
            return encoding.SymbolicRecord(record.offset + 1, record.removed, record.inserted_length)

        monkeypatch.setattr(obligations, "inverse_of", off_by_one)


@pytest.mark.parametrize(
    "name",
    ["read-check-accepts-only-unchanged-regions", "diff-commutes-with-write-outside-read-set",
     "splice-then-inverse", "two-step-lifo"],
)
def test_each_theorem_fails_on_a_broken_rule(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rollcert.proofs.obligations import obligation_named

    obligation = obligation_named(name)
    assert check_obligation(obligation).verdict == "PROVED"
    _plant_encoding(monkeypatch, name)
    broken = check_obligation(obligation)
    assert broken.verdict == "FAILED" and broken.z3_status == "sat", (name, broken.verdict, broken.detail)


def test_planted_bugs_cover_distinct_rules() -> None:
    rules = {bug.split()[0] for bug in PLANTED} | {"S1"}
    assert rules >= {"R1", "R2", "R3", "R4", "R6", "S1", "S3"}


