"""Every documented finding is replayed, not re-searched (issue 41).

The docs show each finding as a counterexample block: a header naming the rules,
the steps, a ``Broken:`` line and a ``Replay: rollcert replay TARGET --trace '…'``
line. A finding that the docs claim must still be one: this module reads every
such block from the docs (the specimens, the tour, the diff guide, every
third-party page and the README) and replays its stored trace on its target —
deterministic, milliseconds for an in-process target — checking that

* the trace still fails, at its last step (the counterexample is as long as the
  docs say: a minimal trace that fails earlier or later has changed);
* the failing step still breaks the rule the ``Broken:`` line names (SPEC §6a:
  a counterexample quotes the rule it broke, not the machine that met it);
* the bundled implementation, the sound control, runs every rollback-family and
  diff-family trace without a violation: a documented counterexample is never a
  false positive on a sound design.

Searching for the findings (the kill matrix over seeds, the third-party verdicts
at their pages' profiles) is a benchmark, not a test: ``python -m
benchmarks.suite`` and ``python docs/certifications/regenerate.py`` (see
docs/performance.md, "Where search power is measured").
"""

from __future__ import annotations

from functools import cache

import pytest
from _helpers import DocumentedFinding
from _helpers import documented_findings

from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.traces import parse_trace
from rollcert.targets.adapter import Target
from rollcert.targets.resolve import resolve_target

FINDINGS = documented_findings()
#: Targets that run in this process: the specimens and the Python packages the
#: dev extra installs. The agent tools run in environments of their own
#: (targets/tool_envs.py), built once per machine; their findings replay in the
#: slow tier.
IN_PROCESS_SCHEMES = ("specimen:",)
PACKAGES = {"textual": "textual", "prompt_toolkit": "prompt_toolkit", "pycrdt": "pycrdt", "diff-match-patch": "diff_match_patch"}


def _package_of(target: str) -> str | None:
    for prefix, package in PACKAGES.items():
        if target == prefix or target.startswith(prefix + "-"):
            return package
    return None


def _in_process(finding: DocumentedFinding) -> bool:
    return finding.target.startswith(IN_PROCESS_SCHEMES) or _package_of(finding.target) is not None


@cache
def _target(text: str) -> Target:
    package = _package_of(text)
    if package is not None:
        pytest.importorskip(package)
    return resolve_target(text)


def _replayed(finding: DocumentedFinding) -> Violation:
    family, config, operations = parse_trace(finding.trace)
    with pytest.raises(Violation) as caught:
        replay(family, _target(finding.target), config, operations)
    return caught.value


def _check(finding: DocumentedFinding) -> None:
    violation = _replayed(finding)
    where = f"{finding.document}: {finding.target}'s {'/'.join(sorted(finding.broken))} counterexample"
    assert len(violation.steps) == finding.steps, (
        f"{where} fails at step {len(violation.steps)}, the docs say {finding.steps}: {violation.explanation}"
    )
    named = finding.broken - {"R0"}  # R0 is every violation's rule
    assert not named or named & set(violation.broken), (
        f"{where} now breaks {violation.broken}, not {sorted(finding.broken)}: {violation.explanation}"
    )


def test_the_docs_hold_the_findings_this_module_replays() -> None:
    """The parser found the blocks: a change of the certificate's layout would
    otherwise leave this module replaying nothing."""
    documents = {f.document for f in FINDINGS}
    assert "docs/specimens.md" in documents and "docs/tour.md" in documents
    assert any(d.startswith("docs/certifications/") for d in documents)
    assert sum(f.target.startswith("specimen:") for f in FINDINGS) >= 30
    assert len(FINDINGS) >= 60


def _param(finding: DocumentedFinding) -> object:
    """A third-party package's finding is in the slow tier: importing the package
    (textual, prompt_toolkit, pycrdt) alone takes a second or more."""
    marks = [pytest.mark.slow] if _package_of(finding.target) is not None else []
    return pytest.param(finding, marks=marks, id=finding.name)


@pytest.mark.parametrize("finding", [_param(f) for f in FINDINGS if _in_process(f)])
def test_a_documented_finding_still_fails_on_its_rule(finding: DocumentedFinding) -> None:
    _check(finding)


@pytest.mark.slow
@pytest.mark.parametrize("finding", [f for f in FINDINGS if not _in_process(f)], ids=lambda f: f.name)
def test_a_documented_agent_tool_finding_still_fails_on_its_rule(finding: DocumentedFinding) -> None:
    """Over the protocol, in the tool's own environment (built on first use)."""
    _check(finding)


@pytest.mark.parametrize(
    "finding",
    [f for f in FINDINGS if f.target.startswith("specimen:") and '"family":"program"' not in f.trace],
    ids=lambda f: f.name,
)
def test_the_sound_implementation_runs_every_specimen_trace(finding: DocumentedFinding) -> None:
    family, config, operations = parse_trace(finding.trace)
    replay(family, resolve_target("bundled"), config, operations)


def test_every_specimen_has_a_documented_counterexample_on_its_story_rule() -> None:
    """The replay above kills every specimen on every run, so each specimen needs
    its minimal trace in docs/specimens.md (``rollcert specimens`` writes it).
    R7's counterexamples are histories of threads, not traces: its specimens are
    searched (the R7 canary in tests/test_specimens.py, and benchmarks.suite)."""
    from rollcert.specimens import load_all

    documented: dict[str, set[str]] = {}
    for finding in FINDINGS:
        if finding.document == "docs/specimens.md":
            documented.setdefault(finding.target.removeprefix("specimen:"), set()).update(finding.broken)
    missing = {
        name: sorted(specimen.breaks)
        for name, specimen in load_all().items()
        if specimen.breaks != {"R7"} and not specimen.breaks <= documented.get(name, set())
    }
    assert not missing, f"specimens without a documented trace on their story's rule: {missing}"
