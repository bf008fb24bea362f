"""Run the property machines against a target and collect verdicts.

Verdicts (SPEC §6): ``passed`` — no violation and every situation the property
names was reached; ``violated`` — a shrunk counterexample; ``unknown`` — no
violation, but the run never reached some situation, so it proves nothing;
``not_assessed`` — the target lacks a capability the property needs;
``error`` — the adapter or the SUT's process broke.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any
from typing import Protocol

from hypothesis import seed as hypothesis_seed
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import FlakyFailure
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.errors import HypothesisException
from hypothesis.errors import Unsatisfiable
from hypothesis.reporting import with_reporter
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import get_state_machine_test

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests import model_coverage
from rollcert.stateful_tests.causes import never_succeeded
from rollcert.stateful_tests.causes import unknown_reason
from rollcert.stateful_tests.corpus import CorpusRunner
from rollcert.stateful_tests.corpus import add_counterexamples
from rollcert.stateful_tests.corpus import replay_corpus
from rollcert.stateful_tests.corpus import summary as corpus_summary
from rollcert.stateful_tests.families import family_of
from rollcert.stateful_tests.family import MAX_FINDINGS
from rollcert.stateful_tests.family import REFUSED
from rollcert.stateful_tests.family import WRONG_ERROR
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import SearchLimits
from rollcert.stateful_tests.family import SearchSpent
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.family import owner_of
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import interrupted_by_user
from rollcert.stateful_tests.judge import watching_for_ctrl_c
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.program_family import ProgramFamily
from rollcert.stateful_tests.progress_events import Budget
from rollcert.stateful_tests.progress_events import ProgressSink
from rollcert.stateful_tests.progress_events import Sampler
from rollcert.stateful_tests.shrink import minimise
from rollcert.stateful_tests.verdicts import VERDICTS
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.world import world_of
from rollcert.stateful_tests.world import world_report
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import NotAssessable
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import describe_exception
from rollcert.targets.adapter import exception_message
from rollcert.targets.portable import portable_target

#: The records live in verdicts.py; they are named here too, where most callers look.
__all__ = ["VERDICTS", "CertificateData", "Counterexample", "PropertyResult", "certify", "certify_property", "run_to_verdict"]

#: Round r of a property's run uses seed ``seed + r * ROUND_SEED_STRIDE``.
ROUND_SEED_STRIDE = 1_000_003
#: How many times one round may be started afresh after Hypothesis found its own
#: bookkeeping inconsistent (see :func:`_run_round`).
ROUND_RESTARTS = 3


def _first_violation(error: BaseException) -> BaseException:
    """Hypothesis may wrap several failures in a group; the first is the shortest."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            return _first_violation(inner)
    return error


def certify_property(
    target: Target, property_id: str, profile: Profile, seed: int, *, progress: ProgressSink | None = None
) -> PropertyResult:
    """Run the machine of one property and decide its verdict, telling ``progress``
    (if any) how it goes. The verdict depends only on the arguments but
    ``progress``: nothing is carried from one property's run to the next, which
    is what lets ``certify -j N`` run them in separate processes."""
    with without_local_constants(), watching_for_ctrl_c(), process_state_kept():
        if progress is None:
            return _certify_property(target, property_id, profile, seed, None)
        progress.started(property_id, _budget(property_id, profile))
        result = _certify_property(target, property_id, profile, seed, progress)
    progress.finished(property_id, result.verdict, result.progress_summary())
    return result


@contextmanager
def process_state_kept() -> Iterator[None]:
    """Put back, after a property's run, what a target may have changed in the
    process around it: the working directory, ``sys.stdin``/``stdout``/``stderr``,
    the recursion limit, ``random``'s global state and the loaded Hypothesis
    profile. ``rollcert certify`` runs each property in a worker process anyway;
    this is for runs in the caller's process (``--in-process``, the ``certify``
    API, the pytest plugin), where a target's ``os.chdir("/")`` used to send the
    certificate's relative output paths under / and its ``sys.stdout`` swap to
    swallow the certificate."""
    directory = os.getcwd()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    recursion_limit = sys.getrecursionlimit()
    random_state = random.getstate()
    profile = hypothesis_settings.get_current_profile_name()
    try:
        yield
    finally:
        with suppress(OSError):  # the directory may be gone; nothing better to go back to
            os.chdir(directory)
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.setrecursionlimit(recursion_limit)
        random.setstate(random_state)
        hypothesis_settings.load_profile(profile)


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Keep Hypothesis's pool of "local constants" empty while a property runs.

    Hypothesis (6.131 on) now and then draws a literal found in the source of
    the *local* modules imported so far (those outside site-packages: an
    editable install's, the current directory's). That pool grows with every
    import, so a property's draws would depend on what the process happened to
    import before it: on which properties ran earlier, on whether ``rollcert
    certify``, pytest or a worker of ``-j N`` runs it, and on any edit to any
    constant in the source tree. A certificate must depend only on the target,
    the property, the profile and the seed. Hypothesis's global constants
    (boundary numbers, unusual strings) are a fixed list and stay. A later
    Hypothesis without this pool is left alone."""
    from hypothesis.internal.conjecture import providers

    get = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    constants = getattr(providers, "Constants", None)
    if get is None or cache is None or constants is None:
        yield
        return
    empty = constants()
    providers._get_local_constants = lambda: empty
    cache.clear()  # (global, local) pairs computed from the full pool
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.clear()


def _budget(property_id: str, profile: Profile) -> Budget | None:
    if isinstance(family_of(property_id), ProgramFamily):  # programs run many times each: no step budget
        return None
    examples = profile.max_examples * profile.rounds
    return Budget(examples, examples * profile.steps_per_example)


@dataclass
class RoundRecord:
    """What a run of one round (a shard's work unit, :mod:`rollcert.stateful_tests.shards`)
    keeps beyond its result, for the merge to decide as the serial run would:
    whether the machine ran at all, the family's raw tallies (its figures are
    ratios of their sums), the situations with their descriptions, and the byte
    values the round sent (bit ``b``: byte ``b``; the world's
    ``distinct_bytes_sent`` of several rounds is the size of their union, which
    no round's count gives)."""

    ran: bool = False
    tallies: dict[str, int] = field(default_factory=dict)
    situations: list[tuple[str, str]] = field(default_factory=list)
    bytes_sent: int = 0


def _certify_property(
    target: Target, property_id: str, profile: Profile, seed: int, progress: ProgressSink | None,
    only_round: int | None = None, record: RoundRecord | None = None,
) -> PropertyResult:
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
    if isinstance(family, ProgramFamily):  # programs, not a step machine: the family runs them
        return family.certify(target, property_id, profile, seed)
    tracker = Tracker(property_id)
    try:
        machine = family.build_machine(target, property_id, tracker)
    except NotAssessable as reason:
        return PropertyResult(property_id, "not_assessed", prop.title, reason=str(reason))
    except KeyboardInterrupt:
        raise
    except Exception as error:  # a target the harness cannot drive: no verdict on the rules
        why = f"the harness could not drive this target: {describe_exception(error)}"
        return PropertyResult(property_id, "error", prop.title, reason=why)
    situations = family.situations(property_id, target)
    # The world's dimensions are required like situations (see rollcert.stateful_tests.world);
    # only the rollback family's buffers are asked to pass a declared chunk size.
    world = world_of(target)
    chunk_matters = family.name == "rollback"
    tracker.world.chunk = world.chunk if chunk_matters else None
    dimensions = world.required(chunk_matters=chunk_matters)
    result = run_to_verdict(
        machine, tracker, situations, PropertyResult(property_id, "passed", prop.title),
        target=target, profile=profile, seed=seed,
        minimise=lambda violation, pid, **keep: minimise(family, target, violation, pid, **keep),
        family=family.name, progress=progress,
        further=partial(
            _search_further, lambda other: family.build_machine(target, property_id, other), property_id, profile
        ),
        only_round=only_round,
        dimensions=dimensions,
    )
    further_figures = {name: result.figures[name] for name in FURTHER_FIGURES if name in result.figures}
    result.figures = figures_of(family, tracker.tallies) | further_figures
    result.world = world_report(world, tracker.world, dimensions, chunk_matters)
    if record is not None:
        record.ran = True
        record.tallies = dict(tracker.tallies)
        record.situations = [(s.name, s.description) for s in situations]
        record.bytes_sent = tracker.world.bytes_sent
    return result


def figures_of(family: PropertyFamily[Any, Any, Any], tallies: Counter[str]) -> dict[str, float]:
    """The figures a certificate prints for a run: the family's own, and how many
    examples ended at a step the judge could not decide (:class:`~rollcert.stateful_tests.family.Unjudgeable`)."""
    figures = family.figures(tallies)
    if tallies["steps_not_judged"]:
        figures["steps_not_judged"] = float(tallies["steps_not_judged"])
    return figures


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
    minimise: Callable[..., Violation],
    family: str,
    progress: ProgressSink | None = None,
    only_round: int | None = None,
    dimensions: Sequence[_Situation] = (),
    further: Callable[[list[Violation], int, SearchLimits, Callable[..., Violation]], list[Violation]] | None = None,
) -> PropertyResult:
    """Run ``machine`` for up to ``profile.rounds`` rounds (stopping once every
    situation was reached) and turn what happened into ``result``'s verdict.

    The one place where a run becomes a verdict, for every family: a :class:`Violation` is minimised into a
    counterexample; a harness failure, a non-deterministic SUT or an unexpected
    exception is ``error``; a clean run that missed a situation is ``unknown``.
    ``progress`` sees the tracker's counters (sampled, never per step) and the
    first violation before it is minimised.

    ``only_round`` runs that one round alone and never stops early: a shard's
    work unit. Rounds share nothing but the tracker's sums (each is seeded by
    its number, with a fresh machine and no example database), so
    :func:`rollcert.stateful_tests.shards.merge_rounds` adds the rounds up, in
    order, and stops where this loop would have stopped.

    ``dimensions`` (the world's, counted in ``tracker.world``) are required like the situations.

    The run raises on the property's first failure and that failure is minimised,
    as it always was: it is the counterexample. ``further`` (``certify``'s
    :func:`_search_further`) then searches on, within bounds the first pass sets
    (:func:`further_limits`), for findings of other bugs (issue 43); each is
    listed after the counterexample in ``result.findings``, and the figures
    ``further_search_examples`` and ``further_search_cut`` say how much it ran.
    """
    started = time.perf_counter()
    started_cpu = time.process_time()
    found_elsewhere: dict[str, Violation] = getattr(tracker, "found_elsewhere", {})
    # The model's branches this run must reach (rollcert.stateful_tests.model_coverage).
    branches = model_coverage.BranchRun(family, machine)
    tracked = getattr(tracker, "tallies", None)  # the run's calls per kind (causes.count_call), filled as it runs
    tallies: Counter[str] = tracked if isinstance(tracked, Counter) else Counter()
    round_seed, round_started = seed, 0
    known: list[Violation] = []  # the first pass's finding, minimised and as met: the second pass's known ones
    try:
        with _sampling(progress, result.property_id, tracker), branches:
            for round_number in range(profile.rounds) if only_round is None else (only_round,):
                round_seed = seed + round_number * ROUND_SEED_STRIDE
                round_started = tracker.examples  # a shard's unit counts its round alone, as here
                try:
                    restarts = _run_round(machine, profile, round_seed, owns=owner_of(result.property_id))
                except Unsatisfiable:
                    if not found_elsewhere:
                        raise
                    continue  # every example of the round ran into another rule's finding
                if restarts:
                    result.figures["rounds_restarted"] = result.figures.get("rounds_restarted", 0.0) + restarts
                branches.round_ended()
                if (
                    all(tracker.reached[s.name] for s in situations)
                    and not _unreached(tracker, dimensions)
                    and not branches.unreached()
                ):
                    break
    except BaseException as raised:  # every failure becomes a verdict
        error = _first_violation(raised)
        if isinstance(error, Violation):
            if progress is not None:
                progress.violation(
                    result.property_id, f"step {len(error.steps)} of example {tracker.examples}: {error.explanation}"
                )
            first = error
            error = minimise(error, result.property_id)
            known = [error, first]
            if not set(first.broken) & set(error.broken):
                # R0's counterexample shrank to one of no rule in particular
                # (shrink._rules_kept): the rules the first failure broke get their own.
                for property_id in first.broken:
                    found_elsewhere.setdefault(property_id, first)
            result.verdict = "violated"
            result.reason = error.explanation
            result.counterexample = _counterexample(result.property_id, target, error, family)
            cause = _always_refused(error, tallies)
            if cause:  # the cause, not the symptom: an operation that never works at all
                result.reason = f"{cause}. {error.explanation}"
                result.counterexample = replace(result.counterexample, explanation=result.reason)
            result.findings = [result.counterexample]
        elif isinstance(error, KeyboardInterrupt) and interrupted_by_user():
            raise  # the person at the keyboard; anything else the target raised is a verdict
        elif isinstance(error, FlakyFailure):
            result.verdict = "error"
            result.reason = f"the SUT is not deterministic: a failure did not reproduce ({exception_message(error)})"
        elif isinstance(error, HarnessError):
            result.verdict = "error"
            result.reason = f"the adapter or the SUT broke: {exception_message(error)}"
        elif isinstance(error, HypothesisException):
            result.verdict = "error"
            result.reason = f"the test harness failed: {describe_exception(error)}"
        else:
            result.verdict = "error"
            result.reason = f"the adapter raised {describe_exception(error)}"
    if known and further is not None:
        first_pass = (time.process_time() - started_cpu, time.perf_counter() - started)
        limits = further_limits(profile, *first_pass, examples=tracker.examples - round_started)
        more = further(known, round_seed, limits, minimise)
        result.findings += [_counterexample(result.property_id, target, found, family) for found in more]
        result.figures["further_search_examples"] = float(limits.examples_run)
        if limits.spent == "time":
            result.figures["further_search_cut"] = 1.0
    for property_id, violation in sorted(found_elsewhere.items()):
        minimal = minimise(violation, property_id)
        result.found_elsewhere[property_id] = _counterexample(result.property_id, target, minimal, family)
    # Its own findings, under every other rule they broke too (R0's machine owns every finding).
    for found in result.findings or ([result.counterexample] if result.counterexample is not None else []):
        for property_id in found.broken:
            if property_id != result.property_id:
                result.found_elsewhere.setdefault(property_id, found)
    result.seconds = round(time.perf_counter() - started, 3)
    result.examples, result.steps = tracker.examples, tracker.steps
    result.coverage = {s.name: tracker.reached[s.name] for s in situations}
    result.model_branches = branches.record()
    if result.verdict == "passed":
        result.missing_situations = [s.description for s in situations if not tracker.reached[s.name]]
        unreached_dimensions = [(d.name, d.description) for d in _unreached(tracker, dimensions)]
        result.missing_situations += [f"{description} ({name})" for name, description in unreached_dimensions]
        branches_missed = [f"model branch {name}" for name in branches.unreached()]
        result.missing_situations += branches_missed
        if result.missing_situations:
            result.verdict = "unknown"
            situations_missed = [s.description for s in situations if not tracker.reached[s.name]]
            result.reason = unknown_reason(
                result.property_id, situations_missed + branches_missed, unreached_dimensions, tallies
            )
    return result


#: The figures the search for further findings leaves on a property's result
#: (:func:`run_to_verdict`): the examples it started, and 1 when its time, not its
#: examples, ended it (then two runs of one seed may list different findings).
FURTHER_FIGURES = ("further_search_examples", "further_search_cut")
#: The search for further findings may start as many examples as the round that
#: failed ran (the effort the first bug took, spent once more on the next), but
#: at least :data:`FURTHER_EXAMPLES_FLOOR` and at most this share of a round (the
#: profile's ``max_examples``): 10 at quick, 10-30 at ci, 10-200 at thorough.
#: These are the bounds a search normally meets, so that two runs of one seed
#: (or a run split into shards) list the same findings. Its examples start small
#: (``strategies.start_from``), a few milliseconds each on an in-process target:
#: a violated property costs a bounded amount more CPU (docs/findings.md), and a
#: second bug met about as often as the first is met within it (issue 43's two
#: R0 bugs: both listed on 9 seeds of 10 at quick).
FURTHER_EXAMPLES_SHARE = 0.1
FURTHER_EXAMPLES_FLOOR = 10
#: ... and at most a quarter of the first pass's own CPU seconds (its search and
#: its counterexample's minimisation), or :data:`FURTHER_SECONDS_FLOOR` if more:
#: a backstop for a slow target, whose every replay costs what a whole example
#: of an in-process one does (a server started per replay, 50-200 ms). When it
#: ends a search, the figure ``further_search_cut`` says so.
FURTHER_SECONDS_SHARE = 0.25
FURTHER_SECONDS_FLOOR = 0.5
#: Wall-clock seconds may run this many times the CPU bound (taken of the first
#: pass's wall-clock seconds): a target behind a protocol spends its time in
#: another process (a server started per example and per replay, ~0.3 s), where
#: the CPU bound sees nothing; half the first pass's wall-clock time then.
FURTHER_WALL_FACTOR = 2.0
#: CPU seconds a further finding's minimisation may take when the search's time is
#: spent (then the search ends after it).
FURTHER_MINIMISE_FLOOR = 0.1
#: Replays the minimiser may spend on each further finding: under a tenth of one
#: finding's budget, a few milliseconds each on the search's small starts (a long
#: history loses blocks of steps at once: the family's moves). One left longer
#: than minimal still shows its bug with its own Replay line.
FURTHER_FINDINGS_REPLAYS = 150
#: The search's Hypothesis runs are seeded ``round seed + FURTHER_SEED_OFFSET + k``:
#: examples the first pass did not draw, and a fresh run after each new finding.
FURTHER_SEED_OFFSET = 500_009


def further_limits(profile: Profile, cpu: float, wall: float, examples: int) -> SearchLimits:
    """The bounds of the search for further findings after a first pass that took
    ``cpu`` and ``wall`` seconds, in a round that ran ``examples`` examples (see
    :data:`FURTHER_EXAMPLES_SHARE` and :data:`FURTHER_SECONDS_SHARE`)."""
    seconds = max(FURTHER_SECONDS_SHARE * cpu, FURTHER_SECONDS_FLOOR)
    wall_seconds = FURTHER_WALL_FACTOR * max(FURTHER_SECONDS_SHARE * wall, FURTHER_SECONDS_FLOOR)
    most = max(FURTHER_EXAMPLES_FLOOR, int(profile.max_examples * FURTHER_EXAMPLES_SHARE))
    return SearchLimits(min(max(examples, FURTHER_EXAMPLES_FLOOR), most), seconds, wall_seconds)


def _search_further(
    build: Callable[[Tracker], type[RuleBasedStateMachine]],
    property_id: str,
    profile: Profile,
    first: list[Violation],
    round_seed: int,
    limits: SearchLimits,
    minimise: Callable[..., Violation],
) -> list[Violation]:
    """Findings of other bugs than ``first`` (the property's minimised
    counterexample, and the failure it was minimised from), each minimised, at
    most ``MAX_FINDINGS - 1``, within ``limits``.

    The second pass of issue 43. The first pass raised on its first failure, so
    the counterexample costs what it always did. This pass runs the property's
    machine again on a fresh tracker (the certificate's examples, coverage and
    figures stay the first pass's), seeded apart from the round that failed.
    An example that shows a finding already known ends as a non-failure
    (``Tracker.is_new``); a new one raises out of Hypothesis and is minimised
    keeping its rules and coarse signature (within
    :data:`FURTHER_FINDINGS_REPLAYS` replays and the time left, or a floor of
    its own), and the next run looks for yet another. The search stops at the
    first run that meets nothing new, at ``MAX_FINDINGS``, or when ``limits``
    are spent (``Tracker.check_limits``). Another rule's finding met here is not
    recorded (the first pass's are), and a failure of the search itself (an
    error, a replay that did not fail again) only ends it: the verdict is the
    first pass's."""
    tracker = Tracker(property_id)
    tracker.known = {violation.finding_key() for violation in first}
    tracker.limits = limits
    machine = build(tracker)
    found: list[Violation] = []
    limits.start()
    for attempt in range(MAX_FINDINGS - 1):
        tracker.met = None
        remaining = replace(profile, max_examples=max(1, limits.examples - tracker.examples))
        try:
            _run_round(machine, remaining, round_seed + FURTHER_SEED_OFFSET + attempt)
        except SearchSpent:
            met = tracker.met  # a new finding met as the limits ran out (Hypothesis was replaying it)
        except BaseException as raised:
            if isinstance(raised, KeyboardInterrupt) and interrupted_by_user():
                raise
            met = _first_violation(raised)
            if not isinstance(met, Violation):
                break  # an error, or a new finding that did not fail again: the search ends
        else:
            break  # the examples left met nothing new
        if met is None:
            break
        minimal = _minimised_further(met, property_id, limits, minimise)
        tracker.known |= {met.finding_key(), minimal.finding_key()}
        if all(minimal.finding_key() != other.finding_key() for other in [*first, *found]):
            found.append(minimal)
        if limits.spent:
            break
    limits.examples_run = tracker.examples
    return found


def _minimised_further(
    met: Violation, property_id: str, limits: SearchLimits, minimise: Callable[..., Violation]
) -> Violation:
    """A further finding minimised: its rules and coarse signature kept (as
    Hypothesis keeps a bug's origin while it shrinks it, so that it cannot slip
    into another bug's counterexample), within :data:`FURTHER_FINDINGS_REPLAYS`
    replays and the search's time left, but never less than
    :data:`FURTHER_MINIMISE_FLOOR` of its own: a finding met as the time ran out
    is still shortened before it is shown."""
    cpu, wall = limits.used()
    left = max(limits.cpu_seconds - cpu, FURTHER_MINIMISE_FLOOR)
    wall_left = max(limits.wall_seconds - wall, FURTHER_WALL_FACTOR * FURTHER_MINIMISE_FLOOR)
    deadline = (time.process_time() + left, time.perf_counter() + wall_left)

    def stop() -> bool:
        return time.process_time() > deadline[0] or time.perf_counter() > deadline[1]

    return minimise(met, property_id, keep_finding=True, budget=FURTHER_FINDINGS_REPLAYS, stop=stop)


def _counterexample(machine: str, target: Target, violation: Violation, family: str) -> Counterexample:
    """The record of a (minimised) violation that ``machine``'s run found."""
    config = violation.config
    return Counterexample(
        machine,
        target.name,
        config.initial,
        config.capacity,
        config.policy,
        tuple(violation.steps),
        violation.explanation,
        config.durable,
        family,
        config.durability,
        broken=violation.broken,
        harm=violation.harm,
        start_revision=config.start_revision,
        chunk_bytes=config.chunk_bytes,
    )


def _always_refused(violation: Violation, tallies: Counter[str]) -> str:
    """"rollback never succeeded: 0 of 812 calls (...)" when the failing step is a
    refusal of an operation the target refused on every call of the run: the
    cause, where the step alone says "wrong error" or "allowed operation refused"."""
    if not violation.steps or violation.harm not in (REFUSED, WRONG_ERROR):
        return ""
    kind = getattr(violation.steps[-1].operation, "kind", "")
    return never_succeeded(tallies, kind) if tallies.get(f"allowed:{kind}", 0) else ""


def _unreached(tracker: _Tracker, dimensions: Sequence[_Situation]) -> list[_Situation]:
    """The world's dimensions the run has not reached yet."""
    world = getattr(tracker, "world", None)
    if world is None:
        return list(dimensions)
    return [d for d in dimensions if not world.reached[d.name]]


def _run_round(
    machine: type[RuleBasedStateMachine],
    profile: Profile,
    round_seed: int,
    *,
    owns: Callable[[tuple[str, ...]], bool] = lambda broken: True,
) -> int:
    """Run one round of ``machine``; the number of times it had to be started afresh.

    Hypothesis remembers the choices of every example and refuses to go on
    (``FlakyStrategyDefinition``) when the same choices lead to different draws.
    The machines draw from the model state, which follows what the SUT reported:
    a real crash (a SIGKILL over the protocol) lands inside a request one time and
    after it the next, so two examples that share a start can diverge. That is
    not a verdict: every step that ran was judged against the model. The round
    starts again with another seed (at most :data:`ROUND_RESTARTS` times), and
    the certificate counts the restarts (figure ``rounds_restarted``).

    Unless what made the draws differ was a failure: a violation or an exception
    the target showed once and not on Hypothesis's replay (a one-off corruption,
    a factory that fails on its 50th call). That failure was seen and is the
    verdict; a fresh round would bury it under ``passed``. Not a violation of
    another rule, though (``owns`` says whose): the machine set that one aside,
    recorded for its own rule, and ended the example with ``reject()``, so it
    sits in the inconsistency's context chain too. Raised here it became this
    property's verdict: pycrdt's R2 was once "violated" by a counterexample that
    broke R0 alone (its undo is not deterministic, so such rounds restart).
    """
    def run(restart: int) -> None:
        test = get_state_machine_test(machine, settings=profile.hypothesis_settings())
        # Hypothesis reports the steps before an inconsistency on the terminal; the
        # round restarts, and the certificate, not Hypothesis, says what was found.
        with with_reporter(_kept_out):
            hypothesis_seed(round_seed + restart)(test)()

    for restart in range(ROUND_RESTARTS):
        try:
            run(restart)
        except FlakyStrategyDefinition as inconsistent:
            seen = _failure_behind(inconsistent, owns)
            if seen is not None:
                raise seen from None
            continue
        return restart
    run(ROUND_RESTARTS)  # the last chance: still inconsistent, and the error is the verdict
    return ROUND_RESTARTS


def _kept_out(_report: object) -> None:
    """A Hypothesis reporter that prints nothing (see :func:`_run_round`)."""


def _failure_behind(
    inconsistent: FlakyStrategyDefinition, owns: Callable[[tuple[str, ...]], bool]
) -> BaseException | None:
    """The failure Hypothesis was replaying when its draws went another way, if
    any: Hypothesis raises the inconsistency while it handles the failure, so the
    failure is its ``__context__`` (or further down that chain). A violation the
    round's property does not own (``owns``) is no such failure: the machine set
    it aside (see :func:`_run_round`)."""
    chained = inconsistent.__context__
    while chained is not None:
        if isinstance(chained, Violation) and not owns(chained.broken):
            return None
        if not type(chained).__module__.startswith("hypothesis"):
            return chained
        chained = chained.__context__
    return None


def _sampling(progress: ProgressSink | None, property_id: str, tracker: _Tracker) -> AbstractContextManager[object]:
    if progress is None:
        return nullcontext()
    return Sampler(progress, property_id, lambda: (tracker.examples, tracker.steps))


#: Runs a list of properties somewhere else (worker processes: rollcert.command.parallel)
#: and hands back their results: ``(property_ids, profile name, seed, progress) -> results``.
PropertiesRunner = Callable[[Sequence[str], str, int, "ProgressSink | None"], dict[str, PropertyResult]]


def certify(
    target: Target,
    *,
    profile: str = "quick",
    seed: int = 0,
    only: tuple[str, ...] | None = None,
    target_text: str | None = None,
    progress: ProgressSink | None = None,
    run_properties: PropertiesRunner | None = None,
    corpus: Path | None = None,
    replay_corpus_with: CorpusRunner | None = None,
    fail_fast: bool = False,
) -> CertificateData:
    """Certify every property (or ``only`` some) of ``target``. ``target_text``
    is the TARGET exactly as the user typed it, for the replay commands (a
    ``module:attr`` or a subprocess command line, not the target's display name).

    By default every property runs here, one after the other. ``run_properties``
    runs them elsewhere instead — the command's worker processes
    (:func:`rollcert.command.parallel.certify_in_workers_or_here`), which isolate a
    target that crashes or hangs and spread properties over cores; the verdicts and
    counterexamples are those of a serial run either way.

    With a ``corpus`` directory (:mod:`rollcert.stateful_tests.corpus`) its traces
    are replayed first (here, or by ``replay_corpus_with``): a property with a
    trace that still fails is violated at once and its machine does not run;
    so is one with a trace whose replay crashed, hung or could not be judged,
    which is ``error`` or ``unknown`` naming the file (the corpus fails
    closed); the others run as without a corpus. Every counterexample found is then
    added to the corpus.

    ``fail_fast`` (``rollcert certify --fail-fast``) stops at the first violated
    property, in certificate order: the properties not run are ``unknown``
    (:data:`NOT_RUN_FAIL_FAST`), so the run still exits 1 and never reads as green.
    A gate that only needs "is anything violated" (the mutation benchmark, a
    pre-commit check) then pays for one property's run instead of all of them."""
    chosen = PROFILES[profile]
    property_ids = [p for p in ALL_PROPERTY_IDS if only is None or p in only]
    replayed = None
    if corpus is not None:
        replayed = (replay_corpus_with or partial(replay_corpus, target))(corpus, property_ids)
    from_corpus = {
        pid: found.result for pid, found in (replayed.properties.items() if replayed else ()) if found.result is not None
    }
    to_run = [pid for pid in property_ids if pid not in from_corpus]
    if fail_fast and any(r.verdict == "violated" for r in from_corpus.values()):
        to_run = []
    if run_properties is not None and to_run:
        if fail_fast:  # one at a time, in certificate order, so that the first violation stops the rest
            ran = {}
            for pid in to_run:
                ran.update(run_properties([pid], profile, seed, progress))
                if ran[pid].verdict == "violated":
                    break
        else:
            ran = run_properties(to_run, profile, seed, progress)
    else:
        ran = {}
        for pid in to_run:
            ran[pid] = certify_property(target, pid, chosen, seed, progress=progress)
            if fail_fast and ran[pid].verdict == "violated":
                break
    results = {
        pid: from_corpus[pid] if pid in from_corpus else ran[pid] if pid in ran else _not_run_fail_fast(pid)
        for pid in property_ids
    }
    if corpus is not None and replayed is not None:
        for pid, found in replayed.properties.items():
            results[pid].figures.update(corpus_replayed=float(found.replayed), corpus_failed=float(found.failed))
    # The corpus takes the counterexamples of the assembled certificate, after the
    # findings are folded: a finding one machine met under another rule is the
    # counterexample the certificate prints, and must be saved like any other.
    certificate = assemble(target, profile, seed, results, target_text)
    if corpus is not None and replayed is not None:
        added = add_counterexamples(corpus, certificate.results, target.name, skip=from_corpus)
        certificate.corpus = corpus_summary(replayed, added)
    return certificate


#: The reason of a property that ``--fail-fast`` did not run.
NOT_RUN_FAIL_FAST = "not run: --fail-fast stopped at an earlier violated property"


def _not_run_fail_fast(property_id: str) -> PropertyResult:
    title = PROPERTIES[property_id].title if property_id in PROPERTIES else ""
    return PropertyResult(property_id, "unknown", title, reason=NOT_RUN_FAIL_FAST)


def assemble(
    target: Target, profile: str, seed: int, results: dict[str, PropertyResult], target_text: str | None
) -> CertificateData:
    """The certificate of ``results``: counterexamples named by the TARGET as typed,
    R0 folded. One place, for a run and for a merge of shards alike.

    The TARGET (and so every replay command) and the target's name are shown as
    :func:`~rollcert.targets.portable.portable_target` renders them: a certificate
    carries no absolute path of the run's machine, and its replay commands still
    run from the run's working directory (issue 43)."""

    def named(counterexample: Counterexample) -> Counterexample:
        typed = counterexample.target if target_text is None else target_text
        return replace(counterexample, target=portable_target(typed))

    for result in results.values():
        if result.counterexample is not None:
            result.counterexample = named(result.counterexample)
        result.findings = [named(found) for found in result.findings]
        result.found_elsewhere = {pid: named(found) for pid, found in result.found_elsewhere.items()}
    _fold_findings(results)
    shown = portable_target(target.name)
    return CertificateData(target if shown == target.name else replace(target, name=shown), profile, seed, results)


def _fold_findings(results: dict[str, PropertyResult]) -> None:
    """Report every finding under the rules it broke (SPEC §6a).

    A machine that met another rule's finding recorded it (``found_elsewhere``)
    and went on exploring its own property. Here each such finding becomes the
    verdict of the property it broke, if that property's own run found nothing,
    with the shortest counterexample and "found while exploring Rk". R0, the
    master property, is violated by every violation any machine found: if its
    own machine missed them, it takes the shortest, saying where it came from."""
    every = _every_finding(results)
    offered: dict[str, list[tuple[str, Counterexample]]] = {}
    for machine, result in results.items():
        for property_id, counterexample in result.found_elsewhere.items():
            offered.setdefault(property_id, []).append((machine, counterexample))
    for property_id, findings in offered.items():
        result = results.get(property_id)
        if result is None and property_id in PROPERTIES:
            # Not asked for (--only), but found: leaving it out would let a run go green on it.
            result = results[property_id] = PropertyResult(property_id, "passed", PROPERTIES[property_id].title)
        if result is None or result.verdict not in ("passed", "unknown", "not_assessed"):
            continue
        # A property not assessed for want of a capability is still violated where
        # its clause was seen broken: a violation needs no coverage to be true.
        machine, shortest = min(findings, key=lambda found: (len(found[1].steps), found[0]))
        result.verdict = "violated"
        result.counterexample = shortest
        result.found_by = machine
        result.missing_situations = []
        result.reason = f"found while exploring {machine}: {shortest.explanation}"
    _master_verdict(results)
    for property_id, listing in results.items():
        if listing.verdict == "violated" and listing.counterexample is not None:
            _list_findings(listing, [found for found in every if property_id == "R0" or property_id in found.broken])


def _every_finding(results: dict[str, PropertyResult]) -> list[Counterexample]:
    """Every finding of every machine, the machines in certificate order: its own
    (its counterexample, for a result that lists none: from the corpus, an older
    partial), then those of other rules it met."""
    every: list[Counterexample] = []
    for result in results.values():
        own = result.findings or ([result.counterexample] if result.counterexample is not None else [])
        every += own
        every += [found for _, found in sorted(result.found_elsewhere.items())]
    return every


def _list_findings(result: PropertyResult, offered: list[Counterexample]) -> None:
    """``result.findings``: its counterexample first, then every other finding
    offered, once per (rules broken, harm signature), at most ``MAX_FINDINGS``;
    how many distinct ones did not fit is added to ``findings_not_kept``."""
    assert result.counterexample is not None
    distinct: dict[tuple[tuple[str, ...], str], Counterexample] = {}
    for found in [result.counterexample, *result.findings, *offered]:
        distinct.setdefault(found.finding_key(), found)
    listed = list(distinct.values())
    result.findings = listed[:MAX_FINDINGS]
    if len(listed) > MAX_FINDINGS:
        result.figures["findings_not_kept"] = result.figures.get("findings_not_kept", 0.0) + len(listed) - MAX_FINDINGS


def _master_verdict(results: dict[str, PropertyResult]) -> None:
    """R0, the master property, is violated by every violation any machine found:
    if its own machine missed them, it takes the shortest, saying where it came from."""
    master = results.get("R0")
    if master is None or master.verdict == "violated":
        return
    found = [
        r for pid, r in results.items() if pid != "R0" and r.verdict == "violated" and r.counterexample
    ]
    if not found:
        return
    shortest_result = min(found, key=lambda r: len(r.counterexample.steps) if r.counterexample else 0)
    assert shortest_result.counterexample is not None
    master.verdict = "violated"
    master.counterexample = shortest_result.counterexample
    master.found_by = shortest_result.found_by or shortest_result.property_id
    master.missing_situations = []
    master.reason = f"found while exploring {master.found_by}: {master.counterexample.explanation}"
