"""The pytest plugin runs the target in supervised workers, with deadlines (issue 40).

The per-property items (``--rollcert-target``) and the ``rollcert_gate`` fixture
ran the corpus replay and the machines inside pytest's own process, with no
deadline: a target that hung (disarming the call timeout, or in its import, or
on a corpus trace) hung pytest for ever, and one that called ``os._exit(0)``
ended pytest with exit status 0. Each test is the attack, run by a real pytest
in a subprocess (``pytester``), with the hostile targets of
``tests/hostile_targets`` and ``--rollcert-deadline 3``: the run must end in
bounded time, red."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollcert.command.pytest_plugin import _supervision
from rollcert.model.operations import Splice
from rollcert.stateful_tests.families import family_named
from rollcert.stateful_tests.traces import trace_json
from rollcert.targets.adapter import BufferConfig

pytest_plugins = ["pytester"]

HOSTILE = Path(__file__).parent / "hostile_targets"
#: Far beyond a run that meets its 3 s deadline; a run that hangs meets this instead.
BOUND = 120.0
ITEMS = ["-p", "no:cacheprovider", "-rA", "--rollcert-profile", "quick", "--rollcert-only", "R0"]
DEADLINE = "did not finish within its deadline of 3 s"


@pytest.fixture
def hostile(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(HOSTILE))
    monkeypatch.delenv("ROLLCERT_DEADLINE", raising=False)
    monkeypatch.delenv("ROLLCERT_CALL_TIMEOUT", raising=False)
    return pytester


def _run(pytester: pytest.Pytester, *arguments: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*arguments, timeout=BOUND)


@pytest.mark.slow
def test_an_item_whose_target_hangs_in_a_call_errors_at_its_deadline(hostile: pytest.Pytester) -> None:
    """``outlasts:DISARMS`` ignores SIGALRM and spins: the call timeout cannot end it."""
    result = _run(hostile, *ITEMS, "--rollcert-target", "outlasts:DISARMS", "--rollcert-deadline", "3",
                     "--rollcert-corpus", "off")
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert "ERROR rollcert::outlasts:DISARMS::R0" in text and "1 error" in text
    assert f"certifying R0 {DEADLINE}" in text and "the worker was certifying R0 (running its machines)" in text


@pytest.mark.slow
def test_an_item_whose_target_hangs_in_its_import_errors_at_its_deadline(hostile: pytest.Pytester) -> None:
    """The target used to be imported in pytest's process, at configure time."""
    hostile.makepyfile(hangs_on_import="import time\nwhile True:\n    time.sleep(0.1)\n")
    result = _run(hostile, *ITEMS, "--rollcert-target", "hangs_on_import:TARGET", "--rollcert-deadline", "3")
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert "ERROR rollcert::hangs_on_import:TARGET::R0" in text
    assert f"the import of the target 'hangs_on_import:TARGET' {DEADLINE}" in text
    assert "the worker was importing and building the target 'hangs_on_import:TARGET'" in text


GATES = '''
from outlasts import Disarms
from _honest import target


def test_text_hangs_on_a_corpus_trace(rollcert_gate):
    rollcert_gate("outlasts:DISARMS", only=("R0",), deadline=3, corpus="corpus")


def test_an_object_no_module_names_hangs_in_a_call(rollcert_gate):
    rollcert_gate(target("disarms-here", Disarms), only=("R0",), deadline=3, corpus=None)
'''


@pytest.mark.slow
def test_the_gate_fails_on_a_target_that_hangs(hostile: pytest.Pytester) -> None:
    """Given as text, on a corpus trace (the replay has its worker too); given as
    a ``Target`` object that cannot be resolved again, in a call (in a fork of
    pytest's process, which holds the object)."""
    hostile.makepyfile(test_gates=GATES)
    corpus = hostile.path / "corpus"
    corpus.mkdir()
    record = trace_json(family_named("rollback"), BufferConfig(b"", 64, "reject"), [Splice(0, 0, b"ab")])
    (corpus / "hangs.json").write_text(json.dumps({**record, "property": "R0", "target": "hostile-disarms"}))
    result = _run(hostile, "-p", "no:cacheprovider", "-rA", "test_gates.py")
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert "2 failed" in text, text
    assert f"the corpus corpus was not replayed: the corpus replay {DEADLINE}" in text
    assert "the worker was replaying the corpus corpus" in text
    assert f"certifying R0 {DEADLINE}" in text and "the worker was certifying R0 (running its machines)" in text


CRASHES = '''
def test_gate_on_a_target_killed_by_sigkill(rollcert_gate):
    rollcert_gate("killed:TARGET", only=("R0",), corpus=None)
'''


@pytest.mark.slow
def test_an_item_and_a_gate_whose_target_crashes_the_worker_are_red(hostile: pytest.Pytester) -> None:
    """``hangs:EXITS`` calls ``os._exit(0)`` in a splice (pytest used to end with exit
    status 0, nothing said); ``killed:TARGET`` sends itself SIGKILL (pytest died with it)."""
    hostile.makepyfile(test_crashes=CRASHES)
    result = _run(hostile, *ITEMS, "--rollcert-target", "hangs:EXITS", "test_crashes.py")
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text
    assert "ERROR rollcert::hangs:EXITS::R0" in text and "exited with status 0 before reporting its result" in text
    assert "FAILED test_crashes.py::test_gate_on_a_target_killed_by_sigkill" in text
    assert "was killed by SIGKILL before reporting a verdict" in text
    assert "1 failed, 1 error" in text


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (("-1", None, None), "--rollcert-deadline: '-1': give a finite number of seconds, 0 or more"),
        ((None, "0", None), "--rollcert-call-timeout: '0': give a finite number of seconds above 0"),
        ((None, None, "8"), "--rollcert-memory-limit: 8 is out of range"),
    ],
)
def test_bad_limits_are_usage_errors(values: tuple[str | None, str | None, str | None], message: str) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        _supervision(*values, ("--rollcert-deadline", "--rollcert-call-timeout", "--rollcert-memory-limit"))


@pytest.mark.parametrize("variable", ["ROLLCERT_DEADLINE", "ROLLCERT_CALL_TIMEOUT"])
def test_a_bad_limit_in_the_environment_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "soon")
    with pytest.raises(pytest.UsageError, match=f"\\${variable} must be a"):
        _supervision(None, None, None, ("deadline=", "call_timeout=", "memory_limit="))
