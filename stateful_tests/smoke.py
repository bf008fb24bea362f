"""``rollcert smoke TARGET``: is the adapter wired up at all?

A full certification takes seconds to minutes and, when an adapter is simply
miswired (a server that never starts, an op that is misnamed, an error kind that
does not travel), drowns the cause in a certificate of ``error`` verdicts. The
smoke run makes a handful of fixed operations — a new buffer, a read, a splice,
a rollback, a refused rollback, then each declared capability once — judged by
the same :class:`~rollcert.stateful_tests.judge.Session` as a certification, and prints
one line per check. It proves nothing about the rules (that is ``certify``'s
job); it says whether certifying is worth starting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from rollcert.model.operations import (
    AdoptCurrent,
    ArmJournalFault,
    Operation,
    OutOfLogWrite,
    Rollback,
    RollbackTo,
    RollbackToForeign,
    Splice,
    TakeCheckpoint,
)
from rollcert.stateful_tests.adapter import BufferConfig, Capability, HarnessError, Target
from rollcert.stateful_tests.judge import Session, Violation


@dataclass(frozen=True)
class SmokeCheck:
    """A few operations on a fresh buffer, for one capability."""

    name: str
    capability: Capability
    config: BufferConfig
    operations: tuple[Operation, ...]


@dataclass(frozen=True)
class SmokeResult:
    name: str
    status: str  # "ok", "FAIL" or "skip"
    detail: str

    def line(self) -> str:
        return f"{self.status:<5} {self.name:<18} {self.detail}"


_START = BufferConfig(b"abcabc")

CHECKS: tuple[SmokeCheck, ...] = (
    SmokeCheck("new+read", Capability.CORE, _START, ()),
    SmokeCheck("splice+rollback", Capability.CORE, _START, (Splice(1, 2, b"XYZ"), Splice(0, 0, b"!"), Rollback(2))),
    SmokeCheck("refusals", Capability.CORE, _START, (Splice(7, 0, b"x"), Rollback(1))),
    SmokeCheck("depth", Capability.DEPTH, _START, (Splice(0, 1, b""), Splice(0, 0, b"q"), Rollback(1))),
    SmokeCheck("revisions", Capability.REVISIONS, _START, (Splice(0, 1, b""), Rollback(1), Splice(0, 0, b"r"))),
    SmokeCheck(
        "checkpoints",
        Capability.CHECKPOINTS,
        _START,
        (TakeCheckpoint(), Splice(3, 0, b"ZZ"), RollbackTo(0), Splice(0, 1, b"k"), RollbackToForeign()),
    ),
    SmokeCheck("journal_faults", Capability.JOURNAL_FAULTS, _START, (ArmJournalFault(), Splice(0, 0, b"f"))),
    SmokeCheck(
        "out_of_log_writes",
        Capability.OUT_OF_LOG_WRITES,
        _START,
        (Splice(0, 0, b"w"), OutOfLogWrite(0, 2, b"Q"), Rollback(1)),
    ),
    SmokeCheck(
        "adopt",
        Capability.ADOPT,
        _START,
        (Splice(0, 0, b"w"), OutOfLogWrite(0, 2, b"Q"), AdoptCurrent(), Splice(0, 0, b"n"), Rollback(1)),
    ),
    SmokeCheck(
        "bounded",
        Capability.BOUNDED,
        BufferConfig(b"ab", capacity=1, policy="reject"),
        (Splice(0, 0, b"1"), Splice(0, 0, b"2")),
    ),
)

#: Capabilities smoke does not exercise: their machines need more than a few fixed steps.
NOT_SMOKED: dict[Capability, str] = {
    Capability.DIFFS: "declared; not exercised by smoke (certify S1-S3)",
    Capability.DURABILITY: "declared; not exercised by smoke (certify R5)",
}


def run_check(target: Target, check: SmokeCheck) -> SmokeResult:
    if check.capability not in target.capabilities:
        return SmokeResult(check.name, "skip", f"capability {check.capability.value} not declared")
    session: Session | None = None
    try:
        session = Session(target, check.config)
        for operation in check.operations:
            session.execute(operation)
    except Violation as violation:
        return SmokeResult(check.name, "FAIL", f"disagrees with the model: {violation.explanation}")
    except HarnessError as error:
        return SmokeResult(check.name, "FAIL", f"the adapter or the SUT broke: {error}")
    except Exception as error:  # the adapter itself raised: exactly what smoke is for
        return SmokeResult(check.name, "FAIL", f"the adapter raised {type(error).__name__}: {error}")
    finally:
        _close_quietly(session)
    described = ", ".join(operation.describe() for operation in check.operations) or "read the initial buffer"
    return SmokeResult(check.name, "ok", described)


def _close_quietly(session: Session | None) -> None:
    """A failing close must not hide the failure being reported."""
    if session is not None:
        with contextlib.suppress(Exception):  # reported by the check that broke it, if any
            session.close()


def smoke(target: Target, report: Callable[[str], None] = print) -> int:
    """Run every check, ``report`` one line each; 0 if none failed, else 1."""
    capabilities = ", ".join(sorted(c.value for c in target.capabilities))
    report(f"smoke test of {target.name} {target.version} (capabilities: {capabilities})")
    results = [run_check(target, CHECKS[0])]
    if results[0].status == "FAIL":  # no buffer, nothing else to learn: one cause, one line
        results += [SmokeResult(check.name, "skip", "no buffer could be made") for check in CHECKS[1:]]
    else:
        results += [run_check(target, check) for check in CHECKS[1:]]
    results += [
        SmokeResult(capability.value, "skip", why) for capability, why in NOT_SMOKED.items()
        if capability in target.capabilities
    ]
    for result in results:
        report(result.line())
    failed = sum(result.status == "FAIL" for result in results)
    passed = sum(result.status == "ok" for result in results)
    report(f"{passed} ok, {failed} failed, {len(results) - passed - failed} skipped")
    return 1 if failed else 0
