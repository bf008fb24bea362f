"""How far each rule is established, and by what: the one table.

``rollcert prove`` prints it with this run's verdicts (a claim counts only if
its check met in the run), and ``rollcert properties`` prints it as the
standing claim. It is built from the registries, never written by hand:

- **proved (unbounded)**: a z3 theorem of :mod:`rollcert.proofs.obligations`
  whose scope is unbounded or an induction step/base. These are about the z3
  encoding of the model; ``tests/test_proofs_encoding_differential.py`` checks
  the encoding against ``model/reference.py`` (splice, rollback(n) for every
  n, rollback_to) and ``tests/test_proofs_vacuity.py`` that every hypothesis
  is needed.
- **checked symbolically (bounds)**: a bounded z3 theorem, or a CrossHair run
  on the production code (:mod:`rollcert.proofs.symbolic_refinement`,
  :mod:`rollcert.proofs.read_set_check`) with every path explored within its
  stated bounds.
- **checked exhaustively (bounds)**: :mod:`rollcert.stateful_tests.refinement`,
  the production code against the model on every operation sequence of a
  small alphabet up to a stated length.
- **tested only**: ``rollcert certify``'s state machines sample it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rollcert.model.properties import ALL_PROPERTY_IDS

Level = Literal["proved", "symbolic", "exhaustive"]
LEVEL_WORDS: dict[Level, str] = {
    "proved": "proved (unbounded, z3, on the model's encoding)",
    "symbolic": "checked symbolically within bounds",
    "exhaustive": "checked exhaustively within bounds (impl vs model)",
}

#: The exhaustive check of S1 on impl/diffs.py's read check (:mod:`rollcert.proofs.read_set_check`).
S1_CHECK = "s1-read-check-exact"


@dataclass(frozen=True)
class Claim:
    """One check's contribution to one rule."""

    rule: str
    level: Level
    check: str
    how: str


def claims(*, thorough: bool = False) -> list[Claim]:
    """Every claim of every registered check, in rule order."""
    from rollcert.proofs.obligations import REGISTRY
    from rollcert.proofs.read_set_check import BOUNDS as S1_BOUNDS
    from rollcert.proofs.symbolic_refinement import DEFAULT_CHECKS
    from rollcert.proofs.symbolic_refinement import THOROUGH_CHECKS
    from rollcert.stateful_tests.refinement import CHECKS
    from rollcert.stateful_tests.refinement import RefinementBounds

    found: list[Claim] = []
    for obligation in REGISTRY:
        if obligation.kind != "theorem":
            continue
        bounded = obligation.scope.startswith("bounded")
        for rule in obligation.properties:
            found.append(Claim(rule, "symbolic" if bounded else "proved", obligation.name,
                               f"z3 theorem ({obligation.scope})"))
    for symbolic in DEFAULT_CHECKS + (THOROUGH_CHECKS if thorough else ()):
        for rule in symbolic.properties:
            found.append(Claim(rule, "symbolic", symbolic.name,
                               f"CrossHair on impl.JournaledBuffer vs model/reference.py: {symbolic.bounds.describe()}"))
    found.append(Claim("S1", "exhaustive", S1_CHECK, f"impl/diffs.py's read check against identity tags: {S1_BOUNDS}"))
    for refinement in CHECKS:
        bounds = refinement.bounds_for(RefinementBounds())
        for rule in refinement.properties:
            found.append(Claim(rule, "exhaustive", refinement.name, bounds.describe(refinement.family)))
    order = {rule: index for index, rule in enumerate(ALL_PROPERTY_IDS)}
    return sorted(found, key=lambda claim: (order.get(claim.rule, len(order)), claim.level != "proved"))


def summary(rule: str, met: set[str] | None = None, *, thorough: bool = False) -> str:
    """One line for ``rule``: its strongest level and the checks behind each
    level; with ``met``, only the checks that met in this run count."""
    mine = [c for c in claims(thorough=thorough) if c.rule == rule and (met is None or c.check in met)]
    if not mine:
        return "tested only (rollcert certify's state machines sample it)"
    parts = []
    for level in ("proved", "symbolic", "exhaustive"):
        names = [c.check for c in mine if c.level == level]
        if names:
            parts.append(f"{LEVEL_WORDS[level]}: {', '.join(dict.fromkeys(names))}")
    return "; ".join(parts)
