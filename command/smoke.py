"""``rollcert smoke TARGET``: is the adapter wired up at all?

A full certification takes seconds to minutes and, when an adapter is simply
miswired (a server that never starts, an op that is misnamed, an error kind that
does not travel), drowns the cause in a certificate of ``error`` verdicts. The
smoke run makes a handful of fixed operations — a new buffer, a read, a splice,
a rollback, a refused rollback, then each declared capability family once
(diffs and durability included) — judged by the same sessions as a
certification, and prints one line per check. It proves nothing about the
rules (that is ``certify``'s job); it says whether certifying is worth starting.

The checks are written in a few letters (``abcabc``, ``XYZ``...). A target that
declares an alphabet (``Target.alphabet``, a version 2 server's hello) is asked
them in its own letters: each letter the checks use is mapped to one of the
target's, in order (whitespace last), so a check never feeds a target bytes it
said it is not honest on. A step over the target's declared size limits is
skipped and named, as the machines never ask it.

Its exit status follows the README's: 1 when a check disagrees with the model
(``FAIL``), 2 when the adapter or its server broke (``ERROR``) or when nothing
could be checked at all (a smoke run that checked nothing must not say 0), 0
otherwise. A focused target's set-aside findings are honoured: a step they
cover is skipped and named, as the machines skip it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Literal

from rollcert.model.contract import Hunk
from rollcert.model.operations import AdoptCurrent
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import ArmJournalFault
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
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
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target

#: Exit statuses, as the README's table (and ``certify``'s) says.
EXIT_OK, EXIT_VIOLATED, EXIT_ERROR = 0, 1, 2

Status = Literal["ok", "FAIL", "ERROR", "skip"]


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


class _NotRun(Exception):
    """The check stopped before its end for a reason that is no failure (a step
    the diff session cannot generate after an imprecise refusal)."""


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


def run_check(target: Target, check: SmokeCheck, letters: bytes | None = None) -> SmokeResult:
    """Run one check; never raises (bar ``KeyboardInterrupt``): whatever the
    adapter throws, a native ``BaseException`` included, becomes the check's line.
    The check is asked in the target's alphabet (``letters``: the letters to map,
    by default the check's own)."""
    missing = sorted(c.value for c in check.needs - target.capabilities)
    if missing:
        return SmokeResult(check.name, "skip", f"capability {', '.join(missing)} not declared")
    check = in_alphabet(check, target.alphabet, _check_letters([check]) if letters is None else letters)
    session: object | None = None
    set_aside: list[str] = []
    stopped = ""
    try:
        if check.diff:
            session = _run_diff_steps(target, check, set_aside)
        else:
            from rollcert.stateful_tests.machines import ROLLBACK  # late: the machines pull in Hypothesis

            session = Session(ROLLBACK, target, target.buffer_config(check.config))
            for operation in check.operations:
                assert not isinstance(operation, (TakeSnapshot, ApplyDiff, RollbackDiff, ToolWrite))
                if target.sets_aside(session.model, operation):
                    set_aside.append(f"{operation.describe()} ({_why_aside(target, session.model, operation)})")
                    continue
                session.execute(operation)
    except Violation as violation:
        return SmokeResult(check.name, "FAIL", f"disagrees with the model: {violation.explanation}")
    except HarnessError as error:
        return SmokeResult(check.name, "ERROR", f"the adapter or the SUT broke: {error}")
    except _NotRun as reason:
        stopped = f"; stopped: {reason}"
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the adapter itself raised (a native panic too): exactly what smoke is for
        return SmokeResult(check.name, "ERROR", f"the adapter raised {type(error).__name__}: {_first_line(error)}")
    finally:
        _close_quietly(session)
    described = ", ".join(operation.describe() for operation in check.operations) or "read the initial buffer"
    if set_aside:
        described += f"; set aside: {'; '.join(set_aside)}"
    return SmokeResult(check.name, "ok", described + stopped)


def _run_diff_steps(target: Target, check: SmokeCheck, set_aside: list[str]) -> object:
    """The diff session's steps (imported late: the diff machine pulls in Hypothesis)."""
    from rollcert.stateful_tests.diff_machine import DIFFS
    from rollcert.stateful_tests.family import NotGenerable

    session = Session(DIFFS, target, target.buffer_config(check.config))
    try:
        for operation in check.operations:
            if target.sets_aside(session.model, operation):
                set_aside.append(f"{operation.describe()} ({_why_aside(target, session.model, operation)})")
                continue
            session.execute(operation)  # type: ignore[arg-type]
    except NotGenerable as reason:  # e.g. rollback_diff of an apply the SUT soundly refused
        _close_quietly(session)
        raise _NotRun(str(reason)) from None
    except BaseException:
        _close_quietly(session)
        raise
    return session


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
    if target.set_aside:
        report(f"set aside (known findings): {', '.join(terminal(finding.name) for finding in target.set_aside)}")
    if target.alphabet is not None:
        report(f"alphabet: the checks are asked in the target's letters {target.alphabet!r}")
    letters = _check_letters(checks)
    results = [run_check(target, checks[0], letters)]
    if results[0].status in ("FAIL", "ERROR"):  # no buffer, nothing else to learn: one cause, one line
        results += [SmokeResult(check.name, "skip", "no buffer could be made") for check in checks[1:]]
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
