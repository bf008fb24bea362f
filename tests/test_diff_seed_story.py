"""The seed's incident, replayed: a self-authored diff, a tool write, an apply.

An agent snapshots its scratchpad context at revision 41 and authors a diff
that inserts a constraint block among lines 120–160; the block's wording rests
on what lines 800–860 said (its read-set). Before the diff is applied, a
retrieval tool writes a new document over lines 800–860 (revision 42). The
diff's write-set and the tool's write are 640 lines apart, so a write-set
check applies the diff — and the context now holds constraints about a
document that is gone. The bundled implementation rejects it, naming the
region in both coordinate systems, so the agent re-authors against the live
base; a diff that read something the tool did not touch still applies.
"""

from __future__ import annotations

import pytest

from rollcert.impl import JournaledBuffer
from rollcert.impl.diffs import DiffableBuffer
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import initial_diff_state
from rollcert.model.errors import StaleBaseError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.specimens.write_set_only import WriteSetOnlyBuffer

LINES = 1000
CONTEXT = b"".join(b"line %04d: working notes\n" % number for number in range(1, LINES + 1))
BLOCK = b"CONSTRAINT: every figure below must match the retrieved report (lines 800-860)\n"
DOCUMENT = b"".join(b"retrieved %04d: a different report\n" % number for number in range(61))


def line_start(text: bytes, line: int) -> int:
    """Offset of the first byte of 1-based ``line``."""
    offset = 0
    for _ in range(line - 1):
        offset = text.index(b"\n", offset) + 1
    return offset


def region_of_lines(text: bytes, first: int, last: int) -> Region:
    return Region(line_start(text, first), line_start(text, last + 1))


def incident(buffer: DiffableBuffer, reads_lines: tuple[int, int] = (800, 860)) -> None:
    """Revisions 1–41 of edits, the snapshot, the tool write (revision 42), the apply."""
    for number in range(41):  # the agent's own edits up to r41, in lines 1-41
        start = line_start(buffer.read(), number + 1)
        buffer.splice(start + 10, 7, b"WORKING")
    assert buffer.revision == 41
    snapshot = buffer.snapshot()
    base = snapshot.content
    insert_at = line_start(base, 140)
    diff = buffer.author_diff(
        snapshot, "content", [Hunk(insert_at, insert_at, BLOCK)], [region_of_lines(base, *reads_lines)]
    )
    tool = region_of_lines(buffer.read(), 800, 860)
    buffer.write(tool.start, tool.end - tool.start, DOCUMENT)  # the retrieval tool, r42
    buffer.apply_diff(diff)


def test_the_bundled_implementation_rejects_the_diff_and_names_the_region() -> None:
    buffer = DiffableBuffer(JournaledBuffer(CONTEXT))
    with pytest.raises(StaleBaseError) as raised:
        incident(buffer)
    error = raised.value
    base = buffer.read()  # nothing changed: the live base is the tool's
    assert (error.base_revision, error.live_revision) == (41, 42)
    assert BLOCK not in base and DOCUMENT in base
    assert buffer.revision == 42
    assert error.conflict is not None and error.live_conflict is not None
    start, end = error.live_conflict
    assert base[start:end] == DOCUMENT  # where lines 800-860 went: the tool's document
    assert error.conflict[0] == start  # lines above 800 did not move
    assert "revision 41" in str(error) and "revision 42" in str(error)


def test_a_write_set_check_applies_it_onto_the_tool_s_document() -> None:
    buffer = WriteSetOnlyBuffer(JournaledBuffer(CONTEXT))
    incident(buffer)
    live = buffer.read()
    assert BLOCK in live and DOCUMENT in live  # constraints about a report that is gone
    assert live.index(BLOCK) == line_start(live, 140)


def test_a_diff_that_read_other_lines_still_applies_where_it_was_written() -> None:
    buffer = DiffableBuffer(JournaledBuffer(CONTEXT))
    incident(buffer, reads_lines=(300, 320))
    live = buffer.read()
    assert live.index(BLOCK) == line_start(live, 140) and DOCUMENT in live
    assert buffer.revision == 43


def test_the_model_rejects_the_same_diff_for_the_same_reason() -> None:
    state = initial_diff_state(CONTEXT)
    for number in range(41):
        start = line_start(state.content, number + 1)
        state = diff_step(state, Splice(start + 10, 7, b"WORKING")).state
    state = diff_step(state, TakeSnapshot()).state
    base = state.content
    reads = region_of_lines(base, 800, 860)
    tool = reads
    state = diff_step(state, ToolWrite(tool.start, tool.end - tool.start, DOCUMENT)).state
    at = line_start(base, 140)
    outcome = diff_step(state, ApplyDiff(0, "content", (Hunk(at, at, BLOCK),), (reads,)))
    assert outcome.error is StaleBaseError and outcome.conflict == reads
    assert state.revision == 42 and state.snapshots[0].revision == 41
