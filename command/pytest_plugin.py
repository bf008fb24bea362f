"""A pytest plugin: the certification gate inside another project's tests.

Two ways in. The ``rollcert_gate`` fixture certifies a target within one test:

    def test_my_buffer_is_certified(rollcert_gate):
        rollcert_gate("mypackage.rollcert_target:TARGET", profile="ci")

and fails it (with the certificate and any counterexample in the message)
unless every assessed property passed. Or, from the command line,

    pytest --rollcert-target TARGET [--rollcert-profile P] [--rollcert-seed N] [--rollcert-only R1,R2]

adds one test item per property, ``rollcert::TARGET::R2``, that certifies that
property alone: it fails with the counterexample when violated (or with what
was never reached when unknown), is skipped with the reason when not assessed,
and errors when the adapter or the SUT broke. Items are the unit pytest-xdist
spreads over processes and machines (``-n 2``); their list depends only on the
options, never on chance, so every worker collects the same items. Each item
is the run ``rollcert certify --only ID`` makes, with one difference: R0's
item reports R0's own machine, not a counterexample another property's machine
found (a serial certificate folds those into R0).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Target

#: The marker every per-property item carries: ``pytest --rollcert-target X -m rollcert`` runs only them.
MARKER = "rollcert"


def certify_or_fail(
    target: Target | str, *, profile: str = "quick", seed: int = 0, only: tuple[str, ...] | None = None
) -> None:
    from rollcert.reports.certificate import render_text
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.resolve import resolve_target

    resolved = resolve_target(target) if isinstance(target, str) else target
    certificate = certify(resolved, profile=profile, seed=seed, only=only)
    if certificate.exit_status != 0:
        pytest.fail(render_text(certificate), pytrace=False)


@pytest.fixture
def rollcert_gate() -> Callable[..., None]:
    return certify_or_fail


# -- one item per property ----------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rollcert", "rollcert: one test item per property of a target")
    group.addoption("--rollcert-target", metavar="TARGET", help="certify TARGET: one item per property (rollcert::TARGET::ID)")
    group.addoption("--rollcert-profile", choices=sorted(PROFILES), default="quick", help="(default: quick)")
    group.addoption("--rollcert-seed", type=int, default=0, metavar="N", help="(default: 0)")
    group.addoption("--rollcert-only", metavar="IDS", help="comma-separated property IDs, e.g. R0,R2")
    group.addoption("--rollcert-set-aside", metavar="FILE", help="a findings file (TOML): known findings to set aside")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a rollcert property certified by --rollcert-target")
    text: str | None = config.getoption("rollcert_target")
    if text is not None:  # bad options are usage errors before anything is collected
        _chosen(config)
        if config.getoption("rollcert_seed") < 0:
            raise pytest.UsageError("--rollcert-seed takes a whole number from 0")
        _target(config)


def _chosen(config: pytest.Config) -> tuple[str, ...]:
    text: str | None = config.getoption("rollcert_only")
    if text is None:
        return ALL_PROPERTY_IDS
    chosen = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    unknown = [p for p in chosen if p not in ALL_PROPERTY_IDS]
    if unknown or not chosen:
        raise pytest.UsageError(f"--rollcert-only takes property IDs from {', '.join(ALL_PROPERTY_IDS)}; got {text!r}")
    return tuple(p for p in ALL_PROPERTY_IDS if p in chosen)  # the suite's order, whatever the option's


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so that they apply to these items too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    text: str | None = config.getoption("rollcert_target")
    if text is None:
        return
    # Collected as pytest collects files (collect reports and all), so the
    # terminal counts the items and xdist's workers report the same list.
    items.extend(session.genitems(RollcertSuite.from_parent(session, name="rollcert", nodeid="rollcert")))


class RollcertSuite(pytest.Collector):
    """The ``rollcert`` node: parent of the target's node."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return [RollcertTarget.from_parent(self, name=self.config.getoption("rollcert_target"))]


class RollcertTarget(pytest.Collector):
    """The ``rollcert::TARGET`` node: one :class:`PropertyItem` per chosen property, in the suite's order."""

    def collect(self) -> list[pytest.Item]:
        return [PropertyItem.from_parent(self, name=pid) for pid in _chosen(self.config)]


class PropertyItem(pytest.Item):
    """``rollcert::TARGET::ID``: certifies property ID of TARGET.

    The run happens in ``setup``, so that a harness error is reported as a
    pytest *error*; ``runtest`` turns the verdict into a pass, a failure or a skip."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker(MARKER)
        self.result: PropertyResult | None = None

    def setup(self) -> None:
        from rollcert.stateful_tests.certify import certify_property
        from rollcert.stateful_tests.profiles import PROFILES

        target = _target(self.config)
        profile = PROFILES[self.config.getoption("rollcert_profile")]
        result = certify_property(target, self.name, profile, self.config.getoption("rollcert_seed"))
        if result.verdict == "error":
            pytest.fail(f"{self.name} {result.title}: error: {result.reason}", pytrace=False)
        self.result = result

    def runtest(self) -> None:
        from dataclasses import replace

        from rollcert.reports.certificate import format_counterexample

        result = self.result
        assert result is not None
        assert self.parent is not None
        if result.verdict == "not_assessed":
            pytest.skip(f"{self.name} not assessed: {result.reason}")
        if result.verdict == "violated":
            assert result.counterexample is not None
            shown = replace(result.counterexample, target=self.parent.name)  # replayable as typed
            pytest.fail(f"{self.name} {result.title}: violated\n{format_counterexample(shown)}", pytrace=False)
        if result.verdict != "passed":
            pytest.fail(f"{self.name} {result.title}: {result.verdict}: {result.reason}", pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.nodeid


def _target(config: pytest.Config) -> Target:
    set_aside: str | None = config.getoption("rollcert_set_aside")
    return _resolve(config.getoption("rollcert_target"), str(Path(set_aside).absolute()) if set_aside else None)


@functools.cache
def _resolve(text: str, set_aside: str | None) -> Target:
    """The target, resolved once per process (a subprocess target starts no server until used)."""
    from rollcert.command.parallel import TargetSource
    from rollcert.targets.adapter import TargetError
    from rollcert.targets.findings import FindingsError

    try:
        return TargetSource(text, Path(set_aside) if set_aside else None).resolve()
    except (TargetError, FindingsError) as error:
        raise pytest.UsageError(f"--rollcert-target {text!r}: {error}") from None
