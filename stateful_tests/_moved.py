"""The old import paths of the modules that left the engine, kept for one release.

Before the layout had rooms, ``rollcert.stateful_tests`` held the adapters, the
protocol, the reports and the command line too. Code written against those paths
(an adapter importing ``rollcert.stateful_tests.adapters.checked``) keeps working:
importing an old path warns with a ``DeprecationWarning`` naming the new one and
hands back the *same* module object as the new path, so classes, registries and
``isinstance`` checks are shared. The table is data; nothing here imports a moved
module until someone asks for it by its old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

OLD_PACKAGE = "rollcert.stateful_tests"

#: old module name (under ``rollcert.stateful_tests``) -> new full module name.
MOVED: dict[str, str] = {
    "adapter": "rollcert.targets.adapter",
    "adapters": "rollcert.targets.adapters",
    "protocol": "rollcert.targets.protocol",
    "protocol_server": "rollcert.targets.protocol_server",
    "protocol_schemas": "rollcert.targets.protocol_schemas",
    "tool_envs": "rollcert.targets.tool_envs",
    "tool_servers": "rollcert.targets.tool_servers",
    "known_findings": "rollcert.targets.known_findings",
    "findings": "rollcert.targets.findings",
    "targets": "rollcert.targets.resolve",
    "plugins": "rollcert.targets.plugins",
    "certificate": "rollcert.reports.certificate",
    "html_certificate": "rollcert.reports.html_certificate",
    "explain": "rollcert.reports.explain",
    "progress": "rollcert.reports.progress",
    "cli": "rollcert.command.cli",
    "smoke": "rollcert.command.smoke",
    "parallel": "rollcert.command.parallel",
    "pytest_plugin": "rollcert.command.pytest_plugin",
}


def new_name(old: str) -> str | None:
    """The module's name now, for an old full name; ``None`` if it did not move
    (``rollcert.stateful_tests.adapters.checked`` -> ``rollcert.targets.adapters.checked``)."""
    if not old.startswith(OLD_PACKAGE + "."):
        return None
    head, _, rest = old[len(OLD_PACKAGE) + 1 :].partition(".")
    moved = MOVED.get(head)
    if moved is None:
        return None
    return f"{moved}.{rest}" if rest else moved


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module of its new name (the import system keeps
    whatever ``exec_module`` left in ``sys.modules``)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        warnings.warn(
            f"{self.old} moved to {self.new}; the old path works for one release (rollcert 0.2 removes it)",
            DeprecationWarning,
            stacklevel=2,
        )
        sys.modules[self.old] = importlib.import_module(self.new)


class _OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        moved = new_name(fullname)
        if moved is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, moved))


def install_old_paths() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
