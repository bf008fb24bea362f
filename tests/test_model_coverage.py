"""Model-branch coverage (stateful_tests/model_coverage.py): the branches come
from the model's code, a property requires those its machine can reach, a run
that missed one is unknown naming it, and merges take the union."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import initial_state
from rollcert.model.reference import step
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.stateful_tests import model_coverage
from rollcert.stateful_tests.certify import RoundRecord
from rollcert.stateful_tests.certify import assemble
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.families import family_of
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.machines import RULES
from rollcert.stateful_tests.machines import RollbackMachine
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.shards import Unit
from rollcert.stateful_tests.shards import UnitResult
from rollcert.stateful_tests.shards import merge_rounds
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.resolve import resolve_target

REFERENCE = Path(model_coverage.__file__).resolve().parent.parent / "model" / "reference.py"


def _line(text: str) -> int:
    """The number of the model line holding ``text`` (so no test hard-codes one)."""
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    (number,) = [n for n, line in enumerate(lines, 1) if text in line]
    return number


def _past_horizon() -> model_coverage.Branch:
    """rollback(n) past the horizon: the branch into its refusal."""
    source = _line("if steps > state.depth:")
    (branch,) = [b for b in model_coverage.branches_of("rollback") if b.source == source and b.target == source + 1]
    return branch


def test_the_branches_come_from_the_models_code() -> None:
    branch = _past_horizon()
    assert branch.function == "_rollback_steps"
    assert branch.name == f"model/reference.py:{branch.source}->{branch.source + 1} (_rollback_steps)"
    # Both ways out of the evict-or-reject test of a splice are branches.
    full = _line("if full and state.policy == \"reject\":")
    assert {(b.source, b.function) for b in model_coverage.branches_of("rollback") if b.source == full} == {(full, "_splice")}
    assert len([b for b in model_coverage.branches_of("rollback") if b.source == full]) == 2
    # A defensive branch marked `# unreachable:` in the model is not one.
    marked = _line("raise TypeError(f\"not an operation")
    assert model_coverage.MARKER in REFERENCE.read_text(encoding="utf-8").splitlines()[marked - 1]
    assert not [b for b in model_coverage.branches_of("rollback") if marked in (b.source, b.target)]


def test_an_exclusion_marker_removes_a_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    branch = _past_horizon()
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    lines[branch.target - 1] += "  # unreachable: for this test"
    (tmp_path / "reference.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(model_coverage, "_MODEL_DIR", tmp_path)
    model_coverage.branches_of.cache_clear()
    try:
        marked = model_coverage.branches_of("rollback")
    finally:
        monkeypatch.undo()
        model_coverage.branches_of.cache_clear()
    assert branch not in marked
    assert len(marked) == len(model_coverage.branches_of("rollback")) - 1


def test_a_property_requires_the_branches_its_machine_can_reach() -> None:
    target = resolve_target("bundled")
    traits = {
        pid: model_coverage.machine_traits(family_of(pid).build_machine(target, pid, Tracker(pid)))  # type: ignore[union-attr]
        for pid in ("R2", "R5", "R6")
    }
    assert traits["R2"].operations == {"Splice", "Rollback"}
    assert {"Compact", "CrashDuring", "DiskFault"} <= traits["R5"].operations and traits["R5"].durable
    assert traits["R6"].bounded and not traits["R2"].bounded
    r2, r5, r6 = (model_coverage.required("rollback", traits[pid]) for pid in ("R2", "R5", "R6"))
    assert _past_horizon() in r2
    functions = {b.function for b in r5}
    assert {"_compact", "_crash_during", "_other"} <= functions
    assert not {"_compact", "_out_of_log_write"} & {b.function for b in r2}
    # Only a bounded machine must reach the full-journal branches of a splice.
    full = _line("if full and state.policy == \"reject\":")
    assert [b for b in r6 if b.source == full] and not [b for b in r2 if b.source == full]


def test_a_history_bound_fixes_the_policy() -> None:
    """A target whose history evicts the oldest (textual's ``max_checkpoints``)
    never refuses a record because the journal is full: not asked of it."""
    bounded = {"splice": RULES["splice"], "bounded": "always"}
    own = SimpleNamespace(history_bound=SimpleNamespace(policy="evict_oldest"))
    free = model_coverage.machine_traits(type("M", (RollbackMachine,), bounded))
    fixed = model_coverage.machine_traits(type("M", (RollbackMachine,), {**bounded, "target": own}))
    assert fixed.policies == {"evict_oldest"} and len(free.policies) == 2
    full = _line("if full and state.policy == \"reject\":")
    assert [b for b in model_coverage.required("rollback", free) if b.source == full]
    assert not [b for b in model_coverage.required("rollback", fixed) if b.source == full]


def test_the_diff_families_requirement_follows_its_operations() -> None:
    """A diff rollback refuses past the horizon only for a plain Rollback (S2's
    machine rolls back applied diffs alone); what an allowance gave is no case."""
    s1 = model_coverage.Traits(frozenset({"Splice", "ToolWrite", "Rollback", "TakeSnapshot", "ApplyDiff"}))
    s2 = model_coverage.Traits(frozenset({"Splice", "ToolWrite", "RollbackDiff", "TakeSnapshot", "ApplyDiff"}))
    refusal = [b for b in model_coverage.branches_of("diffs") if b.function == "_roll_back"]
    assert refusal and set(refusal) <= set(model_coverage.required("diffs", s1))
    assert not set(refusal) & set(model_coverage.required("diffs", s2))
    functions = {b.function for b in model_coverage.branches_of("diffs")}
    assert "diff_step" in functions and "apply" in functions
    assert not functions & model_coverage.ALLOWANCES


def test_the_branches_a_round_reached_are_measured_from_the_judged_calls() -> None:
    run = model_coverage.BranchRun("rollback", type("M", (RollbackMachine,), {"rollback_one": RULES["rollback_one"], "splice": RULES["splice"]}))
    wanted = _past_horizon().name
    state = step(initial_state(b"abc"), Splice(0, 1, b"xy")).state
    with run:
        model_coverage.note(step, [state], Rollback(1))
        run.round_ended()
        assert wanted in run.unreached()
        model_coverage.note(step, [state], Rollback(2))  # past the horizon: refused
        run.round_ended()
    assert wanted not in run.unreached()
    assert wanted in run.record()["reached"]
    model_coverage.note(step, [state], Rollback(2))  # not measuring: nothing is kept
    assert model_coverage._ACTIVE is None


def test_a_branch_only_set_aside_steps_reach_is_listed_not_required() -> None:
    """A target whose declared findings set aside a rollback past the horizon
    (a silent no-op, say) never sends one: that branch is not asked of it."""
    run = model_coverage.BranchRun("rollback", type("M", (RollbackMachine,), {"rollback_one": RULES["rollback_one"], "splice": RULES["splice"]}))
    wanted = _past_horizon().name
    state = step(initial_state(b"abc"), Splice(0, 1, b"xy")).state
    with run:
        model_coverage.note(step, [state], Rollback(1))
        model_coverage.note_set_aside(step, [state], Rollback(2))
    record = run.record()
    assert wanted in record["set_aside"] and wanted not in record["reached"]
    assert wanted not in run.unreached()
    assert "only set-aside steps reach" in model_coverage.branches_phrase(record)
    # A round that did reach it takes it off the set-aside list.
    again = model_coverage.merged([record, {**record, "reached": [*record["reached"], wanted], "set_aside": []}])
    assert wanted in again["reached"] and wanted not in again["set_aside"]


TINY = Profile("tiny", max_examples=15, steps_per_example=6, rounds=1)


@pytest.mark.slow
def test_a_run_kept_from_a_branch_is_unknown_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """R2's one-step rollback runs at depth 0 too (past the horizon, refused).
    Kept to depth >= 1, as it was, the run never reaches that branch."""
    target = resolve_target("bundled")
    wanted = f"model branch {_past_horizon().name}"
    reached = certify_property(target, "R2", TINY, 0)
    assert wanted not in reached.missing_situations
    assert _past_horizon().name in reached.model_branches["reached"]

    from hypothesis.stateful import precondition

    from rollcert.stateful_tests import machines

    kept = precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)(
        RULES["rollback_one"]
    )
    monkeypatch.setitem(machines.RULES, "rollback_one", kept)
    missed = certify_property(target, "R2", TINY, 0)
    assert missed.verdict == "unknown"
    assert wanted in missed.missing_situations and wanted in missed.reason
    assert _past_horizon().name not in missed.model_branches["reached"]


def _record(reached: list[str]) -> dict[str, object]:
    return {"measured": True, "required": ["b1", "b2", "b3"], "reached": reached, "set_aside": []}


def test_merges_take_the_union_of_the_branches_reached() -> None:
    assert model_coverage.merged([_record(["b1"]), _record(["b3"])])["reached"] == ["b1", "b3"]
    assert model_coverage.unreached(model_coverage.merged([_record(["b1"]), _record(["b3"])])) == ["b2"]
    assert not model_coverage.merged([_record(["b1"]), {**_record([]), "measured": False}])["measured"]

    def unit(number: int, reached: list[str]) -> UnitResult:
        result = PropertyResult("R2", "passed", "Offset stability", examples=5, steps=20, coverage={"a": 1},
                                model_branches=_record(reached))
        return UnitResult(Unit("R2", number), result, RoundRecord(True, {}, [("a", "situation a")]))

    merged = merge_rounds([unit(0, ["b1"]), unit(1, ["b2"]), unit(2, ["b3"])])
    assert merged.verdict == "passed" and merged.model_branches["reached"] == ["b1", "b2", "b3"]
    short = merge_rounds([unit(0, ["b1"]), unit(1, ["b1", "b3"])])
    assert short.verdict == "unknown" and short.missing_situations == ["model branch b2"]


def test_certificates_list_the_model_branches() -> None:
    target = resolve_target("bundled")
    result = PropertyResult("R2", "unknown", "Offset stability", examples=5, steps=20, coverage={"a": 1},
                            missing_situations=["model branch b2"], reason="the run never reached: model branch b2",
                            model_branches=_record(["b1", "b3"]))
    certificate = assemble(target, "quick", 0, {"R2": result}, None)
    record = to_json(certificate)
    assert record["properties"]["R2"]["model_branches"] == _record(["b1", "b3"])
    assert "model branches 2 of 3 reached" in render_text(certificate)
    assert "model branches 2 of 3 reached" in render_markdown(certificate)
    assert "model branches 2 of 3 reached" in render_html(from_certificate_data(certificate))
    again = certificate_from_json(json.loads(json.dumps(record))).data
    assert again.results["R2"].model_branches == _record(["b1", "b3"])
