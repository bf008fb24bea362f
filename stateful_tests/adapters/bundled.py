"""The ``bundled`` target: rollcert's own ``impl.JournaledBuffer``, through the
adapter each run needs (in-memory journal with diffs, or the durable journal).
"""

from __future__ import annotations

from rollcert.stateful_tests import SUITE_VERSION
from rollcert.stateful_tests.adapter import BufferConfig
from rollcert.stateful_tests.adapter import Capability
from rollcert.stateful_tests.adapter import SystemUnderTest
from rollcert.stateful_tests.adapter import Target
from rollcert.stateful_tests.adapters.bundled_diffs import BundledDiffAdapter
from rollcert.stateful_tests.adapters.durable import DurableAdapter
from rollcert.stateful_tests.adapters.journaled_adapter import BundledAdapter

__all__ = ["TARGET", "BundledAdapter", "bundled_factory"]


def bundled_factory(config: BufferConfig) -> SystemUnderTest:
    """The in-memory journal, or the durable file journal when the run asks for
    durability (the R5 machine does): both are the same ``JournaledBuffer``."""
    if config.durable:
        return DurableAdapter(config)
    # Capability DIFFS: the same adapter with its mutations routed through
    # rollcert.impl.diffs.DiffableBuffer (see adapters/bundled_diffs.py for why).
    return BundledDiffAdapter(config)


TARGET = Target(
    name="bundled",
    version=SUITE_VERSION,
    capabilities=frozenset(Capability),
    factory=bundled_factory,
    description="impl.JournaledBuffer with the in-memory journal (R5: the file journal on a simulated disk)",
)
