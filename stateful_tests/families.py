"""The one table of property families: which family certifies which property.

Adding a family is one module and one entry here; certification, replay, traces
and certificates find it through this table. A row is one of two kinds:

- a :class:`~rollcert.stateful_tests.family.PropertyFamily` — a Hypothesis machine
  stepped against the model, whose counterexamples are replayable step traces
  (rollback R0–R6, diffs S1–S3);
- a :class:`~rollcert.stateful_tests.program_family.ProgramFamily` — concurrent
  programs run many times, each history checked whole (programs: R7).
"""

from __future__ import annotations

from typing import Any
from typing import TypeAlias

from rollcert.stateful_tests.concurrency import PROGRAMS
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.program_family import ProgramFamily

Family: TypeAlias = PropertyFamily[Any, Any, Any] | ProgramFamily

#: Every family, in certificate order.
FAMILIES: tuple[Family, ...] = (ROLLBACK, DIFFS, PROGRAMS)
#: The families whose counterexamples are step traces (replay, shrinking, trace files).
STEP_FAMILIES: tuple[PropertyFamily[Any, Any, Any], ...] = tuple(
    family for family in FAMILIES if isinstance(family, PropertyFamily)
)


def family_of(property_id: str) -> Family | None:
    """The family that certifies ``property_id``, or ``None`` if none does (yet)."""
    return next((family for family in FAMILIES if property_id in family.property_ids), None)


def family_named(name: str) -> PropertyFamily[Any, Any, Any]:
    """The step family called ``name`` in traces; ``ValueError`` naming the known ones."""
    for family in STEP_FAMILIES:
        if family.name == name:
            return family
    raise ValueError(f"no property family named {name!r}; known: {', '.join(f.name for f in STEP_FAMILIES)}")
