"""A version 2.1 diff applier that implements no ``splice``: it declares
``diffs`` alone, takes the plain edits as ``write`` (the whole new text), and
answers ``splice`` with ``ProtocolError``. Its apply is honest: a diff on an
unmoved base is applied, one on a moved base refused (``StaleBaseError``,
which S1 allows whenever the base moved). Before 2.1 rollcert sent such a
server ``splice`` for every plain edit, contrary to docs/protocol.md.

Built on the tool servers' standard-library loop (``targets/tool_servers/_wire.py``)."""

import sys
from pathlib import Path
from typing import Any

import rollcert.targets.tool_servers as tool_servers

sys.path.insert(0, str(Path(tool_servers.__file__).parent))

from _wire import BadRequest
from _wire import Refused
from _wire import ToolBuffer
from _wire import ToolServer
from _wire import apply_hunks


class Exact(ToolBuffer):
    def apply_diff(self, snapshot: bytes, mode: str, hunks: list[tuple[int, int, bytes]], reads: Any) -> None:
        if self.content != snapshot:
            raise Refused("the text moved since the snapshot")
        self.content = apply_hunks(snapshot, hunks)


class NoSplice(ToolServer):
    def do_splice(self, message: dict[str, Any]) -> None:
        raise BadRequest("this diffs-only server implements no splice (rollcert-protocol/2.1 sends it write)")


limits = {"alphabet": None, "max_buffer_bytes": None, "max_insert_bytes": None}
NoSplice("diffs-only", "1", Exact, limits).serve(sys.stdin.buffer, sys.stdout.buffer)
