"""The one registry of target schemes and extra subcommands.

``rollcert certify TARGET`` reads TARGET through a table of *schemes*
(``bundled``, ``subprocess:``, ``thirdparty:`` and registered names, ``module:attr``
are built in; see :mod:`rollcert.targets.resolve`). Packages above the
harness add their own schemes and subcommands here without the harness ever
importing them: rollcert's own specimens contribute ``specimen:NAME``,
``rollcert specimens`` (the kill matrix) and ``rollcert docs`` (the tour) this
way, so the rooms' imports stay one-way (``specimens`` stands above
``command``, and nothing below imports it). A plugin is a function named by an entry point of the group
:data:`ENTRY_POINT_GROUP` in its package's metadata; it is called once, with
this module, and calls :func:`register_scheme` / :func:`register_command`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UsageError

ENTRY_POINT_GROUP = "rollcert.plugins"


@dataclass(frozen=True)
class Command:
    """A subcommand: its help line, how it adds its options, and how it runs
    (returning the exit status; :class:`UsageError` for a user's mistake)."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


#: scheme -> resolver of the text after ``scheme:``.
SCHEMES: dict[str, Callable[[str], Target]] = {}
#: name -> subcommand contributed by a plugin.
COMMANDS: dict[str, Command] = {}
_loaded = False


def register_scheme(scheme: str, resolver: Callable[[str], Target]) -> None:
    SCHEMES[scheme] = resolver


def register_command(command: Command) -> None:
    COMMANDS[command.name] = command


def load_plugins() -> None:
    """Call every installed plugin once. A plugin that fails is the installer's
    problem, reported as a usage error naming it, never a traceback."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry_point.load()()
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # an ImportError, a SyntaxError, a sys.exit() in a plugin
            raise UsageError(
                f"the rollcert plugin {entry_point.name!r} ({entry_point.value}) failed to load: "
                f"{type(error).__name__}: {error}"
            ) from None
