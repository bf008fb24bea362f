"""``rollcert certify --shard I/N`` and ``rollcert merge`` (SPEC §7, "longer than one
machine"): the partials of every shard merge into the bytes of the serial run's
certificate (``--reproducible``), and partials of different certifications are
refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.stateful_tests.certify import RoundRecord
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.shards import ShardError
from rollcert.stateful_tests.shards import Unit
from rollcert.stateful_tests.shards import UnitResult
from rollcert.stateful_tests.shards import merge_rounds
from rollcert.stateful_tests.shards import needed
from rollcert.stateful_tests.shards import shard_units
from rollcert.stateful_tests.shards import units
from rollcert.stateful_tests.verdicts import PropertyResult

ROLLCERT = [sys.executable, "-m", "rollcert.command.cli"]


def _rollcert(directory: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ROLLCERT, *arguments], cwd=directory, capture_output=True, text=True, timeout=900,
        env={**__import__("os").environ, "SOURCE_DATE_EPOCH": "1700000000"},
    )


def _sharded_and_serial(directory: Path, target: str, *options: str) -> None:
    for index in (1, 2, 3):
        shard = _rollcert(directory, "certify", target, "--shard", f"{index}/3", "--json", f"part{index}.json",
                          "--reproducible", "-q", *options)
        assert shard.returncode == 0, shard.stderr
    serial = _rollcert(directory, "certify", target, "--json", "serial.json", "--junit", "serial.xml",
                       "--reproducible", "-q", *options)
    merged = _rollcert(directory, "merge", "part2.json", "part3.json", "part1.json", "--json", "merged.json",
                       "--junit", "merged.xml", "--reproducible")
    assert merged.returncode == serial.returncode, merged.stderr
    assert merged.stdout == serial.stdout
    assert (directory / "merged.json").read_bytes() == (directory / "serial.json").read_bytes()
    assert (directory / "merged.xml").read_bytes() == (directory / "serial.xml").read_bytes()


@pytest.mark.slow
def test_three_shards_of_the_bundled_target_merge_into_the_serial_certificate(tmp_path: Path) -> None:
    # One property of each family (rollback, durable, diff, concurrent): the whole
    # certificate, three shards and a serial run, took 256 s alone (model branches
    # keep a round going while one is missing) and hit the suite's time limit.
    _sharded_and_serial(tmp_path, "bundled", "-j", "2", "--only", "R0,R5,S1,R7")
    record = json.loads((tmp_path / "merged.json").read_text())
    assert record["exit_status"] == 0 and set(record["properties"]) == {"R0", "R5", "S1", "R7"}


@pytest.mark.slow
def test_three_shards_of_a_specimen_with_violations_merge_into_the_serial_certificate(tmp_path: Path) -> None:
    # R0 and R2 of the specimen (3.5 s a run): the whole certificate, three shards and a serial run,
    # ran past the suite's time limit; what the merge must keep is in these.
    _sharded_and_serial(tmp_path, "specimen:first_match_scan", "--seed", "3", "--only", "R0,R2")
    record = json.loads((tmp_path / "merged.json").read_text())
    violated = {pid for pid, r in record["properties"].items() if r["verdict"] == "violated"}
    assert {"R0", "R2"} <= violated
    assert record["properties"]["R2"]["counterexample"]["replay"].startswith("rollcert replay specimen:first_match_scan")


@pytest.mark.slow
def test_partials_of_different_certifications_are_refused_in_one_line(tmp_path: Path) -> None:
    for index in (1, 2):
        made = _rollcert(tmp_path, "certify", "specimen:first_match_scan", "--only", "R5,S1", "--shard", f"{index}/2",
                         "--json", f"part{index}.json")
        assert made.returncode == 0, made.stderr
    good = json.loads((tmp_path / "part2.json").read_text())
    for key, value in (("seed", 9), ("profile", "ci"), ("suite_version", "0.0.1"), ("target_text", "bundled")):
        (tmp_path / f"other-{key}.json").write_text(json.dumps({**good, key: value}))
        refused = _rollcert(tmp_path, "merge", "part1.json", f"other-{key}.json")
        assert refused.returncode == 3
        assert refused.stderr.count("\n") == 1 and f"its {key} differs" in refused.stderr, refused.stderr
    (tmp_path / "other-target.json").write_text(json.dumps({**good, "target": {**good["target"], "name": "x"}}))
    assert "its target differs" in _rollcert(tmp_path, "merge", "part1.json", "other-target.json").stderr
    for arguments, message in (
        (["part1.json"], "shard 2/2 is missing"),
        (["part1.json", "part1.json"], "are both shard 1/2"),
        (["part1.json", "nothing.json"], "nothing.json: not a file"),
    ):
        refused = _rollcert(tmp_path, "merge", *arguments)
        assert refused.returncode == 3 and message in refused.stderr, refused.stderr
    (tmp_path / "broken.json").write_text(json.dumps({**good, "units": [{"property": "R5"}]}))
    refused = _rollcert(tmp_path, "merge", "part1.json", "broken.json")
    assert refused.returncode == 3 and "a malformed partial certificate" in refused.stderr
    merged = _rollcert(tmp_path, "merge", "part1.json", "part2.json")
    assert merged.returncode == 2 and "not_assessed" in merged.stdout  # nothing assessed: never green


def test_bad_shard_options_are_usage_errors(tmp_path: Path) -> None:
    from rollcert.command.cli import main

    for shard in ("0/3", "4/3", "x", "1"):
        assert main(["certify", "bundled", "--shard", shard, "--json", str(tmp_path / "p.json")]) == 3
    assert main(["certify", "bundled", "--shard", "1/2"]) == 3  # where would the partial go?
    assert main(["certify", "bundled", "--shard", "1/2", "--json", str(tmp_path / "p.json"), "--junit", "x.xml"]) == 3
    assert not (tmp_path / "p.json").exists()


def test_the_shards_hold_every_unit_once() -> None:
    profile = PROFILES["quick"]
    every = units(["R0", "R2", "R7"], profile)
    assert [u.name for u in every] == [*(f"R0::shard-{r}" for r in range(4)), *(f"R2::shard-{r}" for r in range(4)), "R7"]
    shards = [shard_units(["R0", "R2", "R7"], profile, index, 3) for index in (1, 2, 3)]
    assert sorted(u for shard in shards for u in shard) == sorted(every)
    assert all(Unit.parse(u.name) == u for u in every)


def _round(number: int, verdict: str, coverage: dict[str, int], examples: int = 10) -> UnitResult:
    result = PropertyResult("R2", verdict, "Offset stability", examples=examples, steps=examples * 5, coverage=coverage)
    record = RoundRecord(True, {}, [("a", "situation a"), ("b", "situation b")])
    return UnitResult(Unit("R2", number), result, record)


def test_the_merge_stops_where_the_serial_rounds_stop_unless_a_later_round_found_something() -> None:
    rounds = [_round(0, "unknown", {"a": 1, "b": 0}), _round(1, "unknown", {"a": 0, "b": 2}),
              _round(2, "unknown", {"a": 3, "b": 3})]
    merged = merge_rounds(rounds)
    assert (merged.verdict, merged.examples, merged.coverage) == ("passed", 20, {"a": 1, "b": 2})  # round 2 not needed
    # Round 2 ran anyway and found a violation: the serial rule decides what to run, never what to forget
    # (it used to merge into "passed", 20 examples: a violation dropped from the certificate).
    rounds[2] = _round(2, "violated", {"a": 3, "b": 3})
    merged = merge_rounds(rounds)
    assert (merged.verdict, merged.examples, merged.coverage) == ("violated", 30, {"a": 4, "b": 5})
    missing = merge_rounds([_round(0, "unknown", {"a": 1, "b": 0}), _round(1, "unknown", {"a": 2, "b": 0})])
    assert missing.verdict == "unknown" and missing.missing_situations == ["situation b"]
    assert merge_rounds([_round(0, "violated", {"a": 0, "b": 0}), None]).verdict == "violated"
    with pytest.raises(ShardError):
        merge_rounds([_round(0, "unknown", {"a": 1, "b": 0}), None])


def test_merged_rounds_state_the_world_one_tally_of_every_round_states() -> None:
    """The world of merged rounds is the serial run's, whose one tally saw every
    round: dimension counts add up, extremes are the largest, and the distinct
    bytes sent are the union's (rounds that sent "ab" and "bc" sent three byte
    values, not the largest of two and two). Measured on specimen:first_match_scan
    (seed 3): the merge said 209 distinct bytes for R1 where the serial run said 218."""
    from rollcert.stateful_tests.shards import read_unit
    from rollcert.stateful_tests.shards import unit_json
    from rollcert.stateful_tests.world import World
    from rollcert.stateful_tests.world import WorldTally
    from rollcert.stateful_tests.world import world_report

    world = World()
    required = world.required()
    edits = [(b"xyz", 1, 1, b"ab\n"), (b"q" * 20, 0, 10, b"bc\xff")]
    serial = WorldTally()
    rounds = []
    for number, edit in enumerate(edits):
        tally = WorldTally()
        for counted in (tally, serial):
            counted.edit(*edit)
            counted.observed(len(edit[0]) - edit[2] + len(edit[3]), number + 1)
        done = _round(number, "unknown", {"a": 1, "b": 0})
        done.result.world = world_report(world, tally, required, True)
        record = RoundRecord(True, {}, done.record.situations, tally.bytes_sent)
        rounds.append(read_unit(json.loads(json.dumps(unit_json(UnitResult(done.unit, done.result, record))))))
    assert [r.record.bytes_sent for r in rounds] == [0b11 << 97 | 1 << 10, 0b11 << 98 | 1 << 0xFF]
    merged = merge_rounds(rounds)
    assert merged.world == world_report(world, serial, required, True)
    assert merged.world["distinct_bytes_sent"] == 5  # a, b, c, \n, \xff


def test_a_shard_skips_only_rounds_the_serial_run_never_reaches() -> None:
    done = [_round(0, "unknown", {"a": 1, "b": 1})]
    assert not needed(Unit("R2", 3), done)  # round 0 reached everything: the serial run stopped there
    assert needed(Unit("R2", 3), [_round(0, "unknown", {"a": 1, "b": 0})])
    assert not needed(Unit("R2", 2), [_round(1, "violated", {"a": 0, "b": 0})])
    assert needed(Unit("R2", 1), [_round(2, "violated", {"a": 0, "b": 0})])  # a later round says nothing
    assert needed(Unit("R2", 0), [])


@pytest.mark.slow
def test_a_unit_survives_its_partial_record_whole_an_r7_history_included() -> None:
    from rollcert.stateful_tests.shards import read_unit
    from rollcert.stateful_tests.shards import run_unit
    from rollcert.stateful_tests.shards import unit_json
    from rollcert.targets.resolve import resolve_target

    target = resolve_target("specimen:unlocked_buffer")
    for name in ("R7", "R2::shard-1"):
        done = run_unit(target, name, PROFILES["quick"], 0)
        if name == "R7":
            assert done.result.counterexample is not None and done.result.counterexample.history is not None
        assert read_unit(json.loads(json.dumps(unit_json(done)))) == done
