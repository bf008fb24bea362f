"""The benchmark script runs and produces well-formed output. No timing is asserted."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

# ``benchmarks`` is a directory of the repository, not an installed package.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from benchmarks import run as bench  # noqa: E402
from benchmarks.baselines import SeedLikeBuffer  # noqa: E402
from benchmarks.baselines import SQLiteEditStore  # noqa: E402

TINY = replace(
    bench.QUICK,
    mode="smoke",
    ops=3,
    batches=3,
    seed_rollbacks_small=3,
    seed_rollbacks_64k=1,
    seed_worst_4mib_measured=False,
    durable_ops=3,
    durable_batches=1,
    sizes=(1024, 4096),
    memory_records=1000,
    machine_seeds=0,
    independence_size=8192,
)


def test_each_measurement_returns_a_positive_number(tmp_path):
    size = 1024
    offsets = bench.make_offsets(size, 3)
    overhead = bench.loop_overhead_ns(offsets, 3)
    assert overhead > 0
    cases = {
        "pair": bench.impl_same_length_pair(size, offsets),
        "splice": bench.impl_same_length_splice(size, offsets),
        "seed": bench.seed_same_length_splice(size, offsets),
        "bytearray": bench.bytearray_same_length(size, offsets),
        "impl_len": bench.impl_length_changing(size, offsets),
        "bytearray_len": bench.bytearray_length_changing(size, offsets),
        "rollback": bench.impl_rollback(size, offsets),
        "rollback_insert": bench.impl_rollback(size, offsets, kind="insert"),
    }
    timings = bench.measure_interleaved(cases, 3, overhead)
    for name, timing in timings.items():
        assert len(timing.samples) == 3, name
        assert timing.median > 0 and timing.best > 0, name
    assert bench.ratio_of(timings["pair"], timings["seed"]) > 0
    scan = bench.seed_rollback(size, offsets)
    assert scan.median_ns > 0 and scan.ns_per_byte_scanned > 0 and scan.rollbacks == 3
    assert bench.seed_rollback_worst_ns(256) > 0
    durable = bench.durable_interleaved(str(tmp_path), size, offsets, 3, 2, record_only=True)
    assert set(durable) == {"impl", "fsync", "sqlite_blob", "sqlite_record"}
    for name, timing in durable.items():
        assert len(timing.samples) == 2 and timing.p10 > 0, name


def test_the_low_percentile_is_a_low_sample() -> None:
    assert bench.low_percentile([5.0, 1.0, 9.0]) == 1.0
    assert bench.low_percentile([float(n) for n in range(1, 22)]) == 3.0  # 21 samples: the third best


@pytest.mark.slow
def test_packed_journal_records_weigh_less_than_tuples() -> None:
    packed = bench.journal_bytes_per_record(5000)
    tuples = bench.journal_bytes_per_record(5000, tuple_records=True)
    assert 0 < packed < tuples


def test_the_seed_baseline_really_rolls_back():
    data = bytes(range(256)) * 4
    buf = SeedLikeBuffer(data)
    buf.splice(100, 8, b"ABCDEFGH")
    buf.splice(3, 0, b"xyz")
    assert buf.read() != data
    buf.rollback(2)
    assert buf.read() == data


def test_the_sqlite_baseline_stores_the_edit(tmp_path):
    store = SQLiteEditStore(str(tmp_path / "s.db"), b"a" * 100)
    store.splice_same_length(10, b"BB")
    (blob,) = store.db.execute("SELECT data FROM buffer").fetchone()
    (count,) = store.db.execute("SELECT count(*) FROM inverse").fetchone()
    store.close()
    assert blob[10:12] == b"BB" and count == 1


@pytest.mark.slow
def test_a_whole_run_writes_well_formed_json(tmp_path):
    results = bench.run(TINY, durable_dir=str(tmp_path), log=lambda _message: None)
    path = tmp_path / "out.json"
    path.write_text(json.dumps(results))
    loaded = json.loads(path.read_text())
    assert loaded["meta"]["mode"] == "smoke"
    rows = loaded["rows"]
    assert {r["row"] for r in rows} >= {
        "same-len splice+rollback(1)",
        "len-changing splice (+8/-8)",
        "durable commit",
    }
    for row in rows:
        assert row["met"] in ("yes", "NO", "info") or row["met"].endswith("(p10 disagrees)")
        for key in ("impl_us", "baseline_us", "ratio"):
            assert row[key] is None or row[key] > 0, (row["row"], key)
    # The durable journal is measured against both of its baselines.
    durable = [r for r in rows if r["row"] == "durable commit"]
    assert {r["baseline"].split(" (")[0] for r in durable} == {"write+fsync", "SQLite"}
    assert any(r["row"].startswith("journal bytes/record") for r in rows)
    assert all(r["impl_us"] and r["ratio"] for r in durable)
    table = bench.format_table(loaded)
    assert "same-len splice+rollback(1)" in table


@pytest.mark.slow
def test_main_writes_the_json_it_is_given(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "QUICK", TINY)
    out = tmp_path / "run.json"
    assert bench.main(["--quick", "--json", str(out), "--durable-dir", str(tmp_path)]) == 0
    assert json.loads(out.read_text())["rows"]
    assert "ratio" in capsys.readouterr().out


@pytest.mark.slow
def test_markdown_keeps_what_it_does_not_generate(tmp_path):
    results = bench.run(TINY, durable_dir=str(tmp_path), log=lambda _message: None)
    page = tmp_path / "performance.md"
    page.write_text(f"# Title\n\nprose before\n\n{bench.MARK_BEGIN}\nold table\n{bench.MARK_END}\n\n## Someone else's section\n")
    bench.write_markdown(results, page)
    text = page.read_text()
    assert "prose before" in text and "## Someone else's section" in text
    assert "old table" not in text and "same-len splice+rollback(1)" in text
    assert text.count(bench.MARK_BEGIN) == 1 and text.count(bench.MARK_END) == 1


def test_the_buffer_memory_row_weighs_a_real_buffer() -> None:
    from benchmarks import issue_rows

    rows, raw = issue_rows.buffer_memory_rows(64 * 1024)
    # The chunks hold the text: at least one byte per byte, and not several.
    assert 1.0 <= raw["bytes_per_byte"] < 2.0
    assert rows[0]["met"] in ("yes", "NO")


def test_a_missed_row_says_why_and_a_met_row_does_not(monkeypatch) -> None:
    from benchmarks import issue_rows

    def fake_measure(seeds: int) -> dict[str, dict[str, object]]:
        return {
            "evict_newest": {"found": f"{seeds}/{seeds}", "minimal": f"{seeds - 3}/{seeds}", "median_seconds": 0.2},
            "first_match_scan": {"found": f"{seeds - 1}/{seeds}", "minimal": f"{seeds}/{seeds}", "median_seconds": 1.5},
        }

    monkeypatch.setattr("benchmarks.suite.measure", fake_measure)
    rows, _ = issue_rows.suite_rows(10)
    by_name = {row["row"]: row for row in rows}
    assert by_name["specimens found in every seed"]["met"] == "NO"
    assert "first_match_scan 9/10" in str(by_name["specimens found in every seed"]["note"])
    assert "first_match_scan 1.5" in str(by_name["specimens found with median < 1 s"]["note"])
    assert "evict_newest 7/10" in str(by_name["specimens minimal in >= 9/10 seeds"]["note"])
    # WHY_MISSED explains the µs rows of benchmarks.run as well, only when missed.
    missed = bench._row("rollback(1) insert, 16 MiB vs 1 KiB", 1, bench.Timing([3.0]), "x", bench.Timing([1.0]), "t", 1.2)
    met = bench._row("rollback(1) insert, 16 MiB vs 1 KiB", 1, bench.Timing([1.0]), "x", bench.Timing([1.0]), "t", 1.2)
    assert "missed because" in str(missed["note"]) and "missed because" not in str(met["note"])
