"""serena's ``replace_content`` tool as a rollcert-protocol/2.1 server (run under serena's own venv).

    python serena_server.py

serena (PyPI ``serena-agent``) is an MCP toolkit that gives an agent an IDE's
editing tools; its file-level replace tool, ``replace_content`` (``ReplaceContentTool``:
``needle``, ``repl``, mode ``literal`` or ``regex``; the needle must match once
unless ``allow_multiple_occurrences``), edits a file of the agent's *project*
through a language server: the file is opened in the server's buffer, the new
text set there, and written back. So the server makes one real serena project in
a temporary directory (a ``SerenaAgent`` on it, with the Jedi language server,
``jedi-language-server`` from PyPI, in the same venv: serena's default Python
server is fetched with ``uvx`` at run time, which this machine cannot do); each
buffer is a file ``bN.py`` of that project, and an apply calls the tool as an
agent does, ``agent.get_tool(ReplaceContentTool).apply(...)``.

How a diff (snapshot B0, hunks) becomes tool calls: one ``replace_content`` in
``literal`` mode per run of touched whole lines (``_blocks.edit_blocks``, as for
aider, gptme and OpenHands), ``needle`` B0's text of those lines and ``repl`` the
same lines with the hunks applied, in text order, each on the live file. Its
``ValueError`` (what the agent is told) is a refusal (``StaleBaseError``), the
file as the tool left it.

What cannot be told to the tool: the anchor mode and the declared reads; its
read-set is the needle, which must occur once.

serena writes its settings under ``$HOME/.serena``: the server points ``HOME``
at a temporary directory of its own (so nothing of the user's is read or
changed), turns the web dashboard off and usage reporting off
(``SERENA_USAGE_REPORTING=false``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from itertools import count
from pathlib import Path

if __package__:
    from ._blocks import edit_blocks
    from ._wire import FileBuffer
    from ._wire import Refused
    from ._wire import serve
else:  # run as a script under the tool's interpreter: the siblings are on sys.path
    from _blocks import edit_blocks
    from _wire import FileBuffer
    from _wire import Refused
    from _wire import serve

#: The diff machine's letters, a line break and a space.
ALPHABET = b"ab12XY\n "
#: How long the language server may take to come up.
LANGUAGE_SERVER_SECONDS = 60.0
_NUMBERS = count(1)


class Project:
    """One serena project in a temporary directory, with its agent and language server."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="rollcert-serena-"))
        self.home = self.root / "home"
        self.files = self.root / "project"
        self.home.mkdir()
        self.files.mkdir()
        os.environ["HOME"] = str(self.home)
        os.environ["SERENA_USAGE_REPORTING"] = "false"
        bin_folder = str(Path(sys.executable).parent)  # jedi-language-server is in the same venv
        os.environ["PATH"] = bin_folder + os.pathsep + os.environ.get("PATH", "")
        from serena.agent import SerenaAgent
        from serena.config.serena_config import ProjectConfig
        from serena.config.serena_config import SerenaConfig
        from serena.tools import ReplaceContentTool
        from solidlsp.ls_config import LanguageServerId

        config = SerenaConfig.from_config_file()
        config.web_dashboard = False
        (self.files / "b0.py").write_text("")  # a Python file, so the project is a Python one
        ProjectConfig.autogenerate(self.files, config, languages=[LanguageServerId.PYTHON_JEDI], save_to_disk=True)
        self.agent = SerenaAgent(project=str(self.files), serena_config=config)
        self._wait_for_the_language_server()
        self.tool = self.agent.get_tool(ReplaceContentTool)

    def _wait_for_the_language_server(self) -> None:
        give_up = time.monotonic() + LANGUAGE_SERVER_SECONDS
        while True:
            try:
                self.agent.get_active_project_or_raise().get_language_server_manager_or_raise()
                return
            except Exception:
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        # serena's shutdown stops its language servers, then ends the process with SIGTERM:
        # taken as a normal exit (status 0), as the end of stdin is.
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
        with contextlib.suppress(Exception):
            self.agent.shutdown()
        shutil.rmtree(self.root, ignore_errors=True)


class ProjectFile(FileBuffer):
    """A file of the project that serena's replace tool edits."""

    project: Project | None = None

    def __init__(self, initial: bytes) -> None:
        assert ProjectFile.project is not None, "main() makes the project before serving"
        self.name = f"b{next(_NUMBERS)}.py"
        super().__init__(ProjectFile.project.files / self.name, initial)

    def apply_diff(
        self,
        snapshot: bytes,
        mode: str,
        hunks: Sequence[tuple[int, int, bytes]],
        reads: list[tuple[int, int]],
    ) -> None:
        assert ProjectFile.project is not None
        base = snapshot.decode("utf-8")
        text_hunks = [(start, end, replacement.decode("utf-8")) for start, end, replacement in hunks]
        for needle, replacement in edit_blocks(base, text_hunks):
            try:
                ProjectFile.project.tool.apply(self.name, needle, replacement, "literal")
            except ValueError as error:
                raise Refused(" | ".join(str(error).strip().splitlines()[:3])) from None

    def close(self) -> None:
        self.file.unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: {Path(argv[0]).name}", file=sys.stderr)
        return 2
    from importlib.metadata import version

    logging.disable(logging.CRITICAL)  # serena logs every step; stderr is for failures
    release = f"serena-agent {version('serena-agent')}"
    ProjectFile.project = Project()  # before the hello: its start (seconds) is the hello's, not a request's
    try:
        return serve("serena-replace-content", release, ProjectFile, alphabet=ALPHABET)
    finally:
        if ProjectFile.project is not None:
            ProjectFile.project.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

