"""``rollcert prove`` fails on real bugs (issue 40): each test plants one realistic
bug in the production code (``impl``) or in the model, in-process, and the check
``prove`` runs must come back FOUND with a counterexample, which exits 1.

Measured before this file: ten such bugs, planted one at a time, and ``rollcert
prove`` exited 0 on every one (its only check of ``impl`` ran two splices and a
rollback(2), and a counterexample there was counted as "met"). The planted bugs
are written here, against the real classes, rather than taken from
``specimens/``: a specimen is a separate target the certifier already knows,
while these are the mistakes an edit of ``impl`` or ``model`` would make.

Each search is small (one starting buffer, sequences of 2 or 3 operations), so
each test runs in well under a second; breadth-first, the counterexample is a
shortest one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from rollcert.command.cli import main as rollcert_main
from rollcert.command.prove import refinement_standing
from rollcert.impl.diffs import AuthoredDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.journal import InMemoryJournal
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.model import reference
from rollcert.model.contract import Region
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.proofs import crosshair_checks
from rollcert.proofs.report import crosshair_standing
from rollcert.stateful_tests.refinement import RefinementBounds
from rollcert.stateful_tests.refinement import RefinementResult
from rollcert.stateful_tests.refinement import check_named
from rollcert.stateful_tests.refinement import run_refinement

ROLLBACK = check_named("impl-refines-model/rollback")
DIFFS = check_named("impl-refines-model/diffs")


def search(family: str, depth: int, *starts: bytes, bounded: bool = False) -> RefinementResult:
    check = ROLLBACK if family == "rollback" else DIFFS
    return run_refinement(check, RefinementBounds(depth=depth, initial_buffers=starts, bounded=bounded))


def assert_found(result: RefinementResult) -> None:
    """FOUND, with its counterexample's steps, counted as a counterexample (exit 1)."""
    assert result.status == "FOUND", (result.status, result.detail)
    assert refinement_standing(result) == "counterexample"
    assert result.steps and result.start.startswith("from ")


# -- the shipped code passes ------------------------------------------------------------------


def test_the_shipped_rollback_code_refines_the_model() -> None:
    result = search("rollback", 2, b"ab", bounded=True)
    assert result.status == "CONFIRMED", result.detail
    assert refinement_standing(result) == "met"


def test_the_shipped_diff_code_refines_the_model() -> None:
    result = search("diffs", 2, b"aab")
    assert result.status == "CONFIRMED", result.detail


# -- impl: R3/R2, FIFO rollback ---------------------------------------------------------------------


def _fifo_rollback(self: JournaledBuffer, steps: int) -> None:
    """rollback(n) takes the n newest records off, then undoes them oldest first."""
    if steps > self._depth:
        raise UnreachableRollbackError("past the horizon")
    if self._storage.version != self._expected_version:
        self._note_out_of_log_write()
    barrier = self._barrier_position - self._base_position
    if steps and self._depth - steps < barrier <= self._depth:
        raise DivergenceError("out-of-log write in the way")
    records = [self._journal.pop() for _ in range(steps)]
    for offset, removed, inserted_length, _serial in reversed(records):  # the bug: oldest first
        self._storage.replace(offset, inserted_length, removed)
    self._depth -= steps
    self._revision += steps
    self._expected_version = self._storage.version


def test_fifo_rollback_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JournaledBuffer, "_rollback_locked", _fifo_rollback)
    result = search("rollback", 3, b"ab")
    assert_found(result)
    assert result.broken in ("R2", "R3"), result.detail


# -- impl: R6, evict the newest record ------------------------------------------------------------------


def test_evicting_the_newest_record_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def evict_newest(self: InMemoryJournal) -> InverseRecord:
        return self._recent.pop()  # the bug: the record just appended, not the oldest

    monkeypatch.setattr(InMemoryJournal, "evict_oldest", evict_newest)
    result = search("rollback", 3, b"", bounded=True)
    assert_found(result)
    assert result.broken == "R6", result.detail


# -- impl: R1, mutate before the record is committed ------------------------------------------------------


def test_mutating_before_the_log_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def splice_then_log(self: JournaledBuffer, offset: int, delete_length: int, insert: bytes) -> None:
        with self._lock:
            removed = self._storage.read_range(offset, offset + delete_length)
            self._storage.replace(offset, delete_length, insert)  # the bug: the buffer first ...
            self._expected_version = self._storage.version
            self._journal.append(InverseRecord(offset, removed, len(insert), next(self._serials)), insert)  # ... then the log
            self._depth += 1
            self._revision += 1

    monkeypatch.setattr(JournaledBuffer, "splice", splice_then_log)
    result = search("rollback", 2, b"ab")
    assert_found(result)
    assert result.broken == "R1", result.detail


# -- impl: S3, a revision that is reused -----------------------------------------------------------------------


def test_a_reused_revision_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # The revision counted as the log position: a rollback hands an old number out again.
    monkeypatch.setattr(JournaledBuffer, "revision", property(lambda self: self._base_position + self._depth))
    assert_found(search("rollback", 2, b"ab"))


# -- impl: R4, no divergence check ----------------------------------------------------------------------------


def test_a_missing_divergence_check_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def forget(self: JournaledBuffer) -> None:
        self._expected_version = self._storage.version  # the bug: no barrier is set

    monkeypatch.setattr(JournaledBuffer, "_note_out_of_log_write", forget)
    result = search("rollback", 3, b"ab")
    assert_found(result)
    assert result.broken == "R4", result.detail


# -- impl/diffs.py: S1, the read-set checked as the write-set -------------------------------------------------


def test_checking_only_the_write_set_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def write_set_only(self: DiffableBuffer, diff: AuthoredDiff) -> tuple[Region, ...]:
        length = len(diff.base.content)
        return tuple(Region(max(0, h.start - 1), min(length, h.end + 1)) for h in diff.hunks)  # reads ignored

    monkeypatch.setattr(DiffableBuffer, "_regions_to_check", write_set_only)
    result = search("diffs", 3, b"aab")
    assert_found(result)
    assert result.broken == "S1", result.detail


# -- impl/diffs.py: S2, rolling a diff back to the author's snapshot --------------------------------------------


class _BackToTheAuthorsSnapshot(DiffableBuffer):
    """rollback_diff rolls the records back, then writes the author's B0 over
    the buffer: a tool's write that landed between B0 and the apply is erased."""

    def apply_diff(self, diff: AuthoredDiff) -> object:  # type: ignore[override]
        applied = super().apply_diff(diff)
        self.__dict__.setdefault("authored_on", {})[applied] = diff.base.content
        return applied

    def rollback_diff(self, applied: object) -> None:  # type: ignore[override]
        super().rollback_diff(applied)  # type: ignore[arg-type]
        snapshot = self.__dict__.get("authored_on", {}).get(applied)
        if snapshot is not None and snapshot != self.read():
            self.splice(0, len(self), snapshot)


def test_rolling_a_diff_back_to_the_authors_snapshot_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from rollcert.targets.adapters.bundled_diffs import BundledDiffAdapter

    monkeypatch.setattr(BundledDiffAdapter, "diff_layer", _BackToTheAuthorsSnapshot)
    # Its story takes four operations (snapshot, a tool's write, apply, rollback_diff):
    # the deeper check of `rollcert prove`'s defaults, as it runs there.
    result = run_refinement(check_named("impl-refines-model/diffs-deeper"), RefinementBounds())
    assert result.bounds.depth == 4 and result.bounds.initial_buffers == (b"a",)
    assert_found(result)
    assert result.broken == "S2", result.detail


# -- model: a bug in the oracle shows as a disagreement too ------------------------------------------------------


def test_a_model_that_reuses_revisions_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    original = reference._rollback_steps

    def rollback_without_a_new_revision(state: reference.ModelState, steps: int) -> reference.Outcome:
        outcome = original(state, steps)
        if outcome.error is not None:
            return outcome
        return reference.Outcome(replace(outcome.state, revision=state.revision - steps))

    monkeypatch.setattr(reference, "_rollback_steps", rollback_without_a_new_revision)
    assert_found(search("rollback", 2, b"ab"))


def test_a_model_checkpoint_named_by_depth_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """S3 (no ABA) in the model: a checkpoint is live while its depth is reachable."""

    def by_depth(state: reference.ModelState, operation: reference.RollbackTo) -> reference.Outcome:
        _serial, depth = state.checkpoints[operation.checkpoint]
        if depth > state.depth:
            return reference.Outcome(state, UnreachableRollbackError, message="dead")
        return reference._rollback_steps(state, state.depth - depth)

    monkeypatch.setattr(reference, "_rollback_to", by_depth)
    assert_found(search("rollback", 4, b""))


# -- the command: the planted bug turns `rollcert prove` red -------------------------------------------------------


@pytest.fixture
def reused_revisions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(JournaledBuffer, "revision", property(lambda self: self._base_position + self._depth))
    yield


def test_prove_exits_1_and_prints_the_counterexample(
    reused_revisions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status = rollcert_main(["prove", "--only", "impl-refines-model/rollback", "--refinement-depth", "2"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "FOUND" in out and "COUNTEREXAMPLE: impl-refines-model/rollback" in out
    assert "expected" in out and "actual" in out  # the steps, expected against actual
    assert "exit status 1" in out


def test_prove_exits_0_on_the_shipped_code(capsys: pytest.CaptureFixture[str]) -> None:
    status = rollcert_main(["prove", "--only", "impl-refines-model/diffs", "--refinement-depth", "2"])
    assert status == 0, capsys.readouterr().out


def test_a_search_over_its_budget_is_unknown_and_exits_2() -> None:
    from rollcert.proofs.report import Counted
    from rollcert.proofs.report import exit_status

    result = run_refinement(ROLLBACK, RefinementBounds(depth=3, initial_buffers=(b"ab",), max_states=50))
    assert result.status == "UNKNOWN" and refinement_standing(result) == "unknown", result.detail
    counted = [Counted("z3", "z3", "PROVED", "met"), Counted(ROLLBACK.name, "refinement", "UNKNOWN", "unknown")]
    assert exit_status(counted) == 2
    assert exit_status([*counted, Counted("x", "crosshair", "FOUND", "counterexample")]) == 1
    assert exit_status([Counted("s", "crosshair", "UNKNOWN", "searched")]) == 0


# -- CrossHair: a FOUND on unplanted code is a counterexample, never "met" ----------------------------------------


@pytest.mark.parametrize(
    ("row", "standing"),
    [
        ({"status": "FOUND", "role": "search"}, "counterexample"),
        ({"status": "FOUND", "role": "holds"}, "counterexample"),
        ({"status": "UNKNOWN", "role": "holds"}, "unknown"),
        ({"status": "UNKNOWN", "role": "search"}, "searched"),
        ({"status": "FOUND", "role": "planted"}, "met"),
        ({"status": "MISSED", "role": "planted"}, "toothless"),
        ({"status": "CONFIRMED", "role": "holds"}, "met"),
    ],
)
def test_crosshair_statuses_count_by_role(row: dict[str, str], standing: str) -> None:
    assert crosshair_standing(row) == standing


@pytest.mark.slow
def test_crosshair_finds_a_planted_bug_in_the_impl_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measured hole: impl_agrees_with_model FOUND used to print "0 not met".
    The plant: rollback(n) on the real JournaledBuffer undoes one record too few."""
    original = JournaledBuffer.rollback
    monkeypatch.setattr(JournaledBuffer, "rollback", lambda self, steps=1: original(self, max(0, steps - 1)))
    result = crosshair_checks.check_contract(crosshair_checks.impl_agrees_with_model, crosshair_checks.MUTANT_BUDGET_S)
    assert result.status == "FOUND", result.detail
    assert crosshair_standing({**result.as_dict(), "role": "search"}) == "counterexample"


# -- R5: a missing fsync, caught by `rollcert certify` on the durable family ----------------------------------------


@pytest.mark.slow
def test_a_missing_fsync_is_found_by_certify(monkeypatch: pytest.MonkeyPatch) -> None:
    """R5 needs a crash, which the refinement search does not make; the durable
    family of ``rollcert certify`` does (on a simulated disk that loses unsynced writes)."""
    from rollcert.impl.file_journal import FileJournal
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.adapters.bundled import TARGET

    def commit_without_fsync(self: FileJournal, data: bytes) -> None:
        self._check_usable()
        size = self._size
        self.storage.append(self.name, data)  # the bug: written, never synced
        self._size = size + len(data)

    monkeypatch.setattr(FileJournal, "_commit", commit_without_fsync)
    certificate = certify(TARGET, profile="quick", seed=0, only=("R5",))
    assert certificate.results["R5"].verdict == "violated"
    assert certificate.exit_status == 1
