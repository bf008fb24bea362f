"""With the edit findings set aside, the R4 search finds each buffer package's undo past the horizon by itself (see conftest.py)."""

from __future__ import annotations

import pytest

from benchmarks.thirdparty_targets import BUFFER_PACKAGES as PACKAGE_OF
from benchmarks.thirdparty_targets import met as _met
from rollcert.model.operations import Rollback
from rollcert.stateful_tests.certify import certify
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import EMPTY_EDIT_NOT_RECORDED
from rollcert.targets.adapters import UNCHANGING_EDIT_SKIPPED
from rollcert.targets.adapters import focused
from rollcert.targets.adapters.textual_textarea import DEFAULT_HISTORY_CAPPED
from rollcert.targets.resolve import resolve_target


def _crosses_a_write(state: object, operation: object) -> bool:
    barriers = getattr(state, "barriers", ())
    depth = getattr(state, "depth", 0)
    return isinstance(operation, Rollback) and any(depth - operation.steps < b <= depth for b in barriers)


#: A rollback across an out-of-log write: none of these packages detects one (R4).
_ROLLBACK_ACROSS_A_WRITE = KnownFinding(
    "rollback_across_a_write", "a rollback across an out-of-log write is not refused", _crosses_a_write
)


def _plain(name: str) -> Target:
    pytest.importorskip(PACKAGE_OF[name])
    return resolve_target(name)


@pytest.mark.parametrize(
    ("name", "finding"),
    [("textual", EMPTY_EDIT_NOT_RECORDED), ("prompt_toolkit", UNCHANGING_EDIT_SKIPPED), ("pycrdt", EMPTY_EDIT_NOT_RECORDED)],
)
def test_undo_past_the_horizon_succeeds_instead_of_refusing(name: str, finding: KnownFinding) -> None:
    """With the edit finding set aside (and the undetected out-of-log write, the other
    R4 finding these packages have, which the wide draws may meet first), the suite
    finds the past-horizon one by itself."""
    capped = (DEFAULT_HISTORY_CAPPED,) if name == "textual" else ()  # the long histories go past textual's 50
    target = focused(_plain(name), finding, _ROLLBACK_ACROSS_A_WRITE, *capped)
    certificate = certify(target, profile="quick", seed=0, only=("R4",))
    last = _met(certificate, "R4", "R3")[-1]  # a rollback past the horizon is R3's clause, met by the R4 machine
    assert isinstance(last.operation, Rollback)
    assert (last.expected.error, last.actual.error) == ("UnreachableRollbackError", None), last

