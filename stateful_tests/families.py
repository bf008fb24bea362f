"""The one table of property families: which family certifies which property.

Adding a family is one module (a :class:`~rollcert.stateful_tests.family.PropertyFamily`
subclass with its rules) and one entry here; certification, replay, traces and
certificates find it through this table.
"""

from __future__ import annotations

from typing import Any

from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.machines import ROLLBACK

#: Every family, in certificate order.
FAMILIES: tuple[PropertyFamily[Any, Any, Any], ...] = (ROLLBACK, DIFFS)


def family_of(property_id: str) -> PropertyFamily[Any, Any, Any] | None:
    """The family that certifies ``property_id``, or ``None`` if none does (yet)."""
    return next((family for family in FAMILIES if property_id in family.property_ids), None)


def family_named(name: str) -> PropertyFamily[Any, Any, Any]:
    """The family called ``name`` in traces; ``ValueError`` naming the known ones."""
    for family in FAMILIES:
        if family.name == name:
            return family
    raise ValueError(f"no property family named {name!r}; known: {', '.join(f.name for f in FAMILIES)}")
