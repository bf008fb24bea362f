"""The ``bundled`` target: rollcert's own ``impl.JournaledBuffer``, through the
adapter each run needs (in-memory journal with diffs, or the durable journal).
"""

from __future__ import annotations

from rollcert.impl.chunked_text import CHUNK_SIZE
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled_diffs import BundledDiffAdapter
from rollcert.targets.adapters.durable import DurableAdapter
from rollcert.targets.adapters.journaled_adapter import BundledAdapter
from rollcert.targets.version import SUITE_VERSION

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
    chunk_bytes=CHUNK_SIZE,
    # The in-memory buffer starts at the asked revision (the durable one at 0).
    starts_at_revision=True,
    # And with the chunk size it is asked for (the durable one: its own).
    sets_chunk_bytes=True,
    # Its arguments are checked as SPEC §2 types them (model.contract).
    checks_arguments=True,
)
