"""rollcert installed into someone else's project that has its own ``model/``,
``impl/``, ``proofs/`` and ``specimens/`` packages — very common names.

Before the one-namespace layout, rollcert's auto-loaded pytest plugin imported
``model.operations``, found the user's ``model`` instead, and the user's whole
test suite died before collecting anything. Here a real project is built in a
temporary directory, rollcert is installed into a fresh virtual environment
both ways (``pip install .`` and ``pip install -e .``), and the project's own
tests run green, with rollcert's gate among them, and ``rollcert certify`` works
from inside the project. rollcert's dependencies come from this environment
(a ``.pth`` file), so the test needs no network.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

PROJECT_FILES = {
    "model/__init__.py": "WHAT = 'the user model'\n",
    "model/operations.py": "def add(a, b):\n    return a + b\n",
    "impl/__init__.py": "WHAT = 'the user impl'\n",
    "proofs/__init__.py": "",
    "specimens/__init__.py": "",
    "stateful_tests/__init__.py": "",
    "my_adapter.py": textwrap.dedent(
        """
        from rollcert.targets.adapters.bundled import TARGET as BUNDLED

        TARGET = BUNDLED
        """
    ),
    # An adapter written before the rooms: the old paths still work, with a warning.
    "tests/test_old_paths.py": textwrap.dedent(
        """
        import pytest


        def test_the_old_adapter_paths_still_import_and_warn():
            with pytest.warns(DeprecationWarning, match="moved to rollcert.targets.adapters.checked"):
                from rollcert.stateful_tests.adapters.checked import CheckedAdapter as Old
            with pytest.warns(DeprecationWarning, match="moved to rollcert.targets.adapter"):
                from rollcert.stateful_tests.adapter import Target as OldTarget
            from rollcert.targets import CheckedAdapter, Target

            assert Old is CheckedAdapter and OldTarget is Target
        """
    ),
    "tests/test_own.py": textwrap.dedent(
        """
        import model
        import impl
        from model.operations import add


        def test_the_users_own_packages_are_the_ones_imported():
            assert model.WHAT == "the user model" and impl.WHAT == "the user impl"
            assert add(2, 3) == 5


        def test_rollcert_gate_works_here(rollcert_gate):
            rollcert_gate("my_adapter:TARGET", only=("R2",))
        """
    ),
}


def _venv(tmp_path: Path, editable: bool) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    # rollcert's dependencies (and pip, setuptools) from the environment running these tests.
    (Path(purelib) / "_rollcert_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # From a copy of the source: a build leaves build/ and *.egg-info behind, and
    # this checkout is not the test's to write in.
    source = tmp_path / "rollcert-source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__"))
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    install += ["-e", str(source)] if editable else [str(source)]
    done = subprocess.run(install, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


@pytest.mark.parametrize("editable", [False, True], ids=["pip-install", "pip-install-e"])
def test_a_project_with_its_own_model_package_runs_its_tests_and_rollcert(tmp_path: Path, editable: bool) -> None:
    project = tmp_path / "project"
    for name, text in PROJECT_FILES.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    venv = _venv(tmp_path, editable)
    if not editable:
        installed = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import rollcert.model, os; print(rollcert.model.__file__)"],
            capture_output=True, text=True, check=True, cwd=project,
        ).stdout
        assert "site-packages" in installed  # a real copy in site-packages, not a checkout
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    environment["PATH"] = f"{venv / 'bin'}:{environment.get('PATH', '')}"
    tests = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project, capture_output=True, text=True, timeout=900, env=environment, check=False,
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-3000:]
    assert "3 passed" in tests.stdout
    certify = subprocess.run(
        [str(venv / "bin" / "rollcert"), "certify", "my_adapter:TARGET", "--only", "R2"],
        cwd=project, capture_output=True, text=True, timeout=900, env=environment, check=False,
    )
    assert certify.returncode == 0, certify.stdout[-3000:] + certify.stderr[-3000:]
    assert "R2        passed" in certify.stdout
    # Nothing but rollcert at the top of site-packages.
    if not editable:
        purelib = next((venv / "lib").glob("python*/site-packages"))
        ours = {entry.name for entry in purelib.iterdir()} & {"model", "impl", "proofs", "targets", "stateful_tests", "reports", "command", "specimens"}
        assert not ours
