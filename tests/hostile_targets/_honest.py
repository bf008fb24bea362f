"""A correct buffer and its adapter, for the hostile targets to build on.

``SnapshotLog`` keeps every earlier state: the obviously right rollback log of
examples/certify_your_own.py, loaded from that file (it is no installed module),
so that the example users copy is the one every hostile variant is measured
against. Each hostile target changes one thing about it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SutFactory
from rollcert.targets.adapter import Target

_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "certify_your_own.py"
_spec = importlib.util.spec_from_file_location("certify_your_own", _EXAMPLE)
assert _spec is not None and _spec.loader is not None, _EXAMPLE
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)

SnapshotLog = _example.SnapshotLog
#: Forwards to a :class:`SnapshotLog`; hostile targets override one method.
HonestAdapter = _example.SnapshotLogAdapter

CORE = frozenset({Capability.CORE})
COUNTED = frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS})


def target(name: str, factory: SutFactory, capabilities: frozenset[Capability] = COUNTED) -> Target:
    return Target(f"hostile-{name}", "0", capabilities, factory)


#: The honest log itself: every hostile variant is measured against it.
HONEST = target("honest", HonestAdapter)
