"""Resolve the TARGET argument of ``rollcert certify`` to a :class:`Target`.

- ``bundled`` (the default): rollcert's own ``impl.JournaledBuffer``;
- ``SCHEME:TEXT`` for a scheme a plugin registered (:mod:`rollcert.targets.plugins`):
  ``specimen:NAME``, a deliberately broken implementation from ``rollcert.specimens``;
- ``NAME`` or ``thirdparty:NAME``: a registered third-party package (``textual``,
  ``prompt_toolkit``, ``pycrdt``, ...; see ``rollcert.targets.adapters``);
- ``module:attr``: any importable ``Target`` (or zero-argument callable returning one),
  found in the installed packages or, failing that, in the current directory;
- ``subprocess:COMMAND ARGS...``: a server speaking ``rollcert-protocol/1`` on its
  stdin/stdout (see ``docs/protocol.md``), in any language.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from typing import TYPE_CHECKING

from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.adapter import describe_exception
from rollcert.targets.adapter import exception_message
from rollcert.targets.adapter import visible
from rollcert.targets.plugins import SCHEMES
from rollcert.targets.plugins import load_plugins

if TYPE_CHECKING:
    from rollcert.targets.adapters import Focused


def resolve_target(text: str) -> Target:
    if text in ("bundled", "impl", ""):
        from rollcert.targets.adapters.bundled import TARGET

        return TARGET
    if text.startswith("subprocess:"):
        return _subprocess_target(text.removeprefix("subprocess:"))
    scheme, colon, rest = text.partition(":")
    if colon:
        load_plugins()
        if scheme in SCHEMES:
            return SCHEMES[scheme](rest)
    from rollcert.targets.adapters import Focused

    location = _third_party_location(text)
    if isinstance(location, Focused):
        from rollcert.targets.findings import focused_from_file

        return focused_from_file(resolve_target(location.plain), location.findings_file, location.also)
    text = location
    module_name, colon, attribute = text.partition(":")
    if not colon or not module_name or not attribute:
        raise TargetError(
            f"cannot read target {text!r}: use 'bundled', 'specimen:NAME', a registered name, "
            "'subprocess:COMMAND' or 'module:attribute'"
        )
    try:
        module = _import_from_here(module_name)
    except ImportError as error:
        raise TargetError(
            f"cannot import module {module_name!r} ({error}); is it installed in this environment, "
            "or on PYTHONPATH?"
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # SyntaxError, sys.exit(), a native panic: the target's fault
        raise TargetError(f"importing module {module_name!r} raised {_name_of(error)}") from None
    try:
        found: object = getattr(module, attribute)
    except AttributeError:
        raise TargetError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if not isinstance(found, Target) and callable(found):
        try:
            found = found()
        except TargetError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # any failure to build, SystemExit and native panics included
            raise TargetError(f"calling {text} to build the target raised {_name_of(error)}") from None
    if not isinstance(found, Target):
        raise TargetError(
            f"{text} is a {visible(type(found).__name__)}, not a rollcert.targets.adapter.Target "
            "(see README: 'Certify your own implementation')"
        )
    return _plainly_named(found)


def _plainly_named(target: Target) -> Target:
    """``target`` with its name, version and description as plain text, every
    control and format character escaped: an in-process target's words reach the
    terminal and every certificate (a name holding an escape sequence painted
    "R0 passed" over a real exit status 1)."""
    from dataclasses import replace

    fields = {name: visible(getattr(target, name)) for name in ("name", "version", "description")}
    if all(type(getattr(target, name)) is str and getattr(target, name) == fields[name] for name in fields):
        return target
    return replace(target, **fields)


def _import_from_here(module_name: str) -> object:
    """Import ``module_name`` from the installed packages or, as a user who types
    ``rollcert certify my_adapter:TARGET`` expects, from the current directory
    (looked at last, so it never shadows an installed package)."""
    here = os.getcwd()
    if here in sys.path or "" in sys.path:
        return importlib.import_module(module_name)
    sys.path.append(here)
    try:
        return importlib.import_module(module_name)
    finally:
        sys.path.remove(here)


def _subprocess_target(command: str) -> Target:
    """The Target served by ``command``, split as a POSIX shell would split it."""
    from rollcert.targets.adapters.subprocess_client import ServerNotStarted
    from rollcert.targets.adapters.subprocess_client import subprocess_target

    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise TargetError(f"cannot split the server command {command!r}: {error}") from None
    if not argv:
        raise TargetError("'subprocess:' needs the server's command line, e.g. 'subprocess:./my_server --flag'")
    try:
        return subprocess_target(argv)
    except (ValueError, ServerNotStarted) as error:  # a bad $ROLLCERT_PROTOCOL_*, or a command that cannot run
        raise TargetError(str(error)) from None


def _name_of(error: BaseException) -> str:
    """One line naming an exception: its type and its first line of message."""
    if isinstance(error, SystemExit):
        return f"SystemExit (exit status {exception_message(SystemExit(error.code), 200)})"
    return describe_exception(error, 200)


def _third_party_location(text: str) -> str | Focused:
    """The ``module:attr`` (or the focused target) behind a registered third-party
    name; other text unchanged."""
    from rollcert.targets.adapters import THIRD_PARTY_TARGETS

    name = text.removeprefix("thirdparty:")
    if name in THIRD_PARTY_TARGETS:
        return THIRD_PARTY_TARGETS[name]
    if text.startswith("thirdparty:"):
        raise TargetError(f"no third-party target named {name!r}; choose one of: {', '.join(THIRD_PARTY_TARGETS)}")
    return text
