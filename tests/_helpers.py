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

from collections.abc import Callable
from functools import cache
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
