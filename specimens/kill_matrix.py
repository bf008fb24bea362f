"""The kill matrix: every specimen against every property (``rollcert specimens``).

Like the manifests of TLA+ examples and CrossHair's ``bugs_detected``, the
expected results are written down — each specimen's ``breaks`` (plus R0, which
every bug breaks) must be violated, and nothing outside ``breaks`` and the
explained ``also_caught_by`` may be — so a suite that stops catching a bug, or
starts blaming the wrong property, fails. Verdicts are attributed (SPEC §6a):
a property is violated only by a counterexample whose failing step broke that
property's own clause (``Property.broken``), whichever machine found it, so a
row also fails if a violated property's counterexample does not break it.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from rollcert.model.properties import PROPERTIES
from rollcert.specimens import Specimen
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import certify


@dataclass
class SpecimenRow:
    specimen: Specimen
    certificate: CertificateData

    @property
    def killed(self) -> frozenset[str]:
        return frozenset(p for p, r in self.certificate.results.items() if r.verdict == "violated")

    @property
    def must_kill(self) -> frozenset[str]:
        return self.specimen.breaks | {"R0"}

    @property
    def may_kill(self) -> frozenset[str]:
        return self.must_kill | frozenset(self.specimen.also_caught_by)

    @property
    def misattributed(self) -> frozenset[str]:
        """Violated properties whose counterexample's failing step did not break
        their own clause (R0, the master property, takes any violation)."""
        return frozenset(
            pid
            for pid, r in self.certificate.results.items()
            if r.verdict == "violated"
            and pid not in ("R0", "R7")
            and r.counterexample is not None
            and pid not in r.counterexample.broken
        )

    @property
    def as_expected(self) -> bool:
        return self.must_kill <= self.killed <= self.may_kill and not self.misattributed


@dataclass
class KillMatrix:
    rows: list[SpecimenRow] = field(default_factory=list)

    @property
    def all_as_expected(self) -> bool:
        return all(row.as_expected for row in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "rollcert-kill-matrix/1",
            "specimens": {
                row.specimen.name: {
                    "breaks": sorted(row.specimen.breaks),
                    "also_caught_by": row.specimen.also_caught_by,
                    "as_expected": row.as_expected,
                    "verdicts": {p: r.verdict for p, r in row.certificate.results.items()},
                    "broken": {
                        p: list(r.counterexample.broken)
                        for p, r in row.certificate.results.items()
                        if r.counterexample is not None
                    },
                    "harm": {
                        p: r.counterexample.harm
                        for p, r in row.certificate.results.items()
                        if r.counterexample is not None and r.counterexample.harm
                    },
                    "counterexample_steps": {
                        p: len(r.counterexample.steps)
                        for p, r in row.certificate.results.items()
                        if r.counterexample is not None
                    },
                    "seconds": {p: r.seconds for p, r in row.certificate.results.items()},
                }
                for row in self.rows
            },
        }


def kill_matrix(*, profile: str = "quick", seed: int = 0, names: list[str] | None = None) -> KillMatrix:
    registry = load_all()
    matrix = KillMatrix()
    for name in sorted(names or registry):
        specimen = registry[name]
        assert specimen.target is not None
        matrix.rows.append(
            SpecimenRow(specimen, certify(specimen.target, profile=profile, seed=seed, only=tuple(PROPERTIES)))
        )
    return matrix


#: A cell that was not violated shows what it was: only a pass is ".". A property
#: the specimen could not be assessed on (a missing capability) proves nothing,
#: and drawing it as a pass made the matrix claim what was never run.
_SURVIVED = {"passed": ".", "not_assessed": "n", "unknown": "?", "error": "e"}


def render_kill_matrix(matrix: KillMatrix) -> str:
    properties = list(PROPERTIES)
    width = max([len(row.specimen.name) for row in matrix.rows] + [8])
    lines = [
        "Kill matrix: X = violated as its story says, x = also caught (explained), "
        "! = violated unexpectedly, - = survived where it must die, . = passed, "
        "n = not assessed, ? = unknown, e = error",
        "",
        f"{'specimen':<{width}}  " + "  ".join(f"{p:>3}" for p in properties) + "  steps  as expected",
    ]
    for row in matrix.rows:
        cells = []
        for pid in properties:
            killed = pid in row.killed
            if killed and pid in row.must_kill:
                cells.append("X")
            elif killed and pid in row.may_kill:
                cells.append("x")
            elif killed:
                cells.append("!")
            elif pid in row.must_kill:
                cells.append("-")
            else:
                result = row.certificate.results.get(pid)
                cells.append(_SURVIVED.get(result.verdict if result is not None else "not_assessed", "?"))
        story_steps = [
            len(r.counterexample.steps)
            for p, r in row.certificate.results.items()
            if p in row.specimen.breaks and r.counterexample is not None
        ]
        steps = str(min(story_steps)) if story_steps else "?"
        lines.append(
            f"{row.specimen.name:<{width}}  "
            + "  ".join(f"{c:>3}" for c in cells)
            + f"  {steps:>5}  {'yes' if row.as_expected else 'NO'}"
        )
    lines.append("")
    lines.append("all specimens killed as expected" if matrix.all_as_expected else "SOME SPECIMENS NOT AS EXPECTED")
    return "\n".join(lines)


def render_kill_matrix_markdown(matrix: KillMatrix, *, profile: str, seed: int) -> str:
    """The specimens page of the docs: each story, its verdicts and its minimal counterexample."""
    from rollcert.reports.certificate import format_counterexample

    lines = [
        "# Specimens: deliberately broken implementations",
        "",
        "Each specimen plants one bug class of SPEC §6 in an otherwise correct buffer",
        "(`specimens/_base.py`). The suite must kill every one, on the property its story",
        "breaks; `tests/test_specimens.py` checks this manifest. R0, the master property, is",
        "broken by every bug: each machine makes the R0 comparison after every step. A",
        "property is violated only where its own clause broke at the failing step",
        "(`Property.broken` in `model/properties.py`), whichever machine met it.",
        "",
        f"Generated by `rollcert specimens --profile {profile} --seed {seed} --markdown docs/specimens.md`;",
        "regenerate it after changing a specimen or a strategy.",
        "",
        "```",
        render_kill_matrix(matrix),
        "```",
    ]
    for row in matrix.rows:
        specimen = row.specimen
        lines += ["", f"## `{specimen.name}` — breaks {', '.join(sorted(specimen.breaks))}", "", specimen.story]
        if specimen.also_caught_by:
            lines += ["", "Also caught by:"]
            lines += [f"- **{pid}**: {why}" for pid, why in sorted(specimen.also_caught_by.items())]
        for pid in sorted(specimen.breaks):
            result = row.certificate.results.get(pid)
            if result is not None and result.counterexample is not None:
                found = f" (found while exploring {result.found_by})" if result.found_by else ""
                lines += ["", f"Minimal counterexample of {pid}{found}:", "", "```",
                          format_counterexample(result.counterexample), "```"]
    return "\n".join(lines) + "\n"
