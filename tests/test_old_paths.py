"""The modules that left ``rollcert.stateful_tests`` for their rooms still import by
their old names for one release: with a ``DeprecationWarning`` that names the new
place, and as the very same module objects (so a class imported by the old path is
the class the engine checks against)."""

from __future__ import annotations

import importlib
import sys

import pytest

import rollcert.targets
import rollcert.targets.adapters.checked
from rollcert.stateful_tests._moved import MOVED
from rollcert.stateful_tests._moved import new_name


def _forget(monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    for name in list(sys.modules):
        if name == prefix or name.startswith(prefix + "."):
            monkeypatch.delitem(sys.modules, name)


def test_an_old_adapter_path_warns_and_is_the_same_module(monkeypatch: pytest.MonkeyPatch) -> None:
    _forget(monkeypatch, "rollcert.stateful_tests.adapters")
    # Two warnings, one per old name imported: the package, then the module in it.
    with pytest.warns(DeprecationWarning, match=r"moved to rollcert\.targets\.adapters") as caught:
        from rollcert.stateful_tests.adapters.checked import CheckedAdapter
    assert [str(w.message).split(";")[0] for w in caught] == [
        "rollcert.stateful_tests.adapters moved to rollcert.targets.adapters",
        "rollcert.stateful_tests.adapters.checked moved to rollcert.targets.adapters.checked",
    ]
    assert CheckedAdapter is rollcert.targets.CheckedAdapter
    assert sys.modules["rollcert.stateful_tests.adapters.checked"] is rollcert.targets.adapters.checked


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_module_imports_by_its_old_name(monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    full = f"rollcert.stateful_tests.{old}"
    _forget(monkeypatch, full)
    with pytest.warns(DeprecationWarning, match="moved to"):
        module = importlib.import_module(full)
    assert module is importlib.import_module(MOVED[old])


def test_names_that_did_not_move_are_not_aliased() -> None:
    assert new_name("rollcert.stateful_tests.judge") is None
    assert new_name("rollcert.stateful_tests") is None
    assert new_name("rollcert.stateful_tests.adaptersX") is None
    assert new_name("rollcert.stateful_tests.targets") == "rollcert.targets.resolve"


def test_the_public_module_for_adapter_authors() -> None:
    from rollcert.targets import __all__ as public

    assert set(public) == {
        "Target", "Capability", "BufferConfig", "CheckedAdapter", "DiffApplier", "KnownFinding", "HistoryBound", "SizeLimits",
    }
    for name in public:
        assert getattr(rollcert.targets, name).__name__ == name
