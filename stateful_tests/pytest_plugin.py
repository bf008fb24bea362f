"""A pytest plugin: the certification gate inside another project's tests.

    def test_my_buffer_is_certified(rollcert_gate):
        rollcert_gate("mypackage.rollcert_target:TARGET", profile="ci")

The fixture fails the test (with the certificate and any counterexample in
the message) unless every assessed property passed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rollcert.stateful_tests.adapter import Target


def certify_or_fail(
    target: Target | str, *, profile: str = "quick", seed: int = 0, only: tuple[str, ...] | None = None
) -> None:
    from rollcert.stateful_tests.certificate import render_text
    from rollcert.stateful_tests.certify import certify
    from rollcert.stateful_tests.targets import resolve_target

    resolved = resolve_target(target) if isinstance(target, str) else target
    certificate = certify(resolved, profile=profile, seed=seed, only=only)
    if certificate.exit_status != 0:
        pytest.fail(render_text(certificate), pytrace=False)


@pytest.fixture
def rollcert_gate() -> Callable[..., None]:
    return certify_or_fail
