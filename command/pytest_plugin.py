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

The target runs in supervised worker processes, never in pytest's own
(:mod:`rollcert.command.parallel`), under the command line's limits:
``--rollcert-deadline`` (``rollcert certify --deadline``), ``--rollcert-call-timeout``
and ``--rollcert-memory-limit``, or the fixture's ``deadline=``, ``call_timeout=``
and ``memory_limit=``. A target that hangs — in its import, in a call, in the
corpus replay — is killed from outside at its deadline, whatever it did to
signals or threads (SPEC §8), and one that crashes or exits its worker takes
down only the worker: either way the item errors (the gate fails) naming what
the worker was doing. A hanging target used to hang pytest; an ``os._exit(0)``
in it ended pytest with exit status 0.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

import pytest

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Target

if TYPE_CHECKING:
    from rollcert.command.parallel import Say
    from rollcert.command.parallel import TargetSource
    from rollcert.command.parallel import WorkerEnded
    from rollcert.command.parallel import WorkerLimits
    from rollcert.stateful_tests.corpus import CorpusReplay

#: What a supervised worker's work returns.
Result = TypeVar("Result")

#: The marker every per-property item carries: ``pytest --rollcert-target X -m rollcert`` runs only them.
MARKER = "rollcert"


def certify_or_fail(
    target: Target | str, *, profile: str = "quick", seed: int = 0, only: tuple[str, ...] | None = None,
    jobs: int = 1, set_aside: str | Path | None = None, corpus: str | Path | None = None,
    deadline: float | None = None, call_timeout: float | None = None, memory_limit: int | None = None,
) -> None:
    """Certify ``target`` and fail the test, with the certificate, unless it passed.

    The target runs in worker processes, as under ``rollcert certify``:
    ``deadline`` (seconds per property's worker, 0 for none; default as
    ``--deadline``'s), ``call_timeout`` (seconds) and ``memory_limit`` (MiB)
    are that command's options. Given as text, the target is first imported in
    a supervised worker (a hanging import fails the test at the deadline), then
    here, and each property runs in a worker that resolves it again. A
    ``Target`` object cannot be resolved again: each property then runs in a
    plain fork of this process, which holds it; where this process cannot fork
    safely (it runs threads: a pytest-xdist worker), the object must be named
    ``module:attr`` by a loaded module, else give the target as text.

    ``jobs`` above 1 spreads the properties over worker processes (the target is
    then resolved again in each, so give it as text); ``set_aside`` is a findings
    file; ``corpus`` a corpus directory (``None``: none), replayed in a supervised
    worker too (a replay that hangs or crashes fails the test). The
    counterexamples' replay commands name the target as given, or, for a
    ``Target`` object, as ``module:attr`` where a loaded module holds it, so that
    they run as printed."""
    from rollcert.command.parallel import TargetSource
    from rollcert.command.parallel import certify_in_workers_or_here
    from rollcert.command.parallel import forks_here
    from rollcert.reports.certificate import render_text
    from rollcert.stateful_tests.certify import certify

    supervision = _supervision(deadline, call_timeout, memory_limit, ("deadline=", "call_timeout=", "memory_limit="))
    where: Target | TargetSource | None
    source: TargetSource | None
    if isinstance(target, str):
        given = TargetSource(target, Path(set_aside).absolute() if set_aside is not None else None)
        failed = _import_supervised(given, supervision)
        if failed is not None:
            pytest.fail(f"rollcert_gate({target!r}): {failed}", pytrace=False)
        resolved, text, source, where = given.resolve(), target, given, given
    else:
        if set_aside is not None:
            raise pytest.UsageError("rollcert_gate(set_aside=...) takes the target as text (module:attr)")
        resolved, text = target, _text_for(target)
        source = TargetSource(text) if text is not None else None
        if jobs > 1 and source is None:
            raise pytest.UsageError("rollcert_gate(jobs > 1) resolves the target again in each worker: give it as text")
        where = target if forks_here() else source
        if where is None:
            raise pytest.UsageError(
                "rollcert_gate: this process runs threads, so its worker processes are not forks of it and a "
                "Target object no module names cannot reach them: give the target as text (module:attr)"
            )
    replayer = partial(_replay_corpus_supervised, where, supervision) if corpus is not None else None
    corpus_path = _location(corpus) if corpus is not None else None
    if isinstance(where, Target) and jobs == 1:
        certificate = certify(
            resolved, profile=profile, seed=seed, only=only, target_text=text, corpus=corpus_path,
            run_properties=partial(_certify_forked, where, supervision), replay_corpus_with=replayer,
        )
    else:
        limits = supervision.limits()
        certificate = certify_in_workers_or_here(
            resolved, profile=profile, seed=seed, only=only, target_text=text, jobs=jobs, source=source,
            isolate=True, memory_limit=limits.memory_limit, call_timeout=limits.call_timeout,
            deadline=supervision.property_deadline(profile), corpus=corpus_path, replay_corpus_with=replayer,
        )
    if certificate.exit_status != 0:
        pytest.fail(render_text(certificate), pytrace=False)


@dataclass(frozen=True)
class Supervision:
    """The limits a target's worker processes run under: those of ``rollcert
    certify --deadline S --call-timeout S --memory-limit MIB``, each ``None``
    when not given (then as there: ``$ROLLCERT_DEADLINE``, else by profile;
    ``$ROLLCERT_CALL_TIMEOUT``, else 60 s; no cap)."""

    deadline: float | None = None
    call_timeout: float | None = None
    memory_limit: int | None = None

    def limits(self) -> WorkerLimits:
        from rollcert.command.parallel import WorkerLimits

        return WorkerLimits(self.memory_limit << 20 if self.memory_limit is not None else None, self.call_timeout)

    def property_deadline(self, profile: str) -> float:
        """A property's worker's deadline: as ``rollcert certify``'s (by profile).
        ``math.inf`` stands for none: to ``parallel``, ``None`` means "the default"."""
        from rollcert.command.parallel import DEFAULT_DEADLINES

        return self._seconds(DEFAULT_DEADLINES.get(profile, max(DEFAULT_DEADLINES.values())))

    def supervised_deadline(self) -> float:
        """The deadline of a worker that imports the target or replays the corpus
        (``rollcert certify``'s corpus replay has the same)."""
        from rollcert.command.parallel import DEFAULT_SUPERVISED_DEADLINE

        return self._seconds(DEFAULT_SUPERVISED_DEADLINE)

    def _seconds(self, default: float) -> float:
        from rollcert.command.parallel import chosen_deadline

        seconds = chosen_deadline(default) if self.deadline is None else self.deadline
        return seconds or math.inf


def _supervision(deadline: object, call_timeout: object, memory_limit: object, names: tuple[str, str, str]) -> Supervision:
    """The limits checked as the command line checks ``--deadline``, ``--call-timeout``
    and ``--memory-limit`` (one definition of a valid value, in ``cli``); ``names``
    spell them in the usage error; ``$ROLLCERT_DEADLINE`` and ``$ROLLCERT_CALL_TIMEOUT``
    are checked too (as ``rollcert`` checks them before any command runs)."""
    import argparse

    from rollcert.command.cli import non_negative_seconds
    from rollcert.command.cli import positive_seconds
    from rollcert.command.cli import whole_number
    from rollcert.command.parallel import chosen_deadline
    from rollcert.stateful_tests.judge import call_timeout as inherited_call_timeout
    from rollcert.targets.adapter import UsageError

    checked: list[Any] = []
    for name, value, convert in zip(
        names, (deadline, call_timeout, memory_limit), (non_negative_seconds, positive_seconds, whole_number(64)), strict=True
    ):
        try:
            checked.append(None if value is None else convert(str(value)))
        except argparse.ArgumentTypeError as error:
            raise pytest.UsageError(f"{name.rstrip('=')}: {error}") from None
    try:
        chosen_deadline(0.0)
        inherited_call_timeout()
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None
    return Supervision(*checked)


# -- the target's work, in supervised workers ----------------------------------------------------


def _supervised(work: Callable[[Say], Result], doing: str, deadline: float) -> Result | WorkerEnded:
    """``work`` in a supervised worker (:func:`~rollcert.command.parallel.run_supervised`);
    what it returned, or why there is nothing — the deadline, the worker's
    death — with what the worker was doing then (its last ``say``)."""
    from rollcert.command.parallel import WorkerEnded
    from rollcert.command.parallel import run_supervised

    doing_now = ["starting"]
    done = run_supervised(work, doing, deadline=deadline, hear=doing_now.append)
    if isinstance(done, WorkerEnded):
        return WorkerEnded(f"{done.reason}; the worker was {doing_now[-1]}")
    return done


def _import_supervised(source: TargetSource, supervision: Supervision) -> str | None:
    """Import and build the target in a supervised worker: ``None`` when it could,
    else why not (it hung past the deadline, or crashed its worker). A target that
    does not resolve is a :class:`pytest.UsageError`, as it always was."""
    from rollcert.command.parallel import WorkerEnded
    from rollcert.targets.adapter import UsageError

    try:
        done = _supervised(partial(_build_in_worker, source), f"the import of the target {source.text!r}",
                           supervision.supervised_deadline())
    except UsageError as error:
        raise pytest.UsageError(f"--rollcert-target {source.text!r}: {error}") from None
    return done.reason if isinstance(done, WorkerEnded) else None


def _build_in_worker(source: TargetSource, say: Say) -> None:
    say(f"importing and building the target {source.text!r}")
    source.resolve()


def _resolve_in_worker(where: Target | TargetSource, say: Say) -> Target:
    if isinstance(where, Target):
        return where
    say(f"importing and building the target {where.text!r}")
    return where.resolve()


def _certify_in_worker(
    where: Target | TargetSource, property_id: str, profile: str, seed: int, limits: WorkerLimits,
    corpus: Path | None, say: Say,
) -> PropertyResult:
    """One property, as an item runs it (the corpus replayed first, a new
    counterexample added to it), in a supervised worker; each step is said,
    so that a worker that never reports is named by what it was doing."""
    from rollcert.stateful_tests.certify import certify_property
    from rollcert.stateful_tests.corpus import add_counterexample
    from rollcert.stateful_tests.corpus import replay_corpus

    target = _resolve_in_worker(where, say)
    limits.apply()
    if corpus is not None:
        say(f"replaying the corpus {corpus} for {property_id}")
        found = replay_corpus(target, corpus, [property_id]).properties.get(property_id)
        if found is not None and found.result is not None:
            return found.result
    say(f"certifying {property_id} (running its machines)")
    result = certify_property(target, property_id, PROFILES[profile], seed)
    if corpus is not None and result.counterexample is not None:
        add_counterexample(corpus, result.counterexample, target.name)
    return result


def _run_unit_in_worker(
    source: TargetSource, name: str, profile: str, seed: int, limits: WorkerLimits, corpus: Path | None, say: Say
) -> str:
    """One work unit in a supervised worker: the unit as JSON (as it travels as a user property)."""
    import json

    from rollcert.stateful_tests.shards import run_unit
    from rollcert.stateful_tests.shards import unit_json

    target = _resolve_in_worker(source, say)
    limits.apply()
    say(f"running the work unit {name}")
    return json.dumps(unit_json(run_unit(target, name, PROFILES[profile], seed, corpus=corpus)))


def _ended(property_id: str, reason: str) -> PropertyResult:
    """The ``error`` of a property whose worker gave no result."""
    from rollcert.model.properties import PROPERTIES

    prop = PROPERTIES.get(property_id)
    return PropertyResult(property_id, "error", prop.title if prop is not None else "", reason=reason)


def _certify_property_supervised(
    where: Target | TargetSource, property_id: str, profile: str, seed: int, supervision: Supervision,
    corpus: Path | None,
) -> PropertyResult:
    from rollcert.command.parallel import WorkerEnded

    done = _supervised(
        partial(_certify_in_worker, where, property_id, profile, seed, supervision.limits(), corpus),
        f"certifying {property_id}", supervision.property_deadline(profile),
    )
    return _ended(property_id, done.reason) if isinstance(done, WorkerEnded) else done


def _certify_forked(
    target: Target, supervision: Supervision, property_ids: list[str], profile: str, seed: int, progress: Any
) -> dict[str, PropertyResult]:
    """``certify``'s ``run_properties`` for a ``Target`` object: each property in
    a fork of this process (which holds the object), one after the other."""
    return {pid: _certify_property_supervised(target, pid, profile, seed, supervision, None) for pid in property_ids}


def _replay_corpus_supervised(
    where: Target | TargetSource, supervision: Supervision, directory: Path, property_ids: Any
) -> CorpusReplay:
    """``certify``'s ``replay_corpus_with`` for the gate: the replay in a supervised
    worker. Where ``rollcert certify`` goes on without a corpus its worker could not
    replay, the gate fails: a test must not pass on a replay that hung."""
    import sys

    from rollcert.command.parallel import WorkerEnded

    done = _supervised(
        partial(_replay_corpus_in_worker, where, directory, tuple(property_ids)), "the corpus replay",
        supervision.supervised_deadline(),
    )
    if isinstance(done, WorkerEnded):
        pytest.fail(f"rollcert: the corpus {directory} was not replayed: {done.reason}", pytrace=False)
    for warning in done.warnings:
        print(f"rollcert: corpus: {warning}", file=sys.stderr)
    return done


def _replay_corpus_in_worker(
    where: Target | TargetSource, directory: Path, property_ids: tuple[str, ...], say: Say
) -> CorpusReplay:
    from rollcert.stateful_tests.corpus import replay_corpus

    target = _resolve_in_worker(where, say)
    say(f"replaying the corpus {directory}")
    return replay_corpus(target, directory, property_ids)


def _text_for(target: Target) -> str | None:
    """``module:attr`` naming ``target`` in a loaded module, if one does: what
    ``rollcert replay`` resolves (a display name such as "my editor" is not)."""
    import sys

    for name, module in list(sys.modules.items()):
        if module is None or name.startswith(("rollcert.", "_pytest", "pytest")) or name == "__main__":
            continue
        try:
            attributes = list(vars(module).items())
        except TypeError:
            continue
        for attribute, value in attributes:
            if value is target and not attribute.startswith("_"):
                return f"{name}:{attribute}"
    return None


@pytest.fixture
def rollcert_gate(request: pytest.FixtureRequest) -> Callable[..., None]:
    """``rollcert_gate(TARGET, profile=, seed=, only=, jobs=, set_aside=, corpus=,
    deadline=, call_timeout=, memory_limit=)`` (see :func:`certify_or_fail`);
    the corpus defaults to ``.rollcert/corpus`` under the rootdir: a gate remembers."""
    from rollcert.stateful_tests.corpus import DEFAULT_PLUGIN_CORPUS

    default = request.config.rootpath / DEFAULT_PLUGIN_CORPUS

    def gate(target: Target | str, **options: Any) -> None:
        options.setdefault("corpus", default)
        certify_or_fail(target, **options)

    return gate


# -- one item per property ----------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rollcert", "rollcert: one test item per property of a target")
    group.addoption("--rollcert-target", metavar="TARGET", help="certify TARGET: one item per property (rollcert::TARGET::ID)")
    group.addoption("--rollcert-profile", choices=sorted(PROFILES), default="quick", help="(default: quick)")
    group.addoption("--rollcert-seed", type=int, default=0, metavar="N", help="(default: 0)")
    group.addoption("--rollcert-only", metavar="IDS", help="comma-separated property IDs, e.g. R0,R2")
    group.addoption("--rollcert-set-aside", metavar="FILE", help="a findings file (TOML): known findings to set aside")
    group.addoption(
        "--rollcert-corpus", metavar="DIR|URL", default=None,
        help="the corpus replayed first and added to: a directory, redis://HOST:PORT/DB or module:attr naming a "
        "Hypothesis ExampleDatabase ('off' for none; default: .rollcert/corpus under the rootdir)",
    )
    group.addoption(
        "--rollcert-deadline", metavar="S",
        help="wall-clock seconds each item's worker process may run before its process group is killed and the "
        "item errors, naming what it was doing (as `rollcert certify --deadline`: default $ROLLCERT_DEADLINE, "
        "else by profile, 900 s at quick; 0 for none)",
    )
    group.addoption(
        "--rollcert-call-timeout", metavar="S",
        help="seconds one call of an in-process target may take (as `rollcert certify --call-timeout`: "
        "default $ROLLCERT_CALL_TIMEOUT, else 60)",
    )
    group.addoption(
        "--rollcert-memory-limit", metavar="MIB",
        help="cap each item's worker process at MIB mebibytes of address space (as `rollcert certify --memory-limit`)",
    )
    group.addoption(
        "--rollcert-units", action="store_true",
        help="one item per work unit (rollcert::TARGET::R2::shard-3: a round of a property), not per property",
    )
    group.addoption(
        "--rollcert-json", metavar="PATH",
        help="with --rollcert-units: write the certificate the units merge into (that of `rollcert certify`)",
    )
    group.addoption(
        "--rollcert-reproducible", action="store_true",
        help="with --rollcert-json: no wall-clock readings, as `rollcert certify --reproducible`",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a rollcert property certified by --rollcert-target")
    text: str | None = config.getoption("rollcert_target")
    if text is not None:  # bad options are usage errors before anything is collected
        _chosen(config)
        if config.getoption("rollcert_seed") < 0:
            raise pytest.UsageError("--rollcert-seed takes a whole number from 0")
        if config.getoption("rollcert_json") and not config.getoption("rollcert_units"):
            raise pytest.UsageError("--rollcert-json merges the work units: give --rollcert-units too")
        supervision = _supervision(
            config.getoption("rollcert_deadline"), config.getoption("rollcert_call_timeout"),
            config.getoption("rollcert_memory_limit"),
            ("--rollcert-deadline", "--rollcert-call-timeout", "--rollcert-memory-limit"),
        )
        config.stash[_SUPERVISION] = supervision
        # Imported in a worker, never here: a bad TARGET is still a usage error before
        # collection, and a target whose import hangs or crashes errors every item.
        config.stash[_UNBUILT] = _import_supervised(_source(config), supervision)
        _REPORTED.clear()
        global _ON_WORKER
        _ON_WORKER = hasattr(config, "workerinput")


#: The limits the items' workers run under (``--rollcert-deadline`` and the others).
_SUPERVISION = pytest.StashKey[Supervision]()
#: Why the target could not be imported and built in a worker (``None``: it could).
_UNBUILT = pytest.StashKey["str | None"]()


def _corpus(config: pytest.Config) -> Path | None:
    from rollcert.stateful_tests.corpus import DEFAULT_PLUGIN_CORPUS

    text: str | None = config.getoption("rollcert_corpus")
    if text is not None and text.strip().lower() == "off":
        return None
    found = _location(text) if text else config.rootpath / DEFAULT_PLUGIN_CORPUS
    return found.absolute() if isinstance(found, Path) else found


def _location(corpus: str | Path) -> Any:
    """A corpus as given: a directory, or (text) a ``redis://`` URL or ``module:attr``
    naming a Hypothesis example database (``corpus.corpus_location``)."""
    from rollcert.stateful_tests.corpus import corpus_location

    return corpus if isinstance(corpus, Path) else corpus_location(str(corpus))


@pytest.hookimpl(tryfirst=True)  # before junitxml copies the user properties into the report
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep each work unit's result as it is reported (here, or from an xdist
    worker), and take it out of the user properties: it is a record for the
    merge, not something to print in the JUnit report."""
    if _ON_WORKER:
        return  # xdist sends the report, user properties and all, to the controller, which keeps it
    kept = []
    for name, value in report.user_properties:
        if name == "rollcert_unit" and isinstance(value, str):
            _REPORTED[report.nodeid] = value
        else:
            kept.append((name, value))
    report.user_properties = kept


#: The work units' results by node id, gathered where the session is controlled
#: (with pytest-xdist, from every worker's reports: they travel as user properties).
_REPORTED: dict[str, str] = {}
#: Whether this process is a pytest-xdist worker (set at configure time; a report hook has no config).
_ON_WORKER = False


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Add the units' counterexamples to the corpus (at the end: a unit that
    replays the corpus must not see what another unit of the same run found),
    and with ``--rollcert-json`` merge the units into the certificate a serial
    run of them gives (:func:`rollcert.stateful_tests.shards.certificate_of`):
    a violation any unit found is in it, whatever the serial stopping rule
    says, and a property with a unit that never reported (deselected,
    interrupted, its worker lost) is ``unknown`` at best. On the controller
    only, with xdist."""
    if session.config.getoption("rollcert_target") is None or hasattr(session.config, "workerinput"):
        return
    import json

    from rollcert.stateful_tests.corpus import add_counterexample
    from rollcert.stateful_tests.shards import ShardError
    from rollcert.stateful_tests.shards import read_unit

    path: str | None = session.config.getoption("rollcert_json")
    try:
        done = [read_unit(json.loads(text)) for text in _REPORTED.values()]
    except (ShardError, ValueError, RecursionError) as error:
        print(f"\nrollcert: a work unit's report cannot be read: {error}")
        if path:
            print(f"rollcert: {path} not written")
        return
    corpus = _corpus(session.config)
    if corpus is not None:
        for unit in done:
            found = unit.result.counterexample
            if found is not None and not unit.result.reason.startswith("from the corpus"):
                add_counterexample(corpus, found, _target(session.config).name)
    if path:
        _write_units_certificate(session.config, Path(path), done)


def _write_units_certificate(config: pytest.Config, path: Path, done: list[Any]) -> None:
    """``--rollcert-json``: the certificate of the reported units, written to ``path``."""
    import json

    from rollcert.reports.certificate import to_json
    from rollcert.stateful_tests.shards import ShardError
    from rollcert.stateful_tests.shards import certificate_of
    from rollcert.stateful_tests.shards import target_json
    from rollcert.stateful_tests.shards import units
    from rollcert.targets.version import SUITE_VERSION

    chosen = _chosen(config)
    header = {
        "suite_version": SUITE_VERSION, "target": target_json(_target(config)),
        "target_text": config.getoption("rollcert_target"), "profile": config.getoption("rollcert_profile"),
        "seed": config.getoption("rollcert_seed"), "only": None if chosen == ALL_PROPERTY_IDS else list(chosen),
        "corpus": None, "seed_source": "",
    }
    by_unit = {}
    for unit in done:
        if unit.unit in by_unit:
            print(f"\nrollcert: {path} not written: the work unit {unit.unit.name} reported twice")
            return
        by_unit[unit.unit] = unit
    try:
        certificate, _ = certificate_of(header, by_unit)
    except ShardError as error:
        print(f"\nrollcert: {path} not written: {error}")
        return
    absent = [u.name for u in units(chosen, PROFILES[header["profile"]]) if u not in by_unit]
    if absent:
        print(f"\nrollcert: {len(absent)} work units never reported ({absent[0]}, ...): their properties are unknown at best")
    if config.getoption("rollcert_reproducible"):
        from rollcert.command.cli import _source_date

        for result in certificate.results.values():
            result.make_reproducible()
        record = {**to_json(certificate), "created": _source_date()}
    else:
        record = to_json(certificate)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


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
        if self.config.getoption("rollcert_units"):
            from rollcert.stateful_tests.profiles import PROFILES
            from rollcert.stateful_tests.shards import units

            profile = PROFILES[self.config.getoption("rollcert_profile")]
            return [UnitItem.from_parent(self, name=unit.name) for unit in units(_chosen(self.config), profile)]
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
        """The corpus replay and the machines, in a supervised worker (see the module)."""
        profile = self.config.getoption("rollcert_profile")
        _record_run(self, profile)
        unbuilt = _unbuilt(self)
        result = _ended(self.name, unbuilt) if unbuilt is not None else _certify_property_supervised(
            _source(self.config), self.name, profile, self.config.getoption("rollcert_seed"),
            self.config.stash[_SUPERVISION], _corpus(self.config),
        )
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
            origin = f", {result.reason.split(': ', 1)[0]}" if result.reason.startswith("from the corpus") else ""
            pytest.fail(f"{self.name} {result.title}: violated{origin}\n{format_counterexample(shown)}", pytrace=False)
        if result.verdict != "passed":
            pytest.fail(f"{self.name} {result.title}: {result.verdict}: {result.reason}", pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.nodeid


def _record_run(item: pytest.Item, profile: str) -> None:
    """The seed and profile in the JUnit report (``--junitxml``), to rerun a red item with."""
    item.user_properties += [("rollcert_seed", item.config.getoption("rollcert_seed")), ("rollcert_profile", profile)]


class UnitItem(PropertyItem):
    """``rollcert::TARGET::R2::shard-3``: one work unit (round 3 of R2; ``R7``: the
    whole property), as ``rollcert certify --shard`` runs it. A round alone is no
    verdict: the item fails on what ends the property — a violation, an error —
    and passes otherwise; the units merge (``--rollcert-json``, or ``rollcert
    merge``) into the serial run's certificate. The unit's result travels back
    as a user property, so pytest-xdist brings it from any worker, remote ones
    included."""

    def setup(self) -> None:
        import json

        from rollcert.command.parallel import WorkerEnded
        from rollcert.stateful_tests.shards import read_unit

        profile = self.config.getoption("rollcert_profile")
        _record_run(self, profile)
        supervision = self.config.stash[_SUPERVISION]
        unbuilt = _unbuilt(self)
        done = WorkerEnded(unbuilt) if unbuilt is not None else _supervised(
            partial(_run_unit_in_worker, _source(self.config), self.name, profile, self.config.getoption("rollcert_seed"),
                    supervision.limits(), _corpus(self.config)),
            f"the work unit {self.name}", supervision.property_deadline(profile),
        )
        if isinstance(done, WorkerEnded):  # no result: the item errors, and the merge says a unit is missing
            self.result = _ended(self.name.split("::", 1)[0], done.reason)
        else:
            self.user_properties.append(("rollcert_unit", done))
            self.result = read_unit(json.loads(done)).result
        if self.result.verdict == "error":
            pytest.fail(f"{self.name} {self.result.title}: error: {self.result.reason}", pytrace=False)

    def runtest(self) -> None:
        result = self.result
        assert result is not None
        if result.verdict in ("passed", "unknown") and "::shard-" in self.name:
            return  # one round: what it did not reach, another round may; the merged certificate says
        super().runtest()


def _source(config: pytest.Config) -> TargetSource:
    """How a worker resolves ``--rollcert-target`` (with ``--rollcert-set-aside``'s findings)."""
    from rollcert.command.parallel import TargetSource

    set_aside: str | None = config.getoption("rollcert_set_aside")
    return TargetSource(config.getoption("rollcert_target"), Path(set_aside).absolute() if set_aside else None)


def _unbuilt(item: pytest.Item) -> str | None:
    """Why the target's import failed in its worker at configure time, if it did."""
    return item.config.stash.get(_UNBUILT, None)


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
