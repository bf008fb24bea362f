"""Hostile in-process targets: a lie, a raise, a one-off failure or a broken
factory never turns into a wrong verdict, a traceback or an unbounded certificate.

Each target is a small module of ``tests/hostile_targets`` (its README says what
each does and what rollcert used to conclude). Most are certified on R0 through
``certify_property`` (quick profile, seed 0); the ones where the command line
itself is at stake (Ctrl-C, exit statuses, one-line usage errors, output size)
run ``rollcert`` in a subprocess, as a user would.

The rule every test checks: a real bug is ``violated`` (or at worst ``error``),
never ``passed``; a correct target is ``passed`` however odd its objects; the
adapter's own faults are ``error`` naming the fault.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from _helpers import OWN_PEAK_KIB

from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import MESSAGE_LIMIT
from rollcert.targets.adapter import Target

HOSTILE = Path(__file__).parent / "hostile_targets"


@pytest.fixture(autouse=True)
def hostile_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HOSTILE))


def module(name: str) -> ModuleType:
    return importlib.import_module(name)


#: The quick profile's rounds, with fewer examples in each: these targets misbehave
#: within their first calls, and what is tested is how the harness judges them.
HOSTILE_PROFILE = replace(PROFILES["quick"], name="quick-hostile", max_examples=30)


def certified(target: Target, property_id: str = "R0", profile: Profile = HOSTILE_PROFILE) -> PropertyResult:
    return certify_property(target, property_id, profile, 0)


def rollcert(tmp_path: Path, *arguments: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``rollcert ARGUMENTS`` in a subprocess, the hostile modules importable, in ``tmp_path``."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", *arguments],
        capture_output=True, text=True, timeout=timeout, env=environment, cwd=tmp_path, check=False,
    )


# -- values that lie ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_bytes_subclass_that_equals_everything_does_not_hide_a_wrong_buffer() -> None:
    """Was ``passed``: the judge compared the target's own object, whose ``==`` said True."""
    lying_bytes = module("lying_bytes")
    plain = certified(lying_bytes.HONEST_ABOUT_ITS_BUG)
    lying = certified(lying_bytes.TARGET)
    assert plain.verdict == "violated"
    assert lying.verdict == "violated", lying.reason
    assert "expected b'a', got b'z'" in (lying.reason or "")


def test_a_bytes_method_returning_a_lying_subclass_does_not_hide_a_wrong_buffer() -> None:
    """``bytes(x)`` returns whatever ``x.__bytes__`` returns, a lying subclass included:
    ``PythonBufferAdapter.read``'s ``bytes(...)`` let it through (was ``passed``)."""
    result = certified(module("lying_python_object").TARGET)
    assert result.verdict == "violated", result.reason
    assert "expected b'a', got b'z'" in (result.reason or "")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("HUGE_REVISION", "revision() returned an integer of about 5001 digits"),  # was 'the adapter raised ValueError'
        ("DEPTH_AS_BOOL", "depth() returned bool, not int"),
        ("DEPTH_AS_FLOAT", "depth() returned float, not int"),
    ],
)
def test_a_depth_or_revision_that_is_not_a_plain_int_is_the_adapters_fault(name: str, reason: str) -> None:
    result = certified(getattr(module("lying_numbers"), name))
    assert result.verdict == "error"
    assert result.reason == f"the adapter or the SUT broke: {reason}"


@pytest.mark.filterwarnings("ignore:__int__ returned non-int")  # the lie, on purpose
def test_an_int_conversion_that_lies_is_judged_as_the_number_it_gave() -> None:
    """``int()`` of the object makes a plain int of the lie: a wrong depth, judged as one."""
    result = certified(module("lying_numbers").LYING_INT)
    assert result.verdict == "violated", result.reason
    assert "the depth is 3, not 2" in (result.reason or "")


@pytest.mark.slow
def test_hostile_checkpoint_tokens_are_only_handed_back() -> None:
    """Tokens whose ``==`` says True and whose ``hash()`` raises: judged like plain ones."""
    tokens = module("hostile_tokens")
    for property_id in ("R0", "R3"):
        plain, hostile = certified(tokens.PLAIN_TOKENS, property_id), certified(tokens.TARGET, property_id)
        assert (hostile.verdict, hostile.reason) == (plain.verdict, plain.reason) == ("passed", ""), property_id


# -- raising --------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "raised"),
    [
        ("KEYBOARD_INTERRUPT", "undocumented:KeyboardInterrupt"),  # used to end the run as if Ctrl-C
        ("SYSTEM_EXIT", "undocumented:SystemExit"),
        ("GENERATOR_EXIT", "undocumented:GeneratorExit"),
        ("NATIVE_PANIC", "undocumented:NativePanic"),
        ("RECURSION", "undocumented:RecursionError"),
        ("MEMORY", "undocumented:MemoryError"),
        ("UNPRINTABLE", "undocumented:UnprintableError"),  # used to be error: 'the adapter raised RuntimeError'
        ("VERBOSE", "undocumented:VerboseError"),
        ("FAKE_DIVERGENCE", "DivergenceError"),
    ],
)
def test_whatever_a_splice_raises_is_judged_as_its_answer(name: str, raised: str) -> None:
    result = certified(getattr(module("raising"), name))
    assert result.verdict == "violated", result.reason
    assert f"The implementation raised {raised};" in (result.reason or "")
    assert result.counterexample is not None
    last = result.counterexample.steps[-1]
    assert last.actual.error == raised
    assert len(last.sut_message) <= MESSAGE_LIMIT + 100


def test_a_messages_str_that_raises_or_runs_to_megabytes_is_quoted_bounded() -> None:
    raising = module("raising")
    unprintable = certified(raising.UNPRINTABLE).counterexample
    verbose = certified(raising.VERBOSE).counterexample
    assert unprintable is not None and verbose is not None
    assert unprintable.steps[-1].sut_message == "UnprintableError: <its __str__ raised RuntimeError>"
    message = verbose.steps[-1].sut_message  # was the whole 10 MB, in every step record and output
    assert message.startswith("VerboseError: spam spam") and message.endswith("...")
    assert len(message) == len("VerboseError: ") + MESSAGE_LIMIT + 3


@pytest.mark.slow
def test_a_keyboard_interrupt_the_target_raises_is_a_violation_on_the_command_line(tmp_path: Path) -> None:
    """Was exit status 130, 'interrupted; no certificate written'."""
    run = rollcert(tmp_path, "certify", "raising:KEYBOARD_INTERRUPT", "--only", "R0", "--quiet")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "R0        violated" in run.stdout and "interrupted" not in run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("where", [(), ("--in-process",)], ids=["workers", "in-process"])
def test_a_keyboard_interrupt_the_target_raises_is_its_answer_in_a_background_job(
    tmp_path: Path, where: tuple[str, ...]
) -> None:
    """A shell starts a background job with SIGINT ignored: no KeyboardInterrupt can
    come from the keyboard there, so the target's own is its answer (was: taken as
    the user's, the worker died and the run ended interrupted)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "raising:KEYBOARD_INTERRUPT", "--only", "R0",
         "--quiet", *where],
        capture_output=True, text=True, timeout=240, env=environment, cwd=tmp_path, check=False,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "R0        violated" in run.stdout and "interrupted" not in run.stderr


@pytest.mark.slow
def test_a_keyboard_interrupt_the_target_raises_is_a_violation_in_process_too(tmp_path: Path) -> None:
    run = rollcert(tmp_path, "certify", "raising:KEYBOARD_INTERRUPT", "--only", "R0", "--quiet", "--in-process")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "R0        violated" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("where", [(), ("--in-process",)], ids=["workers", "in-process"])
def test_ctrl_c_still_stops_a_serial_run(tmp_path: Path, where: tuple[str, ...]) -> None:
    """The person at the keyboard is told apart from the target: a real SIGINT
    still stops the run, in one line, with the certificate of what it reached (exit status 2)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "slow_splice:TARGET", "--only", "R0", "-q", *where],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=tmp_path,
        start_new_session=True,
    )
    try:
        time.sleep(4)  # well into the run: the interpreter is up and splices are sleeping
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 2, stdout + stderr
    assert stderr == "rollcert: interrupted by SIGINT; the certificate holds the verdicts reached (1 of 1 properties unfinished, unknown)\n"
    assert "interrupted by SIGINT" in stdout and "R0        unknown" in stdout


@pytest.mark.slow
def test_a_target_builder_whose_exception_cannot_be_printed_is_a_one_line_usage_error(tmp_path: Path) -> None:
    """Was a traceback: describing the builder's exception called its ``__str__``."""
    run = rollcert(tmp_path, "certify", "raising:unbuildable", "--only", "R0")
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr == (
        "rollcert: calling raising:unbuildable to build the target raised "
        "UnprintableError: <its __str__ raised RuntimeError>\n"
    )


@pytest.mark.slow
def test_a_10_mb_message_does_not_reach_the_certificate(tmp_path: Path) -> None:
    run = rollcert(tmp_path, "certify", "raising:VERBOSE", "--only", "R0", "--json", "c.json", "--quiet")
    assert run.returncode == 1, run.stdout + run.stderr
    certificate = (tmp_path / "c.json").read_text()
    assert len(certificate) < 50_000 and len(run.stdout) < 50_000
    assert json.loads(certificate)["properties"]["R0"]["verdict"] == "violated"


# -- failures seen once ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("call", [35])  # 50 and 55 failed the same way; one call guards the rule (each is a 20-30 s run)
def test_a_one_off_corruption_is_reported_not_buried_by_a_fresh_round(call: int) -> None:
    """Was ``passed`` for these calls: the replay did not reproduce it, Hypothesis
    found its draws inconsistent, and the round was started afresh without it."""
    result = certified(module("one_off").corrupts_once(call))
    assert result.verdict == "violated", result.reason
    assert "!" in (result.reason or "")


@pytest.mark.slow
@pytest.mark.parametrize("call", [30, 40, 50])
def test_a_factory_that_fails_once_is_an_error_not_a_pass(call: int) -> None:
    result = certified(module("one_off").factory_fails_once(call), profile=PROFILES["quick"])  # 30+ examples
    assert result.verdict == "error", result.reason
    assert result.reason == f"the adapter raised RuntimeError: build number {call} failed"


# -- factories ------------------------------------------------------------------------------------


def test_a_factory_that_hands_out_a_used_buffer_is_the_adapters_fault() -> None:
    """Was ``violated`` on a counterexample that does not replay (earlier examples' depth)."""
    result = certified(module("factories").SHARED)
    assert result.verdict == "error"
    assert result.reason == (
        "the adapter or the SUT broke: the SUT started with depth 2 instead of 0: "
        "the factory must build a fresh buffer for every example"
    )


def test_a_factory_that_returns_none_is_the_adapters_fault_said_plainly() -> None:
    result = certified(module("factories").RETURNS_NONE)
    assert result.verdict == "error"
    assert result.reason == (
        "the adapter or the SUT broke: the factory returned NoneType, not a buffer: it has no read, splice, rollback"
    )


@pytest.mark.slow
def test_a_factory_that_builds_a_new_class_each_time_is_judged_on_its_buffers() -> None:
    assert certified(module("factories").NEW_CLASS_EACH_TIME).verdict == "passed"


# -- hangs, exits, threads and the process around the target ------------------------------------


@pytest.mark.parametrize("name", ["LOOPS", "SWALLOWS"])
@pytest.mark.slow
def test_a_call_that_never_returns_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """There was no limit on an in-process call: the run hung with no verdict."""
    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", "0.5")
    result = certified(getattr(module("hangs"), name))
    assert result.verdict == "error"
    assert result.reason is not None and result.reason.startswith("the adapter or the SUT broke: splice(")
    assert result.reason.endswith(") did not return within 0.5 s (the call timeout)")


@pytest.mark.slow
def test_the_call_timeout_option_reaches_the_workers(tmp_path: Path) -> None:
    run = rollcert(tmp_path, "certify", "hangs:LOOPS", "--only", "R0,R2", "--call-timeout", "0.5", "-q")
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout.count("did not return within 0.5 s (the call timeout)") == 2


@pytest.mark.slow
@pytest.mark.parametrize("value", ["soon", "nan", "-1", "inf"])
def test_a_bad_call_timeout_in_the_environment_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", value)
    run = rollcert(tmp_path, "certify", "hangs:LOOPS", "--only", "R0")
    assert run.returncode == 3 and run.stdout == ""
    assert run.stderr == (
        f"rollcert: $ROLLCERT_CALL_TIMEOUT must be a finite number of seconds (0: no limit), got {value!r}\n"
    )


@pytest.mark.slow
def test_a_target_that_exits_the_process_is_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    """``os._exit(0)`` inside a splice: ``rollcert certify`` used to end with exit
    status 0 (nothing violated) and print nothing at all."""
    run = rollcert(tmp_path, "certify", "hangs:EXITS", "--only", "R0,R2", "--json", "c.json", "-q")
    assert run.returncode == 2, run.stdout + run.stderr
    reasons = {pid: r["reason"] for pid, r in json.loads((tmp_path / "c.json").read_text())["properties"].items()}
    for property_id in ("R0", "R2"):
        assert reasons[property_id] == (
            f"the worker process certifying {property_id} exited with status 0 before reporting a verdict "
            "(the SUT or a native extension crashed or exited the process)"
        )


@pytest.mark.slow
def test_a_thread_the_target_leaves_running_does_not_keep_rollcert_alive(tmp_path: Path) -> None:
    """Used to print the certificate and then never exit (the interpreter waits
    for non-daemon threads); the subprocess timeout would fail this test."""
    run = rollcert(tmp_path, "certify", "hangs:LEAVES_A_THREAD", "--only", "R0,R2", "-q", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "R0        passed" in run.stdout and "R2        passed" in run.stdout


@pytest.mark.slow
def test_a_target_that_changes_the_process_around_it_does_not_reach_the_certificate(tmp_path: Path) -> None:
    """A splice that moves to /, points sys.stdout and sys.stderr at /dev/null, lowers
    the recursion limit and loads another Hypothesis profile: the certificate
    used to vanish into /dev/null and its relative --json path to land under /."""
    run = rollcert(tmp_path, "certify", "global_state:TARGET", "--only", "R0,R2", "--json", "c.json", "-q")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "R0        passed" in run.stdout and "R2        passed" in run.stdout
    assert json.loads((tmp_path / "c.json").read_text())["exit_status"] == 0


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")  # Hypothesis notices the attack
def test_a_run_in_the_callers_process_puts_the_process_back() -> None:
    """Certified in this process (``--in-process``, the API, the pytest plugin),
    the same target used to leave the test session in /, writing into /dev/null,
    with a recursion limit of 200 and one Hypothesis example per test."""
    from hypothesis import settings

    before = (os.getcwd(), sys.stdout, sys.stderr, sys.getrecursionlimit(), settings.get_current_profile_name())
    result = certified(module("global_state").TARGET)
    after = (os.getcwd(), sys.stdout, sys.stderr, sys.getrecursionlimit(), settings.get_current_profile_name())
    assert result.verdict == "passed", result.reason
    assert after == before


def _safety_net() -> None:
    """An outer cap on the whole rollcert process tree, so that a broken
    --memory-limit fails this test instead of filling the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.slow
def test_a_target_that_hoards_memory_meets_the_memory_limit(tmp_path: Path) -> None:
    """64 MiB kept per splice, for ever: with ``--memory-limit 1024`` the worker's
    allocation fails inside the splice and is judged (``violated``, MemoryError)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "hoards:TARGET", "--only", "R0",
         "--memory-limit", "1024", "-q"],
        capture_output=True, text=True, timeout=300, env=environment, cwd=tmp_path, check=False,
        preexec_fn=_safety_net,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "The implementation raised undocumented:MemoryError" in run.stdout


@pytest.mark.slow
def test_a_memory_limit_in_process_is_a_usage_error(tmp_path: Path) -> None:
    run = rollcert(tmp_path, "certify", "hoards:TARGET", "--memory-limit", "1024", "--in-process")
    assert run.returncode == 3 and run.stdout == ""
    assert run.stderr == "rollcert: --memory-limit caps the worker processes; it cannot be used with --in-process\n"


def test_a_factory_that_is_slow_to_build_meets_the_call_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLCERT_CALL_TIMEOUT", "0.5")
    result = certified(module("factories").SLOW_TO_BUILD)
    assert result.verdict == "error"
    assert result.reason == (
        "the adapter or the SUT broke: building and reading a fresh buffer did not return within 0.5 s (the call timeout)"
    )


#: Runs rollcert's CLI with stdout and stderr thrown away, then writes its own peak RSS (KiB) to argv[1].
PEAK_RSS = OWN_PEAK_KIB + """
import sys
from rollcert.command.cli import main
status = main(sys.argv[2:])
with open(sys.argv[1], "w") as peak:
    peak.write(str(own_peak_kib()))
sys.exit(status)
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", [(), ("--in-process",)], ids=["workers", "in-process"])
def test_a_target_that_floods_stdout_and_stderr_is_passed_through_in_bounded_memory(
    tmp_path: Path, where: tuple[str, ...]
) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(tmp_path / "peak"), "certify", "loud:TARGET", "--only", "R0",
         "--json", str(tmp_path / "c.json"), "-q", *where],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, env=environment, check=False,
    )
    assert run.returncode == 0
    assert json.loads((tmp_path / "c.json").read_text())["properties"]["R0"]["verdict"] == "passed"
    assert int((tmp_path / "peak").read_text()) < 300 * 1024


# -- every subcommand that drives a target runs it in a supervised worker -------------------------

#: A trace whose second splice inserts two bytes: the one hangs:EXITS and killed:TARGET do not survive.
TWO_BYTE_INSERT = json.dumps({
    "schema": "rollcert-trace/2", "family": "rollback", "initial": "YWJjYWJj", "capacity": None, "policy": "reject",
    "operations": [
        {"op": "splice", "offset": 0, "delete_length": 0, "insert": "eA=="},
        {"op": "splice", "offset": 2, "delete_length": 1, "insert": "eXo="},
    ],
})

#: Each subcommand that drives a target other than certify's properties, and what its worker runs.
SUPERVISED = {
    "smoke": (["smoke"], "the smoke checks"),
    "explore": (["explore", "--depth", "2"], "the exhaustive search"),
    "replay": (["replay", "--trace", TWO_BYTE_INSERT], "the replay"),
}


def _ended(doing: str, how: str) -> str:
    return (
        f"rollcert: the worker process running {doing} {how} before reporting its result "
        "(the target or a native extension crashed or exited the process)\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(SUPERVISED))
@pytest.mark.parametrize(
    ("target", "how"), [("hangs:EXITS", "exited with status 0"), ("killed:TARGET", "was killed by SIGKILL")]
)
def test_a_target_that_ends_the_process_does_not_end_other_subcommands_with_success(
    tmp_path: Path, command: str, target: str, how: str
) -> None:
    """``os._exit(0)`` in a splice used to end smoke, explore and replay with exit
    status 0 and nothing said (a CI gate read it as success); a SIGKILL, with no
    output at all. Now the worker dies alone and rollcert says so in one line."""
    arguments, doing = SUPERVISED[command]
    run = rollcert(tmp_path, arguments[0], target, *arguments[1:])
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr == _ended(doing, how)


#: rollcert's ``main`` called with a thread running beside it (as in a test session), so
#: that the worker is started by the forkserver rather than forked (parallel._supervising_context).
WITH_A_THREAD = """
import sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
from rollcert.command.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["hangs:EXITS", "HONEST"])
def test_a_supervised_worker_started_by_the_forkserver_reports_the_same(tmp_path: Path, target: str) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    text = "_honest:HONEST" if target == "HONEST" else target
    run = subprocess.run(
        [sys.executable, "-c", WITH_A_THREAD, "smoke", text],
        capture_output=True, text=True, timeout=240, env=environment, cwd=tmp_path, check=False,
    )
    if target == "HONEST":
        assert run.returncode == 0 and run.stderr == "", run.stdout + run.stderr
        assert run.stdout.startswith("smoke test of hostile-honest") and "0 failed, 0 errors" in run.stdout
    else:
        assert run.returncode == 2, run.stdout + run.stderr
        assert run.stderr == _ended("the smoke checks", "exited with status 0")


@pytest.mark.slow
def test_a_target_that_exits_in_certifys_exhaustive_search_is_an_error_in_the_certificate(tmp_path: Path) -> None:
    """``certify --exhaustive-depth``'s search ran in rollcert's own process: the
    properties' workers reported their errors, and then the search's ``os._exit(0)``
    ended rollcert with exit status 0 before the certificate was printed or written."""
    run = rollcert(tmp_path, "certify", "hangs:EXITS", "--only", "R0", "--exhaustive-depth", "1", "--json", "c.json", "-q")
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr == _ended("the exhaustive search", "exited with status 0")
    assert "exhaustive: depth 0, 0 states, error" in run.stdout
    record = json.loads((tmp_path / "c.json").read_text())
    assert record["exit_status"] == 2
    assert record["exhaustive"]["verdict"] == "error"
    assert record["exhaustive"]["reason"] == _ended("the exhaustive search", "exited with status 0").strip().removeprefix(
        "rollcert: "
    )


@pytest.mark.parametrize("command", sorted(SUPERVISED))
@pytest.mark.slow
def test_a_supervised_subcommand_prints_what_it_prints_in_process(tmp_path: Path, command: str) -> None:
    """The worker's lines are printed by rollcert's own process: the output and the
    exit status are those of ``--in-process`` (the code before supervision)."""
    arguments = [*SUPERVISED[command][0][:1], "bundled", *SUPERVISED[command][0][1:]]
    supervised = rollcert(tmp_path, *arguments)
    in_process = rollcert(tmp_path, *arguments, "--in-process")
    assert supervised.returncode == in_process.returncode == 0, supervised.stdout + supervised.stderr
    if command == "explore":  # its summary line carries the time the search took
        supervised.stdout, in_process.stdout = (
            "\n".join(line.split(" [")[0] for line in run.stdout.splitlines()) for run in (supervised, in_process)
        )
    assert supervised.stdout == in_process.stdout and supervised.stdout
    assert supervised.stderr == in_process.stderr == ""


@pytest.mark.slow
def test_a_thread_the_target_leaves_running_does_not_keep_smoke_alive(tmp_path: Path) -> None:
    """``rollcert smoke`` printed its lines and then never exited (the interpreter
    waits for non-daemon threads); its worker is now stopped after a grace period."""
    run = rollcert(tmp_path, "smoke", "hangs:LEAVES_A_THREAD", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok, 0 failed, 0 errors" in run.stdout and run.stderr == ""


@pytest.mark.slow
def test_a_target_is_imported_and_built_once_in_the_worker_its_output_in_order(tmp_path: Path) -> None:
    """The target is resolved only in the worker (a module with side effects at
    import is not imported twice), and what it prints comes before rollcert's lines."""
    run = rollcert(tmp_path, "smoke", "prints_on_import:build")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[:3] == [
        "prints_on_import: imported", "prints_on_import: target built", lines[2],
    ] and lines[2].startswith("smoke test of hostile-prints-on-import")
    assert run.stdout.count("prints_on_import:") == 2


@pytest.mark.slow
@pytest.mark.parametrize("command", ["smoke", "explore"])
def test_a_target_that_cannot_be_imported_is_still_a_one_line_usage_error(tmp_path: Path, command: str) -> None:
    """The target is resolved in the worker; its error still travels as exit status 3 and one line."""
    run = rollcert(tmp_path, command, "raising:unbuildable")
    assert run.returncode == 3 and run.stdout == "", run.stdout + run.stderr
    assert run.stderr == (
        "rollcert: calling raising:unbuildable to build the target raised "
        "UnprintableError: <its __str__ raised RuntimeError>\n"
    )


@pytest.mark.slow
def test_ctrl_c_stops_a_supervised_explore_and_leaves_no_process_behind(tmp_path: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HOSTILE), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "rollcert.command.cli", "explore", "slow_splice:TARGET", "--depth", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=tmp_path,
        start_new_session=True,
    )
    try:
        time.sleep(4)  # well into the search: every splice sleeps 50 ms
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the worker and the forkserver follow rollcert out
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail("a process of the run is still alive 10 s after rollcert exited")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stdout + stderr
    assert stderr == "rollcert: interrupted\n" and stdout == ""


@pytest.mark.slow
def test_a_20_mb_wrong_buffer_is_drawn_around_the_difference_not_quoted_whole(tmp_path: Path) -> None:
    """Before: every drawing and the reason quoted the whole buffer (a 40 MB
    reason, 680 MB of peak memory for a 20 MB answer)."""
    run = rollcert(tmp_path, "certify", "flooding_buffer:TARGET", "--only", "R0", "--quiet")
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "R0        violated" in run.stdout
    assert len(run.stdout) < 20_000, len(run.stdout)
    assert "more bytes…" in run.stdout  # the rest is counted, not shown
    assert "zzzz" in run.stdout  # the wrong bytes themselves are shown


def test_r7_compares_plain_values_not_a_lying_subclass() -> None:
    """Was ``passed``: R7's runner took ``bytes(read())`` and ``int(length())``, and a
    subclass's ``==`` said True to the model's values."""
    result = certified(module("lying_concurrent").TARGET, "R7")
    assert result.verdict == "error", result.reason
    assert "not bytes" in (result.reason or "") or "not int" in (result.reason or ""), result.reason
