"""``rollcert merge`` and the pytest units' certificate fail closed (issue 40).

Written as the attacks that used to give a green:

- a later partial carrying a unit of an earlier shard's block (``ran: false``,
  ``passed``) replaced that shard's real violation: merged ``passed``, exit 0;
- a unit claimed twice was accepted silently;
- a malformed partial (``examples: "many"``) gave a traceback and exit 1 (which
  means "violated");
- a round past the serial run's stopping point that ran anyway (a pytest item
  per round, ``--rollcert-units -n 2``) and found a violation was dropped: the
  certificate said ``passed`` while pytest failed the round's item.

The partials here are built from unit records (no target runs), so each test
takes a fraction of a second; ``rollcert merge`` is the real command on real files.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.command.cli import main
from rollcert.model.operations import Splice
from rollcert.stateful_tests.certify import RoundRecord
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.shards import Missing
from rollcert.stateful_tests.shards import Partial
from rollcert.stateful_tests.shards import ShardError
from rollcert.stateful_tests.shards import Unit
from rollcert.stateful_tests.shards import UnitResult
from rollcert.stateful_tests.shards import certificate_of
from rollcert.stateful_tests.shards import merge
from rollcert.stateful_tests.shards import merge_rounds
from rollcert.stateful_tests.shards import partial_json
from rollcert.stateful_tests.shards import read_partial
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult

SITUATIONS = [("multi_step", "a rollback of two or more steps")]
HEADER: dict[str, Any] = {
    "suite_version": "0.1.0",
    "target": {"name": "specimen:fifo_replay", "version": "specimen", "description": "", "capabilities": ["core"],
               "set_aside": {}},
    "target_text": "specimen:fifo_replay", "profile": "quick", "seed": 0, "seed_source": "", "only": ["R3"],
    "corpus": None,
}


def _counterexample(property_id: str = "R3") -> Counterexample:
    step = StepRecord(
        1, Splice(0, 0, b"a"), b"", Observed(None, b"a", 1, 1), Observed(None, b"", 1, 1), False,
        harm="wrong bytes",
    )
    return Counterexample(property_id, "specimen:fifo_replay", b"", None, "reject", (step,), "the bytes differ",
                          broken=(property_id,), harm="wrong bytes")


def _unit(number: int, verdict: str, *, ran: bool = True, property_id: str = "R3") -> UnitResult:
    """Round ``number`` of R3: ``passed`` reaches its one situation (so the serial run stops after it)."""
    result = PropertyResult(property_id, verdict, "Ordering discipline", examples=10, steps=50,
                            coverage={"multi_step": 1 if verdict == "passed" else 0})
    if verdict == "violated":
        result.counterexample, result.reason = _counterexample(property_id), "the bytes differ"
    return UnitResult(Unit("R3", number), result, RoundRecord(ran, {}, list(SITUATIONS) if ran else []))


def _write(directory: Path, name: str, record: dict[str, Any]) -> str:
    (directory / name).write_text(json.dumps(record), encoding="utf-8")
    return str(directory / name)


def _honest(directory: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two shards of R3 at quick (rounds 0-1 and 2-3): shard 1 found the violation in
    round 0 and skipped round 1; shard 2's round 2 passed and it skipped round 3."""
    first = partial_json(HEADER, 1, 2, [_unit(0, "violated")], [Unit("R3", 1)])
    second = partial_json(HEADER, 2, 2, [_unit(2, "passed")], [Unit("R3", 3)])
    _write(directory, "part1.json", first)
    _write(directory, "part2.json", second)
    return first, second


def _merge(directory: Path, capsys: pytest.CaptureFixture[str], *names: str) -> tuple[int, str, str]:
    status = main(["merge", *(str(directory / name) for name in names)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_honest_partials_merge_into_the_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _honest(tmp_path)
    status, out, _ = _merge(tmp_path, capsys, "part1.json", "part2.json")
    assert status == 1 and "violated" in out


def test_a_forged_unit_of_another_shards_block_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to replace shard 1's real violation: merged R3 passed, exit 0."""
    _, second = _honest(tmp_path)
    forged = copy.deepcopy(second)
    stand_in = partial_json(HEADER, 2, 2, [_unit(0, "passed", ran=False)])["units"][0]
    stand_in["result"]["coverage"] = {"multi_step": 1}
    forged["units"].append(stand_in)
    _write(tmp_path, "forged.json", forged)
    status, out, err = _merge(tmp_path, capsys, "part1.json", "forged.json")
    assert status == 3 and err.count("\n") == 1 and "R3::shard-0 is claimed twice" in err, err
    assert "passed" not in out
    # Listed first, the forgery claims a unit outside its own block.
    status, _, err = _merge(tmp_path, capsys, "forged.json", "part1.json")
    assert status == 3 and "R3::shard-0 is not in the block of shard 2/2" in err, err
    # A unit of shard 1's block that shard 1 leaves out, claimed by shard 2: not its block.
    first = json.loads((tmp_path / "part1.json").read_text())
    _write(tmp_path, "short1.json", {**first, "skipped": []})
    _write(tmp_path, "long2.json", {**second, "units": [*second["units"],
                                                        partial_json(HEADER, 2, 2, [_unit(1, "passed")])["units"][0]]})
    status, _, err = _merge(tmp_path, capsys, "short1.json", "long2.json")
    assert status == 3 and err.count("\n") == 1
    assert "does not account for R3::shard-1" in err or "not in the block of shard 2/2" in err, err


def test_a_duplicate_unit_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An exact copy of a unit in one partial used to be accepted silently."""
    _, second = _honest(tmp_path)
    _write(tmp_path, "dup.json", {**second, "units": second["units"] * 2})
    status, _, err = _merge(tmp_path, capsys, "part1.json", "dup.json")
    assert status == 3 and err.count("\n") == 1 and "R3::shard-2 is claimed twice" in err, err
    _write(tmp_path, "dup-skip.json", {**second, "skipped": ["R3::shard-3", "R3::shard-3"]})
    status, _, err = _merge(tmp_path, capsys, "part1.json", "dup-skip.json")
    assert status == 3 and "R3::shard-3 is claimed twice" in err, err


def test_conflicting_units_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, second = _honest(tmp_path)
    never_ran = partial_json(HEADER, 2, 2, [_unit(2, "passed", ran=False)], [Unit("R3", 3)])
    _write(tmp_path, "never-ran.json", never_ran)
    status, _, err = _merge(tmp_path, capsys, "part1.json", "never-ran.json")
    assert status == 3 and "never ran, yet says passed" in err, err
    other = copy.deepcopy(second)
    other["units"][0]["result"]["property_id"] = "R2"
    _write(tmp_path, "other.json", other)
    status, _, err = _merge(tmp_path, capsys, "part1.json", "other.json")
    assert status == 3 and "holds a result of R2" in err, err


@pytest.mark.parametrize("where", ["part1", "part2"])
def test_a_malformed_partial_is_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """``examples: "many"`` gave a traceback and exit 1 ("violated") in the round
    the merge reads; in the round it does not read, it was accepted."""
    partials = dict(zip(("part1", "part2"), _honest(tmp_path), strict=True))
    bad = copy.deepcopy(partials[where])
    bad["units"][0]["result"]["examples"] = "many"
    _write(tmp_path, f"{where}.json", bad)
    status, _, err = _merge(tmp_path, capsys, "part1.json", "part2.json")
    assert status == 3 and err.count("\n") == 1, err
    assert "/units/0/result/examples: expected integer" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_attacks_through_the_installed_command(tmp_path: Path) -> None:
    """The same three files through a real ``rollcert merge`` process: one line on stderr, exit 3."""
    first, second = _honest(tmp_path)
    forged = copy.deepcopy(second)
    forged["units"].append(partial_json(HEADER, 2, 2, [_unit(0, "passed", ran=False)])["units"][0])
    many = copy.deepcopy(first)
    many["units"][0]["result"]["examples"] = "many"
    for name, record, other in (("forged", forged, "part1"), ("dup", {**second, "units": second["units"] * 2}, "part1"),
                                ("many", many, "part2")):
        _write(tmp_path, f"{name}.json", record)
        done = subprocess.run([sys.executable, "-m", "rollcert.command.cli", "merge", f"{other}.json", f"{name}.json"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 3 and done.stderr.count("\n") == 1, (name, done.stderr)
        assert "Traceback" not in done.stderr


# -- a round past the serial stopping point ------------------------------------------------------


def test_a_violation_in_a_round_after_the_serial_stop_is_kept() -> None:
    """Round 0 passed and reached everything (the serial run stops there); round 1
    ran anyway — a pytest item per round — and found a violation. The merged
    result is the run that went on to round 1: violated, 20 examples. It used to
    be round 0's ``passed``."""
    merged = merge_rounds([_unit(0, "passed"), _unit(1, "violated"), _unit(2, "passed"), _unit(3, "passed")])
    assert (merged.verdict, merged.examples, merged.counterexample) == ("violated", 20, _counterexample())
    # Beyond an error in between, the violation still wins: an error says nothing about the rules.
    merged = merge_rounds([_unit(0, "error", ran=False), _unit(1, "passed"), _unit(2, "violated"), _unit(3, "passed")])
    assert merged.verdict == "violated"
    # Nothing found later: the serial run's result, field for field.
    assert merge_rounds([_unit(0, "passed"), _unit(1, "passed"), None, None]).examples == 10


def test_a_finding_of_another_rule_in_a_later_round_is_kept_and_folds_into_r0() -> None:
    later = _unit(2, "passed")
    later.result.found_elsewhere = {"R0": _counterexample("R0")}
    certificate, _ = certificate_of(
        {**HEADER, "only": ["R0", "R3"]},
        {**{Unit("R0", r): _r0(r) for r in range(4)}, **{Unit("R3", r): u for r, u in
                                                          enumerate([_unit(0, "passed"), _unit(1, "passed"), later,
                                                                     _unit(3, "passed")])}},
    )
    assert certificate.results["R3"].found_elsewhere.keys() == {"R0"}
    assert certificate.results["R0"].verdict == "violated" and certificate.exit_status == 1


def _r0(number: int) -> UnitResult:
    result = PropertyResult("R0", "passed", "Model agreement", examples=10, steps=50, coverage={"multi_step": 1})
    return UnitResult(Unit("R0", number), result, RoundRecord(True, {}, list(SITUATIONS)))


def test_a_unit_that_never_reported_leaves_its_property_unknown() -> None:
    """Without round 3 (deselected, interrupted, its worker lost) the other rounds
    are not a pass: nobody knows what round 3 would have found."""
    by_unit = {Unit("R3", r): _unit(r, "passed") for r in range(3)}
    certificate, _ = certificate_of(HEADER, dict(by_unit))
    assert certificate.results["R3"].verdict == "unknown" and "R3::shard-3 did not run" in certificate.results["R3"].reason
    assert certificate.exit_status == 2
    by_unit[Unit("R3", 1)] = _unit(1, "violated")
    assert certificate_of(HEADER, dict(by_unit))[0].results["R3"].verdict == "violated"
    assert merge_rounds([Missing(Unit("R7", None))]).verdict == "unknown"


# -- fuzzing the reader -------------------------------------------------------------------------


def _valid_partial() -> dict[str, Any]:
    elsewhere = _unit(1, "passed")
    elsewhere.result.found_elsewhere = {"R0": _counterexample("R0")}
    return partial_json({**HEADER, "corpus": {"directory": "off", "skipped": 0}}, 1, 1,
                        [_unit(0, "passed"), elsewhere, _unit(2, "violated")], [Unit("R3", 3)])


VALID = _valid_partial()
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["R3", "R3::shard-9", "", "passed", "rollcert-partial/2", "quick"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found += _places(item, (*path, position))
    return found


PLACES = _places(VALID)[1:]


@st.composite
def _mutated(draw: st.DrawFn) -> Any:
    record = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PLACES))
        parent = record
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(JSON)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation changed the way there
    return record


def _read_and_merge(directory: Path, record: Any, text: str | None = None) -> None:
    path = directory / "fuzzed.json"
    path.write_text(json.dumps(record) if text is None else text, encoding="utf-8")
    try:
        partial = read_partial(path)
        if partial.count == 1:
            certificate, _ = merge([(path, partial)])
            assert certificate.results
    except ShardError as error:
        assert "\n" not in str(error)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(JSON, _mutated()))
def test_read_partial_refuses_anything_malformed_in_one_line(record: Any) -> None:
    """Random JSON and valid partials with a few values replaced or removed: the
    reader (and the merge of what it accepts) gives a result or one ShardError
    line, never another exception."""
    with tempfile.TemporaryDirectory() as directory:
        _read_and_merge(Path(directory), record)


def test_the_valid_partial_reads_and_constants_and_depth_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "valid.json"
    path.write_text(json.dumps(VALID), encoding="utf-8")
    assert isinstance(read_partial(path), Partial)
    for text in (json.dumps(VALID).replace('"seconds": 0.0', '"seconds": NaN'), "[" * 100000, "\xff"):
        (tmp_path / "bad.json").write_text(text, encoding="utf-8")
        with pytest.raises(ShardError):
            read_partial(tmp_path / "bad.json")


def test_the_schema_names_every_field_of_a_result() -> None:
    """A field added to PropertyResult travels in a partial (``_result_json``); the
    schema refuses keys it does not name in a result, so it must name the new one."""
    from dataclasses import fields

    from rollcert.stateful_tests.profiles import PROFILES
    from rollcert.stateful_tests.shards import _schema

    result = _schema()["$defs"]["result"]
    assert set(result["properties"]) == set(result["required"]) == {f.name for f in fields(PropertyResult)}
    assert set(_schema()["properties"]["profile"]["enum"]) == set(PROFILES)


def test_the_schema_agrees_with_jsonschema() -> None:
    """The shipped checker reads the schema as the reference implementation does."""
    jsonschema = pytest.importorskip("jsonschema")
    from rollcert.stateful_tests.shards import _schema

    jsonschema.Draft202012Validator.check_schema(_schema())
    validator = jsonschema.Draft202012Validator(_schema())
    assert validator.is_valid(VALID)
    bad = copy.deepcopy(VALID)
    bad["units"][0]["result"]["examples"] = "many"
    assert not validator.is_valid(bad)
