"""Byte-level fuzz of the durable journal: recovery refuses or yields a state of the history.

tests/test_journal_corruption.py moves whole, intact records (duplicate, drop,
swap, transplant, crafted frames); tests/test_file_journal_real.py flips one bit
per offset of a six-record file and cuts the *last* record at every byte. What
neither does is damage the bytes without regard for where frames begin: every
byte value at every offset, every truncation of the whole file, and byte ranges
duplicated, dropped or swapped at every offset, in files that hold a compaction
(a rewrite with records after its base), serial floors (reopens), rollbacks and
evict-and-splice records (a bounded journal).

What recovery may do with any of them (the journal's own promise, impl/file_journal.py):

- refuse with :class:`RecoveryError` whose message starts ``byte N:`` with N
  inside the damaged file; or
- yield a state the buffer really had: its bytes, its revision, its live undo
  records (offsets, removed bytes, lengths, serials: what rollback and every
  checkpoint resolve against) and its horizon (the serial a checkpoint at depth
  0 names, and where the base sits) all equal to one point of the history.

Never another exception, never a state outside the history. The states are
compared whole: a recovery that got the bytes right but a serial wrong would
let a checkpoint name another state (S3).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from rollcert.impl import file_journal
from rollcert.impl.file_journal import DEFAULT_NAME
from rollcert.impl.file_journal import FRAME
from rollcert.impl.file_journal import SERIAL_FLOOR
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import frame_spans
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import RecoveryError
from rollcert.specimens.skip_bad_record import SkipBadRecord
from rollcert.specimens.torn_tail_applied import TornTailApplied

#: One point of the history, whole: bytes, revision, the live undo records
#: (oldest first), the horizon serial and the base position.
State = tuple[bytes, int, tuple[InverseRecord, ...], int, int]
#: A journal file and every state its buffer went through.
History = tuple[bytes, frozenset[State]]

REFUSAL = re.compile(r"^byte (\d+): ")


def state_of(buffer: JournaledBuffer) -> State:
    """The live buffer's state. The horizon is read from the buffer's own fields:
    the API shows it only through a checkpoint at depth 0."""
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    records = tuple(journal[index] for index in range(len(journal)))
    return buffer.read(), buffer.revision, records, buffer._horizon_serial, buffer._base_position


def outcome(data: bytes, reader: type[JournalReader] = JournalReader) -> State | str:
    """What recovery makes of ``data``: its state, or "refused" (checked to name
    an offset inside the file). Any other exception fails the test."""
    try:
        recovered = reader().read(data)
    except RecoveryError as refusal:
        named = REFUSAL.match(str(refusal))
        assert named is not None, f"a refusal that names no offset: {refusal}"
        assert int(named.group(1)) <= len(data), f"a refusal naming an offset past the file's end: {refusal}"
        return "refused"
    assert recovered.good_length <= len(data)
    records = tuple(record for record, _ in recovered.records)
    meta = recovered.meta
    return bytes(recovered.buffer), recovered.revision, records, meta.horizon_serial, meta.base_position


@contextmanager
def fixed_salts(seed: str) -> Iterator[None]:
    """The journal draws its salts and buffer ids from :mod:`secrets`; a seeded
    stand-in makes every run build, and so damage, the same bytes."""
    original = file_journal.secrets
    file_journal.secrets = SimpleNamespace(randbits=random.Random(seed).getrandbits)  # type: ignore[assignment]
    try:
        yield
    finally:
        file_journal.secrets = original


class Recorder:
    """A durable buffer on a simulated disk that notes its state after every operation."""

    def __init__(self, initial: bytes, capacity: int | None = None) -> None:
        self.disk = SimulatedDisk()
        policy = "evict_oldest" if capacity is not None else "reject"
        self.buffer = open_durable_buffer(self.disk, initial, capacity=capacity, policy=policy)
        self.states: set[State] = {state_of(self.buffer)}

    def do(self, method: str, *arguments: object) -> None:
        """``buffer.METHOD(*ARGUMENTS)``, then note the state."""
        getattr(self.buffer, method)(*arguments)
        self.states.add(state_of(self.buffer))

    def reopen(self) -> None:
        """Close and recover: the next open writes a serial floor record."""
        journal = self.buffer.journal
        assert isinstance(journal, FileJournal)
        journal.close()
        self.buffer = open_durable_buffer(self.disk)
        self.states.add(state_of(self.buffer))

    def history(self) -> History:
        return self.disk.read(DEFAULT_NAME) or b"", frozenset(self.states)


def rewritten_history() -> History:
    """Splices, a rollback, a compaction that keeps two records (so the file is a
    rewrite with records after its base), a reopen (a serial floor), more splices
    and a rollback of two: every kind of record an unbounded journal writes."""
    with fixed_salts("rewritten"):
        recorder = Recorder(b"abcdef")
        recorder.do("splice", 0, 0, b"xy")
        recorder.do("splice", 3, 2, b"")
        recorder.do("splice", 1, 1, b"LONGER INSERT")
        recorder.do("rollback", 1)
        recorder.do("splice", 4, 0, b"QQ")
        recorder.do("compact", 2)
        recorder.reopen()
        recorder.do("splice", 0, 1, b"z")
        recorder.do("splice", 2, 3, b"tail")
        recorder.do("rollback", 2)
        recorder.do("splice", 1, 0, b"!")
    return recorder.history()


def evicting_history() -> History:
    """A bounded journal (capacity 2, evict_oldest): evict-and-splice records."""
    with fixed_salts("evicting"):
        recorder = Recorder(b"0123", capacity=2)
        for edit in ((0, 1, b"a"), (1, 1, b"bb"), (4, 0, b"c"), (0, 2, b"")):
            recorder.do("splice", *edit)
        recorder.do("rollback", 1)
        recorder.reopen()
        recorder.do("splice", 0, 0, b"d")
    return recorder.history()


def random_history(rng: random.Random) -> History:
    """Random splices, rollbacks, compactions and reopens, as test_journal_corruption builds them."""
    with fixed_salts(str(rng.random())):
        return _random_history(rng)


def _random_history(rng: random.Random) -> History:
    recorder = Recorder(bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 6))))
    for _ in range(rng.randint(3, 12)):
        roll, depth = rng.random(), recorder.buffer.depth
        if roll < 0.1:
            recorder.reopen()
        elif depth and roll < 0.3:
            recorder.do("rollback", rng.randint(1, depth))
        elif depth and roll < 0.4:
            recorder.do("compact", rng.randint(0, depth))
        else:
            length = len(recorder.buffer)
            offset = rng.randint(0, length)
            edit = (offset, rng.randint(0, min(3, length - offset)), bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 4))))
            recorder.do("splice", *edit)
    return recorder.history()


HISTORIES = {"rewritten": rewritten_history, "evicting": evicting_history}


def test_the_histories_hold_what_the_fuzz_claims_to_damage() -> None:
    """Not vacuous: the fixed histories recover whole to their last state and
    hold a rewrite's records, serial floors and evict-and-splice records."""
    for make in HISTORIES.values():
        data, states = make()
        assert outcome(data) in states
        assert sum(data[start + FRAME.size] == SERIAL_FLOOR for start, _ in frame_spans(data)) >= 1
    rewritten = JournalReader().read(rewritten_history()[0])
    assert rewritten.rewritten_records == 2 and len(rewritten.records) == 3
    evicting = JournalReader().read(evicting_history()[0])
    assert evicting.meta.base_position > 0  # the horizon moved by evictions


# -- the damage --------------------------------------------------------------------------------

Damage = tuple[str, bytes]


def single_bytes(data: bytes, offsets: range | list[int], values: range | list[int]) -> Iterator[Damage]:
    for offset in offsets:
        for value in values:
            if value != data[offset]:
                yield f"byte {offset} := {value}", data[:offset] + bytes([value]) + data[offset + 1 :]


def truncations(data: bytes) -> Iterator[Damage]:
    for cut in range(len(data)):
        yield f"cut at {cut}", data[:cut]


RANGE_SIZES = (1, 2, 3, 4, 8, 17, 32)


def moved_ranges(data: bytes) -> Iterator[Damage]:
    """Every range of RANGE_SIZES bytes duplicated in place, dropped, and swapped
    with the range right after it, at every offset."""
    for size in RANGE_SIZES:
        for start in range(len(data) - size + 1):
            piece = data[start : start + size]
            yield f"dup {start}+{size}", data[: start + size] + piece + data[start + size :]
            yield f"drop {start}+{size}", data[:start] + data[start + size :]
            after = data[start + size : start + 2 * size]
            if len(after) == size and after != piece:
                yield f"swap {start}+{size}", data[:start] + after + piece + data[start + 2 * size :]


def judge_all(
    damages: Iterator[Damage], states: frozenset[State], reader: type[JournalReader] = JournalReader
) -> dict[str, int]:
    """Recover every damaged file; tally refusals and states, asserting each state is in the history."""
    tally = {"refused": 0, "history": 0}
    for label, damaged in damages:
        result = outcome(damaged, reader)
        if result == "refused":
            tally["refused"] += 1
        else:
            assert result in states, f"{label}: recovered a state outside the history: {result}"
            tally["history"] += 1
    return tally


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_every_truncation_is_refused_or_a_state_of_the_history(name: str) -> None:
    data, states = HISTORIES[name]()
    tally = judge_all(truncations(data), states)
    # Cuts inside the rewrite's records are refused; cuts after them are earlier states.
    assert tally["refused"] > 0 and tally["history"] > 0, tally


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_duplicated_dropped_and_swapped_byte_ranges_are_refused_or_states_of_the_history(name: str) -> None:
    data, states = HISTORIES[name]()
    tally = judge_all(moved_ranges(data), states)
    assert tally["refused"] > 0.9 * sum(tally.values()), tally


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_a_seeded_sample_of_single_byte_changes_is_refused_or_states_of_the_history(name: str) -> None:
    """About 4,000 (offset, value) pairs per history, the same every run; the
    slow test below tries all of them."""
    data, states = HISTORIES[name]()
    rng = random.Random(f"single bytes of {name}")
    offsets = sorted(rng.sample(range(len(data)), min(len(data), 250)))
    tally = judge_all(single_bytes(data, offsets, rng.sample(range(256), 16)), states)
    assert tally["refused"] > 0.9 * sum(tally.values()), tally


@pytest.mark.parametrize("reader", [SkipBadRecord, TornTailApplied], ids=lambda reader: reader.__name__)
def test_the_fuzz_catches_each_deliberately_broken_recovery(reader: type[JournalReader]) -> None:
    """The fuzz can fail: the recovery specimens that skip a corrupt record and
    that apply a torn tail each recover some damaged file of the fixed history
    to a state it never had. (``crc_only``, which replays an intact record out of
    place, needs whole frames moved: test_journal_corruption moves those.)"""
    data, states = rewritten_history()
    rng = random.Random("specimens")
    damages = itertools.chain(
        truncations(data), moved_ranges(data), single_bytes(data, sorted(rng.sample(range(len(data)), 100)), [0, 0xFF])
    )
    with pytest.raises(AssertionError, match="outside the history"):
        judge_all(damages, states, reader)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_every_single_byte_change_at_every_offset_is_refused_or_a_state_of_the_history(name: str) -> None:
    data, states = HISTORIES[name]()
    tally = judge_all(single_bytes(data, range(len(data)), range(256)), states)
    assert sum(tally.values()) == 255 * len(data)


@pytest.mark.slow
def test_random_histories_under_every_kind_of_byte_damage() -> None:
    """Twenty seeded random histories, each under every truncation, every moved
    range and a sample of single-byte changes."""
    rng = random.Random(20261130)
    for _ in range(20):
        data, states = random_history(rng)
        judge_all(truncations(data), states)
        judge_all(moved_ranges(data), states)
        offsets = rng.sample(range(len(data)), min(len(data), 100))
        judge_all(single_bytes(data, offsets, rng.sample(range(256), 8)), states)


# -- the whole open: cut back, upgrade, floor, and the next record -------------------------------


def reopened_after(disk: SimulatedDisk) -> State:
    buffer = open_durable_buffer(disk)
    try:
        return state_of(buffer)
    finally:
        journal = buffer.journal
        assert isinstance(journal, FileJournal)
        journal.close()


def test_opening_a_damaged_journal_refuses_untouched_or_recovers_for_good() -> None:
    """The reader is half of recovery; ``open_durable_buffer`` also cuts a torn
    tail back, writes a serial floor and appends after it. For every truncation
    and every moved range (1, 4 and 17 bytes) of the rewritten history, opening
    either refuses and leaves the file exactly as it was, or gives a state of the
    history that a second open gives again, and a splice made after it is what
    a third open finds."""
    data, states = rewritten_history()
    damages = itertools.chain(
        truncations(data),
        (damage for damage in moved_ranges(data) if damage[0].endswith(("+1", "+4", "+17"))),
    )
    tally = {"refused": 0, "history": 0}
    for label, damaged in damages:
        disk = SimulatedDisk()
        disk.replace_file(DEFAULT_NAME, damaged)
        try:
            buffer = open_durable_buffer(disk)
        except RecoveryError:
            assert disk.read(DEFAULT_NAME) == damaged, f"{label}: a refused open changed the file"
            tally["refused"] += 1
            continue
        opened = state_of(buffer)
        assert opened in states, f"{label}: opened a state outside the history: {opened}"
        journal = buffer.journal
        assert isinstance(journal, FileJournal)
        journal.close()
        assert reopened_after(disk) == opened, f"{label}: a second open found another state"
        buffer = open_durable_buffer(disk)
        buffer.splice(0, 0, b"after")
        after = state_of(buffer)
        journal = buffer.journal
        assert isinstance(journal, FileJournal)
        journal.close()
        assert reopened_after(disk) == after, f"{label}: the splice after recovery was not found again"
        tally["history"] += 1
    assert tally["refused"] > 3000 and tally["history"] > 300, tally  # 3,725 and 336 with these salts
