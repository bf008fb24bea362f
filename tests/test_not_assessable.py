"""What a target declares can leave a property nothing to exercise: that property is
*not assessed*, saying why, never a traceback, never a violation; and a certificate
that assessed nothing at all does not exit 0 (a gate must not go green on it).

Found by driving a protocol server that declared ``limits.alphabet = "a"``: the
diff machine could not build writers from one letter and rollcert died with a
traceback and exit status 1, the status of a violation.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.families import family_named
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters.bundled import TARGET

ONE_LETTER = replace(TARGET, name="bundled-one-letter", alphabet=b"a")


def test_an_alphabet_without_the_writers_letters_leaves_s1_not_assessed() -> None:
    certificate = certify(ONE_LETTER, only=("S1",))
    result = certificate.results["S1"]
    assert result.verdict == "not_assessed" and "alphabet b'a'" in result.reason
    assert certificate.exit_status == 2  # nothing was assessed


@pytest.mark.slow
def test_what_can_be_assessed_still_is() -> None:
    certificate = certify(ONE_LETTER, only=("R2", "S1"))
    assert certificate.results["R2"].verdict == "passed"
    assert certificate.results["S1"].verdict == "not_assessed"
    assert certificate.exit_status == 0


def test_a_machine_that_cannot_be_built_is_an_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*arguments: object) -> None:
        raise RuntimeError("the harness has no machine for this")

    monkeypatch.setattr(type(family_named("diffs")), "build_machine", broken)
    result = certify(TARGET, only=("S1",)).results["S1"]
    assert result.verdict == "error" and "RuntimeError: the harness has no machine" in result.reason


def test_a_target_without_any_assessable_capability_exits_2() -> None:
    bare = Target("no-capabilities", "1", frozenset({Capability.CORE}), TARGET.factory)
    certificate = certify(bare, only=("R1", "R3", "R5"))
    assert {r.verdict for r in certificate.results.values()} == {"not_assessed"}
    assert certificate.exit_status == 2
