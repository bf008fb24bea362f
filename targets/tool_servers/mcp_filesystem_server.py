"""The MCP reference filesystem server's ``edit_file`` tool as a rollcert-protocol/2 diff applier.

Run as ``python mcp_filesystem_server.py PACKAGE_DIR [--node NODE] [--timeout S]``,
where ``PACKAGE_DIR`` is the installed ``@modelcontextprotocol/server-filesystem``
(``.../node_modules/@modelcontextprotocol/server-filesystem``). Standard library
only: it runs beside ``_wire.py`` (a sibling module), never importing rollcert.

**One MCP server per tool server.** At start this server makes a temporary
directory and starts the MCP server once, ``node PACKAGE_DIR/dist/index.js DIR``
(its command-line argument is the one allowed directory), then shakes hands the
MCP way over the node process's stdio: JSON-RPC 2.0, one message per line,
``initialize`` then ``notifications/initialized``. Every rollcert buffer is a real
file in that directory (``buffer-N.txt``): ``read`` and ``splice`` (the agent's
plain write between a snapshot and an apply) work on the file's bytes directly,
``snapshot`` keeps them (B0).

**An apply is what an agent sends.** ``apply_diff`` renders the diff as one
``tools/call`` of ``edit_file`` with ``{path, edits: [{oldText, newText}, ...],
dryRun: false}`` (:func:`render_edits`): each hunk becomes one edit whose
``oldText`` quotes the snapshot around the hunk — the hunk's span widened by one
byte on each side (S1's effective read of a hunk), then to whole lines, then by
one more line on each side until the quote occurs once in the snapshot — and
whose ``newText`` is the same lines with the hunk applied. Whole lines because the
tool describes itself as line-based and agents quote lines, and because an empty
``oldText`` matches at offset 0 of any text (the exact search is ``includes``
then ``replace``); the one-byte widening so that an insertion touching a hunk
changes the quoted text; unique because the tool edits the *first* occurrence,
and a careful agent quotes enough context to name one place in the file it read
(so on an unchanged file every edit lands where the agent meant it). The quote
keeps its final ``\n``. Hunks whose quoted lines overlap become one edit (the
tool applies its edits one after another, each to the previous one's result, so
two edits quoting the same line could not both be found). Only an empty snapshot
gives an empty ``oldText``. The tool's error result (``isError``) is its refusal,
answered as ``StaleBaseError`` with its own message.

**What the tool cannot be told.** Neither the anchor mode nor the declared reads:
an edit is text to search for and text to put instead. The tool's read-set is the
``oldText``: it looks for it exactly (the *first* occurrence), then, failing that,
line by line with each line's leading and trailing whitespace ignored, re-indenting
the replacement. So staleness is judged by the quoted text alone.

**Bytes.** The tool reads and writes the file as UTF-8 text and turns every
``\\r\\n`` into ``\\n`` — in the whole file, on any successful edit. The adapter
writes the rollcert bytes to the file untouched, so it is byte-transparent on
ASCII without ``\\r``: the declared alphabet is ``ab12XY`` plus ``\\n`` and space
(``\\n`` so the text has lines; space so the whitespace-flexible fallback is
exercised). Line endings, tabs and non-ASCII text are not exercised.

**A hung or dying node process** is an error, never a hang: every read from it
is bounded (line length) and has a deadline (``--timeout``, below the client's own
per-request timeout). When node does not answer in time, or exits, or answers
something that is not the reply asked for, the node process is killed, the
reason goes to stderr, and this server exits with status 3 without answering: the
rollcert client reports the exit (quoting stderr) as a harness error, so the
verdict is ``error``, never ``violated``, and its next buffer starts a fresh server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

from _wire import FileBuffer
from _wire import Refused
from _wire import apply_hunks
from _wire import serve

#: The letters the target's buffers, writes and hunks are made of (see the module docstring).
ALPHABET = b"ab12XY\n "
#: Seconds one MCP request may take: below rollcert's default of 10 s per request,
#: so a hang is reported by this server, with its reason, rather than by the client.
DEFAULT_TIMEOUT_SECONDS = 8.0
#: The MCP protocol revision this client speaks in ``initialize``.
MCP_PROTOCOL_VERSION = "2025-06-18"
#: Longest line accepted from node; a longer one means node is not speaking MCP to us.
MAX_MCP_LINE_BYTES = 16 * 1024 * 1024
READ_CHUNK_BYTES = 64 * 1024
#: Exit status when node broke: the rollcert client reports the exit as a harness error.
TOOL_BROKE_STATUS = 3

Hunks = Sequence[tuple[int, int, bytes]]


# -- the rendering: a rollcert diff as the edits an agent sends --------------------------


@dataclass(frozen=True)
class Edit:
    """One ``{oldText, newText}`` edit of ``edit_file``, with where it was quoted from."""

    old_text: bytes
    new_text: bytes
    #: The quoted window of the snapshot, ``[start, end)``.
    start: int
    end: int

    def as_json(self) -> dict[str, str]:
        return {"oldText": text_of(self.old_text), "newText": text_of(self.new_text)}


def text_of(data: bytes) -> str:
    """``data`` as the tool's text. The tool works on UTF-8 and the target's alphabet is
    ASCII, so this only refuses bytes the declared alphabet never produces."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"the edit_file tool takes UTF-8 text only; got {data!r}") from None


def quoted_window(snapshot: bytes, start: int, end: int) -> tuple[int, int]:
    """The whole lines of ``snapshot`` an agent quotes for the hunk ``[start, end)``.

    The hunk's span widened by one byte on each side (clipped at the ends: S1's
    effective read of a hunk), then to the start of its first line and past the
    ``\\n`` of its last line (or the end of the text); then, while that text occurs
    more than once in the snapshot, one more line on each side, as an agent adds
    context until its quote is unique in the file it read. Non-empty unless the
    snapshot is.
    """
    if not snapshot:
        return 0, 0
    first = max(start - 1, 0)
    last = min(end + 1, len(snapshot)) - 1  # the last byte of the widened span
    low = line_start(snapshot, first)
    high = line_end(snapshot, last)
    while occurs_more_than_once(snapshot, snapshot[low:high]):
        low = line_start(snapshot, low - 1) if low > 0 else 0
        high = line_end(snapshot, high) if high < len(snapshot) else high
    return low, high


def line_start(text: bytes, index: int) -> int:
    """The offset of the start of the line holding byte ``index``."""
    return text.rfind(b"\n", 0, index) + 1


def line_end(text: bytes, index: int) -> int:
    """The offset just past the line holding byte ``index`` (past its ``\\n``, or the end)."""
    newline = text.find(b"\n", index)
    return len(text) if newline == -1 else newline + 1


def occurs_more_than_once(text: bytes, needle: bytes) -> bool:
    """Does ``needle`` occur at two offsets of ``text`` (overlapping occurrences count)?"""
    first = text.find(needle)
    return first != -1 and text.find(needle, first + 1) != -1


def render_edits(snapshot: bytes, hunks: Hunks) -> list[Edit]:
    """The ``edit_file`` edits for the (checked, sorted) hunks of a diff on ``snapshot``.

    One edit per hunk, except that hunks whose quoted windows overlap share one edit
    (see the module docstring). Each ``newText`` is its window with its hunks applied.
    """
    groups: list[tuple[int, int, list[tuple[int, int, bytes]]]] = []
    for start, end, replacement in hunks:
        low, high = quoted_window(snapshot, start, end)
        if groups and low < groups[-1][1]:
            first_low, _, members = groups[-1]
            groups[-1] = (first_low, max(high, groups[-1][1]), [*members, (start, end, replacement)])
        else:
            groups.append((low, high, [(start, end, replacement)]))
    edits = []
    for low, high, members in groups:
        window = snapshot[low:high]
        shifted = [(start - low, end - low, replacement) for start, end, replacement in members]
        edits.append(Edit(window, apply_hunks(window, shifted), low, high))
    return edits


# -- the MCP client: bounded, with a deadline --------------------------------------------


class ToolBroke(Exception):
    """Node hung, died or answered off-protocol: not an answer of the tool to judge."""


class McpClient:
    """One node process running the MCP filesystem server, spoken to over its stdio."""

    def __init__(self, node: str, entry: Path, directory: Path, timeout: float) -> None:
        self.timeout = timeout
        self.pending = b""
        self.ids = count(1)
        self.argv = [node, str(entry), str(directory)]
        try:
            # Same process group as this server: the rollcert client kills the group on close.
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as error:
            raise ToolBroke(f"cannot start {self.argv[0]!r}: {error}") from None
        self.server_info: dict[str, Any] = {}
        reply = self.request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},  # no roots: the command-line directory is the allowed one
                "clientInfo": {"name": "rollcert", "version": "2"},
            },
        )
        result = reply.get("result")
        if not isinstance(result, dict):
            raise ToolBroke(f"the MCP server refused initialize: {reply.get('error')!r}")
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            raise self.broke(f"cannot write to it ({error})") from None

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its reply (notifications and node's own requests are
        answered or skipped), at most ``timeout`` seconds in all."""
        request_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        while True:
            message = self.receive(deadline, method)
            if "method" in message:  # node asks us something, or tells us something
                if "id" in message:
                    error = {"code": -32601, "message": "method not found"}
                    self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                continue
            if message.get("id") != request_id:
                raise self.broke(
                    f"it answered id {message.get('id')!r} while {method} (id {request_id}) waited"
                )
            return message

    def receive(self, deadline: float, method: str) -> dict[str, Any]:
        """The next JSON-RPC message from node, read in bounded chunks before ``deadline``."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            if len(self.pending) > MAX_MCP_LINE_BYTES:
                raise self.broke(f"it sent a line longer than {MAX_MCP_LINE_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([descriptor], [], [], left)[0]:
                raise self.broke(f"no reply to {method} within {self.timeout:g} s")
            chunk = os.read(descriptor, READ_CHUNK_BYTES)
            if not chunk:
                raise self.broke(f"it closed its stdout during {method}")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self.broke(f"it sent a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise self.broke(f"it sent JSON that is not a message: {line[:200]!r}")
        return message

    def broke(self, why: str) -> ToolBroke:
        """Kill node (a hung process must not outlive the reason) and say what happened."""
        self.kill()
        status = self.process.returncode
        return ToolBroke(
            f"the MCP filesystem server ({' '.join(self.argv)}) broke: {why}; node exit status {status}"
        )

    def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """``tools/call``: (is it the tool's error result, the text it returned)."""
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result = reply.get("result")
        if not isinstance(result, dict):
            raise self.broke(
                f"tools/call {name} got a JSON-RPC error, not a tool result: {reply.get('error')!r}"
            )
        content = result.get("content")
        texts = (
            [item.get("text", "") for item in content if isinstance(item, dict)]
            if isinstance(content, list)
            else []
        )
        return result.get("isError") is True, "\n".join(str(text) for text in texts)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """Close node's stdin and give it a moment to exit; then kill it."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()


# -- the buffers --------------------------------------------------------------------------


class McpFileBuffer(FileBuffer):
    """One rollcert buffer: a file in the MCP server's allowed directory."""

    def __init__(self, client: McpClient, path: Path, initial: bytes) -> None:
        super().__init__(path, initial)
        self.client = client

    def apply_diff(
        self, snapshot: bytes, mode: str, hunks: list[tuple[int, int, bytes]], reads: list[tuple[int, int]]
    ) -> None:
        """``edit_file`` with the rendered edits; mode and reads cannot be passed to it."""
        edits = [edit.as_json() for edit in render_edits(snapshot, hunks)]
        arguments = {"path": str(self.file), "edits": edits, "dryRun": False}
        try:
            is_error, text = self.client.call_tool("edit_file", arguments)
        except ToolBroke as error:
            stop(str(error))
        if is_error:
            raise Refused(f"edit_file: {text}")

    def close(self) -> None:
        self.file.unlink(missing_ok=True)


def stop(reason: str) -> None:
    """Leave without answering: the rollcert client sees the exit and quotes stderr."""
    print(f"mcp_filesystem_server: {reason}", file=sys.stderr, flush=True)
    raise SystemExit(TOOL_BROKE_STATUS)


def package_version(package: Path) -> str:
    try:
        version = json.loads((package / "package.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return "unknown"
    return version if isinstance(version, str) else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "package", type=Path, help="the installed @modelcontextprotocol/server-filesystem folder"
    )
    parser.add_argument("--node", default=shutil.which("node") or "node", help="the node executable")
    parser.add_argument("--entry", type=Path, help="the script node runs (default PACKAGE/dist/index.js)")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, help="seconds per MCP request"
    )
    options = parser.parse_args(argv)
    entry = options.entry or options.package / "dist" / "index.js"
    directory = Path(os.path.realpath(tempfile.mkdtemp(prefix="rollcert-mcp-fs-")))
    client: McpClient | None = None
    try:
        try:
            client = McpClient(options.node, entry, directory, options.timeout)
        except ToolBroke as error:
            stop(str(error))
        assert client is not None
        numbers = count(1)
        started = client

        def make_buffer(initial: bytes) -> McpFileBuffer:
            return McpFileBuffer(started, directory / f"buffer-{next(numbers)}.txt", initial)

        return serve(
            "@modelcontextprotocol/server-filesystem edit_file",
            package_version(options.package),
            make_buffer,
            alphabet=ALPHABET,
        )
    finally:
        if client is not None:
            client.close()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
