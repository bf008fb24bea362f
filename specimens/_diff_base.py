"""What the diff family's specimens share: how they are registered and driven.

A diff specimen is a :class:`~rollcert.impl.diffs.DiffableBuffer` subclass with
one planted bug, driven through the bundled diff adapter
(:func:`~rollcert.targets.adapters.bundled_diffs.specimen_adapter`) on
the diff capabilities; :func:`register_diff` is ``register`` with those set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rollcert.specimens import register
from rollcert.targets.adapter import Capability
from rollcert.targets.adapters.bundled_diffs import DIFF_SPECIMEN_CAPABILITIES
from rollcert.targets.adapters.bundled_diffs import specimen_adapter


def register_diff(
    name: str,
    *,
    breaks: set[str],
    also_caught_by: dict[str, str] | None = None,
    capabilities: frozenset[Capability] = DIFF_SPECIMEN_CAPABILITIES,
    declares: dict[str, Any] | None = None,
) -> Callable[[type[Any]], type[Any]]:
    """Register a broken ``DiffableBuffer`` as the diff specimen ``name`` (see ``register``)."""
    return register(
        name,
        breaks=breaks,
        also_caught_by=also_caught_by,
        capabilities=capabilities,
        adapter=specimen_adapter,
        declares=declares,
    )
