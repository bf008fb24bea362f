"""``rollcert smoke TARGET``: is the adapter wired up at all?

A full certification takes seconds to minutes and, when an adapter is simply
miswired (a server that never starts, an op that is misnamed, an error kind that
does not travel), drowns the cause in a certificate of ``error`` verdicts. The
smoke run makes a handful of fixed operations — a new buffer, a read, a splice,
a rollback, a refused rollback, then each declared capability family once
(diffs and durability included) — and prints one line per check.

It checks the wiring, never the behaviour: each operation the target declares
is there and can be called, every refusal is a typed error (those of
:mod:`rollcert.model.errors`, or ``ValueError``/``TypeError``), and reading back
is consistent (two reads give the same bytes, the buffer set up is the buffer
read, depth, revision and length are whole numbers, length is the length read).
Whether an answer is *right* is ``certify``'s question: an adapter that
faithfully wires a buggy tool must pass smoke, or the user cannot tell a
miswired adapter from a finding (issue 43). A refusal the rules would not make
is therefore reported as what it is (``[refused: JournalError]``), not judged.

The checks are written in a few letters (``abcabc``, ``XYZ``...). A target that
declares an alphabet (``Target.alphabet``, a version 2 server's hello) is asked
them in its own letters: each letter the checks use is mapped to one of the
target's, in order (whitespace last), so a check never feeds a target bytes it
said it is not honest on. A step over the target's declared size limits is
skipped and named, as the machines never ask it.

Its exit status follows the README's: 1 when a wiring check fails (``FAIL``,
naming the check: declared operations, typed errors, return types, read-back,
observations), 2 when the adapter or its server broke (``ERROR``) or when
nothing could be checked at all (a smoke run that checked nothing must not say
0), 0 otherwise. A focused target's set-aside findings are honoured: a step they
cover is skipped and named, as the machines skip it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import Literal

from rollcert.model.contract import Hunk
from rollcert.model.errors import error_kind
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Reopen
from rollcert.model.operations import Restart
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.reports.escape import terminal
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.judge import built
from rollcert.stateful_tests.judge import call_deadline
from rollcert.stateful_tests.judge import call_timeout
from rollcert.stateful_tests.judge import interrupted_by_user
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import CallTimeout
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import describe_exception
from rollcert.targets.adapter import visible

#: Exit statuses, as the README's table (and ``certify``'s) says.
EXIT_OK, EXIT_VIOLATED, EXIT_ERROR = 0, 1, 2

Status = Literal["ok", "FAIL", "ERROR", "skip"]

#: What smoke checks, in the words its FAIL lines start with.
WIRING_CHECKS = ("declared operations", "typed errors", "return types", "read-back", "observations")

#: The capabilities whose observations every check reads back after each step.
_OBSERVATIONS = frozenset({Capability.DEPTH, Capability.REVISIONS, Capability.CONCURRENT})

#: What smoke says it is, under its first line.
WIRING_ONLY = (
    "checks wiring only: each declared operation can be called, refusals are typed errors, "
    "reads are consistent; it does not judge behaviour (run `rollcert certify` to judge)"
)

#: The adapter methods each capability declares (``targets.adapter.SystemUnderTest``).
METHODS: dict[Capability, tuple[str, ...]] = {
    Capability.CORE: ("read", "splice", "rollback"),
    Capability.DEPTH: ("depth",),
    Capability.REVISIONS: ("revision",),
    Capability.CHECKPOINTS: ("checkpoint", "rollback_to"),
    Capability.JOURNAL_FAULTS: ("arm_journal_fault",),
    Capability.OUT_OF_LOG_WRITES: ("write_out_of_log",),
    Capability.ADOPT: ("adopt_current",),
    Capability.DIFFS: ("snapshot", "apply_diff", "rollback_diff"),
    Capability.DURABILITY: ("restart", "run_with_crash", "flush", "compact", "corrupt_committed_record", "repair_corruption"),
    Capability.DISK_FAULTS: ("arm_disk_fault", "reopen"),
    Capability.CONCURRENT: ("length",),
}


@dataclass(frozen=True)
class SmokeCheck:
    """A few operations on a fresh buffer, for one capability family.

    ``needs`` are the capabilities the operations use; ``diff`` says they are
    diff-machine steps, judged by the diff session rather than the rollback one.
    """

    name: str
    needs: frozenset[Capability]
    config: BufferConfig
    operations: tuple[Operation, ...] | tuple[DiffOperation, ...]
    diff: bool = False


@dataclass(frozen=True)
class SmokeResult:
    name: str
    status: Status
    detail: str

    def line(self) -> str:
        # The detail quotes the target (its error class and message): one line,
        # nothing that steers the terminal (SPEC §8).
        return f"{self.status:<5} {self.name:<18} {terminal(self.detail)}"


def _needs(*capabilities: Capability) -> frozenset[Capability]:
    return frozenset(capabilities)


_START = BufferConfig(b"abcabc")
_CORE = _needs(Capability.CORE)

CHECKS: tuple[SmokeCheck, ...] = (
    # Every SUT can be made and read, whatever it declares (a diff applier has no rollback).
    SmokeCheck("new+read", _needs(), _START, ()),
    SmokeCheck("splice+rollback", _CORE, _START, (Splice(1, 2, b"XYZ"), Splice(0, 0, b"!"), Rollback(2))),
    SmokeCheck("refusals", _CORE, _START, (Splice(7, 0, b"x"), Rollback(1))),
    SmokeCheck(
        "depth", _needs(Capability.CORE, Capability.DEPTH), _START, (Splice(0, 1, b""), Splice(0, 0, b"q"), Rollback(1))
    ),
    SmokeCheck(
        "revisions",
        _needs(Capability.CORE, Capability.REVISIONS),
        _START,
        (Splice(0, 1, b""), Rollback(1), Splice(0, 0, b"r")),
    ),
    SmokeCheck(
        "checkpoints",
        _needs(Capability.CORE, Capability.CHECKPOINTS),
        _START,
        (TakeCheckpoint(), Splice(3, 0, b"ZZ"), RollbackTo(0), Splice(0, 1, b"k"), RollbackToForeign()),
    ),
    SmokeCheck(
        "journal_faults",
        _needs(Capability.CORE, Capability.JOURNAL_FAULTS),
        _START,
        (ArmJournalFault(), Splice(0, 0, b"f")),
    ),
    SmokeCheck(
        "out_of_log_writes",
        _needs(Capability.CORE, Capability.OUT_OF_LOG_WRITES),
        _START,
        (Splice(0, 0, b"w"), OutOfLogWrite(0, 2, b"Q"), Rollback(1)),
    ),
    SmokeCheck(
        "adopt",
        _needs(Capability.CORE, Capability.OUT_OF_LOG_WRITES, Capability.ADOPT),
        _START,
        (Splice(0, 0, b"w"), OutOfLogWrite(0, 2, b"Q"), AdoptCurrent(), Splice(0, 0, b"n"), Rollback(1)),
    ),
    SmokeCheck(
        "bounded",
        _needs(Capability.CORE, Capability.BOUNDED),
        BufferConfig(b"ab", capacity=1, policy="reject"),
        (Splice(0, 0, b"1"), Splice(0, 0, b"2")),
    ),
    SmokeCheck(
        "durability",
        _needs(Capability.CORE, Capability.DURABILITY),
        BufferConfig(b"abcabc", durable=True),
        (Splice(0, 0, b"d"), Restart(), Rollback(1)),
    ),
    SmokeCheck(
        "disk_faults",
        _needs(Capability.CORE, Capability.DURABILITY, Capability.DISK_FAULTS),
        BufferConfig(b"abcabc", durable=True),
        (Splice(0, 0, b"d"), Reopen()),
    ),
    SmokeCheck("length", _needs(Capability.CORE, Capability.CONCURRENT), _START, (Splice(0, 0, b"L"),)),
    # A diff applier (no CORE) is smoked on snapshot and apply; a log on rollback_diff too.
    SmokeCheck(
        "diffs",
        _needs(Capability.DIFFS),
        _START,
        (TakeSnapshot(), ApplyDiff(0, "positional", (Hunk(1, 2, b"Q"),)), ToolWrite(5, 1, b"t")),
        diff=True,
    ),
    SmokeCheck(
        "rollback_diff",
        _needs(Capability.CORE, Capability.DIFFS),
        _START,
        (TakeSnapshot(), ApplyDiff(0, "content", (Hunk(4, 5, b"R"),)), Splice(0, 0, b"s"), RollbackDiff(0)),
        diff=True,
    ),
)


def _check_letters(checks: Sequence[SmokeCheck]) -> bytes:
    """Every letter the checks are written in, in the order they are mapped onto an alphabet."""
    letters: list[int] = []
    for check in checks:
        texts = [check.config.initial]
        for operation in check.operations:
            texts.append(getattr(operation, "insert", b""))
            texts += [hunk.replacement for hunk in getattr(operation, "hunks", ())]
        letters += [byte for text in texts for byte in text if byte not in letters]
    return bytes(letters)


def in_alphabet(check: SmokeCheck, alphabet: bytes | None, letters: bytes) -> SmokeCheck:
    """``check`` written in ``alphabet``: the n-th of ``letters`` becomes the n-th
    letter of the alphabet (whitespace after the rest, cycling when the alphabet
    is shorter). ``None`` (any byte): the check as it is."""
    if alphabet is None:
        return check
    ordered = sorted(dict.fromkeys(alphabet), key=lambda byte: bytes([byte]).isspace())
    table = bytes.maketrans(letters, bytes(ordered[n % len(ordered)] for n in range(len(letters))))

    def translated(operation: object) -> object:
        if hasattr(operation, "insert"):
            operation = replace(operation, insert=bytes(operation.insert).translate(table))  # type: ignore[type-var]
        if isinstance(operation, ApplyDiff):
            hunks = tuple(replace(hunk, replacement=hunk.replacement.translate(table)) for hunk in operation.hunks)
            operation = replace(operation, hunks=hunks)
        return operation

    return replace(
        check,
        config=replace(check.config, initial=check.config.initial.translate(table)),
        operations=tuple(translated(operation) for operation in check.operations),  # type: ignore[arg-type]
    )


class _Miswired(Exception):
    """A wiring check failed: ``check`` names which (one of :data:`WIRING_CHECKS`)."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check


@dataclass
class _Wiring:
    """What a family's ``perform`` needs of a session (``family.LiveSession``), and
    no model: smoke calls the target and looks at its answers' form only.

    ``model`` is the family's state after the operations, followed as the model
    would take them, used for one thing: asking the target whether it sets a step
    aside (findings and size limits are stated over model states). It never
    judges an answer."""

    target: Target
    config: BufferConfig
    sut: SystemUnderTest
    model: object
    handles: dict[str, list[object | None]] = field(default_factory=dict)
    sut_report: bool = True
    other: SystemUnderTest | None = None

    def other_sut(self) -> SystemUnderTest:
        if self.other is None:
            self.other = self.target.factory(self.config)
        return self.other

    def close(self) -> None:
        for sut in (self.sut, self.other):
            close = getattr(sut, "close", None)
            if callable(close):
                close()


def _missing_methods(sut: object, capabilities: frozenset[Capability]) -> list[str]:
    """The methods of ``capabilities`` that ``sut`` does not have at all."""
    wanted = [name for capability in sorted(capabilities) for name in METHODS.get(capability, ())]
    return [name for name in dict.fromkeys(wanted) if not callable(getattr(sut, name, None))]


def _read_back(live: _Wiring, expected: bytes | None = None) -> bytes:
    """Read the buffer twice (the same bytes both times, as ``bytes``); with
    ``expected``, what was set up must be what reads back. Where declared, depth,
    revision and length answer whole numbers, and length is the length read."""
    sut, capabilities = live.sut, live.target.capabilities
    first, second = _read_bytes(sut), _read_bytes(sut)
    if first != second:
        raise _Miswired("read-back", f"two reads in a row returned different bytes: {first!r}, then {second!r}")
    if expected is not None and first != expected:
        raise _Miswired("read-back", f"the buffer was set up as {expected!r} but read() returned {first!r}")
    for capability, method in ((Capability.DEPTH, "depth"), (Capability.REVISIONS, "revision"), (Capability.CONCURRENT, "length")):
        if capability not in capabilities:
            continue
        value = _answer(getattr(sut, method), f"{method}()")
        if type(value) is not int:
            raise _Miswired("return types", f"{method}() returned {type(value).__name__}, not int")
        if capability is Capability.CONCURRENT and value != len(first):
            raise _Miswired("read-back", f"length() returned {value}, but read() returned {len(first)} bytes")
    return first


def _read_bytes(sut: SystemUnderTest) -> bytes:
    """``read()``'s answer as plain bytes (``bytes``'s own slicing: a subclass may lie in ``==``)."""
    value = _answer(sut.read, "read()")
    if not isinstance(value, bytes):
        raise _Miswired("return types", f"read() returned {type(value).__name__}, not bytes")
    return bytes.__getitem__(value, slice(None))


def _answer(call: Callable[[], object], what: str) -> object:
    """An observation's answer; an observation that raises is miswired."""
    try:
        return call()
    except (HarnessError, NotGenerable, CallTimeout):
        raise
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt) and interrupted_by_user():
            raise
        raise _Miswired("observations", f"{what} raised {describe_exception(error)}") from None


def _perform(family: PropertyFamily[Any, Any, Any], live: _Wiring, operation: Any) -> str:
    """Do ``operation``; its outcome in a few words (``""``: it went through).
    A typed refusal is a well-wired answer; anything else it raises is not."""
    try:
        family.perform(live, operation)
    except CapabilityMissing as missing:
        raise _Miswired(
            "declared operations",
            f"{operation.describe()}: the adapter raised CapabilityMissing({missing}), yet the target declares it",
        ) from None
    except (HarnessError, NotGenerable, CallTimeout):
        raise
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt) and interrupted_by_user():
            raise
        kind = error_kind(error)
        if kind.startswith("undocumented:"):
            raise _Miswired(
                "typed errors",
                f"{operation.describe()} raised {describe_exception(error)}; a refusal is one of the errors of "
                "rollcert.model.errors (ValueError or TypeError for bad arguments)",
            ) from None
        return f"refused: {visible(kind)}"
    return ""


def _followed(family: PropertyFamily[Any, Any, Any], state: Any, operation: Any) -> Any:
    """The model's state after ``operation`` (for set-aside questions only)."""
    try:
        return family.predict(state, operation).readings[0].state
    except Exception:  # a step the model cannot take changes nothing it is asked about
        return state


def _family(check: SmokeCheck) -> PropertyFamily[Any, Any, Any]:
    """The family whose operations ``check`` makes (imported late: the machines pull in Hypothesis)."""
    if check.diff:
        from rollcert.stateful_tests.diff_machine import DIFFS

        return DIFFS
    from rollcert.stateful_tests.machines import ROLLBACK

    return ROLLBACK


def run_check(target: Target, check: SmokeCheck, letters: bytes | None = None) -> SmokeResult:
    """Run one check; never raises (bar ``KeyboardInterrupt``): whatever the
    adapter throws, a native ``BaseException`` included, becomes the check's line.
    The check is asked in the target's alphabet (``letters``: the letters to map,
    by default the check's own)."""
    missing = sorted(c.value for c in check.needs - target.capabilities)
    if missing:
        return SmokeResult(check.name, "skip", f"capability {', '.join(missing)} not declared")
    check = in_alphabet(check, target.alphabet, _check_letters([check]) if letters is None else letters)
    config = target.buffer_config(check.config)
    live: _Wiring | None = None
    done: list[str] = []
    set_aside: list[str] = []
    stopped = ""
    try:
        family = _family(check)
        seconds = call_timeout()
        with call_deadline("building and reading a fresh buffer", seconds):
            live = wiring = _Wiring(target, config, built(target, config), family.initial_state(config))
            used = check.needs | (_OBSERVATIONS & target.capabilities)  # read back after every step
            absent = _missing_methods(wiring.sut, used)
            if absent:
                declared = ", ".join(sorted(c.value for c in used))
                raise _Miswired("declared operations", f"no {', '.join(absent)} method, yet it declares {declared}")
            _read_back(wiring, config.initial)
            if Capability.DEPTH in target.capabilities and _answer(wiring.sut.depth, "depth()") != 0:
                raise _Miswired("read-back", "a fresh buffer has a depth other than 0: the factory must build a new one")
        for operation in check.operations:
            if target.sets_aside(wiring.model, operation):
                set_aside.append(f"{operation.describe()} ({_why_aside(target, wiring.model, operation)})")
                continue
            with call_deadline(operation, seconds):
                outcome = _perform(family, wiring, operation)
                _read_back(wiring)
            wiring.model = _followed(family, wiring.model, operation)
            done.append(operation.describe() + (f" [{outcome}]" if outcome else ""))
    except _Miswired as miswired:
        return SmokeResult(check.name, "FAIL", str(miswired))
    except HarnessError as error:
        return SmokeResult(check.name, "ERROR", f"the adapter or the SUT broke: {error}")
    except NotGenerable as reason:  # e.g. rollback_diff of an apply the target refused
        stopped = f"; stopped: {reason}"
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the adapter itself raised (a native panic too): exactly what smoke is for
        return SmokeResult(check.name, "ERROR", f"the adapter raised {type(error).__name__}: {_first_line(error)}")
    finally:
        _close_quietly(live)
    described = ", ".join(done) or "read the initial buffer"
    if set_aside:
        described += f"; set aside: {'; '.join(set_aside)}"
    return SmokeResult(check.name, "ok", described + stopped)


def _why_aside(target: Target, state: object, operation: object) -> str:
    """The findings that cover a skipped step, or the declared limits it is over."""
    findings = [finding.name for finding in target.set_aside if finding.applies(state, operation)]
    if findings:
        return ", ".join(findings)
    return "over the declared size limits"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


def _close_quietly(session: object | None) -> None:
    """A failing close must not hide the failure being reported."""
    close = getattr(session, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):  # reported by the check that broke it, if any
            close()


def smoke(target: Target, report: Callable[[str], None] = print, checks: Sequence[SmokeCheck] = CHECKS) -> int:
    """Run every check, ``report`` one line each; the exit status (see the module docstring)."""
    capabilities = ", ".join(sorted(c.value for c in target.capabilities))
    # The name, the version and the findings' names are the target's words (SPEC §8).
    report(f"smoke test of {terminal(target.name)} {terminal(target.version)} (capabilities: {capabilities})")
    report(WIRING_ONLY)
    if target.set_aside:
        report(f"set aside (known findings): {', '.join(terminal(finding.name) for finding in target.set_aside)}")
    if target.alphabet is not None:
        report(f"alphabet: the checks are asked in the target's letters {target.alphabet!r}")
    letters = _check_letters(checks)
    results = [run_check(target, checks[0], letters)]
    if results[0].status in ("FAIL", "ERROR"):  # no usable buffer, nothing else to learn: one cause, one line
        why = f"{checks[0].name} did not pass (above)"
        results += [SmokeResult(check.name, "skip", why) for check in checks[1:]]
    else:
        results += [run_check(target, check, letters) for check in checks[1:]]
    for result in results:
        report(result.line())
    counts = {status: sum(result.status == status for result in results) for status in ("ok", "FAIL", "ERROR", "skip")}
    report(f"{counts['ok']} ok, {counts['FAIL']} failed, {counts['ERROR']} errors, {counts['skip']} skipped")
    if counts["FAIL"]:
        return EXIT_VIOLATED
    if counts["ERROR"]:
        return EXIT_ERROR
    checked_a_capability = any(r.status == "ok" for r, c in zip(results, checks, strict=True) if c.needs)
    if not checked_a_capability:
        report("ERROR nothing was checked: the target declares no capability family smoke can exercise")
        return EXIT_ERROR
    return EXIT_OK
