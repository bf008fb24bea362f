"""Measure SPEC §7's in-memory and durable targets as ratios against same-run baselines.

Usage (from the repository root)::

    python -m benchmarks.run            # thorough, a few minutes at most
    python -m benchmarks.run --quick    # CI: small repetition counts, well under 60 s
    python benchmarks/run.py --json /tmp/bench.json --sizes 1024,4194304

Prints a table (row, size, impl µs, baseline, baseline µs, ratio, target, met?)
and writes every number to a JSON file (``--json``, default
``benchmarks/last-run.json``). Nothing here asserts a timing.

Method: every µs-scale operation runs in a tight loop over a pre-generated list
of random offsets (the same list for every implementation at a given size),
timed with ``time.perf_counter_ns`` around the whole batch, with the garbage
collector off (as ``timeit`` does). The cost of the empty loop over the same
list is measured the same way and subtracted. The cases compared in a row are
*interleaved*: each round times one batch of every case back to back, after one
untimed warm-up round, so that a noisy neighbour on a shared machine hits both
sides alike. ``impl us`` and ``baseline us`` are medians over the rounds; the
ratio is the median of the per-round ratios (so it is not always exactly their
quotient). Beside the median every row reports a low percentile (p10) of each
side and their ratio: a batch preempted by a neighbour is slow, never fast, so
the low percentile is the least-disturbed estimate, and where it and the median
disagree about a target the row says so. Batches are short (a few thousand
operations) and many, so one preemption spoils one sample, not the median.
The seed's rollback scan is timed per call. Durable commits (the file journal,
``os.write`` + ``os.fsync``, and SQLite with and without the blob edit) are
interleaved batch by batch like everything else: fsync latency on a shared
disk drifts several-fold within a minute.

Besides time, the run measures the in-memory journal's bytes per record with
``tracemalloc`` (after a million small splices in thorough mode), and, in
thorough mode (or with ``--machines``), the certification's steps per second
against the plain Hypothesis machine (``benchmarks.plain_machine.throughput``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import math
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``impl`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.baselines import FsyncRecordFile
from benchmarks.baselines import SeedLikeBuffer
from benchmarks.baselines import SQLiteEditStore
from benchmarks.baselines import encode_record
from benchmarks.issue_rows import WHY_MISSED
from benchmarks.issue_rows import value_row
from rollcert.impl import JournaledBuffer
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import RealDirectory

KiB = 1024
MiB = 1024 * KiB
DEFAULT_SIZES: tuple[int, ...] = (1 * KiB, 64 * KiB, 1 * MiB, 4 * MiB)
EDIT = 8  # bytes replaced / inserted / deleted per splice
INSERT = b"ABCDEFGH"
#: Tolerance for "independent of size" (issue 16: within 1.2x from 1 KiB to 16 MiB).
SIZE_INDEPENDENCE_TOLERANCE = 1.2
#: The largest buffer of the size-independence rows.
INDEPENDENCE_SIZE = 16 * MiB
#: Issue 16: bytes of bookkeeping per journal record, besides the removed bytes.
RECORD_OVERHEAD_LIMIT = 64
DEFAULT_JSON = Path(__file__).resolve().parent / "last-run.json"


@dataclass(frozen=True)
class Config:
    mode: str
    #: Operations per timed batch for µs-scale operations.
    ops: int
    #: Timed batches (the median is reported); one untimed warm-up batch precedes them.
    batches: int
    #: Seed rollback scans timed at 1 KiB, and at 64 KiB.
    seed_rollbacks_small: int
    seed_rollbacks_64k: int
    #: Time one worst-case seed rollback at 4 MiB (~4 s) instead of extrapolating.
    seed_worst_4mib_measured: bool
    #: Commits per durable batch, and durable batches.
    durable_ops: int
    durable_batches: int
    sizes: tuple[int, ...] = field(default=DEFAULT_SIZES)
    #: Small splices whose journal records tracemalloc weighs.
    memory_records: int = 100_000
    #: Seeds of the steps-per-second comparison with the plain machine (0: skipped).
    machine_seeds: int = 0
    #: The large side of the rollback(1) size-independence rows (the small side is
    #: the smallest of ``sizes``).
    independence_size: int = INDEPENDENCE_SIZE


QUICK = Config(
    "quick",
    ops=1000,
    batches=9,
    seed_rollbacks_small=20,
    seed_rollbacks_64k=3,
    seed_worst_4mib_measured=False,
    durable_ops=10,
    durable_batches=7,
    memory_records=100_000,
)
THOROUGH = Config(
    "thorough",
    ops=4000,
    batches=21,
    seed_rollbacks_small=200,
    seed_rollbacks_64k=20,
    seed_worst_4mib_measured=True,
    durable_ops=25,
    durable_batches=15,
    memory_records=1_000_000,
    machine_seeds=4,
)


# -- inputs ----------------------------------------------------------------------


def make_data(size: int) -> bytes:
    return random.Random(size).randbytes(size)


def make_offsets(size: int, count: int, *, span: int = EDIT) -> list[int]:
    """Random offsets where an edit of ``span`` bytes fits; the same list for every implementation."""
    rng = random.Random(f"offsets-{size}-{span}")
    return [rng.randrange(0, size - span + 1) for _ in range(count)]


# -- timing harness --------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> int:
    """Run ``fn`` once with the collector off; its wall time in ns."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        fn()
        return time.perf_counter_ns() - start
    finally:
        if enabled:
            gc.enable()


def _empty_loop(offsets: Sequence[object]) -> None:
    for _ in offsets:
        pass


def loop_overhead_ns(offsets: Sequence[object], batches: int) -> float:
    """Per-iteration cost of the bare ``for`` loop the measurements use."""
    _empty_loop(offsets)
    return statistics.median(_timed(lambda: _empty_loop(offsets)) for _ in range(batches)) / len(offsets)


@dataclass
class Case:
    """One timed loop: ``batch`` runs ``iterations`` loop iterations of ``ops_per_iteration`` operations.

    ``reset`` runs untimed before every batch (e.g. to empty a growing journal
    or to make the records a rollback batch undoes).
    """

    batch: Callable[[], object]
    iterations: int
    ops_per_iteration: int = 1
    reset: Callable[[], object] | None = None


@dataclass
class Timing:
    """ns per operation, loop overhead subtracted, one sample per round."""

    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def p10(self) -> float:
        return low_percentile(self.samples)


def low_percentile(samples: Sequence[float], fraction: float = 0.1) -> float:
    """The nearest-rank percentile: with 9 samples the best, with 21 the third best."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def measure_interleaved(
    cases: dict[str, Case], batches: int, overhead_per_iteration: float
) -> dict[str, Timing]:
    """Time every case once per round, round after round, so that all cases see the same
    machine conditions (this box is shared: other processes come and go). One untimed
    warm-up round first."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(batches + 1):
        for name, case in cases.items():
            if case.reset is not None:
                case.reset()
            elapsed = _timed(case.batch)
            if round_:
                per_op = (elapsed / case.iterations - overhead_per_iteration) / case.ops_per_iteration
                samples[name].append(max(per_op, 1.0))
    return {name: Timing(values) for name, values in samples.items()}


def ratio_of(a: Timing, b: Timing) -> float:
    """Median of the per-round ratios a/b (both timed back to back in each round)."""
    return statistics.median(x / y for x, y in zip(a.samples, b.samples, strict=True))


def measure_one(case: Case, batches: int, overhead_per_iteration: float) -> float:
    return measure_interleaved({"case": case}, batches, overhead_per_iteration)["case"].median


# -- µs-scale cases ------------------------------------------------------------------


def impl_same_length_pair(size: int, offsets: list[int]) -> Case:
    """One same-length splice and its rollback(1) on ``JournaledBuffer`` (strict R4 is always on)."""
    buf = JournaledBuffer(make_data(size))
    splice, rollback = buf.splice, buf.rollback

    def batch() -> None:
        for o in offsets:
            splice(o, EDIT, INSERT)
            rollback(1)

    return Case(batch, len(offsets))


def impl_same_length_splice(size: int, offsets: list[int]) -> Case:
    """A same-length splice alone (the journal grows; it is emptied untimed between batches)."""
    buf = JournaledBuffer(make_data(size))
    splice = buf.splice

    def batch() -> None:
        for o in offsets:
            splice(o, EDIT, INSERT)

    return Case(batch, len(offsets), reset=buf.adopt_current)


def seed_same_length_splice(size: int, offsets: list[int]) -> Case:
    """The seed's splice: two sha256 anchors, a record, a flat splice."""
    buf = SeedLikeBuffer(make_data(size))
    splice = buf.splice

    def batch() -> None:
        for o in offsets:
            splice(o, EDIT, INSERT)

    return Case(batch, len(offsets), reset=buf.records.clear)


def bytearray_same_length(size: int, offsets: list[int]) -> Case:
    buf = bytearray(make_data(size))

    def batch() -> None:
        for o in offsets:
            buf[o : o + EDIT] = INSERT

    return Case(batch, len(offsets))


def _insert_delete_pairs(size: int, offsets: list[int]) -> list[tuple[int, int]]:
    """(insert-at, delete-at) pairs; after the insert the buffer is ``size + EDIT`` long."""
    deletes = make_offsets(size + EDIT, len(offsets))
    return [(min(o, size), d) for o, d in zip(offsets, deletes, strict=True)]


def impl_length_changing(size: int, offsets: list[int]) -> Case:
    """An 8-byte insert then an 8-byte delete elsewhere (so the size stays put): two splices."""
    buf = JournaledBuffer(make_data(size))
    splice = buf.splice
    pairs = _insert_delete_pairs(size, offsets)

    def batch() -> None:
        for ins, dele in pairs:
            splice(ins, 0, INSERT)
            splice(dele, EDIT, b"")

    return Case(batch, len(pairs), ops_per_iteration=2, reset=buf.adopt_current)


def bytearray_length_changing(size: int, offsets: list[int]) -> Case:
    buf = bytearray(make_data(size))
    pairs = _insert_delete_pairs(size, offsets)

    def batch() -> None:
        for ins, dele in pairs:
            buf[ins:ins] = INSERT
            buf[dele : dele + EDIT] = b""

    return Case(batch, len(pairs), ops_per_iteration=2)


def impl_rollback(size: int, offsets: list[int], *, kind: str = "same-length") -> Case:
    """rollback(1) alone: ``len(offsets)`` splices are made untimed, then undone one call at a time.

    ``kind`` is the record undone: ``"same-length"`` (8 for 8) or ``"insert"``
    (undoing an 8-byte insert is a length-changing write).
    """
    if kind not in ("same-length", "insert"):
        raise ValueError(f"unknown kind {kind!r}")
    buf = JournaledBuffer(make_data(size))
    splice, rollback = buf.splice, buf.rollback
    delete = EDIT if kind == "same-length" else 0

    def prepare() -> None:
        for o in offsets:
            splice(o, delete, INSERT)

    def batch() -> None:
        for _ in offsets:
            rollback(1)

    return Case(batch, len(offsets), reset=prepare)


# -- the seed's rollback scan (ms-scale, timed per call) ---------------------------


@dataclass
class ScanResult:
    median_ns: float
    ns_per_byte_scanned: float
    rollbacks: int


def seed_rollback(size: int, offsets: list[int]) -> ScanResult:
    """Seed rollback(1) after one same-length splice at each offset; the scan walks ~offset positions."""
    buf = SeedLikeBuffer(make_data(size))
    times, per_byte = [], []
    for o in offsets:
        buf.splice(o, EDIT, INSERT)
        elapsed = _timed(lambda: buf.rollback(1))
        times.append(elapsed)
        per_byte.append(elapsed / (o + 1))
    return ScanResult(statistics.median(times), statistics.median(per_byte), len(offsets))


def seed_rollback_worst_ns(size: int) -> float:
    """One seed rollback(1) of an edit at the very end: the scan visits every position."""
    buf = SeedLikeBuffer(make_data(size))
    buf.splice(size - EDIT, EDIT, INSERT)
    return float(_timed(lambda: buf.rollback(1)))


# -- durable baselines (ms-scale, timed per call) -----------------------------------


def durable_interleaved(
    directory: str, size: int, offsets: list[int], ops: int, batches: int, *, record_only: bool = False
) -> dict[str, Timing]:
    """ns per commit of every durable case at ``size``, *interleaved* batch by batch
    (one batch of each per round, after one warm-up commit of each): the file
    journal's same-length splice, ``os.write`` + ``os.fsync`` of a 32-byte record,
    SQLite with the record and the blob edit, and (``record_only``) SQLite with the
    record alone. fsync latency drifts several-fold within a minute here, so
    cases timed apart are not comparable."""
    journal_dir = os.path.join(directory, f"durable-{size}")
    storage = RealDirectory(journal_dir)
    buffer = open_durable_buffer(storage, make_data(size))
    fsync_file = FsyncRecordFile(os.path.join(directory, f"fsync-{size}.log"))
    stores = {"sqlite_blob": SQLiteEditStore(os.path.join(directory, f"sqlite-{size}-blob.db"), make_data(size))}
    if record_only:
        stores["sqlite_record"] = SQLiteEditStore(
            os.path.join(directory, f"sqlite-{size}-record.db"), make_data(size), store_buffer=False
        )
    removed = b"\x00" * EDIT
    counter = [0]

    def next_offset() -> int:
        counter[0] += 1
        return offsets[counter[0] % len(offsets)]

    commits: dict[str, Callable[[], object]] = {
        "impl": lambda: buffer.splice(next_offset(), EDIT, INSERT),
        "fsync": lambda: fsync_file.commit(encode_record(next_offset(), removed, EDIT, counter[0])),
        **{name: (lambda store=store: store.splice_same_length(next_offset(), INSERT)) for name, store in stores.items()},
    }
    samples: dict[str, list[float]] = {name: [] for name in commits}
    try:
        for commit in commits.values():
            commit()  # warm-up
        for _ in range(batches):
            for name, commit in commits.items():
                start = time.perf_counter_ns()
                for _ in range(ops):
                    commit()
                samples[name].append((time.perf_counter_ns() - start) / ops)
    finally:
        fsync_file.close()
        for store in stores.values():
            store.close()
        storage.close()
        shutil.rmtree(journal_dir, ignore_errors=True)
    return {name: Timing(values) for name, values in samples.items()}


# -- memory -----------------------------------------------------------------------


def journal_bytes_per_record(records: int, *, tuple_records: bool = False) -> float:
    """tracemalloc's bytes per journal record, *besides* the 8 removed bytes, after
    ``records`` same-length 8-byte splices on a 64 KiB buffer. With
    ``tuple_records`` the same records are kept the way the journal kept them
    before issue 16, a deque of ``InverseRecord`` tuples: the baseline."""
    import tracemalloc
    from collections import deque

    from rollcert.impl.journal import InverseRecord

    size = 64 * KiB
    offsets = make_offsets(size, 4096)
    data = make_data(size)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        if tuple_records:
            kept: deque[InverseRecord] = deque()
            for i in range(records):
                o = offsets[i % 4096]
                kept.append(InverseRecord(o, data[o : o + EDIT], EDIT, i + 1))
        else:
            buffer = JournaledBuffer(data)
            for i in range(records):
                buffer.splice(offsets[i % 4096], EDIT, INSERT)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (after - before) / records - EDIT


# -- the run ----------------------------------------------------------------------


def _size_label(size: int) -> str:
    return f"{size // MiB} MiB" if size >= MiB else f"{size // KiB} KiB"


def _row(
    name: str,
    size: int | None,
    impl: Timing | None,
    baseline: str,
    base: Timing | float | None,
    target: str,
    limit: float | None,
    note: str = "",
) -> dict[str, object]:
    """A table row; with two timings, the ratio is the median of per-round ratios."""
    base_ns = base.median if isinstance(base, Timing) else base
    if impl is None or base_ns is None:
        ratio = None
    elif isinstance(base, Timing):
        ratio = ratio_of(impl, base)
    else:
        ratio = impl.median / base_ns
    if impl is None or base_ns is None:
        ratio_best = ratio_p10 = None
    elif isinstance(base, Timing):
        ratio_best = impl.best / base.best
        ratio_p10 = impl.p10 / base.p10
    else:
        ratio_best = impl.best / base_ns
        ratio_p10 = impl.p10 / base_ns
    if impl is None:
        met = "not measured"
    elif limit is None:
        met = "info"
    else:
        met = "yes" if ratio is not None and ratio <= limit else "NO"
        if ratio_p10 is not None and (ratio_p10 <= limit) != (met == "yes"):
            met += " (p10 disagrees)"
        if met.startswith("NO") and name in WHY_MISSED:
            note = f"{note}; " if note else ""
            note += f"missed because: {WHY_MISSED[name]}"
    return {
        "row": name,
        "size": size,
        "size_label": _size_label(size) if size else "-",
        "impl_us": None if impl is None else impl.median / 1000,
        "impl_best_us": None if impl is None else impl.best / 1000,
        "impl_p10_us": None if impl is None else impl.p10 / 1000,
        "baseline": baseline,
        "baseline_us": None if base_ns is None else base_ns / 1000,
        "baseline_best_us": base.best / 1000 if isinstance(base, Timing) else None,
        "baseline_p10_us": base.p10 / 1000 if isinstance(base, Timing) else None,
        "ratio": ratio,
        "ratio_best": ratio_best,
        "ratio_p10": ratio_p10,
        "target": target,
        "limit": limit,
        "met": met,
        "note": note,
    }


def _memory_row(packed: float, tuples: float, records: int) -> dict[str, object]:
    """Bytes per record (not µs): the packed journal against tuple records, and the limit."""
    return value_row(
        "journal bytes/record (overhead)",
        f"{records:,} rec",
        packed,
        "deque of tuple records (bytes)",
        tuples,
        f"<= {RECORD_OVERHEAD_LIMIT} bytes",
        packed <= RECORD_OVERHEAD_LIMIT,
        "bytes, not us: tracemalloc after that many 8-byte same-length splices, minus the 8 removed bytes",
        limit=RECORD_OVERHEAD_LIMIT,
    )


def _machine_row(property_id: str, rate: dict[str, Any]) -> dict[str, object]:
    """Steps per second (not µs): rollcert's quick run against the plain machine."""
    ratio = rate["ratio_median_of_pairs"]
    return value_row(
        f"certification steps/s, {property_id}",
        "-",
        rate["rollcert_steps_per_second"],
        "plain Hypothesis machine (steps/s)",
        rate["plain_steps_per_second"],
        ">= 1.0x plain",
        ratio >= 1.0,
        "steps per CPU second, not us; ratio = rollcert/plain (higher is better), median of seed pairs; "
        "ratio(p10) column shows the worst pair",
        limit=1.0,
        ratio=ratio,
        ratio_low=rate["ratio_min_of_pairs"],
    )


def _durable_directory(requested: str | None) -> str:
    base = requested or tempfile.gettempdir()
    return tempfile.mkdtemp(prefix="rollcert-bench-", dir=base)


def _filesystem_type(path: str) -> str:
    """Best effort (Linux): the filesystem type holding ``path``; fsync on tmpfs proves nothing."""
    try:
        best, fstype = "", "unknown"
        with open("/proc/mounts") as mounts:
            for line in mounts:
                parts = line.split()
                if (
                    len(parts) >= 3
                    and os.path.realpath(path).startswith(parts[1])
                    and len(parts[1]) > len(best)
                ):
                    best, fstype = parts[1], parts[2]
        return fstype
    except OSError:
        return "unknown"


def run(config: Config, *, durable_dir: str | None = None, log: Callable[[str], object] = print) -> dict:
    """Run every measurement; return the rows and raw numbers (JSON-serialisable)."""
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    raw: dict[str, dict[str, object]] = {}  # JSON: per size, then extras
    ops, batches = config.ops, config.batches
    small, large = min(config.sizes), max(config.sizes)

    seed_scan: dict[int, ScanResult] = {}
    for size in config.sizes:
        log(f"  in-memory, {_size_label(size)} ...")
        offsets = make_offsets(size, ops)
        overhead = loop_overhead_ns(offsets, batches)
        t = measure_interleaved(
            {
                "impl_pair": impl_same_length_pair(size, offsets),
                "impl_splice": impl_same_length_splice(size, offsets),
                "seed_splice": seed_same_length_splice(size, offsets),
                "bytearray_splice": bytearray_same_length(size, offsets),
                "impl_length_changing": impl_length_changing(size, offsets),
                "bytearray_length_changing": bytearray_length_changing(size, offsets),
                "impl_rollback_same_length": impl_rollback(size, offsets),
                "impl_rollback_insert": impl_rollback(size, offsets, kind="insert"),
            },
            batches,
            overhead,
        )
        raw[str(size)] = {
            "loop_overhead_ns": overhead,
            **{name: timing.samples for name, timing in t.items()},
        }
        if size <= 64 * KiB:
            count = config.seed_rollbacks_small if size <= 4 * KiB else config.seed_rollbacks_64k
            scan = seed_rollback(size, make_offsets(size, count))
            seed_scan[size] = scan
            raw[str(size)]["seed_rollback"] = asdict(scan)

        rows.append(
            _row(
                "same-len splice+rollback(1)",
                size,
                t["impl_pair"],
                "seed splice",
                t["seed_splice"],
                "<= 1.0x seed splice",
                1.0,
            )
        )
        rows.append(
            _row("same-len splice alone", size, t["impl_splice"], "seed splice", t["seed_splice"], "-", None)
        )
        rows.append(
            _row(
                "same-len splice alone", size, t["impl_splice"], "bytearray", t["bytearray_splice"], "-", None
            )
        )
        impl_at_largest = t["impl_rollback_same_length"]
        at_largest = size == 4 * MiB
        rows.append(
            _row(
                "len-changing splice (+8/-8)",
                size,
                t["impl_length_changing"],
                "bytearray",
                t["bytearray_length_changing"],
                "<= 1.0x bytearray" if at_largest else "- (target at 4 MiB)",
                1.0 if at_largest else None,
            )
        )
        if size in seed_scan:
            s = seed_scan[size]
            rows.append(
                _row(
                    "rollback(1)",
                    size,
                    t["impl_rollback_same_length"],
                    "seed rollback scan",
                    s.median_ns,
                    "-",
                    None,
                    f"seed measured: {s.rollbacks} random offsets, "
                    f"{s.ns_per_byte_scanned / 1000:.3f} us/byte scanned",
                )
            )

    # Size independence of rollback(1): the smallest size and 16 MiB, interleaved.
    independent = config.independence_size
    if small != independent:
        log(f"  rollback(1) at {_size_label(small)} vs {_size_label(independent)} ...")
        offsets_small, offsets_large = make_offsets(small, ops), make_offsets(independent, ops)
        overhead = loop_overhead_ns(offsets_small, batches)
        t = measure_interleaved(
            {
                "same-length small": impl_rollback(small, offsets_small),
                "same-length large": impl_rollback(independent, offsets_large),
                "insert small": impl_rollback(small, offsets_small, kind="insert"),
                "insert large": impl_rollback(independent, offsets_large, kind="insert"),
            },
            batches,
            overhead,
        )
        raw["rollback_size_independence"] = {name: timing.samples for name, timing in t.items()}
        for kind in ("same-length", "insert"):
            rows.append(
                _row(
                    f"rollback(1) {kind}, {_size_label(independent)} vs {_size_label(small)}",
                    independent,
                    t[f"{kind} large"],
                    f"impl at {_size_label(small)}",
                    t[f"{kind} small"],
                    f"~1 (<= {SIZE_INDEPENDENCE_TOLERANCE}x)",
                    SIZE_INDEPENDENCE_TOLERANCE,
                )
            )
    # The seed's worst case at the largest size: measured once, or extrapolated.
    if small != large:
        impl_rollback_large = impl_at_largest
        if seed_scan and large > 64 * KiB:
            per_byte = statistics.median(s.ns_per_byte_scanned for s in seed_scan.values())
            if config.seed_worst_4mib_measured:
                log(f"  seed rollback worst case at {_size_label(large)} (one full scan, a few seconds) ...")
                worst = seed_rollback_worst_ns(large)
                how = "seed measured once (edit at the end: full scan)"
            else:
                worst = per_byte * large
                how = f"seed extrapolated: {per_byte / 1000:.3f} us/byte x {large} bytes"
            raw["seed_rollback_worst"] = {
                "size": large,
                "ns": worst,
                "measured": config.seed_worst_4mib_measured,
                "ns_per_byte_from_small": per_byte,
            }
            rows.append(
                _row(
                    "rollback(1) worst case",
                    large,
                    impl_rollback_large,
                    "seed rollback scan",
                    worst,
                    "-",
                    None,
                    how,
                )
            )

    # Durable commits: the file journal, write+fsync of a record and SQLite, interleaved.
    directory = _durable_directory(durable_dir)
    fstype = _filesystem_type(directory)
    try:
        log(f"  durable commits in {directory} ({fstype}), interleaved ...")
        raw["durable"] = {"directory_fs": fstype}
        for size in config.sizes:
            d = durable_interleaved(
                directory,
                size,
                make_offsets(size, 997),
                config.durable_ops,
                config.durable_batches,
                record_only=size == small,
            )
            raw["durable"][str(size)] = {name: timing.samples for name, timing in d.items()}
            rows.append(
                _row("durable commit", size, d["impl"], "write+fsync (32 B record)", d["fsync"], "<= 1.3x write+fsync", 1.3)
            )
            rows.append(
                _row("durable commit", size, d["impl"], "SQLite (record + blob edit)", d["sqlite_blob"], "< 1.0x SQLite", 1.0)
            )
            if "sqlite_record" in d:
                rows.append(
                    _row("durable commit", size, d["impl"], "SQLite (record only)", d["sqlite_record"], "< 1.0x SQLite", 1.0)
                )
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    # Memory: bytes of bookkeeping per journal record, besides the removed bytes.
    log(f"  journal memory, {config.memory_records:,} records (tracemalloc) ...")
    packed = journal_bytes_per_record(config.memory_records)
    tuples = journal_bytes_per_record(config.memory_records, tuple_records=True)
    raw["memory"] = {"records": config.memory_records, "packed_overhead_bytes": packed, "tuple_overhead_bytes": tuples}
    rows.append(_memory_row(packed, tuples, config.memory_records))

    # Certification speed: steps per second against the plain Hypothesis machine.
    if config.machine_seeds:
        log(f"  steps per second, rollcert vs the plain machine, {config.machine_seeds} seed(s) per property ...")
        from benchmarks.plain_machine import throughput

        rates = throughput(config.machine_seeds, progress=False)
        raw["machines"] = rates
        for property_id, rate in rates.items():
            rows.append(_machine_row(property_id, rate))

    return {
        "meta": {
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "mode": config.mode,
            "config": asdict(config),
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "durable_fs": fstype,
            "elapsed_s": round(time.perf_counter() - started, 2),
            "units": "microseconds per operation (median of batches)",
        },
        "rows": rows,
        "raw_ns": raw,
    }


def add_issue_rows(results: dict, *, suite_seeds: int, log: Callable[[str], object] = print) -> None:
    """Append issue 16's rows that are not microseconds (``benchmarks.issue_rows``)."""
    from benchmarks import issue_rows

    started = time.perf_counter()
    measurements: list[tuple[str, Callable[[], tuple[list[dict[str, object]], dict[str, Any]]]]] = [
        ("buffer memory", issue_rows.buffer_memory_rows),
        (f"specimen suite, {suite_seeds} seeds", lambda: issue_rows.suite_rows(suite_seeds)),
        ("thorough profile, every property, one process", issue_rows.thorough_rows),
        ("fast test tier", issue_rows.test_tier_rows),
    ]
    for label, measure in measurements:
        log(f"  {label} ...")
        rows, raw = measure()
        results["rows"].extend(rows)
        results["raw_ns"][label] = raw
    results["meta"]["issue_rows_elapsed_s"] = round(time.perf_counter() - started, 2)


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.1f}"
    return f"{value:.{digits}f}"


def format_table(results: dict) -> str:
    header = ("row", "size", "impl us", "p10", "baseline", "baseline us", "p10", "ratio", "ratio(p10)", "target", "met?")
    lines = [
        (
            r["row"],
            r["size_label"],
            _fmt(r["impl_us"]) if r["impl_us"] is not None else "not measured",
            _fmt(r.get("impl_p10_us")),
            r["baseline"],
            _fmt(r["baseline_us"]),
            _fmt(r.get("baseline_p10_us")),
            "-" if r["ratio"] is None else f"{r['ratio']:.3g}x",
            "-" if r.get("ratio_p10") is None else f"{r['ratio_p10']:.3g}x",
            r["target"],
            r["met"],
        )
        for r in results["rows"]
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=False)]
    out = []
    for i, line in enumerate([header, *lines]):
        out.append("  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    notes = [f"  [{r['row']} {r['size_label']}] {r['note']}" for r in results["rows"] if r["note"]]
    if notes:
        out.append("notes:")
        out.extend(notes)
    return "\n".join(out)


#: The generated region of a Markdown file (``--markdown``); the rest of the file is kept.
MARK_BEGIN = "<!-- benchmarks.run: generated table, begin -->"
MARK_END = "<!-- benchmarks.run: generated table, end -->"


def write_markdown(results: dict, path: Path) -> None:
    """Replace the region between ``MARK_BEGIN`` and ``MARK_END`` of ``path`` with this
    run's table (appending the region if the file has none); nothing else is touched,
    so sections written by hand or by other benchmarks stay."""
    meta = results["meta"]
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    region = "\n".join(
        [
            MARK_BEGIN,
            f"Run {meta['date']}, {meta['mode']} mode, {meta['elapsed_s']} s, CPython {meta['python']}, "
            f"{meta['cpus']} CPUs, durable files on {meta['durable_fs']}"
            + (f", load average {load[0]:.1f} at the end" if load else "")
            + ". µs per operation unless the row says otherwise.",
            "",
            "```",
            format_table(results),
            "```",
            MARK_END,
        ]
    )
    text = path.read_text() if path.exists() else ""
    if MARK_BEGIN in text and MARK_END in text:
        before, rest = text.split(MARK_BEGIN, 1)
        after = rest.split(MARK_END, 1)[1]
        text = before + region + after
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + "\n" + region + "\n"
    path.write_text(text)


def parse_sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part) for part in text.split(",") if part.strip())
    if not sizes or any(s < 64 for s in sizes):
        raise argparse.ArgumentTypeError("sizes are byte counts >= 64, comma-separated")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small repetition counts (CI, < 60 s)")
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help=f"where to write results (default {DEFAULT_JSON})"
    )
    parser.add_argument(
        "--sizes", type=parse_sizes, default=None, help="buffer sizes in bytes, comma-separated"
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        default=None,
        help="also write the table into this Markdown file, between its generated-table markers",
    )
    parser.add_argument(
        "--machines",
        action="store_true",
        help="also measure certification steps/s against the plain machine (thorough does by default)",
    )
    parser.add_argument(
        "--issue-rows",
        action="store_true",
        help="also measure issue 16's other rows: the thorough run of every property (about 10 min), "
        "the specimen suite over --suite-seeds seeds, the fast test tier and the buffer's memory",
    )
    parser.add_argument("--suite-seeds", type=int, default=10, help="seeds per specimen for --issue-rows (default 10)")
    parser.add_argument(
        "--durable-dir",
        default=None,
        help="directory on the disk to test fsync/SQLite on (default: the system temp dir)",
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else THOROUGH
    if args.sizes:
        config = Config(**{**asdict(config), "sizes": args.sizes})
    if args.machines and not config.machine_seeds:
        config = Config(**{**asdict(config), "machine_seeds": 1})
    print(f"rollcert benchmarks ({config.mode}), sizes {', '.join(map(_size_label, config.sizes))}")
    results = run(config, durable_dir=args.durable_dir)
    if args.issue_rows:
        add_issue_rows(results, suite_seeds=args.suite_seeds)
    if results["meta"]["durable_fs"] in ("tmpfs", "ramfs"):
        print("WARNING: the durable baselines ran on a RAM filesystem; pass --durable-dir on a real disk")
    print()
    print(format_table(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    if args.markdown is not None:
        write_markdown(results, args.markdown)
        print(f"table written into {args.markdown}")
    print(f"\n{results['meta']['elapsed_s']} s; results written to {args.json}")
    __import__("benchmarks.durable_batched").durable_batched.report(quick=args.quick, durable_dir=args.durable_dir, json_path=args.json.with_name(args.json.stem + "-durable-batched.json"))  # issue 12
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
