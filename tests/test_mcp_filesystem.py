"""The MCP reference filesystem server's ``edit_file`` tool, held to its page
(docs/certifications/mcp_filesystem.md).

Fast tier, without node: how a rollcert diff becomes the ``{oldText, newText}``
edits an agent sends (``tool_servers/mcp_filesystem_server.py``), and that a hung
or dying MCP server process is an error, never a hang (the "node" there is a
Python stand-in that hangs or exits, started through the same ``--node``/``--entry``
options).

Slow tier, with node and npm: the npm environment is created (pinned version),
the page's embedded certificates are re-run and must give the documented
verdicts — a release that changes one fails here — and each documented finding
is pinned down by *what* it is, so a verdict that stays ``violated`` for another
reason is caught too.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from _helpers import MAX_COUNTEREXAMPLE_STEPS
from _helpers import REGENERATE
from _helpers import documented_certificates

from rollcert.model.contract import Hunk
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.certify import PropertyResult
from rollcert.stateful_tests.diff_machine import DIFFS
from rollcert.stateful_tests.judge import StepRecord
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.traces import parse_trace
from rollcert.targets import tool_servers
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapters import THIRD_PARTY_TARGETS
from rollcert.targets.adapters import mcp_filesystem
from rollcert.targets.adapters.subprocess_client import subprocess_target
from rollcert.targets.resolve import resolve_target
from rollcert.targets.tool_envs import node_environment

PAGE = "mcp_filesystem.md"
TARGETS = ("mcp-filesystem-edit", "mcp-filesystem-edit-focused")
DOCUMENTED = documented_certificates(lambda target: target in TARGETS)
WIRE_FOLDER = Path(tool_servers.__file__).resolve().parent


@pytest.fixture(scope="module")
def server_module() -> Iterator[ModuleType]:
    """The tool server file as a module (it imports its sibling ``_wire`` by that name)."""
    sys.path.insert(0, str(WIRE_FOLDER))
    try:
        yield importlib.import_module("mcp_filesystem_server")
    finally:
        sys.path.remove(str(WIRE_FOLDER))


# -- fast: the rendering of a diff as edit_file edits ------------------------------------


def _windows(
    module: ModuleType, snapshot: bytes, hunks: list[tuple[int, int, bytes]]
) -> list[tuple[bytes, bytes]]:
    return [(edit.old_text, edit.new_text) for edit in module.render_edits(snapshot, hunks)]


def test_a_hunk_quotes_the_whole_lines_around_it(server_module: ModuleType) -> None:
    lines = b"a\nb\nc\n"
    # Replacing 'b' reads the byte before it (the first line's \n) and after it (its own \n).
    assert _windows(server_module, lines, [(2, 3, b"X")]) == [(b"a\nb\n", b"a\nX\n")]
    # An insertion at the very start quotes the first line, never an empty oldText.
    assert _windows(server_module, lines, [(0, 0, b"Y")]) == [(b"a\n", b"Ya\n")]
    # At the end, the last line; a last line without \n is quoted to the end of the text.
    assert _windows(server_module, lines, [(6, 6, b"Y")]) == [(b"c\n", b"c\nY")]
    assert _windows(server_module, b"a\nbc", [(3, 4, b"")]) == [(b"bc", b"b")]


def test_a_quote_grows_until_it_is_unique_in_the_snapshot(server_module: ModuleType) -> None:
    """The tool edits the first occurrence, so an agent quotes enough to name one place."""
    repeated = b"ab\nc\nab\nd\n"
    assert _windows(server_module, repeated, [(0, 1, b"X")]) == [(b"ab\nc\n", b"Xb\nc\n")]
    assert _windows(server_module, repeated, [(5, 6, b"X")]) == [(b"c\nab\n", b"c\nXb\n")]  # unique already
    # Grown by a line on each side: "c\nab\n" occurs twice, "ab\nc\nab\nd\n" once.
    twice = b"c\nab\nc\nab\nd\n"
    assert _windows(server_module, twice, [(7, 8, b"X")]) == [(b"ab\nc\nab\nd\n", b"ab\nc\nXb\nd\n")]
    # A whole text made of one repeated line: the quote ends up being the whole text.
    assert _windows(server_module, b"a\na\n", [(0, 1, b"")]) == [(b"a\na\n", b"\na\n")]


def test_hunks_that_quote_a_shared_line_are_one_edit(server_module: ModuleType) -> None:
    lines = b"a\nb\nc\nd\ne\nf\n"
    assert _windows(server_module, lines, [(0, 1, b"X"), (2, 3, b"Y")]) == [(b"a\nb\n", b"X\nY\n")]
    # Far apart: two edits, in text order.
    assert _windows(server_module, lines, [(0, 1, b"X"), (10, 11, b"Y")]) == [
        (b"a\n", b"X\n"),
        (b"e\nf\n", b"e\nY\n"),
    ]


def test_only_an_empty_snapshot_gives_an_empty_old_text(server_module: ModuleType) -> None:
    assert _windows(server_module, b"", [(0, 0, b"ab")]) == [(b"", b"ab")]


RENDERING_CASES = [
    (b"a\nb\nc\nd\n", [(0, 1, b""), (6, 6, b"X\n")]),
    (b"ab\n\n\nab\nb", [(3, 4, b" "), (9, 10, b"")]),
    (b"  a\n  a\n b", [(2, 3, b"Y"), (8, 8, b"1")]),
    (b"\n\n\n", [(1, 1, b"a")]),
    (b"abab", [(1, 3, b"")]),
]


@pytest.mark.parametrize(("snapshot", "hunks"), RENDERING_CASES)
def test_the_edits_turn_the_snapshot_into_the_diffs_result(
    server_module: ModuleType, snapshot: bytes, hunks: list[tuple[int, int, bytes]]
) -> None:
    """Each quote is whole lines, occurs once in B0, and the quotes replaced by their
    newText at their own places give B1: on an unchanged file the edits mean the diff."""
    edits = server_module.render_edits(snapshot, hunks)
    result, previous_end = b"", 0
    for edit in edits:
        assert snapshot[edit.start : edit.end] == edit.old_text and edit.start >= previous_end
        assert edit.start == 0 or snapshot[edit.start - 1 : edit.start] == b"\n"
        assert edit.end == len(snapshot) or edit.old_text.endswith(b"\n")
        assert snapshot.count(edit.old_text) == 1
        result += snapshot[previous_end : edit.start] + edit.new_text
        previous_end = edit.end
    assert result + snapshot[previous_end:] == server_module.apply_hunks(snapshot, hunks)


def test_the_adapter_declares_the_servers_alphabet(server_module: ModuleType) -> None:
    assert mcp_filesystem.ALPHABET == server_module.ALPHABET
    assert b"\r" not in mcp_filesystem.ALPHABET and mcp_filesystem.ALPHABET.isascii()


def test_both_targets_are_registered_and_documented() -> None:
    assert set(TARGETS) <= set(THIRD_PARTY_TARGETS)
    assert {d.target for d in DOCUMENTED} == set(TARGETS), (
        f"docs/certifications/{PAGE} needs both certificates"
    )
    for documented in DOCUMENTED:
        assert documented.page == PAGE
        assert set(documented.verdicts) == set(ALL_PROPERTY_IDS), f"{documented.page}: run {REGENERATE}"


# -- fast: a hung or dying MCP server is an error, never a hang --------------------------

#: A stand-in for node running the MCP server: it answers initialize (unless it hangs
#: there), then does what ``behaviour`` (set in a first line) says when a tool is called.
FAKE_MCP_SERVER = """
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        if behaviour == "hang-at-start":
            time.sleep(600)
        reply = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "fake", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": reply}), flush=True)
    elif message.get("method") == "tools/call":
        if behaviour == "hang":
            time.sleep(600)
        if behaviour == "exit":
            sys.exit(7)
        if behaviour == "garbage":
            print("not json", flush=True)
"""


def _fake_server_command(tmp_path: Path, behaviour: str) -> list[str]:
    """The tool server with a Python stand-in as "node": ``--entry`` is the stand-in's
    script, which node would run with the allowed directory as its argument."""
    fake = tmp_path / f"fake_mcp_{behaviour}.py"
    fake.write_text(f"behaviour = {behaviour!r}\n" + FAKE_MCP_SERVER)
    return [
        sys.executable,
        str(mcp_filesystem.SERVER),
        str(tmp_path),
        "--node",
        sys.executable,
        "--entry",
        str(fake),
        "--timeout",
        "0.5",
    ]


def _request(process: subprocess.Popen[bytes], request: dict[str, object]) -> bytes:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    return process.stdout.readline()


@pytest.mark.parametrize("behaviour", [pytest.param("hang", marks=pytest.mark.slow), "exit", "garbage"])
def test_a_broken_mcp_server_stops_the_tool_server_with_its_reason(tmp_path: Path, behaviour: str) -> None:
    """The apply gets no answer to judge: the tool server kills node and exits, saying why."""
    process = subprocess.Popen(
        _fake_server_command(tmp_path, behaviour),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        text = base64.b64encode(b"a\n").decode()
        assert json.loads(_request(process, {"id": 1, "op": "hello", "protocol": "rollcert-protocol/2"}))[
            "ok"
        ]
        new = {"id": 2, "op": "new", "initial": text, "capacity": None, "policy": "reject", "durable": False}
        buffer = json.loads(_request(process, new))["result"]
        token = json.loads(_request(process, {"id": 3, "op": "snapshot", "buffer": buffer}))["result"]
        apply = {"id": 4, "op": "apply_diff", "buffer": buffer, "snapshot": token, "mode": "content"}
        assert _request(process, {**apply, "hunks": [[0, 1, "WA=="]], "reads": []}) == b""  # no reply
        assert process.wait(timeout=60) == 3
        assert process.stderr is not None
        said = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reason = {
        "hang": "no reply to tools/call within 0.5 s",
        "exit": "closed its stdout",
        "garbage": "not JSON",
    }
    assert reason[behaviour] in said


def test_a_hang_is_a_harness_error_through_the_client(tmp_path: Path) -> None:
    """End to end: rollcert's client raises HarnessError (verdict error), never a refusal."""
    target = subprocess_target(_fake_server_command(tmp_path, "hang"), timeout=30)
    buffer = target.factory(BufferConfig(b"a\n"))
    try:
        snapshot = buffer.snapshot()
        with pytest.raises(HarnessError, match="no reply to tools/call"):
            buffer.apply_diff(snapshot, "content", [(0, 1, b"X")], [])
    finally:
        buffer.close()


@pytest.mark.slow
def test_a_server_that_hangs_at_start_fails_the_handshake(tmp_path: Path) -> None:
    command = _fake_server_command(tmp_path, "hang-at-start")
    done = subprocess.run(command, input=b"", capture_output=True, timeout=60, check=False)
    assert done.returncode == 3 and b"no reply to initialize" in done.stderr


# -- slow: the real package, in its npm environment ------------------------------------


def _require_node() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to install and run the MCP filesystem server")




def _counterexample(result: PropertyResult) -> list[StepRecord]:
    assert result.verdict == "violated" and result.counterexample is not None, result.reason
    steps = list(result.counterexample.steps)
    assert len(steps) <= MAX_COUNTEREXAMPLE_STEPS
    return steps


def _live_and_quotes(
    server_module: ModuleType, step: StepRecord, snapshot: bytes
) -> tuple[bytes, list[bytes]]:
    assert isinstance(step.operation, ApplyDiff)
    hunks = [(hunk.start, hunk.end, hunk.replacement) for hunk in step.operation.hunks]
    return step.before, [edit.old_text for edit in server_module.render_edits(snapshot, hunks)]


def _snapshot_of(steps: list[StepRecord]) -> bytes:
    """B0 of the last step's apply: the buffer when its snapshot was taken."""
    apply = steps[-1].operation
    assert isinstance(apply, ApplyDiff)
    taken = [step for step in steps if isinstance(step.operation, TakeSnapshot)]
    return taken[apply.snapshot].before


@pytest.mark.slow
def test_the_environment_is_the_pinned_version() -> None:
    _require_node()
    target = resolve_target("mcp-filesystem-edit")
    assert target.version == mcp_filesystem.VERSION
    assert target.alphabet == mcp_filesystem.ALPHABET and target.name == "mcp-filesystem-edit"




#: The documented traces of the page's findings (docs/certifications/mcp_filesystem.md),
#: replayed, so each finding stands whatever a search meets first: with the wide draws
#: the searches meet others (the plain target's S1 run, the declared reads the tool never
#: checks; the focused one, the exact search taking another copy, finding 3).
POSITIONAL_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YQoK","capacity":null,"policy":"reject",'
    '"operations":[{"op":"snapshot"},{"op":"splice","offset":1,"delete_length":1,"insert":""},'
    '{"op":"apply_diff","snapshot":0,"mode":"positional","hunks":[[0,1,""]],"reads":[]}]}'
)
WHITESPACE_FALLBACK_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YgogIAo=","capacity":null,"policy":"reject",'
    '"operations":[{"op":"snapshot"},{"op":"tool_write","offset":3,"delete_length":0,"insert":"Mg=="},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[0,0,"Cgo="],[4,5,""]],"reads":[]}]}'
)
#: B0 'bbb\nb\nba'; a write makes the first line 'babb'; the diff appends 'Y' to the last line.
ANOTHER_COPY_TRACE = (
    '{"schema":"rollcert-trace/2","family":"diffs","initial":"YmJiCmIKYmE=","capacity":null,"policy":"reject",'
    '"operations":[{"op":"snapshot"},{"op":"tool_write","offset":1,"delete_length":0,"insert":"YQ=="},'
    '{"op":"apply_diff","snapshot":0,"mode":"content","hunks":[[8,8,"WQ=="]],"reads":[]}]}'
)


def _replayed(target: str, trace: str) -> list[StepRecord]:
    """The steps of ``trace`` replayed on ``target``, which must break S1 at its last step."""
    _require_node()
    family, config, operations = parse_trace(trace)
    with pytest.raises(Violation) as raised:
        replay(family, resolve_target(target), config, operations)
    steps = raised.value.steps
    assert len(steps) == len(operations), f"{target}: the documented trace fails earlier now; see {PAGE}"
    assert "S1" in raised.value.broken, raised.value.broken
    return steps


@pytest.mark.slow
def test_a_positional_diff_is_applied_on_a_moved_base() -> None:
    """Finding 1: an edit cannot say it is positional; the tool finds its text anyway."""
    last = _replayed("mcp-filesystem-edit", POSITIONAL_TRACE)[-1]
    assert isinstance(last.operation, ApplyDiff) and last.operation.mode == "positional"
    assert last.expected.error == "StaleBaseError" and last.actual.error is None
    assert last.actual.buffer == b"\n", "mcp-filesystem-edit: finding 1 changed"


@pytest.mark.slow
def test_the_whitespace_fallback_places_an_edit_the_exact_search_did_not_find(
    server_module: ModuleType,
) -> None:
    """Finding 2 (focused): a quote that is no longer in the file is matched line by line,
    ignoring whitespace, elsewhere: a buffer that never existed."""
    steps = _replayed("mcp-filesystem-edit-focused", WHITESPACE_FALLBACK_TRACE)
    last = steps[-1]
    live, quotes = _live_and_quotes(server_module, last, _snapshot_of(steps))
    assert isinstance(last.operation, ApplyDiff) and last.operation.mode == "content"
    assert last.actual.error is None and last.actual.buffer != last.expected.buffer
    assert last.actual.buffer == b"\nb\n 2 \n", "mcp-filesystem-edit-focused: finding 2 changed"
    assert any(quote not in live for quote in quotes), "every quote was found exactly: not the fallback"
    assert any(quote.strip(b"\n") and not quote.strip() for quote in quotes), "no whitespace-only quote"


@pytest.mark.slow
def test_without_whitespace_the_exact_search_takes_another_copy(server_module: ModuleType) -> None:
    """Finding 3: the quote, unique in B0, is found first at a copy the write made (here
    inside a longer line): the search is a plain substring search with no uniqueness check."""
    steps = _replayed("mcp-filesystem-edit-focused", ANOTHER_COPY_TRACE)
    last = steps[-1]
    live, quotes = _live_and_quotes(server_module, last, _snapshot_of(steps))
    assert (last.expected.buffer, last.actual.buffer) == (b"babb\nb\nbaY", b"baYbb\nb\nba"), "finding 3 changed"
    assert all(quote in live for quote in quotes), "a quote was not found exactly"
    assert any(live.count(quote) > 1 for quote in quotes), "no quote occurs twice in the live text"






# A write changes line 5; the diff changes line 1 and line 5: two edits, the second not
# found (not even ignoring whitespace). S1: reject, changing nothing.
LINES = b"a\nb\nc\nd\ne\nf\n"
TWO_EDITS: list[DiffOperation] = [
    TakeSnapshot(),
    ToolWrite(8, 1, b"1"),
    ApplyDiff(0, "content", (Hunk(0, 1, b"X"), Hunk(8, 9, b"Y"))),
]


@pytest.mark.slow
def test_a_refused_edit_file_call_changes_nothing() -> None:
    """The tool applies all of a call's edits or none (it writes only after every edit matched)."""
    _require_node()
    steps = replay(DIFFS, resolve_target("mcp-filesystem-edit"), BufferConfig(LINES), TWO_EDITS)
    last = steps[-1]
    assert last.actual.error == "StaleBaseError" and last.actual.buffer == last.before
    assert "Could not find exact match" in last.sut_message


@pytest.mark.slow
def test_the_pages_reproduction_prints_what_the_page_says(tmp_path: Path) -> None:
    """The page's node script, run against the installed package, prints the output the
    page pastes: the reproductions stay real when a release changes the tool."""
    _require_node()
    page = (Path(__file__).resolve().parent.parent / "docs" / "certifications" / PAGE).read_text(
        encoding="utf-8"
    )
    script = re.search(r"```js\n(.*?)```", page, re.DOTALL)
    output = re.search(r"Its output[^\n]*\n\n```\n(.*?)```", page, re.DOTALL)
    assert script is not None and output is not None, f"{PAGE}: the reproduction script or its output is gone"
    (tmp_path / "repro.mjs").write_text(script[1], encoding="utf-8")
    package = mcp_filesystem.package_folder(
        node_environment(mcp_filesystem.ENVIRONMENT, [mcp_filesystem.PIN])
    )
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "repro.mjs", str(package)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == output[1], f"{PAGE}: the reproduction now prints\n{done.stdout}"
