"""The buffer packages' documented verdicts and findings, searched for again (see conftest.py)."""

from __future__ import annotations

import pytest

from benchmarks.documented_verdicts import MAX_COUNTEREXAMPLE_STEPS
from benchmarks.documented_verdicts import Documented
from benchmarks.documented_verdicts import documented_certificates
from benchmarks.search._searched import certificate_of
from benchmarks.search._searched import certified_as_documented
from benchmarks.thirdparty_targets import counterexample_steps as _counterexample
from benchmarks.thirdparty_targets import is_buffer_package as _is_buffer_package
from benchmarks.thirdparty_targets import met as _met
from benchmarks.thirdparty_targets import package_of as _package
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.judge import StepRecord

DOCUMENTED = documented_certificates(_is_buffer_package)


def _documented(target: str) -> Documented:
    return next(d for d in DOCUMENTED if d.target == target)


def _run(target: str) -> CertificateData:
    documented = _documented(target)
    pytest.importorskip(_package(documented.target))
    return certificate_of(target, documented.profile, documented.seed)








@pytest.mark.parametrize("documented", DOCUMENTED, ids=lambda d: d.target)
@pytest.mark.slow
def test_verdicts_are_as_documented(documented: Documented) -> None:
    pytest.importorskip(_package(documented.target))
    certificate = certified_as_documented(documented)
    for pid, result in certificate.results.items():
        if result.verdict == "violated":
            steps = _counterexample(result)
            assert len(steps) <= MAX_COUNTEREXAMPLE_STEPS, f"{documented.target} {pid}: {len(steps)} steps"
        if result.verdict == "passed":
            assert result.coverage and all(result.coverage.values()), f"{documented.target} {pid}: vacuous {result.coverage}"


def _crossed_an_out_of_log_write(steps: list[StepRecord]) -> bool:
    """The last step is a rollback the rules refuse (DivergenceError) and the package performed."""
    last = steps[-1]
    return (
        isinstance(last.operation, Rollback)
        and last.expected.error == "DivergenceError"
        and last.actual.error is None
        and any(isinstance(step.operation, OutOfLogWrite) for step in steps)
    )


@pytest.mark.parametrize("target", ["textual-focused", "prompt_toolkit-focused", "pycrdt-focused"])
@pytest.mark.slow
def test_undo_crosses_an_out_of_log_write_silently(target: str) -> None:
    """textual replays its record at stale positions, prompt_toolkit restores a stale
    snapshot, pycrdt undoes selectively around the remote edit: none refuses."""
    steps = _counterexample(_run(target).results["R4"])
    assert _crossed_an_out_of_log_write(steps), f"{target}: R4 is violated differently now; see {_documented(target).page}"


@pytest.mark.parametrize("target", ["textual-focused", "prompt_toolkit-focused"])
@pytest.mark.slow
def test_offsets_are_sound_without_the_set_aside_findings(target: str) -> None:
    result = _run(target).results["R2"]
    assert result.verdict == "passed" and result.coverage["shifted"] > 0, (target, result.reason)


@pytest.mark.parametrize(("target", "pid"), [("pycrdt", "R2"), ("pycrdt-focused", "R3")])
@pytest.mark.slow
def test_the_search_finds_pycrdt_undoing_a_re_created_insert_wrongly(target: str, pid: str) -> None:
    """... and the search still finds the bug by itself: a violation of the rule its
    certificate names, made of splices and undos alone, ending in an undo the rules allow
    that gives other text (on pycrdt-focused, R3's other finding, an undo past the
    horizon, is set aside: what R3 finds there is this bug)."""
    result = _run(target).results[pid]
    found = _counterexample(result)
    assert result.counterexample is not None and pid in result.counterexample.broken
    assert all(isinstance(step.operation, (Splice, Rollback)) for step in found)
    last = found[-1]
    assert isinstance(last.operation, Rollback) and last.expected.error is None and last.actual.error is None
    assert last.expected.buffer != last.actual.buffer


@pytest.mark.parametrize("target", ["textual", "pycrdt"])
def test_an_empty_edit_leaves_no_undo_record(target: str) -> None:
    # A wrong depth after a plain splice breaks no rule's clause in particular: R0's.
    (step,) = _met(_run(target), "R2", "R0")
    assert isinstance(step.operation, Splice) and not step.operation.insert and step.operation.delete_length == 0
    assert (step.expected.depth, step.actual.depth) == (1, 0)


def test_prompt_toolkit_undo_skips_an_edit_that_changed_nothing() -> None:
    # Undo lands on an earlier state than one LIFO step gives: R3's clause.
    steps = _met(_run("prompt_toolkit"), "R2", "R3")
    edits = [step for step in steps if isinstance(step.operation, Splice)]
    assert any(step.before == step.actual.buffer for step in edits), "no edit that left the text as it was"
    assert isinstance(steps[-1].operation, Rollback) and steps[-1].expected.buffer != steps[-1].actual.buffer

