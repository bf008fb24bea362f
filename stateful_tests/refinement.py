"""The production code against the model: a bounded exhaustive refinement check.

The z3 obligations are about an *encoding* of the model, and CrossHair cannot
push symbolic bytes through ``impl``'s chunk storage (see
:mod:`rollcert.proofs.crosshair_checks`), so neither says anything about the
code people run. This check does: it runs the real ``impl.JournaledBuffer`` (and
``impl.diffs.DiffableBuffer`` over it) and the reference model
(``model/reference.py``, ``model/diffs.py``) side by side on **every** operation
sequence up to a stated length, within stated small buffers and inserts, and
compares after every step the bytes, the depth, the revision and the error
raised. It is the bounded exhaustive search of
:mod:`rollcert.stateful_tests.exhaustive` (one search, not a second copy of it)
pointed at the ``bundled`` target, once per property family (``rollcert
prove`` runs it, :mod:`rollcert.command.prove`):

- ``rollback`` (R0-R4, R6): splices at every offset, ``rollback(n)`` up to one
  past the horizon, checkpoints, ``rollback_to`` live, dead and foreign tokens,
  a refused journal append (R1), out-of-log writes and the divergence they must
  cause (R4), ``adopt_current``, and bounded journals of capacity 1 and 2 under
  both policies (R6);
- ``diffs`` (S1-S3): snapshots, the agent's and a tool's edits, content and
  positional diffs with and without a read region, rollback of applied diffs:
  ``impl/diffs.py``'s read-set rule against ``model/diffs.py``'s.

A search that finishes every sequence is ``CONFIRMED`` *within its bounds* (a
small-scope check, not a proof: the bounds are printed with it); a disagreement
is ``FOUND`` with the shortest counterexample (breadth-first); a search whose
budget ran out is ``UNKNOWN``; an adapter that broke is ``ERROR``. Durability
(R5) and concurrency (R7) are not searched here: ``rollcert certify`` tests them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import Literal

from rollcert.model.operations import operation_to_json
from rollcert.stateful_tests.family import StepRecord

RefinementStatus = Literal["CONFIRMED", "FOUND", "UNKNOWN", "ERROR"]

#: Default length of the operation sequences: depth 3 runs in ~8 s (rollback) and
#: ~2 s (diffs) on this 2-core machine kind; depth 4 takes ~46 s for the diffs
#: family alone, past what ``rollcert prove`` may spend by default.
DEFAULT_DEPTH = 3
#: A search that judges more steps than this, or runs longer (a hang guard, wall
#: clock, generous because the machine is shared), is UNKNOWN, never CONFIRMED.
#: Depth 3 judges ~48,000 steps (rollback) and ~9,000 (diffs); depth 4 ~126,000
#: (diffs) and ~500,000 (rollback).
DEFAULT_MAX_STATES = 2_000_000
DEFAULT_BUDGET_S = 300.0


@dataclass(frozen=True)
class RefinementBounds:
    """The world one search covers, stated in every report of it."""

    depth: int = DEFAULT_DEPTH
    initial_buffers: tuple[bytes, ...] = (b"", b"ab", b"aab")
    alphabet: bytes = b"ab"
    max_length: int = 5
    #: Also start from bounded journals (capacities 1 and 2, both policies).
    bounded: bool = True
    max_states: int = DEFAULT_MAX_STATES
    time_budget_s: float = DEFAULT_BUDGET_S

    def describe(self, family: str = "rollback") -> str:
        """The world searched, in words: not every splice there is, but the
        exhaustive search's alphabet (``stateful_tests/exhaustive.py``, compact
        scope), every sequence of it."""
        from rollcert.stateful_tests.exhaustive import BOUNDED_CAPACITIES

        starts = ", ".join(repr(buffer) for buffer in self.initial_buffers)
        capacities = "/".join(str(c) for c in BOUNDED_CAPACITIES)
        edits = (
            "at every offset an insert of one letter, a 1-byte delete and a 1-byte overwrite; a no-op record, "
            "a 2-byte delete, a 2-byte repeated insert"
        )
        if family == "rollback":
            operations = (
                f"{edits}; rollback(1..depth+1); checkpoints, rollback_to live, dead and foreign tokens; "
                "a refused append; 1-byte out-of-log writes at the ends; adopt_current"
                + (f"; also from capacities {capacities} under both policies" if self.bounded else "")
            )
        else:
            operations = (
                f"up to 2 snapshots; the agent's and a tool's edits ({edits}); 1-byte content and positional "
                "diffs at every offset, with and without a read of the first byte; rollback(1), rollback_diff"
            )
        return (
            f"every sequence of <= {self.depth} operations from {starts}, buffers <= {self.max_length} bytes "
            f"over {self.alphabet!r}: {operations}"
        )


@dataclass(frozen=True)
class RefinementCheck:
    """One family's search: its name in ``rollcert prove``, and the rules it covers."""

    name: str
    family: Literal["rollback", "diffs"]
    properties: tuple[str, ...]
    description: str
    #: A *deeper* check: one operation more than the bounds say, from these
    #: starting buffers only (one more level from every buffer costs ~10x).
    deeper_from: tuple[bytes, ...] = ()

    def bounds_for(self, bounds: RefinementBounds) -> RefinementBounds:
        """The bounds this check searches, given the run's."""
        if not self.deeper_from:
            return bounds
        return replace(bounds, depth=bounds.depth + 1, initial_buffers=self.deeper_from)


_ROLLBACK_RULES = ("R0", "R1", "R2", "R3", "R4", "R6")
_ROLLBACK_WHAT = "impl.JournaledBuffer vs model/reference.py: bytes, depth, revision, errors"
_DIFF_RULES = ("S1", "S2", "S3")
_DIFF_WHAT = "impl/diffs.py vs model/diffs.py: read-set rule, rollback of a diff, revisions"

#: Each family twice: wide (every starting buffer) and one level deeper from the
#: smallest buffers, where the stories of four operations live (S2's needs a
#: snapshot, a tool's write, the apply and its rollback; R6's a checkpoint and
#: two evicting edits before the rollback_to).
CHECKS: tuple[RefinementCheck, ...] = (
    RefinementCheck("impl-refines-model/rollback", "rollback", _ROLLBACK_RULES, _ROLLBACK_WHAT),
    RefinementCheck("impl-refines-model/rollback-deeper", "rollback", _ROLLBACK_RULES, _ROLLBACK_WHAT, (b"",)),
    RefinementCheck("impl-refines-model/diffs", "diffs", _DIFF_RULES, _DIFF_WHAT),
    RefinementCheck("impl-refines-model/diffs-deeper", "diffs", _DIFF_RULES, _DIFF_WHAT, (b"a",)),
)


def check_named(name: str) -> RefinementCheck:
    for check in CHECKS:
        if check.name == name:
            return check
    raise KeyError(name)


@dataclass(frozen=True)
class RefinementResult:
    check: RefinementCheck
    status: RefinementStatus
    seconds: float
    bounds: RefinementBounds
    #: States judged, and the deepest level finished.
    states: int = 0
    depth_reached: int = 0
    #: The rule the failing step broke (SPEC §6a), for a FOUND.
    broken: str | None = None
    detail: str = ""
    #: Where the counterexample starts (buffer, capacity), and its judged steps
    #: (``rollcert.reports.certificate.format_steps`` prints them).
    start: str = ""
    steps: tuple[StepRecord, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.check.name,
            "family": self.check.family,
            "properties": list(self.check.properties),
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "bounds": self.bounds.describe(self.check.family),
            "states": self.states,
            "depth_reached": self.depth_reached,
            "broken": self.broken,
            "detail": self.detail,
            "counterexample": (
                {"start": self.start, "steps": [operation_to_json(step.operation) for step in self.steps]}
                if self.steps else None
            ),
        }


def run_refinement(check: RefinementCheck, bounds: RefinementBounds | None = None) -> RefinementResult:
    """Search ``check``'s family on the ``bundled`` target (the production code,
    resolved at call time, so a patched ``impl`` or ``model`` is what runs)."""
    from rollcert.stateful_tests.exhaustive import explore
    from rollcert.targets.adapters.bundled import TARGET

    bounds = check.bounds_for(bounds or RefinementBounds())
    started = time.perf_counter()
    searched = explore(
        TARGET,
        depth=bounds.depth,
        initial_buffers=bounds.initial_buffers,
        alphabet=bounds.alphabet,
        max_length=bounds.max_length,
        bounded=bounds.bounded,
        max_states=bounds.max_states,
        time_budget_s=bounds.time_budget_s,
        family=check.family,
    )
    seconds = time.perf_counter() - started
    common = {"seconds": seconds, "bounds": bounds, "states": searched.states, "depth_reached": searched.depth}
    if searched.verdict == "passed":
        return RefinementResult(check, "CONFIRMED", detail=searched.summary(), **common)
    if searched.verdict == "violated" and searched.violation is not None:
        violation = searched.violation
        config = violation.config
        start = f"from {config.initial!r}" + (
            f", capacity {config.capacity} ({config.policy})" if config.capacity is not None else ""
        )
        return RefinementResult(
            check,
            "FOUND",
            broken=searched.property_id,
            detail=f"{searched.property_id} broken: {violation.explanation}",
            start=start,
            steps=tuple(violation.steps),
            **common,
        )
    status: RefinementStatus = "UNKNOWN" if searched.verdict == "unknown" else "ERROR"
    return RefinementResult(check, status, detail=searched.reason, **common)
