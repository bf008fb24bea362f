"""Batched durability against per-operation durability and SQLite (issue 12).

Usage (from the repository root)::

    python -m benchmarks.durable_batched            # a few seconds
    python -m benchmarks.durable_batched --quick    # fewer rounds
    python -m benchmarks.durable_batched --durable-dir /var/tmp --json out.json

Four ways to make small edits durable, each committing one small splice per
operation on a real file, measured in commits per second:

- ``per-operation``: the durable journal's default, one write and one fsync
  per record before the buffer changes (R5);
- ``batched``: ``Durability.batched(every_records=16, every_ms=5)``, one write
  per record, an fsync every 16 records or 5 ms, and a ``flush()`` at the end of
  every batch, so every timed batch ends durable (R5's batched variant);
- ``batched-5ms``: ``Durability.batched(every_records=None, every_ms=5)``, an
  fsync at the first commit 5 ms after the last one (closest to SQLite's
  checkpoint-driven syncs), and the same ``flush()`` at the end of each batch;
- ``sqlite-wal-normal``: SQLite in WAL mode with ``synchronous=NORMAL``, one
  transaction per edit storing the inverse record — SQLite's own batched
  durability (the WAL is synced at checkpoints, not at commits).

The three are *interleaved*: every round times one batch of each, back to
back, after an untimed warm-up round, so a noisy neighbour or a drifting disk
hits all four alike. Reported: the median commits/s of each over the rounds,
and the median of the per-round ratios against per-operation mode and against
SQLite. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import RealDirectory

DEFAULT_JSON = Path(tempfile.gettempdir()) / "rollcert-durable-batched.json"
INITIAL = b"x" * 4096


@dataclass(frozen=True)
class Config:
    rounds: int
    commits_per_batch: int


QUICK = Config(rounds=5, commits_per_batch=200)
THOROUGH = Config(rounds=15, commits_per_batch=400)


class JournalCase:
    """The durable journal in one durability mode, on its own directory."""

    def __init__(self, directory: Path, durability: Durability) -> None:
        self.storage = RealDirectory(directory)
        self.buffer: JournaledBuffer = open_durable_buffer(self.storage, INITIAL, durability=durability)
        journal = self.buffer.journal
        assert isinstance(journal, FileJournal)
        self.journal = journal
        self.counter = 0

    def batch(self, commits: int) -> None:
        buffer = self.buffer
        for _ in range(commits):
            self.counter += 1
            offset = (self.counter * 97) % 4000
            buffer.splice(offset, 4, b"%04d" % (self.counter % 10_000))
        self.journal.flush()  # the batch ends durable, whatever the mode
        if buffer.depth > 4096:
            buffer.compact(0)  # keep the file small; outside no timed batch's average for long

    def close(self) -> None:
        self.journal.close()
        self.storage.close()


class SQLiteCase:
    """SQLite, WAL, ``synchronous=NORMAL``: one transaction per edit."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(directory / "edits.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE inverse (serial INTEGER PRIMARY KEY, off INTEGER, removed BLOB, inserted INTEGER)")
        self.mirror = bytearray(INITIAL)
        self.counter = 0

    def batch(self, commits: int) -> None:
        db = self.db
        for _ in range(commits):
            self.counter += 1
            offset = (self.counter * 97) % 4000
            insert = b"%04d" % (self.counter % 10_000)
            removed = bytes(self.mirror[offset : offset + 4])
            db.execute("BEGIN")
            db.execute("INSERT INTO inverse VALUES (?, ?, ?, ?)", (self.counter, offset, removed, 4))
            db.execute("COMMIT")
            self.mirror[offset : offset + 4] = insert

    def close(self) -> None:
        self.db.close()


def filesystem(path: str) -> str:
    try:
        out = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def run(config: Config, durable_dir: str | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    base = tempfile.mkdtemp(prefix="rollcert-batched-", dir=durable_dir)
    cases: dict[str, JournalCase | SQLiteCase] = {
        "per-operation": JournalCase(Path(base) / "per-operation", Durability.per_operation()),
        "batched": JournalCase(Path(base) / "batched", Durability.batched(every_records=16, every_ms=5)),
        "batched-5ms": JournalCase(Path(base) / "batched-5ms", Durability.batched(every_records=None, every_ms=5)),
        "sqlite-wal-normal": SQLiteCase(Path(base) / "sqlite"),
    }
    rates: dict[str, list[float]] = {name: [] for name in cases}
    try:
        for round_number in range(config.rounds + 1):
            for name, case in cases.items():
                start = time.perf_counter_ns()
                case.batch(config.commits_per_batch)
                elapsed = (time.perf_counter_ns() - start) / 1e9
                if round_number:  # round 0 warms up
                    rates[name].append(config.commits_per_batch / elapsed)
    finally:
        for case in cases.values():
            case.close()
        for root, directories, files in os.walk(base, topdown=False):
            for file in files:
                os.unlink(os.path.join(root, file))
            for directory in directories:
                os.rmdir(os.path.join(root, directory))
        os.rmdir(base)

    def ratio(numerator: str, denominator: str) -> float:
        return statistics.median(a / b for a, b in zip(rates[numerator], rates[denominator], strict=True))

    return {
        "meta": {
            "rounds": config.rounds,
            "commits_per_batch": config.commits_per_batch,
            "durable_dir": durable_dir or tempfile.gettempdir(),
            "durable_fs": filesystem(durable_dir or tempfile.gettempdir()),
            "elapsed_s": round(time.perf_counter() - started, 2),
        },
        "commits_per_s": {name: round(statistics.median(values), 1) for name, values in rates.items()},
        "commits_per_s_p90": {
            name: round(statistics.quantiles(values, n=10)[-1], 1) if len(values) >= 2 else values[0]
            for name, values in rates.items()
        },
        "ratios": {
            "batched / per-operation": round(ratio("batched", "per-operation"), 2),
            "batched / sqlite-wal-normal": round(ratio("batched", "sqlite-wal-normal"), 2),
            "batched-5ms / per-operation": round(ratio("batched-5ms", "per-operation"), 2),
            "batched-5ms / sqlite-wal-normal": round(ratio("batched-5ms", "sqlite-wal-normal"), 2),
            "per-operation / sqlite-wal-normal": round(ratio("per-operation", "sqlite-wal-normal"), 2),
        },
    }


def format_table(results: dict[str, Any]) -> str:
    lines = [
        "Durable commits per second (one small splice per commit; interleaved rounds, medians)",
        f"{'mode':<22}{'commits/s':>12}{'p90':>12}",
    ]
    for name, rate in results["commits_per_s"].items():
        lines.append(f"{name:<22}{rate:>12,.0f}{results['commits_per_s_p90'][name]:>12,.0f}")
    lines.append("")
    for name, value in results["ratios"].items():
        lines.append(f"{name:<36}{value:>8.2f}x")
    return "\n".join(lines)


def report(*, quick: bool = False, durable_dir: str | None = None, json_path: Path | None = None) -> dict[str, Any]:
    """Run, print the table, write the JSON; the hook ``benchmarks.run`` calls."""
    results = run(QUICK if quick else THOROUGH, durable_dir)
    print()
    print(format_table(results))
    if results["meta"]["durable_fs"] in ("tmpfs", "ramfs"):
        print("WARNING: ran on a RAM filesystem; pass --durable-dir on a real disk")
    path = json_path or DEFAULT_JSON
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{results['meta']['elapsed_s']} s; results written to {path}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--durable-dir", default=None, help="directory on the disk to measure (default: temp dir)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write results ({DEFAULT_JSON})")
    args = parser.parse_args(argv)
    report(quick=args.quick, durable_dir=args.durable_dir, json_path=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
