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
quotient). Millisecond-scale operations (the seed's rollback scan, fsync,
SQLite) are timed per call or per small batch, and the median is reported.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``impl`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.baselines import (
    FsyncRecordFile,
    SeedLikeBuffer,
    SQLiteEditStore,
    encode_record,
)
from rollcert.impl import JournaledBuffer
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import RealDirectory

KiB = 1024
MiB = 1024 * KiB
DEFAULT_SIZES: tuple[int, ...] = (1 * KiB, 64 * KiB, 1 * MiB, 4 * MiB)
EDIT = 8  # bytes replaced / inserted / deleted per splice
INSERT = b"ABCDEFGH"
#: Tolerance for "independent of size": noise and cache effects, not a scan.
SIZE_INDEPENDENCE_TOLERANCE = 1.5
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


QUICK = Config(
    "quick",
    ops=2000,
    batches=5,
    seed_rollbacks_small=20,
    seed_rollbacks_64k=3,
    seed_worst_4mib_measured=False,
    durable_ops=25,
    durable_batches=3,
)
THOROUGH = Config(
    "thorough",
    ops=20000,
    batches=9,
    seed_rollbacks_small=200,
    seed_rollbacks_64k=20,
    seed_worst_4mib_measured=True,
    durable_ops=100,
    durable_batches=5,
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


def _durable_median(commit: Callable[[int], object], ops: int, batches: int) -> float:
    """Median ns per commit over ``batches`` batches of ``ops`` commits, after a warm-up commit."""
    commit(0)
    samples = []
    i = 1
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(ops):
            commit(i)
            i += 1
        samples.append((time.perf_counter_ns() - start) / ops)
    return statistics.median(samples)


def fsync_commit_ns(directory: str, ops: int, batches: int) -> float:
    """``os.write`` + ``os.fsync`` of one small inverse record (32 bytes) to a real file."""
    path = os.path.join(directory, "fsync-baseline.log")
    store = FsyncRecordFile(path)
    removed = b"\x00" * EDIT
    try:
        return _durable_median(lambda i: store.commit(encode_record(i * 7, removed, EDIT, i)), ops, batches)
    finally:
        store.close()
        os.unlink(path)


def durable_splice_vs_fsync(
    directory: str, size: int, offsets: list[int], ops: int, batches: int
) -> tuple[Timing, Timing]:
    """One same-length splice on ``JournaledBuffer`` with the durable file journal on a
    real file (the record framed, written and fsynced, then the buffer changed),
    against ``os.write`` + ``os.fsync`` of a 32-byte record, *interleaved* batch by
    batch: fsync latency drifts by 2x within seconds on a shared disk."""
    path = os.path.join(directory, f"durable-{size}")
    storage = RealDirectory(path)
    buffer = open_durable_buffer(storage, make_data(size))
    baseline = FsyncRecordFile(os.path.join(directory, f"fsync-interleaved-{size}.log"))
    removed = b"\x00" * EDIT
    impl_samples: list[float] = []
    base_samples: list[float] = []
    counter = 0
    try:
        buffer.splice(offsets[0], EDIT, INSERT)  # warm-up
        baseline.commit(encode_record(0, removed, EDIT, 0))
        for _ in range(batches):
            start = time.perf_counter_ns()
            for _ in range(ops):
                counter += 1
                buffer.splice(offsets[counter % len(offsets)], EDIT, INSERT)
            impl_samples.append((time.perf_counter_ns() - start) / ops)
            start = time.perf_counter_ns()
            for _ in range(ops):
                counter += 1
                baseline.commit(encode_record(counter * 7, removed, EDIT, counter))
            base_samples.append((time.perf_counter_ns() - start) / ops)
    finally:
        baseline.close()
        storage.close()
        shutil.rmtree(path, ignore_errors=True)
    return Timing(impl_samples), Timing(base_samples)


def sqlite_commit_ns(
    directory: str, size: int, offsets: list[int], ops: int, batches: int, *, store_buffer: bool = True
) -> float:
    """One SQLite transaction per same-length edit: insert the inverse record (and edit the buffer blob)."""
    path = os.path.join(directory, f"sqlite-baseline-{size}-{int(store_buffer)}.db")
    store = SQLiteEditStore(path, make_data(size), store_buffer=store_buffer)
    try:
        return _durable_median(
            lambda i: store.splice_same_length(offsets[i % len(offsets)], INSERT), ops, batches
        )
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)


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
        ratio_best = None
    elif isinstance(base, Timing):
        ratio_best = impl.best / base.best
    else:
        ratio_best = impl.best / base_ns
    if impl is None:
        met = "not yet (issue 3)"
    elif limit is None:
        met = "info"
    else:
        met = "yes" if ratio is not None and ratio <= limit else "NO"
        if ratio_best is not None and (ratio_best <= limit) != (met == "yes"):
            met += " (min disagrees)"
    return {
        "row": name,
        "size": size,
        "size_label": _size_label(size) if size else "-",
        "impl_us": None if impl is None else impl.median / 1000,
        "impl_best_us": None if impl is None else impl.best / 1000,
        "baseline": baseline,
        "baseline_us": None if base_ns is None else base_ns / 1000,
        "baseline_best_us": base.best / 1000 if isinstance(base, Timing) else None,
        "ratio": ratio,
        "ratio_best": ratio_best,
        "target": target,
        "limit": limit,
        "met": met,
        "note": note,
    }


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

    # Size independence of rollback(1): smallest and largest size, interleaved.
    if small != large:
        log(f"  rollback(1) at {_size_label(small)} vs {_size_label(large)} ...")
        offsets_small, offsets_large = make_offsets(small, ops), make_offsets(large, ops)
        overhead = loop_overhead_ns(offsets_small, batches)
        t = measure_interleaved(
            {
                "same-length small": impl_rollback(small, offsets_small),
                "same-length large": impl_rollback(large, offsets_large),
                "insert small": impl_rollback(small, offsets_small, kind="insert"),
                "insert large": impl_rollback(large, offsets_large, kind="insert"),
            },
            batches,
            overhead,
        )
        raw["rollback_size_independence"] = {name: timing.samples for name, timing in t.items()}
        for kind in ("same-length", "insert"):
            rows.append(
                _row(
                    f"rollback(1) {kind}, {_size_label(large)} vs {_size_label(small)}",
                    large,
                    t[f"{kind} large"],
                    f"impl at {_size_label(small)}",
                    t[f"{kind} small"],
                    f"~1 (<= {SIZE_INDEPENDENCE_TOLERANCE}x)",
                    SIZE_INDEPENDENCE_TOLERANCE,
                )
            )
        impl_rollback_large = t["same-length large"]

        # The seed's worst case at the largest size: measured once, or extrapolated.
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

    # Durable commits: the file journal against write+fsync of a record and SQLite.
    directory = _durable_directory(durable_dir)
    fstype = _filesystem_type(directory)
    try:
        log(f"  durable baselines in {directory} ({fstype}) ...")
        fsync_ns = fsync_commit_ns(directory, config.durable_ops, config.durable_batches)
        paired = {
            size: durable_splice_vs_fsync(
                directory, size, make_offsets(size, 997), config.durable_ops, config.durable_batches
            )
            for size in config.sizes
        }
        durable_ns = {size: impl.median for size, (impl, _) in paired.items()}
        raw["durable"] = {"directory_fs": fstype, "fsync_record_ns": fsync_ns, "impl_splice_ns": durable_ns}
        for size, (impl_timing, fsync_timing) in paired.items():
            rows.append(
                _row(
                    "durable commit",
                    size,
                    impl_timing,
                    "write+fsync (32 B record), interleaved",
                    fsync_timing,
                    "<= 1.3x write+fsync",
                    1.3,
                )
            )
        rows.append(
            _row(
                "durable commit",
                small,
                Timing([durable_ns[small]]),
                "write+fsync (32 B record), measured apart",
                fsync_ns,
                "info",
                None,
            )
        )
        for size in config.sizes:
            offsets = make_offsets(size, 997)
            sq = sqlite_commit_ns(directory, size, offsets, config.durable_ops, config.durable_batches)
            raw["durable"][f"sqlite_record_and_blob_ns_{size}"] = sq
            rows.append(
                _row(
                    "durable commit",
                    size,
                    Timing([durable_ns[size]]),
                    "SQLite (record + blob edit)",
                    sq,
                    "< 1.0x SQLite",
                    1.0,
                )
            )
        sq_only = sqlite_commit_ns(
            directory,
            small,
            make_offsets(small, 997),
            config.durable_ops,
            config.durable_batches,
            store_buffer=False,
        )
        raw["durable"]["sqlite_record_only_ns"] = sq_only
        rows.append(
            _row("durable commit", small, Timing([durable_ns[small]]), "SQLite (record only)", sq_only, "< 1.0x SQLite", 1.0)
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)

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


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.1f}"
    return f"{value:.{digits}f}"


def format_table(results: dict) -> str:
    header = ("row", "size", "impl us", "baseline", "baseline us", "ratio", "ratio(min)", "target", "met?")
    lines = [
        (
            r["row"],
            r["size_label"],
            _fmt(r["impl_us"]) if r["impl_us"] is not None else "not yet",
            r["baseline"],
            _fmt(r["baseline_us"]),
            "-" if r["ratio"] is None else f"{r['ratio']:.3g}x",
            "-" if r["ratio_best"] is None else f"{r['ratio_best']:.3g}x",
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
        "--durable-dir",
        default=None,
        help="directory on the disk to test fsync/SQLite on (default: the system temp dir)",
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else THOROUGH
    if args.sizes:
        config = Config(**{**asdict(config), "sizes": args.sizes})
    print(f"rollcert benchmarks ({config.mode}), sizes {', '.join(map(_size_label, config.sizes))}")
    results = run(config, durable_dir=args.durable_dir)
    if results["meta"]["durable_fs"] in ("tmpfs", "ramfs"):
        print("WARNING: the durable baselines ran on a RAM filesystem; pass --durable-dir on a real disk")
    print()
    print(format_table(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{results['meta']['elapsed_s']} s; results written to {args.json}")
    __import__("benchmarks.durable_batched").durable_batched.report(quick=args.quick, durable_dir=args.durable_dir, json_path=args.json.with_name(args.json.stem + "-durable-batched.json"))  # issue 12
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
