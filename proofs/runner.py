"""Run obligations through z3 and turn z3's answers into verdicts.

The verdict is strict on purpose: a theorem is PROVED only on ``unsat``; z3's
``unknown`` (a timeout, an incomplete theory) is UNKNOWN and counts as a
failure, never a pass. A refutation is REFUTED only on ``sat`` *and* when its
decoded counterexample re-checks concretely; a counterexample that does not
re-check is a decoding bug and is reported as FAILED.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from typing import Literal

import z3

from rollcert.proofs.decode import Counterexample
from rollcert.proofs.decode import ModelReader
from rollcert.proofs.obligations import REGISTRY
from rollcert.proofs.obligations import Obligation
from rollcert.proofs.obligations import Query

Verdict = Literal["PROVED", "REFUTED", "UNKNOWN", "FAILED"]

#: Per-query budget. Every query here answers in milliseconds; 10 s means something broke.
DEFAULT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class ObligationResult:
    obligation: Obligation
    verdict: Verdict
    z3_status: str
    seconds: float
    counterexample: Counterexample | None = None
    detail: str = ""

    @property
    def passed(self) -> bool:
        expected: Verdict = "PROVED" if self.obligation.kind == "theorem" else "REFUTED"
        return self.verdict == expected

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.obligation.name,
            "kind": self.obligation.kind,
            "scope": self.obligation.scope,
            "properties": list(self.obligation.properties),
            "description": self.obligation.description,
            "verdict": self.verdict,
            "passed": self.passed,
            "z3_status": self.z3_status,
            "seconds": round(self.seconds, 4),
            "detail": self.detail,
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
        }


def _solver(query: Query, timeout_seconds: float) -> z3.Solver:
    solver = z3.Solver()
    solver.set("timeout", max(1, int(timeout_seconds * 1000)))
    for option, value in query.solver_options:
        solver.set(option, value)
    return solver


def hypotheses_satisfiable(query: Query, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> z3.CheckSatResult:
    """``sat`` unless the theorem's hypotheses contradict each other (a vacuous proof)."""
    solver = _solver(query, timeout_seconds)
    solver.add(*query.hypotheses)
    return solver.check()


def check(obligation: Obligation, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> ObligationResult:
    """Build and solve one obligation; decode and re-check a refutation's model."""
    started = time.perf_counter()
    query = obligation.build()
    solver = _solver(query, timeout_seconds)
    solver.add(*query.assertions)
    status = solver.check()
    seconds = time.perf_counter() - started

    if status == z3.unknown:
        return ObligationResult(obligation, "UNKNOWN", "unknown", seconds, detail=solver.reason_unknown())
    if obligation.kind == "theorem":
        if status == z3.unsat:
            vacuity = hypotheses_satisfiable(query, timeout_seconds)
            seconds = time.perf_counter() - started
            if vacuity == z3.sat:
                return ObligationResult(obligation, "PROVED", "unsat", seconds)
            return ObligationResult(
                obligation,
                "FAILED" if vacuity == z3.unsat else "UNKNOWN",
                "unsat",
                seconds,
                detail=f"the hypotheses alone are {vacuity}: the proof may be vacuous",
            )
        return ObligationResult(
            obligation, "FAILED", "sat", seconds, detail=f"counterexample to a theorem: {solver.model()}"
        )
    if status == z3.unsat:
        return ObligationResult(
            obligation, "FAILED", "unsat", seconds, detail="the buggy rule was proved correct: the encoding has no teeth"
        )
    if query.decode is None:
        return ObligationResult(obligation, "FAILED", "sat", seconds, detail="refutation without a decoder")
    try:
        counterexample = query.decode(ModelReader(solver.model()))
    except (ValueError, z3.Z3Exception) as error:
        return ObligationResult(obligation, "FAILED", "sat", seconds, detail=f"decoding failed: {error}")
    seconds = time.perf_counter() - started
    if not counterexample.rechecked:
        return ObligationResult(
            obligation,
            "FAILED",
            "sat",
            seconds,
            counterexample,
            detail=f"counterexample did not re-check: {counterexample.recheck_error}",
        )
    return ObligationResult(obligation, "REFUTED", "sat", seconds, counterexample)


def check_all(
    names: list[str] | None = None, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> list[ObligationResult]:
    """Every registered obligation (or the named ones), in registry order."""
    selected = [o for o in REGISTRY if names is None or o.name in names]
    return [check(obligation, timeout_seconds) for obligation in selected]
