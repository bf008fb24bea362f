"""Paths as a certificate shows them: never an absolute path of the run's machine.

A certificate is read on other machines (a CI artefact, a bug report, a
published review), so it must not carry where the run's files happened to
live: a home directory names a person, a temporary directory is noise that
makes two certificates of one run differ, and neither means anything to the
reader (issue 43). Every path that reaches a certificate — the corpus folder, a
corpus file, a target's command line and so its replay command — goes through
this module, in one of two ways:

- :func:`portable_path`, for a path the reader only needs to recognise: relative
  to the working directory where it lies under it (the replay commands are run
  from there), else its role in angle brackets (``<corpus>``): not the file's
  home, not a shortened absolute path.
- :func:`portable_target`, for a TARGET text (``subprocess:COMMAND ARGS...``),
  which a replay command must still run as printed from the working directory
  of the run: each absolute path in the command becomes relative where it lies
  under that directory (``./server`` for the program, so the shell does not
  search ``$PATH`` for it), and otherwise becomes the file's name (``python3``
  for ``/usr/bin/python3``): what a reader on another machine can use, found on
  ``$PATH`` or beside them; a role there would make the command not run at all.

The rendering is done when a certificate is assembled, in the process and the
working directory of the run; it is idempotent, so text rendered once (a
shard's partial certificate) renders to itself again in a merge.
"""

from __future__ import annotations

import os
import shlex

#: The TARGET scheme whose text is a command line with paths in it.
SUBPROCESS_PREFIX = "subprocess:"


def _under(path: str, directory: str) -> str | None:
    """``path`` relative to ``directory`` when it lies under it (or is it), else None.
    Compared as written and with links resolved, so a path typed through a link
    (``/tmp`` to ``/private/tmp``) still counts as under the working directory."""
    for there, here in ((os.path.abspath(path), os.path.abspath(directory)),
                        (os.path.realpath(path), os.path.realpath(directory))):
        try:
            if os.path.commonpath([there, here]) == here:
                return os.path.relpath(there, here)
        except ValueError:  # different drives (Windows): not under it
            continue
    return None


def portable_path(path: str | os.PathLike[str], role: str, cwd: str | None = None) -> str:
    """``path`` as a certificate shows it: relative to ``cwd`` (default: the
    working directory) where it lies under it, else ``<role>``. A path given
    relative stays as given: it was typed relative to the same directory."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    relative = _under(text, os.getcwd() if cwd is None else cwd)
    return f"<{role}>" if relative is None else relative


def portable_word(word: str, *, program: bool = False, cwd: str | None = None) -> str:
    """One word of a command line with its absolute path (whole, or after
    ``--option=``) made portable, so that the command still runs as printed from
    ``cwd`` where it can: see the module's docstring."""
    option, equals, value = ("", "", word) if word.startswith("/") else word.partition("=")
    if not equals:
        option, value = "", word
    if not os.path.isabs(value):
        return word
    relative = _under(value, os.getcwd() if cwd is None else cwd)
    if relative is None:  # outside the run's directory: the file's name is all that travels
        shown = os.path.basename(os.path.normpath(value)) or "<root>"
    else:  # a program needs a slash, or the shell looks for it on $PATH
        shown = relative if not program or relative.startswith(".") else f"./{relative}"
    return f"{option}{equals}{shown}"


def portable_target(text: str, cwd: str | None = None) -> str:
    """The TARGET ``text`` as a certificate shows it and its replay command runs
    it: a ``subprocess:`` command line with each absolute path made portable
    (:func:`portable_word`); any other TARGET (``specimen:NAME``, ``module:attr``,
    a registered name) names no file and is returned as it is, as is a command
    line with no absolute path (so its spacing and quoting stay the user's)."""
    if not text.startswith(SUBPROCESS_PREFIX):
        return text
    command = text.removeprefix(SUBPROCESS_PREFIX)
    try:
        words = shlex.split(command)
    except ValueError:  # not a command line this target could have run from: nothing to rewrite
        return text
    shown = [portable_word(word, program=index == 0, cwd=cwd) for index, word in enumerate(words)]
    return text if shown == words else SUBPROCESS_PREFIX + shlex.join(shown)
