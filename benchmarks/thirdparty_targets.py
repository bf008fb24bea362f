"""The third-party targets as the tests and the searches of benchmarks/search both
name them: which page documents which agent tool, what each diff applier and buffer
package needs installed, and how to read a certificate's findings. One place, so
that a new target is registered once for the replays (tests/) and the searches
(benchmarks/search/) alike."""

from __future__ import annotations

import shutil

import pytest

from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import PropertyResult
from rollcert.stateful_tests.judge import StepRecord

#: The agent edit tools, by the page of docs/certifications/ that documents them.
AGENT_TOOL_PAGES = {
    "aider.md": ("aider-search-replace", "aider-search-replace-focused", "aider-udiff", "aider-udiff-focused"),
    "gptme.md": ("gptme-patch", "gptme-patch-focused"),
    "openhands.md": (
        "openhands-editor",
        "openhands-editor-focused",
        "openhands-str-replace",
        "openhands-str-replace-focused",
    ),
    "codex.md": ("codex-apply-patch", "codex-apply-patch-focused"),
    "serena.md": ("serena-replace-content", "serena-replace-content-focused"),
}

#: What each diff applier needs: a Python module or a program on PATH.
DIFF_APPLIER_NEEDS = {
    "diff-match-patch": ("module", "diff_match_patch"),
    "gnu-patch": ("program", "patch"),
    "git-apply": ("program", "git"),
    "git-apply-3way": ("program", "git"),
}

#: The module each buffer package's targets need (the importorskip guard).
BUFFER_PACKAGES = {"textual": "textual", "prompt_toolkit": "prompt_toolkit", "pycrdt": "pycrdt"}


def applier(target: str) -> str:
    return target.removesuffix("-focused")


def require_applier(target: str) -> None:
    """Skip, saying what is missing, where the applier's module or program is not installed."""
    kind, name = DIFF_APPLIER_NEEDS[applier(target)]
    if kind == "module":
        pytest.importorskip(name)
    elif shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")


def package_name(target: str) -> str:
    return target.removesuffix("-focused").removesuffix("-untagged")


def is_buffer_package(target: str) -> bool:
    """A buffer package's target (the diff appliers and agent tools are others)."""
    return package_name(target) in BUFFER_PACKAGES


def package_of(target: str) -> str:
    """The module a buffer package's target needs (the importorskip guard)."""
    return BUFFER_PACKAGES[package_name(target)]


def counterexample_steps(result: PropertyResult) -> list[StepRecord]:
    assert result.verdict == "violated" and result.counterexample is not None, result.reason
    return list(result.counterexample.steps)


def met(certificate: CertificateData, machine: str, broken: str) -> list[StepRecord]:
    """The counterexample of ``broken`` that ``machine``'s run met while exploring
    (SPEC §6a: reported under the rule whose clause it breaks, not the machine's)."""
    found = certificate.results[machine].found_elsewhere.get(broken)
    assert found is not None, certificate.results[machine].found_elsewhere
    assert broken in found.broken
    assert certificate.results[broken].verdict == "violated"
    return list(found.steps)
