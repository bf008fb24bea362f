"""Issue 42: a target that can be asked for its chunk size (``Target.sets_chunk_bytes``)
is now and then built with chunks of 1-4 bytes, so storage paths that need many
chunks — ``impl.chunked_text``'s groups of chunks, their regrouping, the doubling
of the group size past 64 groups — are certified on buffers of a few hundred
bytes, where before they needed 1.25 MiB (three groups) or 32 MiB (the doubling).
The asked size travels with every trace, and the world states how many
examples ran in small chunks and the most chunks a buffer held."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from rollcert.impl import chunked_text
from rollcert.impl.chunked_text import ChunkedText
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.shrink import chunk_bytes_moves
from rollcert.stateful_tests.traces import parse_trace
from rollcert.stateful_tests.traces import trace_json
from rollcert.stateful_tests.world import SMALL_CHUNK_SIZES
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import WorldTally
from rollcert.stateful_tests.world import merge_reach
from rollcert.stateful_tests.world import reach_phrase
from rollcert.stateful_tests.world import world_report
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import journaled_adapter
from rollcert.targets.adapters.journaled_adapter import BundledAdapter
from rollcert.targets.resolve import resolve_target

#: A start of 40 one-byte chunks: three groups of ChunkedText's two-level index (16, 16, 8).
FORTY = bytes(range(65, 105))


def _words(count: int) -> Iterator[bytes]:
    for number in range(1, count + 1):
        yield number.to_bytes(8, "big")


def test_one_example_in_six_asks_for_chunks_of_one_to_four_bytes() -> None:
    asked = [strategies.chunk_bytes_from(word) for word in _words(6000)]
    small = [size for size in asked if size is not None]
    assert 800 < len(small) < 1200  # 1 in SMALL_CHUNKS_SHARE (6)
    assert set(small) == set(SMALL_CHUNK_SIZES)
    assert strategies.chunk_bytes_from(bytes(8)) is None  # a word of zeros: never
    assert [strategies.chunk_bytes_from(word) for word in _words(50)] == asked[:50]  # read from the word alone


def test_a_small_chunk_start_is_dozens_or_a_thousand_chunks_or_the_drawn_one_when_small() -> None:
    world = World()
    lengths = {strategies.initial_in_small_chunks(word, world, 2, b"drawn") for word in _words(300)}
    chunks = sorted(len(initial) // 2 for initial in lengths if initial != b"drawn")
    assert b"drawn" in lengths
    assert any(40 <= count <= 90 for count in chunks) and any(1040 <= count <= 1300 for count in chunks)
    assert all(40 <= count <= 90 or 1040 <= count <= 1300 for count in chunks)
    # A drawn start of a million chunks is never kept.
    huge = bytes(1 << 20)
    assert all(len(strategies.initial_in_small_chunks(word, world, 1, huge)) <= 1300 for word in _words(100))
    # A declared buffer limit holds.
    limited = replace(world, max_buffer=100)
    assert all(len(strategies.initial_in_small_chunks(word, limited, 4, b"")) <= 100 for word in _words(100))


@pytest.mark.parametrize("chunk_bytes", [0, -1, True, 2.0, "4"])
def test_a_bad_chunk_size_is_a_typed_error(chunk_bytes: object) -> None:
    with pytest.raises(ValueError, match="chunk_bytes"):
        BufferConfig(b"", chunk_bytes=chunk_bytes)  # type: ignore[arg-type]


def test_a_target_that_sets_chunk_bytes_must_declare_its_own() -> None:
    with pytest.raises(ValueError, match="sets_chunk_bytes"):
        Target("t", "1", frozenset(), lambda config: BundledAdapter(config), sets_chunk_bytes=True)


def test_the_bundled_target_builds_its_storage_in_the_chunks_asked_and_stays_right_across_groups() -> None:
    adapter = BundledAdapter(BufferConfig(FORTY, chunk_bytes=1))
    storage = adapter.buffer.storage
    assert isinstance(storage, ChunkedText) and len(storage._groups) == 3
    operations: list[Operation] = [Splice(1, 0, b"abc"), Splice(43, 0, b"Z"), Splice(30, 5, b""), Rollback(3)]
    steps = replay(ROLLBACK, resolve_target("bundled"), BufferConfig(FORTY, chunk_bytes=1), operations)
    assert all(step.ok for step in steps)
    assert steps[-1].actual.buffer == FORTY


class _LastGroupNotShifted(ChunkedText):
    """A planted bug of issue 42's mutation run (chunked_text.py, ``g + 1 <
    len(gstarts)`` as ``g + 2``): a length change in the group before the last
    leaves the last group's start where it was, so later edits there land in
    the wrong place. Only a buffer of three groups or more shows it."""

    def replace(self, offset: int, delete_length: int, insert: bytes) -> None:
        before = self.length
        super().replace(offset, delete_length, insert)
        gstarts = self._gstarts
        if len(gstarts) >= 3 and offset < gstarts[-2] and self.length != before:
            gstarts[-1] -= self.length - before  # the shift the bug forgets


@pytest.fixture
def planted_target(monkeypatch: pytest.MonkeyPatch) -> Target:
    monkeypatch.setattr("rollcert.impl.journaled_buffer.ChunkedText", _LastGroupNotShifted)
    assert journaled_adapter.JournaledBuffer is not None
    return resolve_target("bundled")


def test_small_chunks_reach_a_group_bug_that_the_bundled_chunk_size_hides(planted_target: Target) -> None:
    operations: list[Operation] = [Splice(1, 0, b"abc"), Splice(43, 0, b"Z")]
    with pytest.raises(Violation) as found:  # the last group's start is 3 bytes short: the "Z" misses the end
        replay(ROLLBACK, planted_target, BufferConfig(FORTY, chunk_bytes=1), operations)
    assert [step.ok for step in found.value.steps] == [True, False]
    assert found.value.steps[-1].expected.buffer == FORTY[:1] + b"abc" + FORTY[1:] + b"Z"
    hidden = replay(ROLLBACK, planted_target, BufferConfig(FORTY), operations)
    assert all(step.ok for step in hidden)  # one 32 KiB chunk: one group, nothing to shift
    assert len(FORTY) < chunked_text.CHUNK_SIZE


def test_the_asked_chunk_size_travels_with_the_trace_and_a_bad_one_is_refused() -> None:
    config = BufferConfig(FORTY, chunk_bytes=3)
    record = trace_json(ROLLBACK, config, [Splice(0, 1, b"x")])
    assert record["chunk_bytes"] == 3
    _, parsed, _ = parse_trace(json.dumps(record))
    assert parsed.chunk_bytes == 3 and parsed.journal_phrase() == ", in chunks of 3 bytes"
    assert "chunk_bytes" not in trace_json(ROLLBACK, BufferConfig(FORTY), [])
    for bad in (0, "3", 1.5, True):
        with pytest.raises(TypeError, match="chunk_bytes"):
            parse_trace(json.dumps({**record, "chunk_bytes": bad}))
    # A forged trace cannot make the storage hold millions of chunks (336 MB for 1 MiB in one-byte chunks).
    huge = {**record, "initial": "YQ==", "initial_times": 1 << 20, "chunk_bytes": 1}
    with pytest.raises(ValueError, match="more than 262144 chunks"):
        parse_trace(json.dumps(huge))
    assert parse_trace(json.dumps({**huge, "chunk_bytes": 8}))[1].chunk_bytes == 8
    # The shrinker tries the target's own chunk first: the size is told only if it mattered.
    assert [moved.chunk_bytes for moved, _ in chunk_bytes_moves(config, [])] == [None]
    assert list(chunk_bytes_moves(BufferConfig(FORTY), [])) == []


def test_the_world_states_the_examples_in_small_chunks_and_the_most_chunks_held() -> None:
    world = World(chunk=32768)
    tally = WorldTally(chunk=world.chunk)
    tally.initial(FORTY, 2)
    tally.observed(len(FORTY) + 5, 1)
    tally.initial(b"abc")  # an example on the target's own chunk: not counted
    tally.observed(100_000, 0)
    report = world_report(world, tally, (), chunk_matters=True)
    assert report["reach"]["small_chunks"] == {"examples": 1, "most_chunks": 23}
    assert "1 examples in chunks of 1-4 bytes (up to 23 chunks)" in reach_phrase(report)
    merged = merge_reach([report["reach"], report["reach"]])
    assert merged["small_chunks"] == {"examples": 2, "most_chunks": 23}
    none = world_report(world, WorldTally(chunk=world.chunk), (), chunk_matters=True)
    assert "0 examples in chunks of 1-4 bytes;" in reach_phrase(none) + ";"


def test_a_shard_partial_types_the_asked_chunk_size_and_start_revision() -> None:
    from rollcert.stateful_tests.shards import _checker
    from rollcert.targets.json_schema import SchemaMismatch

    counterexample = {
        "history": None, "property": "R0", "target": "bundled", "initial": "", "capacity": None,
        "policy": "reject", "explanation": "", "durable": False, "family": "rollback",
        "durability": "per_operation", "steps": [], "start_revision": 0, "chunk_bytes": 2,
    }
    checker = _checker("counterexample")
    checker.check(counterexample)
    checker.check({**counterexample, "chunk_bytes": None})
    for field, bad in (("chunk_bytes", 0), ("chunk_bytes", "2"), ("start_revision", -1)):
        with pytest.raises(SchemaMismatch):
            checker.check({**counterexample, field: bad})
