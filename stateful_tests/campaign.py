"""Campaigns: rounds with fresh seeds until a time budget runs out (SPEC §7).

A certification runs a few rounds per property and stops; a campaign keeps
going — as HypoFuzz runs for hours — and is where a corpus gets its
counterexamples for the next CI gate to replay. Campaign round k of a property
is round k of a certification with no last round (seed ``seed + k *
ROUND_SEED_STRIDE``, :func:`~rollcert.stateful_tests.shards.run_unit`), so a
finding is replayed by ``rollcert certify`` with the same seed as any other.
This module keeps the tallies; the command runs the rounds in worker processes
and stops the last ones at the budget.

The budget (or Ctrl-C, SIGTERM) nearly always ends a round in its middle. The
units of that round that finished count like any other: their findings go into
the corpus and the certificate (they used to be dropped with the round, so a
counterexample found in 20 s of a 25 s campaign was in neither). A property
none of whose units finished is ``unknown``: the certificate is then not green.

A finding is distinct by :func:`finding_key` — the rule its failing step broke
and the harm it did, as the certificate tells findings apart — not by its
bytes: the same bug met by three rounds with three different shrunk traces is
one finding (it used to be counted as three), kept as its shortest trace.
Rounds are numbered from 0, as their seeds (``seed + k * stride`` is round k)
and the work units (``R2::shard-0``) are, in the live lines, the summary and
the JSON alike; :class:`CampaignProgress` prints a line inside a long round.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests import model_coverage
from rollcert.stateful_tests.corpus import entry_text
from rollcert.stateful_tests.corpus import file_name
from rollcert.stateful_tests.progress_events import Budget
from rollcert.stateful_tests.shards import UnitResult
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult

_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def parse_budget(text: str) -> float:
    """``2h``, ``30m``, ``90s``, ``45`` (seconds): a number of seconds above 0; ``ValueError`` otherwise."""
    found = _BUDGET.match(text)
    if found is None:
        raise ValueError(f"{text!r} is not a time budget: give e.g. 2h, 30m, 90s")
    seconds = float(found.group(1)) * _SECONDS[found.group(2)]
    if seconds <= 0:
        raise ValueError(f"{text!r}: a budget above 0")
    return seconds


def finding_key(counterexample: Counterexample) -> tuple[str, ...]:
    """What makes two counterexamples one finding: the rule the failing step
    broke and the harm it did. The one place a campaign decides distinctness,
    so that a finer signature (the certificate's own) can replace it here."""
    return (counterexample.rule(), counterexample.harm)


@dataclass(frozen=True)
class Finding:
    """A distinct counterexample: its corpus file name, length, when it was first
    found, in which round (from 0), and what makes it distinct (:func:`finding_key`)."""

    name: str
    steps: int
    seconds: float
    round: int
    key: tuple[str, ...] = ()


@dataclass
class PropertyCampaign:
    """One property's campaign so far."""

    property_id: str
    title: str = ""
    rounds: int = 0
    examples: int = 0
    steps: int = 0
    coverage: Counter[str] = field(default_factory=Counter)
    situations: list[tuple[str, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    shortest: PropertyResult | None = None
    last: PropertyResult | None = None
    #: Each round's model-branch record (rollcert.stateful_tests.model_coverage): the campaign reaches their union.
    branches: list[dict[str, Any]] = field(default_factory=list)

    def add(self, done: UnitResult, round_number: int, seconds: float, target_name: str) -> bool:
        """Count one round's unit; whether it found a counterexample not seen before."""
        result = done.result
        self.title = self.title or result.title
        self.rounds += 1
        self.examples += result.examples
        self.steps += result.steps
        self.coverage.update(result.coverage)
        self.situations = self.situations or list(done.record.situations)
        self.branches.append(result.model_branches)
        self.last = result
        found = result.counterexample
        if found is None:
            return False
        text = entry_text(found, target_name)
        name = file_name(text) if text is not None else f"{result.property_id}-round-{round_number}"
        key = finding_key(found)
        if any(f.key == key for f in self.findings):
            held = self.shortest.counterexample if self.shortest is not None else None
            if held is not None and finding_key(held) == key and len(found.steps) < len(held.steps):
                self.shortest = result  # the same finding, shorter: the certificate shows this one
            return False
        self.findings.append(Finding(name, len(found.steps), round(seconds, 3), round_number, key))
        if self.shortest is None or self.shortest.counterexample is None or (
            len(found.steps) < len(self.shortest.counterexample.steps)
        ):
            self.shortest = result
        return True

    def result(self, unfinished: str = "the budget ran out before one round of it finished") -> PropertyResult:
        """The property's line of the campaign's certificate; ``unfinished`` is the
        reason it is ``unknown`` if none of its rounds finished."""
        if self.rounds == 0:
            prop = PROPERTIES.get(self.property_id)
            title = self.title or (prop.title if prop is not None else "")
            return PropertyResult(self.property_id, "unknown", title, reason=unfinished)
        if self.last is not None and not self.situations and self.last.counterexample is None:
            return self.last  # not assessed, no machine, or a whole-property unit (R7)
        merged = PropertyResult(self.property_id, "passed", self.title, self.examples, self.steps)
        merged.coverage = {name: self.coverage[name] for name, _ in self.situations}
        merged.model_branches = model_coverage.merged(self.branches)
        if self.shortest is not None:
            merged.verdict, merged.counterexample = "violated", self.shortest.counterexample
            merged.reason = (
                f"{len(self.findings)} distinct findings in {self.rounds} rounds; the shortest: {self.shortest.reason}"
            )
        elif self.last is not None and self.last.verdict == "error":
            merged.verdict, merged.reason = "error", self.last.reason
        else:
            missing = [text for name, text in self.situations if not self.coverage[name]]
            missing += [f"model branch {name}" for name in model_coverage.unreached(merged.model_branches)]
            if missing:
                merged.verdict, merged.missing_situations = "unknown", missing
                merged.reason = "the run never reached: " + "; ".join(missing)
        merged.figures = {"campaign_rounds": float(self.rounds), "distinct_findings": float(len(self.findings))}
        return merged

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds, "examples": self.examples, "steps": self.steps,
            "distinct_findings": len(self.findings),
            "findings": [
                {"file": f.name, "steps": f.steps, "seconds_to_find": f.seconds, "round": f.round, "key": list(f.key)}
                for f in self.findings
            ],
        }


class CampaignProgress:
    """The campaign's live line inside a round (a round of a slow target can take
    minutes, and printed nothing until it ended): every :attr:`every` seconds,
    the round, the time, the examples and steps run so far in it, the units
    finished, and the findings so far. A ``ProgressSink`` for the workers of a
    round (:func:`~rollcert.command.parallel.certify_in_workers`), told of each
    unit by its task name, on stderr."""

    every = 10.0

    def __init__(self, started: float, budget: float, findings: Callable[[], str]) -> None:
        self.began = started
        self.budget = budget
        self.findings = findings
        self.round = 0
        self.units = 0
        self._counts: dict[str, tuple[int, int]] = {}
        self._finished = 0
        self._met: set[str] = set()
        self._last = time.monotonic()

    def new_round(self, number: int, units: int) -> None:
        self.round, self.units = number, units
        self._counts, self._finished, self._met = {}, 0, set()
        self._last = time.monotonic()

    def started(self, property_id: str, budget: Budget | None) -> None:
        pass

    def advanced(self, property_id: str, examples: int, steps: int) -> None:
        self._counts[property_id] = (examples, steps)

    def violation(self, property_id: str, text: str) -> None:
        self._met.add(property_id)

    def finished(self, property_id: str, verdict: str, detail: str) -> None:
        self._finished += 1

    def tick(self) -> None:
        now = time.monotonic()
        if now - self._last < self.every:
            return
        self._last = now
        examples = sum(c[0] for c in self._counts.values())
        steps = sum(c[1] for c in self._counts.values())
        met = f"; violations met this round (shrinking): {', '.join(sorted(self._met))}" if self._met else ""
        print(
            f"rollcert: campaign round {self.round} running at {now - self.began:.0f} s of {self.budget:.0f} s: "
            f"{examples:,} examples, {steps:,} steps so far, {self._finished} of {self.units} units finished; "
            f"distinct findings so far: {self.findings()}{met}",
            file=sys.stderr, flush=True,
        )

