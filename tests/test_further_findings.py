"""Issue 43's second pass: the first finding raises and is minimised as it always
was; a bounded search for further findings follows (``certify._search_further``).

The first pass's counterexample must not change and must not cost more (on the
``findings`` branch the run went on past its first failure, and minimising from
the raw failing example, often with a 64 KiB or 1.25 MiB start, took fifo_replay's
R3 from 0.34 s to 15 s CPU). The second pass is bounded by examples (the bound
two runs of one seed meet alike) and by time (a backstop the certificate names).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import specimen_target
from _helpers import violation_on

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.reports.certificate import render_text
from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.stateful_tests import certify as certify_module
from rollcert.stateful_tests.certify import assemble
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.certify import further_limits
from rollcert.stateful_tests.family import SearchLimits
from rollcert.stateful_tests.family import SearchSpent
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.strategies import DEFAULT_WORLD
from rollcert.stateful_tests.strategies import start_from
from rollcert.stateful_tests.strategies import starts_past_64_kib
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import BufferConfig

sys.path.insert(0, str(Path(__file__).parent / "findings_targets"))
import two_bugs

QUICK = PROFILES["quick"]


def _trace(found: Counterexample | None) -> tuple[Any, ...]:
    assert found is not None
    return (found.initial, found.capacity, found.policy, tuple(step.operation for step in found.steps))


#: A seed whose quick R0 run meets both bugs. Not every seed does (2026-12-06,
#: seeds 0-9: both on 8, one on 2 — seed 0 lost the second when rollback counts
#: began to stop at out-of-log writes); these tests are about what a run does
#: with two findings, so they take a seed that has two.
SEED_WITH_BOTH = 2


def _r0(seed: int = SEED_WITH_BOTH) -> PropertyResult:
    return certify_property(two_bugs.BOTH, "R0", QUICK, seed)


def test_the_counterexample_is_the_first_pass_s_whatever_the_second_pass_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched = _r0()
    assert len(searched.findings) >= 2 and searched.findings[0] == searched.counterexample
    monkeypatch.setattr(certify_module, "_search_further", lambda *_: [])
    alone = _r0()
    assert alone.findings == [alone.counterexample]
    assert _trace(alone.counterexample) == _trace(searched.counterexample)
    # The first pass's examples, steps and coverage are the certificate's; the search's are not added.
    assert (alone.examples, alone.steps, alone.coverage) == (searched.examples, searched.steps, searched.coverage)


@pytest.mark.slow  # two certifications of a two-bug target: 1-2 s, 2.07 s in a CI run
def test_the_search_starts_its_examples_and_two_runs_list_the_same_findings() -> None:
    first, second = _r0(), _r0()
    assert "further_search_cut" not in first.figures
    assert first.figures["further_search_examples"] == further_limits(QUICK, 0.0, 0.0, first.examples).examples == 10
    assert [_trace(found) for found in first.findings] == [_trace(found) for found in second.findings]
    assert first.figures == second.figures


def test_a_search_out_of_time_ends_and_the_certificate_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(certify_module, "FURTHER_SECONDS_FLOOR", 0.0)
    monkeypatch.setattr(certify_module, "FURTHER_SECONDS_SHARE", 0.0)
    result = _r0()
    assert result.verdict == "violated" and result.findings == [result.counterexample]
    assert result.figures["further_search_cut"] == 1.0 and result.figures["further_search_examples"] == 0.0
    shown = render_text(assemble(two_bugs.BOTH, "quick", 0, {"R0": result}, None))
    assert "the search for further findings was cut short by its time" in shown


def test_the_search_may_start_as_many_examples_as_the_failing_round_ran_within_bounds() -> None:
    ci = PROFILES["ci"]
    assert [further_limits(ci, 1.0, 1.0, ran).examples for ran in (0, 4, 17, 300)] == [10, 10, 17, 30]
    assert [further_limits(QUICK, 1.0, 1.0, ran).examples for ran in (0, 100)] == [10, 10]
    # The time backstop: a quarter of the first pass's seconds, at least half a second.
    assert (further_limits(ci, 8.0, 8.0, 0).cpu_seconds, further_limits(ci, 1.0, 1.0, 0).cpu_seconds) == (2.0, 0.5)


def test_the_limits_end_the_search_at_its_examples_or_its_time() -> None:
    violation = violation_on(two_bugs.SHORT_UNDO, BufferConfig(b"abc"), [Splice(0, 3, b""), Rollback(1)])
    tracker = Tracker("R0")
    assert tracker.is_new(violation)  # the first pass: every own finding fails the run
    tracker.known = {violation.finding_key()}
    assert not tracker.is_new(violation)  # the search: a known one ends its example only
    cr = violation_on(two_bugs.DROPS_CR, BufferConfig(b""), [Splice(0, 0, b"\r")])
    assert tracker.is_new(cr) and tracker.met is cr
    tracker.limits = SearchLimits(examples=2, cpu_seconds=60.0, wall_seconds=60.0)
    tracker.limits.start()
    tracker.examples = 1
    tracker.check_limits()
    tracker.examples = 2
    with pytest.raises(SearchSpent):
        tracker.check_limits()
    assert tracker.limits.spent == "examples"
    timed = SearchLimits(examples=100, cpu_seconds=0.0, wall_seconds=60.0)
    timed.start()
    tracker.limits, tracker.examples = timed, 0
    with pytest.raises(SearchSpent):
        tracker.check_limits()
    assert timed.spent == "time"


def test_the_search_starts_small() -> None:
    words = [bytes([first, second]) * 4 for first in range(1, 40) for second in (1, 2)]
    past = [word for word in words if starts_past_64_kib(word)]
    assert past, "no start word past 64 KiB among these"
    for word in past:
        assert len(start_from(word, DEFAULT_WORLD, "never", False).initial) > 1 << 16
        assert len(start_from(word, DEFAULT_WORLD, "never", False, small=True).initial) < 1 << 16


def test_a_further_finding_s_long_history_is_minimised_within_its_replays_keeping_its_key() -> None:
    # FIFO undo of nine of twelve appends: no single step can go (each changes what
    # rollback(9) undoes); blocks of edits go with as many rollback steps.
    fifo = specimen_target("fifo_replay")
    operations = [Splice(3 + 2 * i, 0, bytes([ord("a") + i]) * 2) for i in range(12)] + [Rollback(9)]
    met = violation_on(fifo, BufferConfig(b"xyz"), operations)
    small = minimise(ROLLBACK, fifo, met, "R3", keep_finding=True, budget=certify_module.FURTHER_FINDINGS_REPLAYS)
    assert len(small.steps) <= 3 and small.finding_key() == met.finding_key()
    assert small.steps[-1].operation == Rollback(2)


def test_every_finding_is_a_section_of_the_html_certificate() -> None:
    short_undo = violation_on(two_bugs.SHORT_UNDO, BufferConfig(b"abc"), [Splice(0, 3, b""), Rollback(1)])
    cr = violation_on(two_bugs.DROPS_CR, BufferConfig(b""), [Splice(0, 0, b"\r")])
    findings = [certify_module._counterexample("R0", two_bugs.BOTH, v, "rollback") for v in (short_undo, cr)]
    result = PropertyResult("R0", "violated", "No silent corruption", counterexample=findings[0], findings=findings)
    page = render_html(from_certificate_data(assemble(two_bugs.BOTH, "quick", 0, {"R0": result}, None)))
    assert 'id="R0"' in page and 'id="R0-finding-2"' in page
    assert page.count('class="signature"') == 2 and "lost CR" in page
