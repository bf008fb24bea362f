"""Helpers shared by the suite's own tests (``from _helpers import ...``).

- :func:`seen` / :func:`model_seen`: what a buffer and the model show (bytes,
  depth, revision), to compare after each step;
- :func:`perform`: one rollback-family operation on a buffer with rollcert's
  Python buffer API (``JournaledBuffer``, the naive specimens), the way the
  model's ``step`` reads it;
- :func:`documented_certificates` / :func:`certificate_of`: the certificates
  the pages of docs/certifications/ embed, and the same run made again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rollcert.model import operations as ops
from rollcert.model.reference import ModelState
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.judge import Violation
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target
from rollcert.targets.resolve import resolve_target

#: (bytes, depth, revision)
Seen = tuple[bytes, int, int]


def seen(buffer: Any) -> Seen:
    return buffer.read(), buffer.depth, buffer.revision


def model_seen(state: ModelState) -> Seen:
    return state.current, state.depth, state.revision


def perform(
    buffer: Any, operation: ops.Operation, tokens: list[Any], foreign: Callable[[], object] | None = None
) -> None:
    """Do ``operation`` on ``buffer``; a checkpoint taken is appended to ``tokens``
    (``RollbackTo(i)`` rolls back to ``tokens[i]``), and ``foreign()`` makes the
    checkpoint of another buffer a ``RollbackToForeign`` uses."""
    if isinstance(operation, ops.Splice):
        buffer.splice(operation.offset, operation.delete_length, operation.insert)
    elif isinstance(operation, ops.Rollback):
        buffer.rollback(operation.steps)
    elif isinstance(operation, ops.Compact):
        buffer.compact(operation.keep)
    elif isinstance(operation, ops.TakeCheckpoint):
        tokens.append(buffer.checkpoint())
    elif isinstance(operation, ops.RollbackTo):
        buffer.rollback_to(tokens[operation.checkpoint])
    elif isinstance(operation, ops.RollbackToForeign) and foreign is not None:
        buffer.rollback_to(foreign())
    elif isinstance(operation, ops.OutOfLogWrite):
        buffer.write_out_of_log(operation.offset, operation.delete_length, operation.insert)
    elif isinstance(operation, ops.ArmJournalFault):
        buffer.fail_next_append()
    elif isinstance(operation, ops.AdoptCurrent):
        buffer.adopt_current()
    else:  # pragma: no cover - the traces of the tests have no other kinds
        raise AssertionError(f"unknown operation {operation!r}")


# -- the certificates of docs/certifications/ ----------------------------------------

# Parsed where the search that re-checks them lives (benchmarks/documented_verdicts.py).
from benchmarks.documented_verdicts import MAX_COUNTEREXAMPLE_STEPS  # noqa: E402
from benchmarks.documented_verdicts import PAGES  # noqa: E402
from benchmarks.documented_verdicts import REGENERATE  # noqa: E402
from benchmarks.documented_verdicts import Documented  # noqa: E402
from benchmarks.documented_verdicts import documented_certificates  # noqa: E402

__all__ = ["MAX_COUNTEREXAMPLE_STEPS", "PAGES", "REGENERATE", "Documented", "documented_certificates"]


@cache
def certificate_of(target: str, profile: str, seed: int) -> CertificateData:
    """The certificate of ``target`` (a registered name), made once per run of the tests.
    A search: the tests call it at the quick profile only (issue 41)."""
    assert profile == "quick", f"a test searches at {profile}: that is benchmarks/documented_verdicts.py's job"
    return certify(resolve_target(target), profile=profile, seed=seed)


#: Source of ``own_peak_kib()`` for the scripts the memory tests run in a subprocess:
#: the process's own peak resident memory in KiB, ``VmHWM`` of ``/proc/self/status``.
#: Not ``ru_maxrss``: Linux keeps the high-water mark of the memory image a process
#: replaced at ``exec``, so a child of a pytest that had grown to 300 MB reported
#: 300 MB before doing anything (all 18 hostile-server tests failed in a serial run,
#: each at exactly the parent's 312,584 KiB).
OWN_PEAK_KIB = """
def own_peak_kib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""


def specimen_target(name: str) -> Target:
    """The registered specimen ``name``'s target."""
    from rollcert.specimens import load_all

    target = load_all()[name].target
    assert target is not None
    return target


def violation_on(target: Target, config: BufferConfig, operations: list[Any]) -> Violation:
    """The violation replaying ``operations`` on ``target`` raises (the rollback family)."""
    import pytest

    from rollcert.stateful_tests.judge import replay
    from rollcert.stateful_tests.machines import ROLLBACK

    with pytest.raises(Violation) as caught:
        replay(ROLLBACK, target, config, operations)
    return caught.value


# -- the findings the docs show (replayed by tests/test_documented_findings.py) --------

ROOT = Path(__file__).resolve().parent.parent
#: The documents a reader is sent to; the session notes (docs/notes/) are history, not claims.
DOCUMENTS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "certifications").glob("*.md")]
)

#: The two layouts of a counterexample's first line: the certificate's
#: ("Counterexample for R0 and S1 (2 steps) on TARGET, starting from …") and
#: ``explain``'s ("R0 No silent corruption on TARGET: 2 steps, starting from …").
_HEADER = re.compile(
    r"^(?:Counterexample for (?P<rules>[^(\n]+?) \((?P<steps>\d+) steps?\) on (?P<target>\S+?),"
    r"|(?P<rule>[RS]\d) [^\n]*? on (?P<explained>\S+?): (?P<explained_steps>\d+) steps?,)",
    re.M,
)
_RULE = re.compile(r"\b[RS]\d\b")
_BROKEN = re.compile(r"^\s*Broken:\s+(?P<rule>[RS]\d)\b", re.M)
_REPLAY = re.compile(r"^\s*Replay: rollcert replay (?P<target>\S+) --trace '(?P<trace>[^']+)'", re.M)


@dataclass(frozen=True)
class DocumentedFinding:
    document: str
    target: str
    steps: int
    #: The rules the docs say the failing step broke: the ``Broken:`` line's, or
    #: where a block has none (the older third-party pages) its header's.
    broken: frozenset[str]
    trace: str

    @property
    def name(self) -> str:
        return f"{self.document}:{self.target}:{'+'.join(sorted(self.broken))}:{self.trace_digest}"

    @property
    def trace_digest(self) -> str:
        return hashlib.sha256(self.trace.encode()).hexdigest()[:8]


@cache
def documented_findings() -> tuple[DocumentedFinding, ...]:
    """Every counterexample block of the docs a reader is sent to, once each."""
    found: dict[str, DocumentedFinding] = {}
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        headers = list(_HEADER.finditer(text))
        for index, header in enumerate(headers):
            end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
            block = text[header.start() : end]
            replay_line = _REPLAY.search(block)
            if replay_line is None or "..." in replay_line["trace"]:
                continue  # an R7 history (no trace to replay) or an elided excerpt (the README's)
            broken_line = _BROKEN.search(block)
            if broken_line is not None:
                broken = frozenset({broken_line["rule"]})
            else:
                broken = frozenset(_RULE.findall(header["rules"] or header["rule"]))
            steps = header["steps"] or header["explained_steps"]
            finding = DocumentedFinding(
                str(document.relative_to(ROOT)), replay_line["target"], int(steps), broken, replay_line["trace"]
            )
            found.setdefault(finding.name, finding)  # the same block quoted twice is one finding
    return tuple(sorted(found.values(), key=lambda f: f.name))
