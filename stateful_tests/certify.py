"""Run the property machines against a target and collect verdicts.

Verdicts (SPEC §6): ``passed`` — no violation and every situation the property
names was reached; ``violated`` — a shrunk counterexample; ``unknown`` — no
violation, but the run never reached some situation, so it proves nothing;
``not_assessed`` — the target lacks a capability the property needs;
``error`` — the adapter or the SUT's process broke.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FlakyFailure
from hypothesis.errors import HypothesisException
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import get_state_machine_test

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests.adapter import HarnessError
from rollcert.stateful_tests.adapter import Target
from rollcert.stateful_tests.families import family_of
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.verdicts import VERDICTS
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult

#: The records live in verdicts.py; they are named here too, where most callers look.
__all__ = ["VERDICTS", "CertificateData", "Counterexample", "PropertyResult", "certify", "certify_property", "run_to_verdict"]

#: Round r of a property's run uses seed ``seed + r * ROUND_SEED_STRIDE``.
ROUND_SEED_STRIDE = 1_000_003


def _first_violation(error: BaseException) -> BaseException:
    """Hypothesis may wrap several failures in a group; the first is the shortest."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            return _first_violation(inner)
    return error


def certify_property(target: Target, property_id: str, profile: Profile, seed: int) -> PropertyResult:
    """Run the machine of one property and decide its verdict."""
    if property_id == "R7":  # linearizability: the concurrent family, one module of its own
        from rollcert.stateful_tests.concurrency import certify_linearizability

        return certify_linearizability(target, profile, seed)
    prop = PROPERTIES.get(property_id)
    family = family_of(property_id)
    if prop is None or family is None:
        return PropertyResult(
            property_id, "not_assessed", reason="no machine for this property in this release yet"
        )
    missing = family.required_capabilities(property_id) - target.capabilities
    if missing:
        names = ", ".join(sorted(c.value for c in missing))
        return PropertyResult(
            property_id, "not_assessed", prop.title, reason=f"the target lacks the capability: {names}"
        )
    tracker = Tracker(property_id)
    machine = family.build_machine(target, property_id, tracker)
    result = run_to_verdict(
        machine, tracker, family.situations(property_id, target), PropertyResult(property_id, "passed", prop.title),
        target=target, profile=profile, seed=seed,
        minimise=lambda violation: minimise(family, target, violation), family=family.name,
    )
    result.figures = family.figures(tracker.tallies)
    return result


class _Situation(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...


class _Tracker(Protocol):
    examples: int
    steps: int
    reached: Counter[str]


def run_to_verdict(
    machine: type[RuleBasedStateMachine],
    tracker: _Tracker,
    situations: Sequence[_Situation],
    result: PropertyResult,
    *,
    target: Target,
    profile: Profile,
    seed: int,
    minimise: Callable[[Violation], Violation],
    family: str,
) -> PropertyResult:
    """Run ``machine`` for up to ``profile.rounds`` rounds (stopping once every
    situation was reached) and turn what happened into ``result``'s verdict.

    The one place where a run becomes a verdict, for every family: a :class:`Violation` is minimised into a
    counterexample; a harness failure, a non-deterministic SUT or an unexpected
    exception is ``error``; a clean run that missed a situation is ``unknown``.
    """
    started = time.perf_counter()
    try:
        for round_number in range(profile.rounds):
            round_seed = seed + round_number * ROUND_SEED_STRIDE
            test = get_state_machine_test(machine, settings=profile.hypothesis_settings())
            hypothesis_seed(round_seed)(test)()
            if all(tracker.reached[s.name] for s in situations):
                break
    except BaseException as raised:  # every failure becomes a verdict
        error = _first_violation(raised)
        if isinstance(error, Violation):
            error = minimise(error)
            config = error.config
            result.verdict = "violated"
            result.reason = error.explanation
            result.counterexample = Counterexample(
                result.property_id,
                target.name,
                config.initial,
                config.capacity,
                config.policy,
                tuple(error.steps),
                error.explanation,
                config.durable,
                family,
                config.durability,
            )
        elif isinstance(error, KeyboardInterrupt):
            raise  # the person at the keyboard; anything else the target raised is a verdict
        elif isinstance(error, FlakyFailure):
            result.verdict = "error"
            result.reason = f"the SUT is not deterministic: a failure did not reproduce ({error})"
        elif isinstance(error, HarnessError):
            result.verdict = "error"
            result.reason = f"the adapter or the SUT broke: {error}"
        elif isinstance(error, HypothesisException):
            result.verdict = "error"
            result.reason = f"the test harness failed: {type(error).__name__}: {error}"
        else:
            result.verdict = "error"
            result.reason = f"the adapter raised {type(error).__name__}: {error}"
    result.seconds = round(time.perf_counter() - started, 3)
    result.examples, result.steps = tracker.examples, tracker.steps
    result.coverage = {s.name: tracker.reached[s.name] for s in situations}
    if result.verdict == "passed":
        result.missing_situations = [s.description for s in situations if not tracker.reached[s.name]]
        if result.missing_situations:
            result.verdict = "unknown"
            result.reason = "the run never reached: " + "; ".join(result.missing_situations)
    return result


def certify(
    target: Target,
    *,
    profile: str = "quick",
    seed: int = 0,
    only: tuple[str, ...] | None = None,
    target_text: str | None = None,
) -> CertificateData:
    """Certify every property (or ``only`` some) of ``target``. ``target_text``
    is the TARGET exactly as the user typed it, for the replay commands (a
    ``module:attr`` or a subprocess command line, not the target's display name)."""
    chosen = PROFILES[profile]
    results: dict[str, PropertyResult] = {}
    for property_id in ALL_PROPERTY_IDS:
        if only is not None and property_id not in only:
            continue
        result = certify_property(target, property_id, chosen, seed)
        if target_text is not None and result.counterexample is not None:
            result.counterexample = replace(result.counterexample, target=target_text)
        results[property_id] = result
    if "R0" in results:
        _fold_into_master(results)
    return CertificateData(target, profile, seed, results)


def _fold_into_master(results: dict[str, PropertyResult]) -> None:
    """Every machine makes the R0 comparison after every step, so a violation any
    machine found is an R0 violation too. If R0's own machine missed it, R0 takes
    the shortest counterexample the others found, saying where it came from."""
    master = results["R0"]
    if master.verdict == "violated":
        return
    found = [
        r for pid, r in results.items() if pid != "R0" and r.verdict == "violated" and r.counterexample
    ]
    if not found:
        return
    shortest = min(found, key=lambda r: len(r.counterexample.steps) if r.counterexample else 0)
    master.verdict = "violated"
    master.counterexample = shortest.counterexample
    master.reason = f"found by the {shortest.property_id} machine: {shortest.reason}"
