"""Private environments for the third-party edit tools rollcert certifies over the protocol.

An agent's edit tool (aider, an MCP server, an editor package) pins dependencies
that clash with rollcert's, or is not Python at all. So each tool lives in an
environment of its own — a venv for a Python package, an ``npm install --prefix``
folder for a Node one — and is driven as a subprocess server speaking
rollcert-protocol/2 (``targets/tool_servers/``). Its dependencies never meet
rollcert's.

The environments live under ``$ROLLCERT_TOOL_ENVS`` (default
``~/.cache/rollcert/tool-envs``), one folder per name. Each is created on first use
and holds a stamp file recording the exact pins it was built from; when the pins
change (a new version certified), the folder is rebuilt from scratch rather than
upgraded in place, so an environment is always exactly what its pins say.
Creation prints one progress line on stderr (it can take a minute); a failure
raises :class:`~rollcert.targets.adapter.TargetError` with the tail of the
installer's output and the command to run by hand.

A tool may need another Python than rollcert's (OpenHands' editor requires
3.12): :func:`python_environment` then takes the version it needs and builds
the venv with that interpreter, found by :func:`find_interpreter`.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError

__all__ = ["environments_root", "find_interpreter", "node_environment", "python_environment"]

#: The stamp file in each environment: the JSON of what it was built from.
STAMP = "rollcert-tool-env.json"
#: How many trailing lines of an installer's output a failure quotes.
TAIL_LINES = 25


def environments_root() -> Path:
    """Where the environments live: ``$ROLLCERT_TOOL_ENVS`` or ``~/.cache/rollcert/tool-envs``."""
    configured = os.environ.get("ROLLCERT_TOOL_ENVS")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "rollcert" / "tool-envs"


@dataclass(frozen=True)
class _Recipe:
    """What an environment is built from; equal recipes mean the folder can be reused."""

    kind: str
    name: str
    pins: tuple[str, ...]
    #: For a venv, the interpreter that made it (a different Python means a different venv).
    interpreter: str = ""

    def stamp(self) -> str:
        return json.dumps(
            {"kind": self.kind, "name": self.name, "pins": list(self.pins), "interpreter": self.interpreter},
            sort_keys=True,
        )


def _check_name(name: str) -> None:
    if not name or name in {".", ".."} or "/" in name or "\\" in name or name.startswith("-"):
        raise TargetError(f"bad tool environment name {name!r}: one folder name, e.g. 'aider'")


def _check_pins(requirements: list[str], pinned: str) -> tuple[str, ...]:
    """The requirements as a tuple, each one pinned to an exact version (a certificate names it)."""
    pins = tuple(requirements)
    unpinned = [requirement for requirement in pins if pinned not in requirement]
    if not pins or unpinned:
        raise TargetError(
            f"tool environments take exact pins ('package{pinned}version'), so the certified version is the "
            f"installed one; got {list(pins)!r}"
        )
    return pins


def _is_current(folder: Path, recipe: _Recipe, ready: Path) -> bool:
    try:
        return ready.exists() and (folder / STAMP).read_text(encoding="utf-8") == recipe.stamp()
    except OSError:
        return False


def _run(command: list[str], what: str, by_hand: str, env: dict[str, str] | None = None) -> None:
    """Run an installer step; on failure a TargetError with its output's tail and the command to retry."""
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            check=False,
        )
    except OSError as error:
        raise TargetError(f"{what}: cannot run {command[0]!r} ({error}); run by hand: {by_hand}") from None
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip().splitlines()
        tail = "\n".join(output[-TAIL_LINES:])
        raise TargetError(f"{what} failed (exit status {done.returncode}):\n{tail}\nrun by hand: {by_hand}")


@contextmanager
def _building(name: str) -> Iterator[None]:
    """Hold the lock of environment ``name`` (a ``flock`` on a file beside it).

    Two processes that want the same environment at once — ``certify -j 2`` on a
    served tool, two pytest-xdist workers — would otherwise both find it missing,
    and the second's ``rmtree`` would pull the first one's half-built venv out from
    under it. The lock is the kernel's: it goes with the process that held it."""
    root = environments_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(
    folder: Path, recipe: _Recipe, steps: list[tuple[list[str], str]], env: dict[str, str] | None
) -> None:
    """(Re)create ``folder`` by ``steps``, then write its stamp last (a half-built folder has none)."""
    print(
        f"rollcert: creating the {recipe.kind} environment {recipe.name!r} in {folder} ({' '.join(recipe.pins)})",
        file=sys.stderr,
        flush=True,
    )
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    by_hand = " && ".join(shlex.join(command) for command, _ in steps)
    for command, what in steps:
        _run(command, what, by_hand, env)
    (folder / STAMP).write_text(recipe.stamp(), encoding="utf-8")


def _runs_as(candidate: str, version: str) -> str | None:
    """The real executable behind ``candidate`` if it starts and is Python
    ``version`` (a pyenv shim of a version not selected exits 127 instead)."""
    try:
        done = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.executable)"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2 or lines[0].strip() != version or not lines[1].strip():
        return None
    return os.path.realpath(lines[1].strip())


def find_interpreter(version: str) -> str:
    """The path of a working Python ``version`` (``"3.12"``): ``pythonX.Y`` on PATH
    if it runs as that version, else an installation of pyenv
    (``$PYENV_ROOT/versions/X.Y.*``, default ``~/.pyenv``), whose PATH shim refuses
    a version the shell has not selected. A :class:`TargetError` naming what was
    tried when there is none."""
    if not re.fullmatch(r"3\.\d{1,2}", version):
        raise TargetError(f"a Python version is 'major.minor', e.g. '3.12'; got {version!r}")
    tried: list[str] = []
    on_path = shutil.which(f"python{version}")
    candidates = [on_path] if on_path else []
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates += sorted(glob.glob(os.path.join(pyenv_root, "versions", f"{version}.*", "bin", f"python{version}")),
                         reverse=True)
    candidates += [f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"]
    for candidate in candidates:
        tried.append(candidate)
        real = _runs_as(candidate, version) if os.path.exists(candidate) else None
        if real is not None:
            return real
    raise TargetError(
        f"this tool needs Python {version}, and none runs here (tried {', '.join(tried)}); "
        f"install it (e.g. pyenv install {version}) or put python{version} on PATH"
    )


def python_environment(name: str, requirements: list[str], python_version: str | None = None) -> Path:
    """The interpreter of the venv ``name``, holding exactly the pinned ``requirements``.

    Made with ``python -m venv`` and ``pip install`` on first use — by this
    interpreter, or by a Python ``python_version`` (``"3.12"``, found by
    :func:`find_interpreter`) for a tool that needs another — and rebuilt when
    the pins (or the interpreter) change. Requirements are exact pins
    (``aider-chat==0.86.2``): the certificate names the version that was installed.
    """
    _check_name(name)
    maker = sys.executable if python_version is None else find_interpreter(python_version)
    recipe = _Recipe("python", name, _check_pins(requirements, "=="), interpreter=os.path.realpath(maker))
    folder = environments_root() / name
    python = folder / "bin" / "python"
    if _is_current(folder, recipe, python):
        return python
    with _building(name):
        if not _is_current(folder, recipe, python):  # another process may have built it meanwhile
            steps = [
                ([maker, "-m", "venv", str(folder)], f"creating the venv {folder}"),
                (
                    [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *recipe.pins],
                    f"pip install {' '.join(recipe.pins)} into {folder}",
                ),
            ]
            _build(folder, recipe, steps, None)
    return python


def node_environment(name: str, packages: list[str]) -> Path:
    """The folder of ``npm install --prefix DIR`` of the pinned ``packages`` (``name@version``).

    Made on first use, rebuilt when the pins change; the packages' executables are
    in ``DIR/node_modules/.bin`` and their code in ``DIR/node_modules/PACKAGE``.
    """
    _check_name(name)
    pins = tuple(packages)
    unpinned = [package for package in pins if "@" not in package.lstrip("@")]
    if not pins or unpinned:
        raise TargetError(
            f"tool environments take exact pins ('package@version'), so the certified version is the installed one; "
            f"got {list(pins)!r}"
        )
    recipe = _Recipe("node", name, pins)
    folder = environments_root() / name
    if _is_current(folder, recipe, folder / "node_modules"):
        return folder
    with _building(name):
        if not _is_current(folder, recipe, folder / "node_modules"):  # another process may have built it meanwhile
            npm = shutil.which("npm") or "npm"
            command = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--save-exact", *pins]
            _build(folder, recipe, [(command, f"npm install {' '.join(pins)} into {folder}")], None)
    return folder


def served_tool_target(
    command: list[str], *, name: str, description: str, notes: dict[str, str], alphabet: bytes
) -> Target:
    """The target of a tool hosted by a tool server (``targets/tool_servers/``)
    run with ``command`` in the tool's own environment.

    The server's hello says what the target can do; this adds what the adapter
    knows and the hello cannot say: the registered ``name``, a ``description``
    (after the tool's version), the ``notes`` on what the tool cannot be told,
    and the letters it is honest on. A server that cannot be started is a
    :class:`TargetError` (a usage problem), never a verdict.
    """
    from rollcert.targets.adapters.subprocess_client import ServerNotStarted
    from rollcert.targets.adapters.subprocess_client import subprocess_target

    try:
        served = subprocess_target(command)
    except (ValueError, ServerNotStarted) as error:
        raise TargetError(str(error)) from None
    return replace(
        served,
        name=name,
        description=f"{served.version}: {description}",
        notes={**served.notes, **notes},
        alphabet=alphabet,
    )
