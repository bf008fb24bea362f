"""A correct log whose module prints a line when it is imported and whose
factory prints one each time a target is built from it: ``rollcert smoke``
must import and build it exactly once, in the one process that runs the target
(its worker), not once in rollcert's own process and again in the worker."""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import target

from rollcert.targets.adapter import Target

print("prints_on_import: imported", flush=True)


def build() -> Target:
    print("prints_on_import: target built", flush=True)
    return target("prints-on-import", HonestAdapter)
