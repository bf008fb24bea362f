"""The import graph, built from the source: straight layers, no cycles.

The layers are ``model`` ← ``impl`` ← ``stateful_tests`` ← ``specimens`` (with
``proofs`` beside ``impl``, over ``model`` alone): a package may import only the
ones to its left. No import cycle between files either, function-level imports
included — a late import that hides a circle is still a circle. And nothing
but ``rollcert`` is imported as a top-level name of ours: a user's own
``model/`` or ``impl/`` package must never be picked up instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "impl", "proofs", "stateful_tests", "specimens")
#: package -> the packages it may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "impl": {"model"},
    "proofs": {"model", "impl"},
    "stateful_tests": {"model", "impl", "proofs"},
    "specimens": {"model", "impl", "proofs", "stateful_tests"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "rollcert." + ".".join(parts)


MODULES: dict[str, Path] = {
    _module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
}


def _imports(path: Path) -> set[str]:
    """Every rollcert module ``path`` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name in MODULES:
                found.add(name)
    return found


GRAPH: dict[str, set[str]] = {module: _imports(path) - {module} for module, path in MODULES.items()}


def _package(module: str) -> str:
    return module.split(".")[1]


def test_the_graph_sees_the_source() -> None:
    assert "rollcert.stateful_tests.judge" in MODULES
    assert "rollcert.stateful_tests.family" in GRAPH["rollcert.stateful_tests.judge"]


def test_no_bare_top_level_imports_of_our_folders() -> None:
    offenders = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            offenders += [f"{module}: {name}" for name in names if name.split(".")[0] in PACKAGES]
    assert not offenders, offenders


def test_layers_are_straight() -> None:
    upward = [
        f"{module} -> {imported}"
        for module, imported_modules in GRAPH.items()
        for imported in imported_modules
        if _package(imported) != _package(module) and _package(imported) not in ALLOWED[_package(module)]
    ]
    assert not upward, "imports that reach up a layer:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycle_between_files() -> None:
    assert _cycles(GRAPH) == []


def test_no_import_cycle_between_packages() -> None:
    packages: dict[str, set[str]] = {}
    for module, imported in GRAPH.items():
        packages.setdefault(_package(module), set()).update(_package(i) for i in imported if _package(i) != _package(module))
    assert _cycles(packages) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
