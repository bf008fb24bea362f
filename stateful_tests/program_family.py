"""The second kind of row in the family table: a family whose examples are programs.

A :class:`~rollcert.stateful_tests.family.PropertyFamily` certifies by stepping a
Hypothesis machine: one operation, one comparison with the model, a trace that
replays step by step. Linearizability (R7) cannot be judged that way: its example
is a concurrent *program*, run many times because one interleaving does not repeat
on demand, and each recorded history is checked as a whole (a Wing–Gong search).
So it has its own interface: it names its properties and capabilities like every
family, and runs a property to a verdict itself. ``certify_property`` treats both
kinds through the one table (:mod:`rollcert.stateful_tests.families`), with no
property named in it.
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from typing import ClassVar

from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target


class ProgramFamily(ABC):
    """A family certified by drawing programs, not by stepping a machine."""

    #: The family's name ("programs").
    name: ClassVar[str]
    #: The properties it certifies, in certificate order.
    property_ids: ClassVar[tuple[str, ...]]

    @abstractmethod
    def required_capabilities(self, property_id: str) -> frozenset[Capability]:
        """Without these the property is ``not_assessed``."""

    @abstractmethod
    def certify(self, target: Target, property_id: str, profile: Profile, seed: int) -> PropertyResult:
        """Run ``property_id`` on ``target`` to its verdict (programs drawn,
        histories checked, the failing program minimised and explained)."""
