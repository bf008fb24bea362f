"""Deliberately broken implementations, one bug class each.

A specimen is one small module in this package with one ``@register(...)``
decorator on its buffer class; importing the package imports every module, so
nothing else has to change to add one. Each class's docstring tells its story.
``breaks`` names the properties that story breaks (R0, the master property, is
broken by every specimen and implied); ``also_caught_by`` names any other
property whose machine also catches it, with the reason — the manifest
``tests/test_specimens.py`` checks that the suite kills exactly these.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.python_object import PythonBufferAdapter

#: What a specimen can be driven on, unless it says otherwise.
SPECIMEN_CAPABILITIES = frozenset(
    {
        Capability.CORE,
        Capability.DEPTH,
        Capability.REVISIONS,
        Capability.CHECKPOINTS,
        Capability.JOURNAL_FAULTS,
        Capability.OUT_OF_LOG_WRITES,
        Capability.ADOPT,
        Capability.BOUNDED,
    }
)


@dataclass(frozen=True)
class Specimen:
    name: str
    story: str
    breaks: frozenset[str]
    also_caught_by: dict[str, str] = field(default_factory=dict)
    target: Target | None = None


SPECIMENS: dict[str, Specimen] = {}


def register(
    name: str,
    *,
    breaks: set[str],
    also_caught_by: dict[str, str] | None = None,
    capabilities: frozenset[Capability] = SPECIMEN_CAPABILITIES,
    adapter: Callable[[type[Any], BufferConfig], SystemUnderTest] | None = None,
    declares: dict[str, Any] | None = None,
) -> Callable[[type[Any]], type[Any]]:
    """Register a buffer class as the specimen ``name``.

    By default the class is built as ``cls(initial, capacity=..., policy=...)``
    and driven through :class:`PythonBufferAdapter`, so it must offer the Python
    buffer API plus the hooks ``fail_next_append()`` and
    ``write_out_of_log(offset, delete_length, insert)``. A specimen of another
    family (a durable journal, a diff applier) passes ``adapter``: a function
    from (class, config) to the live system under test. ``declares``: further
    fields of its :class:`Target` (``text=True`` for a text façade,
    ``starts_at_revision=True``), as a real target would declare them.
    """

    def decorate(cls: type[Any]) -> type[Any]:
        def factory(config: BufferConfig) -> SystemUnderTest:
            if adapter is not None:
                return adapter(cls, config)
            return PythonBufferAdapter(cls(config.initial, capacity=config.capacity, policy=config.policy))

        story = " ".join((cls.__doc__ or "").split())
        SPECIMENS[name] = Specimen(
            name=name,
            story=story,
            breaks=frozenset(breaks),
            also_caught_by=dict(also_caught_by or {}),
            target=Target(
                name=f"specimen:{name}",
                version="specimen",
                capabilities=capabilities,
                factory=factory,
                description=story.split(". ")[0],
                breaks=frozenset(breaks),
                **(declares or {}),
            ),
        )
        return cls

    return decorate


def load_all() -> dict[str, Specimen]:
    """Import every specimen module (each registers itself) and return the registry."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    return SPECIMENS
