"""Record-level corruption of the durable journal (issue 12, R5).

A per-frame checksum says a record is intact, not that it is in its place.
These tests move whole, intact records — duplicate, drop, swap, copy in from
another journal — and craft records with valid checksums, and check that
recovery either refuses with ``RecoveryError`` (naming the byte offset) or, where
the damage is indistinguishable from a crash (the last record cut off), yields a
state of the history. Never a state outside it, never another exception. The
journals are reopened now and then, so they hold serial floor records (format
version 3) to move, drop and forge as well.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Callable

import pytest

from rollcert.impl.file_journal import FLOOR_FIELDS
from rollcert.impl.file_journal import FRAME
from rollcert.impl.file_journal import FRAME_V1
from rollcert.impl.file_journal import HEADER
from rollcert.impl.file_journal import SERIAL_BLOCK
from rollcert.impl.file_journal import SERIAL_FLOOR
from rollcert.impl.file_journal import SPLICE_FIELDS
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import chain_after
from rollcert.impl.file_journal import floor_payload
from rollcert.impl.file_journal import frame_spans
from rollcert.impl.file_journal import rollback_payload
from rollcert.impl.file_journal import splice_payload
from rollcert.impl.file_journal import start_chain
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import SimulatedDisk
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import RecoveryError
from rollcert.targets.adapters.durable import foreign_journal
from rollcert.targets.adapters.durable import record_level_corruption

#: A state of the history: its bytes and its revision (the depth is measured
#: from a horizon that compaction moves, so it is left out; the revision is not).
Seen = tuple[bytes, int]


def build(rng: random.Random, operations: int) -> tuple[bytes, set[Seen]]:
    """A journal of random splices, rollbacks, the odd compaction and the odd
    reopening (whose next splice writes a serial floor), and every state of its
    history."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 5))))
    history: set[Seen] = {(buffer.read(), buffer.revision)}
    for _ in range(operations):
        roll = rng.random()
        if rng.random() < 0.15:
            journal = buffer.journal
            assert isinstance(journal, FileJournal)
            journal.close()
            buffer = open_durable_buffer(disk)
        if buffer.depth and roll < 0.2:
            buffer.rollback(rng.randint(1, buffer.depth))
        elif buffer.depth and roll < 0.25:
            buffer.compact(rng.randint(0, buffer.depth))
        else:
            length = len(buffer)
            offset = rng.randint(0, length)
            buffer.splice(
                offset,
                rng.randint(0, min(2, length - offset)),
                bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 3))),
            )
        history.add((buffer.read(), buffer.revision))
    return disk.read(DEFAULT_NAME) or b"", history


def outcome(data: bytes) -> Seen | str:
    """What recovery makes of ``data``: the state, or 'refused'. Any other exception fails the test."""
    try:
        recovered = JournalReader().read(data)
    except RecoveryError:
        return "refused"
    return bytes(recovered.buffer), recovered.revision


def small_journal() -> tuple[bytes, set[Seen]]:
    """b"abc", then splice(3, 0, b"X"), splice(0, 1, b""), splice(1, 0, b"YZ")."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    history = {(buffer.read(), 0)}
    for edit in ((3, 0, b"X"), (0, 1, b""), (1, 0, b"YZ")):
        buffer.splice(*edit)
        history.add((buffer.read(), buffer.revision))
    return disk.read(DEFAULT_NAME) or b"", history


def reopened_journal() -> tuple[bytes, set[Seen]]:
    """b"abc", splice(3, 0, b"X"), closed and reopened, then splice(0, 0, b"Y")
    and splice(0, 1, b""): the base, a splice, a serial floor, two splices."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    history = {(buffer.read(), 0)}
    buffer.splice(3, 0, b"X")
    history.add((buffer.read(), buffer.revision))
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    journal.close()
    buffer = open_durable_buffer(disk)
    for edit in ((0, 0, b"Y"), (0, 1, b"")):
        buffer.splice(*edit)
        history.add((buffer.read(), buffer.revision))
    return disk.read(DEFAULT_NAME) or b"", history


# -- each kind, on every record, with the offset named -------------------------------------


@pytest.mark.parametrize("make", [small_journal, reopened_journal])
@pytest.mark.parametrize("kind", ["duplicate", "drop", "swap", "transplant"])
def test_every_record_out_of_place_is_refused_at_its_offset(
    kind: str, make: Callable[[], tuple[bytes, set[Seen]]]
) -> None:
    journal, history = make()
    spans = frame_spans(journal)
    foreign = foreign_journal()
    checked = 0
    for index in range(len(spans)):
        damaged = record_level_corruption(journal, kind, index, foreign)
        if damaged is None:
            continue
        if kind == "drop" and index == len(spans) - 1:
            # The last record cut off is what a crash before its write leaves: the state before it.
            assert outcome(damaged) in history
            continue
        with pytest.raises(RecoveryError) as refused:
            JournalReader().read(damaged)
        # The offset of the first frame that is not where it belongs.
        first_wrong = spans[index][0] if kind != "duplicate" else spans[index][1]
        assert str(refused.value).startswith(f"byte {first_wrong}:"), (index, str(refused.value))
        checked += 1
    assert checked >= 3


def test_the_issue_smallest_case_a_repeated_last_record_is_refused() -> None:
    """The issue's example: b"abc" + splice(3, 0, b"X"), then a copy of the last
    frame appended. Format 1 recovered b"abcXX" at depth 2."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    open_durable_buffer(disk, b"abc").splice(3, 0, b"X")
    journal = disk.read(DEFAULT_NAME) or b""
    start, end = frame_spans(journal)[-1]
    with pytest.raises(RecoveryError, match=rf"^byte {end}: expected record #2, found record #1"):
        JournalReader().read(journal + journal[start:end])


def test_a_record_of_an_older_generation_does_not_chain_after_compaction() -> None:
    """Compaction draws a new salt: a record from before it, put back at the same
    sequence number, does not chain into the new file."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    buffer.splice(0, 0, b"1")
    buffer.splice(0, 0, b"2")
    old = disk.read(DEFAULT_NAME) or b""
    buffer.compact(2)  # same records, new file, new salt
    new = disk.read(DEFAULT_NAME) or b""
    assert new[:HEADER.size] != old[:HEADER.size]
    old_start, old_end = frame_spans(old)[1]
    new_start, new_end = frame_spans(new)[1]
    damaged = new[:new_start] + old[old_start:old_end] + new[new_end:]
    assert damaged != new
    with pytest.raises(RecoveryError, match=rf"^byte {new_start}: record #1 is intact but does not chain"):
        JournalReader().read(damaged)


def test_a_record_with_a_valid_per_frame_checksum_but_no_chain_is_refused() -> None:
    """A record framed the way format 1 frames them (valid CRC of its own) does
    not parse as a chained frame: refused, never replayed."""
    journal, _ = small_journal()
    payload = splice_payload(InverseRecord(0, b"", 1, 50), b"Q")
    length = len(payload)
    v1_frame = FRAME_V1.pack(length, zlib.crc32(length.to_bytes(4, "little")), zlib.crc32(payload)) + payload
    assert outcome(journal + v1_frame + journal[-30:]) == "refused"


# -- fuzz: thousands of random corruptions -------------------------------------------------


def crafted_record(rng: random.Random, journal: bytes) -> bytes:
    """A record chained correctly (its writer knew the salt) whose content is
    random: it must be refused unless it fits, and if it fits it was written
    by someone with the right to write — so only its *refusal* path is judged
    here, by asking for a record that cannot fit."""
    choice = rng.randrange(9)
    if choice == 0:
        payload = splice_payload(InverseRecord(rng.randint(1000, 1 << 40), b"", 1, 1 << 50), b"x")
    elif choice == 1:
        payload = rollback_payload(rng.choice([0, 1 << 40, 1 << 63]))
    elif choice == 2:
        payload = splice_payload(InverseRecord(0, b"\xff\xfe\xfd", 0, 1 << 50), b"")  # removes bytes never there
    elif choice == 3:
        payload = splice_payload(InverseRecord(0, b"", 0, 0), b"")  # a serial from the past
    elif choice == 4:
        payload = SPLICE_FIELDS.pack(2, 1 << 50, 0, 1 << 60)  # claims more removed bytes than it holds
    elif choice == 5:
        payload = floor_payload(0)  # a floor below serials already used
    elif choice == 6:
        payload = floor_payload(SERIAL_BLOCK * rng.randint(1, 1 << 20) + rng.randint(1, SERIAL_BLOCK - 1))  # off a block
    elif choice == 7:
        payload = floor_payload(SERIAL_BLOCK * rng.randint(1, 1 << 20))[: rng.randrange(FLOOR_FIELDS.size)]  # cut short
    else:
        payload = bytes([rng.randint(SERIAL_FLOOR, 255)]) + bytes(rng.randrange(40))
    position = rng.choice([start for start, _ in frame_spans(journal)][1:] + [len(journal)])
    prefix = journal[:position]
    framed, _ = chain_after(prefix).frame(payload)
    return prefix + framed + journal[position:]


def random_corruption(rng: random.Random, journal: bytes, foreign: bytes) -> tuple[str, bytes]:
    kind = rng.choice(["duplicate", "drop", "swap", "transplant", "crafted", "crafted_v1", "splice_in"])
    spans = frame_spans(journal)
    if kind == "crafted":
        return kind, crafted_record(rng, journal)
    if kind == "crafted_v1":  # a valid per-frame CRC, format 1 framing, anywhere
        payload = splice_payload(InverseRecord(0, b"", 1, 1 << 50), b"v")
        framed = FRAME_V1.pack(len(payload), zlib.crc32(len(payload).to_bytes(4, "little")), zlib.crc32(payload))
        position = rng.choice([start for start, _ in spans] + [len(journal)])
        return kind, journal[:position] + framed + payload + journal[position:]
    if kind == "splice_in":  # a run of frames of another journal, over ours
        start = rng.choice([s for s, _ in spans])
        foreign_spans = frame_spans(foreign)
        first = rng.randrange(len(foreign_spans))
        run = foreign[foreign_spans[first][0] : foreign_spans[-1][1]]
        return kind, journal[:start] + run
    damaged = record_level_corruption(journal, kind, rng.randrange(len(spans)), foreign)
    return kind, damaged if damaged is not None else journal


def run_fuzz(cases: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    foreign = foreign_journal()
    tally: dict[str, int] = {}
    journals = [build(rng, rng.randint(1, 10)) for _ in range(40)]
    for _ in range(cases):
        journal, history = rng.choice(journals)
        kind, damaged = random_corruption(rng, journal, foreign)
        result = outcome(damaged)
        if result != "refused":
            assert result in history, f"{kind}: recovered {result}, a state outside the history"
        label = f"{kind}:{'refused' if result == 'refused' else 'history'}"
        tally[label] = tally.get(label, 0) + 1
    return tally


@pytest.mark.slow
def test_thousands_of_record_level_corruptions_never_leave_the_history() -> None:
    tally = run_fuzz(10_000, seed=12)
    refused = sum(count for label, count in tally.items() if label.endswith(":refused"))
    # Not vacuous: every kind was tried, and most damage is refused outright
    # (the rest is a drop of the last record: the state before it).
    for kind in ("duplicate", "drop", "swap", "transplant", "crafted", "crafted_v1", "splice_in"):
        assert tally.get(f"{kind}:refused", 0) > 50, tally
    assert refused > 8000, tally


@pytest.mark.slow
def test_many_more_record_level_corruptions_never_leave_the_history() -> None:
    tally = run_fuzz(60_000, seed=1212)
    assert sum(tally.values()) == 60_000


def test_recovery_is_not_fooled_by_a_header_of_another_journal() -> None:
    """Another journal's header over ours: the chain seeds from the header's
    checksum, so our first frame no longer chains."""
    journal, _ = small_journal()
    foreign = foreign_journal()
    damaged = foreign[: HEADER.size] + journal[HEADER.size :]
    with pytest.raises(RecoveryError, match=rf"^byte {HEADER.size}: record #0 is intact but does not chain"):
        JournalReader().read(damaged)
    assert struct.unpack_from("<Q", damaged, 12) != struct.unpack_from("<Q", journal, 12)


# -- the serial floor (format version 3) -----------------------------------------------------


def payloads(journal: bytes) -> list[bytes]:
    return [journal[start + FRAME.size : end] for start, end in frame_spans(journal)]


def rechained(header: bytes, records: list[bytes]) -> bytes:
    """A journal of ``records`` chained under ``header``: what a writer who knows
    the salt (and the format) can write, so only the record checks stand in its way."""
    chain = start_chain(header)
    parts = [header]
    for payload in records:
        framed, chain = chain.frame(payload)
        parts.append(framed)
    return b"".join(parts)


def with_version(header: bytes, version: int) -> bytes:
    """``header`` claiming another format version, its checksum recomputed."""
    head = bytearray(header[: HEADER.size - 4])
    struct.pack_into("<I", head, 8, version)
    return bytes(head) + zlib.crc32(bytes(head)).to_bytes(4, "little")


def open_on(journal: bytes) -> tuple[SimulatedDisk, JournaledBuffer]:
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    disk.replace_file(DEFAULT_NAME, journal)
    return disk, open_durable_buffer(disk)


def test_a_reopened_journal_hands_out_a_new_block_after_one_synced_floor() -> None:
    """Opening a journal writes and syncs one floor for the next block of
    serials; the splices after it are ordinary commits in it, and checkpoints
    taken before the reopening still name their states."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    buffer.splice(3, 0, b"X")
    token = buffer.checkpoint()
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    journal.close()
    calls = disk.io_events
    buffer = open_durable_buffer(disk)
    assert disk.io_events - calls == 2  # the floor: one write, one sync
    assert disk.durable_bytes(DEFAULT_NAME) == disk.read(DEFAULT_NAME)
    calls = disk.io_events
    buffer.splice(0, 0, b"Y")
    assert disk.io_events - calls == 2  # a splice costs what it did: one write, one sync
    assert buffer.checkpoint().serial == SERIAL_BLOCK
    buffer.splice(0, 0, b"Z")
    records = payloads(disk.read(DEFAULT_NAME) or b"")
    assert [payload[0] for payload in records] == [1, 2, SERIAL_FLOOR, 2, 2]  # one floor per open
    assert FLOOR_FIELDS.unpack_from(records[2]) == (SERIAL_FLOOR, SERIAL_BLOCK)
    assert JournalReader().read(disk.read(DEFAULT_NAME) or b"").next_serial == SERIAL_BLOCK + 2
    buffer.rollback_to(token)
    assert buffer.read() == b"abcX"


def test_a_floor_that_cannot_be_written_at_open_is_written_by_the_first_splice() -> None:
    """A full disk when the journal is opened, where the floor's write writes
    nothing: the open still recovers (nothing changed on disk), and the first
    splice carries the floor in its own write."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    open_durable_buffer(disk, b"abc").splice(3, 0, b"X")
    disk.crash()
    disk.restart()
    before = disk.read(DEFAULT_NAME)
    disk.fail_next("append", written=0)
    buffer = open_durable_buffer(disk)
    assert disk.read(DEFAULT_NAME) == before and buffer.read() == b"abcX"
    buffer.splice(0, 0, b"Y")
    assert buffer.checkpoint().serial == SERIAL_BLOCK
    records = payloads(disk.read(DEFAULT_NAME) or b"")
    assert [payload[0] for payload in records] == [1, 2, SERIAL_FLOOR, 2]
    assert disk.durable_bytes(DEFAULT_NAME) == disk.read(DEFAULT_NAME)  # synced with the splice, batched or not


def test_a_floor_whose_write_was_cut_back_at_open_poisons_the_journal() -> None:
    """The floor's write lands in part at open: it is cut back (the file is as
    it was), and the journal refuses every operation until it is reopened,
    as after any failed write; the reopen works."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    open_durable_buffer(disk, b"abc").splice(3, 0, b"X")
    disk.close()
    before = disk.read(DEFAULT_NAME)
    disk.fail_next("append", written=5)
    buffer = open_durable_buffer(disk)
    assert disk.read(DEFAULT_NAME) == before and buffer.read() == b"abcX"
    with pytest.raises(JournalPoisonedError, match="the write of the serial floor failed"):
        buffer.splice(0, 0, b"Y")
    disk.close()
    assert disk.read(DEFAULT_NAME) == before
    buffer = open_durable_buffer(disk)
    buffer.splice(0, 0, b"Y")
    assert buffer.read() == b"YabcX"


@pytest.mark.parametrize(
    ("floor", "reason"),
    [
        (floor_payload(0), "serial floor record names serial 0"),
        (floor_payload(1), "serial floor record names serial 1"),
        (floor_payload(SERIAL_BLOCK + 1), "expected a multiple"),
        (floor_payload(SERIAL_BLOCK)[:-1], "malformed record"),
        (floor_payload(SERIAL_BLOCK) + b"\0", "malformed record"),
    ],
)
def test_a_floor_that_does_not_fit_is_refused_at_its_offset(floor: bytes, reason: str) -> None:
    journal, _ = reopened_journal()
    records = payloads(journal)
    assert records[2][0] == SERIAL_FLOOR
    damaged = rechained(journal[: HEADER.size], records[:2] + [floor] + records[3:])
    with pytest.raises(RecoveryError, match=rf"^byte {frame_spans(damaged)[2][0]}: .*{reason}"):
        JournalReader().read(damaged)


def test_a_floor_among_the_records_of_a_rewrite_is_refused() -> None:
    """A compaction writes its kept records right after the base, and no floor
    (its base names the next serial)."""
    from rollcert.impl.file_journal import DEFAULT_NAME
    from rollcert.impl.file_journal import open_durable_buffer

    disk = SimulatedDisk()
    buffer = open_durable_buffer(disk, b"abc")
    buffer.splice(0, 0, b"1")
    buffer.splice(0, 0, b"2")
    buffer.compact(2)
    journal = disk.read(DEFAULT_NAME) or b""
    records = payloads(journal)
    damaged = rechained(journal[: HEADER.size], records[:2] + [floor_payload(SERIAL_BLOCK)] + records[2:])
    with pytest.raises(RecoveryError, match=rf"^byte {frame_spans(damaged)[2][0]}: a serial floor record among"):
        JournalReader().read(damaged)


def test_a_floor_in_a_version_2_journal_is_refused() -> None:
    journal, _ = reopened_journal()
    damaged = rechained(with_version(journal[: HEADER.size], 2), payloads(journal))
    with pytest.raises(RecoveryError, match=r"malformed record .* in a version 2 journal"):
        JournalReader().read(damaged)


def test_a_version_2_journal_is_rewritten_as_version_3_with_the_next_block_in_its_base() -> None:
    """A journal an older build wrote: recovered as it was, rewritten once
    (atomically) as version 3, and its serials go on from a new block with no
    floor record (the rewrite's base names it)."""
    from rollcert.impl.file_journal import BASE_FIELDS
    from rollcert.impl.file_journal import DEFAULT_NAME

    journal, history = small_journal()
    old = rechained(with_version(journal[: HEADER.size], 2), payloads(journal))
    assert JournalReader().read(old).version == 2
    disk, buffer = open_on(old)
    upgraded = disk.read(DEFAULT_NAME) or b""
    assert struct.unpack_from("<I", upgraded, 8) == (3,)
    assert (buffer.read(), buffer.revision) == outcome(old) and outcome(old) in history
    assert BASE_FIELDS.unpack_from(payloads(upgraded)[0])[2] == SERIAL_BLOCK  # the next serial
    assert disk.durable_bytes(DEFAULT_NAME) == upgraded
    buffer.splice(0, 0, b"Q")
    assert buffer.checkpoint().serial == SERIAL_BLOCK
    assert [payload[0] for payload in payloads(disk.read(DEFAULT_NAME) or b"")][-1] == 2  # no floor needed
    buffer.rollback(buffer.depth)
    assert buffer.read() == b"abc"
