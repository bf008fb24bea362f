"""The manifest of expected results: the suite must kill every specimen, on the
property its story breaks, with a short counterexample, and blame nothing else
without an explanation (TLA+ Examples' manifest, CrossHair's bugs_detected).

Tests replay, benchmarks search (issue 41). Every specimen's minimal
counterexample is stored in docs/specimens.md and replayed on every run
(tests/test_documented_findings.py); each specimen's own scenario is replayed in
tests/test_specimens_unit.py. Searching for them again — the kill matrix over
every specimen and seeds 0-9 — is ``python -m benchmarks.suite --seeds 10`` and
``rollcert specimens`` (docs/performance.md). Here a canary per family runs the
search itself at the quick profile, so that a search that stopped finding
anything fails the tests, not only the benchmark."""

from __future__ import annotations

import pytest

from rollcert.reports.certificate import format_counterexample
from rollcert.specimens import load_all
from rollcert.specimens.kill_matrix import kill_matrix
from rollcert.specimens.kill_matrix import render_kill_matrix
from rollcert.stateful_tests.family import HARMS

SPECIMENS = sorted(load_all())
#: SPEC §6 / issue 2: the story's counterexample has at most this many steps.
MAX_STEPS = 6
#: Issue 4: a diff counterexample needs a snapshot, the writes that make it stale
#: and the apply (and for S2 the rollback), so the S properties allow 8 steps.
MAX_DIFF_STEPS = 8


def test_every_specimen_named_in_the_issue_is_registered() -> None:
    assert {
        "best_effort_log",
        "fifo_replay",
        "first_match_scan",
        "depth_checkpoints",
        "no_divergence_check",
        "evict_newest",
        "write_set_only",
        "positional_on_advanced_base",
        "fuzzy_reconcile",
        "rollback_to_author_snapshot",
        "revision_reuse",
        "torn_tail_applied",
        "mutate_before_fsync",
        "skip_bad_record",
        "non_atomic_rollback",
        "snapshot_jump",
        # issue 23's misses of the newer families
        "checkpoint_reads_depth_unlocked",
        "sync_skipped_after_rollback",
        "eviction_keeps_checkpoint_positions",
        "author_snapshot_when_lengths_agree",
        "unchecked_when_live_empty",
        "read_set_ends_only",
    } <= set(SPECIMENS)
    for name, specimen in load_all().items():
        assert specimen.story, f"{name} has no story"
        assert specimen.breaks, f"{name} breaks nothing"
        assert all(reason.strip() for reason in specimen.also_caught_by.values())


#: One specimen per family of machines: the rollback family (R3, the seed's FIFO
#: replay), the diff family (S1's write-set-only check), the durable journal (R5's
#: torn tail) and the concurrent programs (R7).
CANARIES = ["fifo_replay", "write_set_only", "torn_tail_applied", "unlocked_buffer"]


def test_the_canaries_cover_every_family() -> None:
    families = {load_all()[name].breaks for name in CANARIES}
    assert families == {frozenset({"R3"}), frozenset({"S1"}), frozenset({"R5"}), frozenset({"R7"})}


@pytest.mark.parametrize("name", CANARIES)
@pytest.mark.slow
def test_specimen_is_killed_as_its_story_says(name: str) -> None:
    matrix = kill_matrix(profile="quick", seed=0, names=[name])
    row = matrix.rows[0]
    assert row.as_expected, render_kill_matrix(matrix)
    for property_id in row.specimen.breaks:
        result = row.certificate.results[property_id]
        assert result.counterexample is not None
        if property_id == "R7":
            # A concurrency counterexample is a history, not a sequence of steps: the
            # longest order that fits the model (every step of it ok) and the timeline
            # of the call that cannot be placed, told in the reason.
            assert "Timeline" in result.reason and "Could not be placed" in result.reason, result.reason
            assert all(step.ok for step in result.counterexample.steps)
            assert row.certificate.exit_status == 1
            continue
        steps = result.counterexample.steps
        limit = MAX_DIFF_STEPS if property_id.startswith("S") else MAX_STEPS
        assert len(steps) <= limit, f"{name}/{property_id}: {len(steps)} steps:\n" + format_counterexample(
            result.counterexample
        )
        assert not steps[-1].ok and all(step.ok for step in steps[:-1])
        # SPEC §6a: the failing step broke the story's own clause, and says what harm it did.
        # (R0 is every violation's rule: a story of R0 alone may show it through another clause.)
        assert property_id == "R0" or property_id in result.counterexample.broken, result.counterexample.broken
        assert steps[-1].harm in HARMS, steps[-1].harm
        assert f"harm      {steps[-1].harm}" in format_counterexample(result.counterexample)
        assert row.certificate.exit_status == 1
    for property_id, result in row.certificate.results.items():
        # Every other violation is attributed: R0, or a property whose own clause broke there.
        if result.verdict == "violated" and property_id not in ("R0", "R7"):
            assert result.counterexample is not None
            assert property_id in result.counterexample.broken, (property_id, result.counterexample.broken)
