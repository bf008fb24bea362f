"""The agent edit tools' documented verdicts, searched for again over the protocol (see conftest.py)."""

from __future__ import annotations

import pytest

from benchmarks.documented_verdicts import MAX_COUNTEREXAMPLE_STEPS
from benchmarks.documented_verdicts import Documented
from benchmarks.documented_verdicts import documented_certificates
from benchmarks.search._searched import certified_as_documented
from benchmarks.thirdparty_targets import AGENT_TOOL_PAGES as TARGETS

#: The targets with an undo log of their own (capability core): S2, S3 lack diffs there, not core.
WITH_UNDO = ("openhands-editor", "openhands-editor-focused")


ALL_TARGETS = {target for targets in TARGETS.values() for target in targets}


DOCUMENTED = documented_certificates(lambda target: target in ALL_TARGETS)


@pytest.mark.slow
@pytest.mark.parametrize("documented", DOCUMENTED, ids=lambda d: d.target)
def test_verdicts_are_as_documented(documented: Documented) -> None:
    certificate = certified_as_documented(documented)
    s1 = certificate.results["S1"]
    if s1.verdict == "violated":
        assert s1.counterexample is not None and len(s1.counterexample.steps) <= MAX_COUNTEREXAMPLE_STEPS
    for pid in ("S2", "S3"):  # no undo log (or, with one, no diffs): never passed, never guessed
        assert certificate.results[pid].verdict == "not_assessed"
        assert ("diffs" if documented.target in WITH_UNDO else "core") in certificate.results[pid].reason

