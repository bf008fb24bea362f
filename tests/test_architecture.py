"""The import graph, built from the source: rooms in one direction, no cycles.

The package is laid out in rooms, each a folder at the repository's root that
installs as ``rollcert.<folder>``. Imports go one way, downwards::

    command  →  reports  →  engine (stateful_tests)  →  targets  →  impl  →  model
                                                                  proofs (beside impl, over model)

- ``model``: the reference model, the oracle; ``impl``: the production buffer;
  ``proofs``: the symbolic proofs of the model's lemmas;
- ``targets``: everything that reaches a system under test (the adapter protocol,
  adapters, the subprocess protocol and its server, tool environments and servers,
  findings files, target resolution and plugins);
- ``stateful_tests``: the engine (families, machines, judge, strategies, shrinking,
  exhaustive search, linearizability, traces, profiles, verdicts, certify);
- ``reports``: certificate formats, explain, progress display;
- ``command``: the CLI, smoke, worker processes, the pytest plugin.

Above them stand what uses the whole package the way a third party would: the
``specimens`` (a plugin of the command), the ``benchmarks``, and the ``examples``,
``docs`` scripts and ``tests``. A room may import only the rooms below it. No
import cycle between files either, function-level and ``TYPE_CHECKING`` imports
included — a late import that hides a circle is still a circle. And nothing but
``rollcert`` (and ``benchmarks``, which is not installed) is imported as a
top-level name of ours: a user's own ``model/`` or ``impl/`` must never be picked
up instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The installed rooms, lowest first.
INSTALLED = ("model", "impl", "proofs", "targets", "stateful_tests", "reports", "command", "specimens")
#: Folders above the package: they may import it all, and nothing imports them.
ABOVE = ("benchmarks", "examples", "docs", "tests")
_BELOW_COMMAND = {"model", "impl", "proofs", "targets", "stateful_tests", "reports"}
#: room -> the rooms it may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "impl": {"model"},
    "proofs": {"model", "impl"},
    "targets": {"model", "impl"},
    "stateful_tests": {"model", "impl", "proofs", "targets"},
    "reports": {"model", "impl", "proofs", "targets", "stateful_tests"},
    "command": _BELOW_COMMAND,
    "specimens": _BELOW_COMMAND | {"command"},
    "benchmarks": set(INSTALLED),
    "examples": set(INSTALLED),
    "docs": set(INSTALLED),
    "tests": set(INSTALLED) | {"benchmarks"},
}
#: What the engine room must not be: a command line, a renderer, a protocol or an adapter.
ENGINE_FORBIDDEN_IMPORTS = ("argparse", "html", "xml", "subprocess", "socket", "select", "shutil")


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    top = parts[0]
    if top in INSTALLED:
        return "rollcert." + ".".join(parts)
    if top == "tests" and len(parts) == 2:  # tests import their helpers as ``_helpers``
        return parts[1]
    return ".".join(parts)


def modules_of(root: Path) -> dict[str, Path]:
    return {
        module_name(root, path): path
        for room in INSTALLED + ABOVE
        if (root / room).is_dir()
        for path in sorted((root / room).rglob("*.py"))
        if ".venv" not in path.parts and "node_modules" not in path.parts
    }


def room_of(module: str, modules: dict[str, Path], root: Path) -> str:
    return modules[module].relative_to(root).parts[0]


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones included: an import is a statement,
    so the expressions (nine nodes in ten) need no visit — ``ast.walk`` took seconds."""
    for statement in body:
        yield statement
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(statement, field, None)
            if isinstance(nested, list):
                yield from _statements([s for s in nested if isinstance(s, ast.stmt)])
        for handler in getattr(statement, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(statement, "cases", ()):
            yield from _statements(case.body)


@cache
def imported_names(path: Path) -> list[tuple[str, bool]]:
    """Every module name ``path`` imports, at any depth of the file, with whether it
    is imported as a package whose attribute is taken (``from P import x``)."""
    found: list[tuple[str, bool]] = []
    for node in _statements(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            found += [(alias.name, False) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, True))
            found += [(f"{node.module}.{alias.name}", False) for alias in node.names]
    return found


def import_graph(root: Path) -> tuple[dict[str, Path], dict[str, set[str]]]:
    modules = modules_of(root)
    graph = {
        module: {name for name, _ in imported_names(path) if name in modules} - {module}
        for module, path in modules.items()
    }
    return modules, graph


def wrong_way_imports(root: Path) -> list[str]:
    """Every import that reaches a room its room may not import."""
    modules, graph = import_graph(root) if root != ROOT else (MODULES, import_graph_of_the_repository())
    return sorted(
        f"{module} -> {imported}"
        for module, imported_modules in graph.items()
        for imported in imported_modules
        if (here := room_of(module, modules, root)) != (there := room_of(imported, modules, root))
        and there not in ALLOWED[here]
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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


#: The modules are listed at import (the parametrisation below needs them); the
#: graph parses every file (seconds), so it is built when a test first asks,
#: not at collection, which every xdist worker pays.
MODULES = modules_of(ROOT)


@cache
def import_graph_of_the_repository() -> dict[str, set[str]]:
    return import_graph(ROOT)[1]


@pytest.fixture(autouse=True, scope="module")
def _graph_parsed_once() -> None:
    """Parsing the 300-odd files takes 2 s (6 s on a loaded machine): once, in this
    module's setup, not in whichever test happens to ask first."""
    import_graph_of_the_repository()


def test_the_graph_sees_the_whole_tree() -> None:
    assert "rollcert.stateful_tests.judge" in MODULES
    assert "rollcert.stateful_tests.family" in import_graph_of_the_repository()["rollcert.stateful_tests.judge"]
    assert "rollcert.targets.adapter" in import_graph_of_the_repository()["rollcert.stateful_tests.judge"]
    assert "benchmarks.suite" in MODULES and "benchmarks.shortest" in import_graph_of_the_repository()["benchmarks.suite"]
    assert "rollcert.command.cli" in MODULES and "rollcert.reports.certificate" in MODULES
    assert {room_of(m, MODULES, ROOT) for m in MODULES} == set(INSTALLED + ABOVE)


@pytest.mark.slow
def test_no_bare_top_level_imports_of_our_folders() -> None:
    offenders = [
        f"{module}: {name}"
        for module, path in MODULES.items()
        for name, _ in imported_names(path)
        if name.split(".")[0] in INSTALLED
    ]
    assert not offenders, offenders


@pytest.mark.slow
def test_imports_go_one_way() -> None:
    upward = wrong_way_imports(ROOT)
    assert not upward, "imports against the rooms' direction:\n" + "\n".join(upward)


def test_a_planted_wrong_way_import_is_found(tmp_path: Path) -> None:
    """The check is not vacuous: a targets module importing the engine, and an engine
    module importing the command, are each named."""
    for room, name, text in (
        ("model", "reference.py", ""),
        ("targets", "adapter.py", "from rollcert.model.reference import x\n"),
        ("targets", "planted.py", "def f():\n    from rollcert.stateful_tests.judge import Session\n"),
        ("stateful_tests", "judge.py", "from rollcert.targets.adapter import Target\n"),
        ("stateful_tests", "certify.py", "import rollcert.command.parallel\n"),
        ("command", "parallel.py", "from rollcert.stateful_tests.certify import certify\n"),
    ):
        (tmp_path / room).mkdir(exist_ok=True)
        (tmp_path / room / name).write_text(text)
    assert wrong_way_imports(tmp_path) == [
        "rollcert.stateful_tests.certify -> rollcert.command.parallel",
        "rollcert.targets.planted -> rollcert.stateful_tests.judge",
    ]
    _, graph = import_graph(tmp_path)
    assert cycles(graph) == [["rollcert.command.parallel", "rollcert.stateful_tests.certify"]]


def test_no_import_cycle_between_files() -> None:
    assert cycles(import_graph_of_the_repository()) == []


def test_no_import_cycle_between_rooms() -> None:
    rooms: dict[str, set[str]] = {}
    for module, imported in import_graph_of_the_repository().items():
        here = room_of(module, MODULES, ROOT)
        rooms.setdefault(here, set()).update(
            there for i in imported if (there := room_of(i, MODULES, ROOT)) != here
        )
    assert cycles(rooms) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if m.startswith("rollcert.stateful_tests")), ids=lambda m: m.rsplit(".", 1)[-1]
)
def test_the_engine_is_no_command_renderer_protocol_or_adapter(module: str) -> None:
    """The engine decides verdicts; it parses no command line, writes no report
    format, speaks no wire protocol and adapts no target: those are rooms of their own."""
    names = {name.split(".")[0] for name, _ in imported_names(MODULES[module])}
    assert not names & set(ENGINE_FORBIDDEN_IMPORTS), f"{module} imports {sorted(names & set(ENGINE_FORBIDDEN_IMPORTS))}"
    stem = module.rsplit(".", 1)[-1]
    assert not any(word in stem for word in ("cli", "protocol", "adapter", "certificate", "html", "explain", "render"))
