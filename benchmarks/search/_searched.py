"""The searches the files here share: each certificate made once per run."""

from __future__ import annotations

from functools import cache

from benchmarks.documented_verdicts import REGENERATE
from benchmarks.documented_verdicts import Documented
from rollcert.stateful_tests.certify import CertificateData


@cache
def certificate_of(target: str, profile: str, seed: int) -> CertificateData:
    """The certificate of ``target`` (a registered name), made once per run."""
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.resolve import resolve_target

    return certify(resolve_target(target), profile=profile, seed=seed)


def certified_as_documented(documented: Documented) -> CertificateData:
    """``documented``'s target certified as its page was; fails, saying what to do,
    when a verdict is not the one the page shows (a new release changed it)."""
    certificate = certificate_of(documented.target, documented.profile, documented.seed)
    changed = {
        pid: f"{documented.verdicts.get(pid)} -> {result.verdict}"
        for pid, result in certificate.results.items()
        if result.verdict != documented.verdicts.get(pid)
    }
    assert not changed, (
        f"{certificate.target.version} no longer behaves as docs/certifications/{documented.page} says "
        f"({documented.target}, profile {documented.profile}, seed {documented.seed}): {changed}. "
        f"Read the new counterexamples (rollcert certify {documented.target} --profile {documented.profile}), "
        f"update the page's summary, then run {REGENERATE} {documented.page}."
    )
    return certificate
