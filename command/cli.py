"""The ``rollcert`` command: every subcommand, one parser, one usage error.

    rollcert certify [TARGET] [--profile quick|ci|thorough] [--seed N] [--only R2,R3]
                     [--json PATH] [--markdown PATH] [--junit PATH] [--html PATH]
                     [--exhaustive-depth K] [--set-aside FINDINGS.toml] [-j N] [--quiet] [--reproducible] [--call-timeout S] [--memory-limit MIB] [--in-process]
    rollcert replay TARGET (--trace JSON | --certificate PATH --property ID) [--in-process]
    rollcert smoke TARGET [--in-process]           # wiring only: is the adapter wired up? (certify judges)
    rollcert explore [TARGET] [--depth K] [--in-process]   # bounded exhaustive search
    rollcert prove [--only NAME] [--timeout S] [--refinement-depth K] [--thorough]   # z3, CrossHair on impl, impl vs model
    rollcert explain TARGET|CERT.json [--property ID] [--all]   # a counterexample, step by step (a file: never run)
    rollcert html CERT.json PATH                   # a JSON certificate drawn as one HTML page
    rollcert specimens [--profile P] [--seed N]    # (plugin) every specimen: the kill matrix
    rollcert properties [--markdown]               # (plugin) where each property is stated, checked, broken, proved
    rollcert docs [--output docs/tour.md]          # (plugin) the tour: one chapter per property

Exit status (SPEC §6), for every subcommand: 0 nothing violated and nothing
unknown; 1 a violation; 2 unknown or error without a violation; 3 a usage or
target error, reported as one line on stderr, never a traceback; 130 Ctrl-C
(143 SIGTERM), except ``certify`` and ``campaign``, which write the certificate
of what finished, marked interrupted (1 or 2, never 0).
Every input is checked before any work starts: numbers (no nan, no infinity,
no negatives), output paths (writable), traces (every field).

Every subcommand that drives a target runs it in a worker process rollcert
supervises (``certify`` one per property; ``smoke``, ``replay``, ``explore`` and
``certify --exhaustive-depth``'s search one for the whole work, through
``parallel.run_supervised``), so that a target that calls ``os._exit(0)``,
crashes or is killed ends a worker, said in one line with exit status 2,
never rollcert with exit status 0 and nothing said. ``--in-process`` runs it in
rollcert's own process, for a debugger.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import UsageError
from rollcert.targets.adapter import visible
from rollcert.targets.plugins import COMMANDS
from rollcert.targets.plugins import Command
from rollcert.targets.plugins import load_plugins

if TYPE_CHECKING:  # the modules that drive targets are imported by the subcommands that need them
    from rollcert.command.parallel import Say
    from rollcert.command.parallel import TargetSource
    from rollcert.command.parallel import WorkerEnded
    from rollcert.stateful_tests.exhaustive import ExhaustiveResult
    from rollcert.stateful_tests.judge import StepRecord
    from rollcert.stateful_tests.verdicts import CertificateData
    from rollcert.stateful_tests.verdicts import PropertyResult
    from rollcert.targets.adapter import BufferConfig
    from rollcert.targets.adapter import Target

USAGE_ERROR = 3
#: Exit status for an error without a violation (a worker that ended without its result).
ERROR = 2
#: Exit status after Ctrl-C, as a shell reports a process SIGINT ended.
INTERRUPTED = 130
#: Exit status after SIGTERM, as a shell reports a process SIGTERM ended.
TERMINATED = 143

TARGET_HELP = "bundled (default), specimen:NAME, a registered name, module:attr or 'subprocess:COMMAND ARGS...'"


# -- option types: refuse bad numbers before anything runs ------------------------------------


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def convert(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a whole number {bound}")
        return value

    return convert


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds above 0")
    return value


class AutoSeed(int):
    """The seed ``--seed auto`` chose, an ``int`` that remembers where it came from."""

    source: str

    def __new__(cls, value: int, source: str) -> AutoSeed:
        seed = super().__new__(cls, value)
        seed.source = source
        return seed


#: Environment variables that name one CI run (GitHub Actions, GitLab, Jenkins, Buildkite...),
#: in the order ``--seed auto`` looks for them; ROLLCERT_RUN_ID first, for any other scheduler.
RUN_ID_VARIABLES = ("ROLLCERT_RUN_ID", "GITHUB_RUN_ID", "CI_PIPELINE_ID", "BUILDKITE_BUILD_NUMBER", "BUILD_NUMBER")


def auto_seed(environment: dict[str, str] | None = None, today: str | None = None) -> AutoSeed:
    """A seed that changes from run to run, so that a nightly gate's fixed seed
    never becomes a fixed test set (SPEC §7), yet is the same for every job of
    one CI run (the shards of one run must agree on it): derived from the run's
    id where the CI names one, else from today's UTC date. A hash, not the value
    itself, so that consecutive run ids do not give seeds one stride apart."""
    import datetime
    import hashlib

    environment = dict(os.environ) if environment is None else environment
    for name in RUN_ID_VARIABLES:
        value = environment.get(name, "").strip()
        if value:
            source = f"${name}={value}"
            break
    else:
        source = f"the date {today or datetime.datetime.now(datetime.UTC).date().isoformat()} (UTC)"
    derived = int.from_bytes(hashlib.sha256(source.encode("utf-8")).digest()[:4], "big")
    return AutoSeed(derived, f"--seed auto, from {source}")


def seed_option(text: str) -> int:
    """``--seed N`` or ``--seed auto``."""
    if text.strip().lower() == "auto":
        return auto_seed()
    return whole_number(0, 2**63 - 1)(text)


def seed_source(seed: int) -> str:
    return seed.source if isinstance(seed, AutoSeed) else ""


def announce_seed(seed: int) -> None:
    """A rotated seed is printed before the run, so a red run can be rerun with it."""
    if isinstance(seed, AutoSeed):
        print(f"rollcert: seed {int(seed)} ({seed.source}); rerun with --seed {int(seed)}", file=sys.stderr)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and ``--seed``, as every subcommand that runs the machines takes them."""
    parser.add_argument(
        "--profile", choices=sorted(PROFILES), default="quick",
        help="Hypothesis settings: quick (about a minute), ci, thorough (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=seed_option, default=0,
        help="a whole number, or 'auto': derived from the CI run's id ($GITHUB_RUN_ID...) or today's date, "
        "printed and recorded in the certificate (default: %(default)s)",
    )


def corpus_option(text: str) -> Any:
    """``--corpus DIR``, a ``redis://`` URL or ``module:attr`` naming a Hypothesis
    ``ExampleDatabase`` (:func:`~rollcert.stateful_tests.corpus.corpus_location`),
    or ``off`` for none (what the help calls the default, and what the pytest
    plugin's ``--rollcert-corpus off`` means): never a folder named ``off`` by
    accident (write ``./off`` for that)."""
    if text.strip().lower() == "off":
        return None
    if text.startswith(("redis://", "rediss://", "unix://")) or ":" in text:
        from rollcert.stateful_tests.corpus import corpus_location

        return corpus_location(text)
    return Path(text)


def add_corpus_option(parser: argparse.ArgumentParser, default: str = "off") -> None:
    parser.add_argument(
        "--corpus", type=corpus_option, metavar="DIR|URL",
        help="a corpus of counterexample traces: a directory, redis://HOST:PORT/DB, or module:attr naming a "
        "Hypothesis ExampleDatabase; replayed first (a trace that still fails is a violation at once), "
        f"and every counterexample found is added (default: {default})",
    )


def corpus_directory(path: Any) -> Any:
    """``--corpus``, refused before the run if it could not be a directory to write
    into, or a database that cannot be opened or reached."""
    if path is None:
        return None
    if not isinstance(path, Path):
        from rollcert.stateful_tests.corpus import CorpusUnavailable
        from rollcert.stateful_tests.corpus import check_corpus

        try:
            check_corpus(path)
        except CorpusUnavailable as error:
            raise UsageError(str(error)) from None
        return path
    if path.exists() and not path.is_dir():
        raise UsageError(f"--corpus {path}: not a directory")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not os.access(existing, os.W_OK):
        raise UsageError(f"--corpus {path}: permission denied")
    return path


def corpus_replayer(source: TargetSource, *, in_process: bool) -> Callable[[Path, Any], Any]:
    """Replays a corpus in supervised workers, failing closed: each entry under a
    deadline of its own (``--deadline``; the call timeout holds within it); an
    entry that crashes the worker or overruns is its property's ``error``, naming
    the file (:func:`~rollcert.stateful_tests.corpus.entry_lost`), and the
    entries after it are replayed in a fresh worker. Every file skipped is said
    on stderr, one line each, and counted in the certificate."""

    def run(directory: Path, property_ids: Any) -> Any:
        from rollcert.command.parallel import WorkerEnded
        from rollcert.command.parallel import run_supervised
        from rollcert.stateful_tests.corpus import CorpusTally
        from rollcert.stateful_tests.corpus import EntryOutcome
        from rollcert.stateful_tests.corpus import entry_lost
        from rollcert.targets.portable import portable_path

        tally = CorpusTally(directory)
        after = ""
        handled: set[str] = set()  # every entry done or lost (a database has no order to resume in)
        running: list[tuple[str, str]] = []  # the entry the current worker holds, if any
        finished: list[str] = []  # the entries the current worker finished

        def on_note(payload: Any) -> None:
            if isinstance(payload, EntryOutcome):
                tally.add(payload)
                running.clear()
                if payload.name:
                    finished.append(payload.name)
                    handled.add(payload.name)
            else:
                running[:] = [payload]

        while True:
            running.clear()
            finished.clear()
            ended = run_supervised(
                partial(_replay_corpus_in_worker, source, directory, tuple(property_ids), after, frozenset(handled)),
                "the corpus replay",
                in_process=in_process, on_note=on_note,
            )
            if not isinstance(ended, WorkerEnded):
                break
            if running:  # the entry it held took it down: that entry's verdict; the rest in a fresh worker
                (name, property_id), = running
                lost = entry_lost(directory, name, property_id, ended.reason, source.text)
                tally.add(EntryOutcome(name, property_id, result=lost))
                print(visible(f"rollcert: corpus: {name} ({property_id}): its replay did not finish: {ended.reason}"),
                      file=sys.stderr)
                after = name if isinstance(directory, Path) else ""
                handled.add(name)
            elif finished:  # lost between entries: resume after the last one it finished
                after = max(after, finished[-1]) if isinstance(directory, Path) else ""
            else:  # lost holding no entry, having finished none: nothing replayed is no pass
                shown = portable_path(directory, "corpus") if isinstance(directory, Path) else str(directory)
                why = f"the corpus {shown} could not be replayed: {ended.reason}"
                print(visible(f"rollcert: corpus: {why}"), file=sys.stderr)
                for property_id in property_ids:
                    tally.lose(property_id, _error_result(property_id, why))
                break
        replayed = tally.replay()
        for warning in replayed.warnings:
            print(visible(f"rollcert: corpus: {warning}"), file=sys.stderr)
        if replayed.warnings:
            print(f"rollcert: corpus: {len(replayed.warnings)} skipped (said above; not a test of this target)",
                  file=sys.stderr)
        return replayed

    return run


def _error_result(property_id: str, reason: str) -> Any:
    from rollcert.model.properties import PROPERTIES
    from rollcert.stateful_tests.verdicts import PropertyResult

    prop = PROPERTIES.get(property_id)
    return PropertyResult(property_id, "error", prop.title if prop is not None else "", reason=reason)


def _replay_corpus_in_worker(
    source: TargetSource, directory: Any, property_ids: tuple[str, ...], after: str, done: frozenset[str], say: Say
) -> None:
    """The corpus replay's work in its worker: every entry's outcome goes to the
    parent as soon as it is known (a note), so that a worker lost on a later
    entry loses only that one."""
    from rollcert.command.parallel import note
    from rollcert.stateful_tests.corpus import replay_entries

    target = source.resolve()
    for outcome in replay_entries(
        target, directory, property_ids, after=after, done=done, starting=lambda name, pid: note(say, (name, pid))
    ):
        note(say, outcome)


def check_writable(*paths: Path | None) -> None:
    """Refuse, before a long run, an output path that could not be written after it."""
    for path in paths:
        if path is None:
            continue
        if path.is_dir():
            raise UsageError(f"cannot write {path}: it is a directory")
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError(f"cannot write {path}: there is no directory {parent}")
        if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise UsageError(f"cannot write {path}: permission denied")


def write_output(path: Path | None, text: str) -> None:
    if path is not None:
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {path}: {error.strerror}") from None


def add_set_aside_option(parser: argparse.ArgumentParser) -> None:
    """``--set-aside FILE``: known findings (TOML) the run does not generate; see targets/findings.py."""
    parser.add_argument(
        "--set-aside", type=Path, metavar="FILE",
        help="a findings file (TOML): known findings to set aside; the certificate lists them",
    )


def resolve_with_findings(args: argparse.Namespace, text: str) -> Any:
    """The target named ``text``, with ``--set-aside``'s findings set aside. The
    file is read first, so a malformed one is refused before a server starts."""
    from rollcert.targets.findings import load_findings
    from rollcert.targets.resolve import resolve_target

    path: Path | None = getattr(args, "set_aside", None)
    findings = load_findings(path) if path is not None else ()
    with _import_deadline(f"importing and building the target {text!r}"):
        target = resolve_target(text)
    return replace(target, set_aside=(*target.set_aside, *findings)) if findings else target


@contextlib.contextmanager
def _import_deadline(doing: str) -> Iterator[None]:
    """``doing`` (the target's import, in rollcert's own process) within the
    worker deadline (``--deadline``; 900 s by default), else a :class:`TargetError`.

    The target is imported here before any worker starts (its name, its
    capabilities, the servers it needs): an import that never returned hung the
    command for ever, past every deadline the workers keep. A timer signal
    interrupts it (a blocking system call included); code that never gives the
    interpreter back (a native deadlock) is out of its reach, as of every
    in-process bound. Only the main thread receives signals: elsewhere, no bound."""
    from rollcert.command.parallel import DEFAULT_SUPERVISED_DEADLINE
    from rollcert.command.parallel import chosen_deadline
    from rollcert.targets.adapter import TargetError

    seconds = chosen_deadline(DEFAULT_SUPERVISED_DEADLINE)
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    fired = False

    def overran(signum: int, frame: object) -> None:
        nonlocal fired
        fired = True
        raise TimeoutError(doing)

    previous = signal.signal(signal.SIGALRM, overran)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except BaseException:
        if fired:
            raise TargetError(f"{doing} did not finish within its deadline of {seconds:g} s (--deadline)") from None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def target_source(args: argparse.Namespace) -> TargetSource:
    """How a worker process resolves TARGET (with ``--set-aside``'s findings) itself."""
    from rollcert.command.parallel import TargetSource

    path: Path | None = getattr(args, "set_aside", None)
    return TargetSource(args.target, path.absolute() if path is not None else None)


def add_in_process_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in-process", action="store_true",
        help="run the target in this process (for a debugger) instead of a worker process; "
        "a target that exits or crashes the process then takes rollcert with it",
    )
    add_deadline_option(parser)


def add_deadline_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--deadline", type=non_negative_seconds, metavar="S",
        help="wall-clock seconds each worker process (one per property) may run before rollcert kills its "
        "process group and reports an error naming the deadline (default: by profile, 900 s at quick; "
        "$ROLLCERT_DEADLINE; 0 for none); not enforceable with --in-process",
    )


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds, 0 or more")
    return value


def set_deadline(args: argparse.Namespace) -> None:
    """``--deadline`` goes through the environment, as ``--call-timeout`` does, so
    that every supervised worker of the command gets it (corpus replay, search)."""
    from rollcert.command.parallel import DEADLINE_VARIABLE

    seconds = getattr(args, "deadline", None)
    if seconds is not None:
        os.environ[DEADLINE_VARIABLE] = repr(seconds)


def worker_ended(ended: WorkerEnded) -> int:
    """A supervised worker that ended without its result: one line, and never success."""
    print(f"rollcert: {visible(ended.reason)}", file=sys.stderr)
    return ERROR


def _only(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    chosen = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    unknown = [p for p in chosen if p not in ALL_PROPERTY_IDS]
    if unknown or not chosen:
        raise UsageError(f"--only takes property IDs from {', '.join(ALL_PROPERTY_IDS)}; got {text!r}")
    return chosen


# -- the built-in subcommands --------------------------------------------------------------------


def _configure_certify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", default="bundled", help=TARGET_HELP)
    add_run_options(parser)
    parser.add_argument("--only", help="comma-separated property IDs, e.g. R2,R3")
    parser.add_argument("--json", type=Path, help="write the certificate as JSON")
    parser.add_argument("--markdown", type=Path, help="write the certificate as Markdown")
    parser.add_argument("--junit", type=Path, help="write the certificate as JUnit XML")
    parser.add_argument("--html", type=Path, help="write the certificate as one self-contained HTML page")
    parser.add_argument(
        "--exhaustive-depth", type=whole_number(1, 6), metavar="K", help="also run the bounded exhaustive search to depth K"
    )
    add_set_aside_option(parser)
    add_corpus_option(parser)
    parser.add_argument(
        "-j", "--jobs", type=whole_number(1), default=1, metavar="N",
        help="certify the properties in N worker processes: the verdicts and counterexamples of -j 1 (default: %(default)s)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no live progress on a terminal (none is shown when stderr is not one)"
    )
    parser.add_argument(
        "--call-timeout", type=positive_seconds, metavar="S",
        help="seconds one call of an in-process target may take before its property is an error "
        "(default: $ROLLCERT_CALL_TIMEOUT, else 60; $ROLLCERT_CALL_TIMEOUT=0 for no limit)",
    )
    add_deadline_option(parser)
    parser.add_argument(
        "--memory-limit", type=whole_number(64), metavar="MIB",
        help="cap each property's worker process at MIB mebibytes of address space: a target that "
        "allocates without bound then gets a MemoryError, judged like any undocumented exception",
    )
    parser.add_argument(
        "--in-process", action="store_true",
        help="with -j 1, run the properties in this process (for a debugger) instead of one worker process each, "
        "and the --exhaustive-depth search too; a target that exits, crashes or hangs the process then takes rollcert with it",
    )
    add_reproducible_option(parser)
    parser.add_argument(
        "--fail-fast", action="store_true",
        help="stop at the first violated property, in certificate order (R0 first), and exit 1; the properties "
        "not run are unknown. One property at a time, whatever -j says",
    )
    parser.add_argument(
        "--shard", type=shard_option, metavar="I/N",
        help="run shard I of N: the I-th of N blocks of the work units (a property's round, or a whole property for R7) "
        "and write a partial certificate to --json; `rollcert merge` combines the N partials",
    )


def add_reproducible_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reproducible", action="store_true",
        help="no wall-clock readings in the certificate (seconds 0, created from $SOURCE_DATE_EPOCH or 0) "
        "and R7's thread-scheduling counts as reached or not, so one target, profile and seed give the same bytes",
    )


def shard_option(text: str) -> tuple[int, int]:
    """``--shard I/N``: shard I (from 1) of N."""
    index, slash, count = text.partition("/")
    try:
        pair = (int(index, 10), int(count, 10))
    except ValueError:
        pair = (0, 0)
    if not slash or not 1 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: give I/N with 1 <= I <= N, e.g. 2/3")
    return pair


def _certify(args: argparse.Namespace) -> int:
    if args.shard is not None:
        return _certify_shard(args)
    from rollcert.command.parallel import certify_in_workers_or_here
    from rollcert.command.processes import signal_name
    from rollcert.reports.progress import display_for

    only = _only(args.only)
    if args.memory_limit is not None and args.in_process and args.jobs == 1:
        raise UsageError("--memory-limit caps the worker processes; it cannot be used with --in-process")
    check_writable(args.json, args.markdown, args.junit, args.html)
    _set_call_timeout(args.call_timeout)
    created = _source_date() if args.reproducible else None  # refused, if bad, before the run
    corpus = corpus_directory(args.corpus)
    target = resolve_with_findings(args, args.target)
    source = target_source(args)
    announce_seed(args.seed)
    property_ids = [p for p in ALL_PROPERTY_IDS if only is None or p in only]
    display = display_for(property_ids, quiet=args.quiet)
    finished: dict[str, PropertyResult] = {}
    try:
        certificate = certify_in_workers_or_here(
            target, profile=args.profile, seed=int(args.seed), only=only, target_text=args.target,
            jobs=args.jobs, source=source, progress=display, isolate=not args.in_process,
            memory_limit=args.memory_limit << 20 if args.memory_limit is not None else None,
            corpus=corpus, replay_corpus_with=corpus_replayer(source, in_process=args.in_process) if corpus else None,
            finished=finished, fail_fast=args.fail_fast,
        )
    except KeyboardInterrupt as interruption:  # every worker is stopped by now: certify what finished
        certificate = interrupted_certificate(args, target, property_ids, finished, signal_name(interruption), corpus)
    finally:
        if display is not None:
            display.close()
    certificate.seed_source = seed_source(args.seed)
    if args.reproducible:
        for result in certificate.results.values():
            result.make_reproducible()
    if args.exhaustive_depth is not None and not certificate.interrupted:
        try:
            certificate.exhaustive = _certificates_search(args, source, target)
        except KeyboardInterrupt as interruption:
            certificate.interrupted = signal_name(interruption)
    if certificate.interrupted:
        say_interrupted(certificate)
    return _write_certificate(args, certificate, created)


#: The reason of a property an interrupted run had not finished.
UNFINISHED = "the run was interrupted before this property finished"


def interrupted_certificate(
    args: argparse.Namespace, target: Target, property_ids: list[str], finished: dict[str, PropertyResult],
    interrupted: str, corpus: Path | None,
) -> CertificateData:
    """The certificate of a run stopped by ``interrupted`` (SIGTERM, Ctrl-C): every
    verdict reached, ``unknown`` for the rest, marked so (never green). What it
    found goes into the corpus as a finished run's would: a ``timeout 20 rollcert
    certify`` used to write nothing at all, and lose it."""
    from rollcert.model.properties import PROPERTIES
    from rollcert.stateful_tests.certify import assemble
    from rollcert.stateful_tests.corpus import CorpusSummary
    from rollcert.stateful_tests.corpus import add_counterexample
    from rollcert.stateful_tests.verdicts import PropertyResult

    results = {
        pid: finished[pid] if pid in finished else PropertyResult(
            pid, "unknown", PROPERTIES[pid].title if pid in PROPERTIES else "", reason=UNFINISHED
        )
        for pid in property_ids
    }
    certificate = assemble(target, args.profile, int(args.seed), results, args.target)
    certificate.interrupted = interrupted
    if corpus is not None:
        added = sum(
            add_counterexample(corpus, r.counterexample, target.name)
            for r in finished.values() if r.counterexample is not None and not r.reason.startswith("from the corpus")
        )
        certificate.corpus = CorpusSummary(str(corpus), 0, 0, 0, added)
    return certificate


def say_interrupted(certificate: CertificateData) -> None:
    """The one line on stderr of an interrupted run that still wrote its certificate."""
    unknown = sum(r.reason == UNFINISHED for r in certificate.results.values())
    print(
        f"rollcert: interrupted by {certificate.interrupted}; the certificate holds the verdicts reached "
        f"({unknown} of {len(certificate.results)} properties unfinished, unknown)",
        file=sys.stderr, flush=True,
    )


def _certify_shard(args: argparse.Namespace) -> int:
    """``certify --shard I/N``: this shard's work units, written as a partial certificate."""
    from rollcert.command.parallel import certify_in_workers
    from rollcert.stateful_tests.certify import RoundRecord
    from rollcert.stateful_tests.profiles import PROFILES
    from rollcert.stateful_tests.shards import Unit
    from rollcert.stateful_tests.shards import UnitResult
    from rollcert.stateful_tests.shards import needed
    from rollcert.stateful_tests.shards import partial_json
    from rollcert.stateful_tests.shards import run_unit
    from rollcert.stateful_tests.shards import shard_units
    from rollcert.stateful_tests.shards import target_json
    from rollcert.stateful_tests.verdicts import PropertyResult
    from rollcert.targets.portable import portable_path
    from rollcert.targets.portable import portable_target
    from rollcert.targets.version import SUITE_VERSION

    index, count = args.shard
    only = _only(args.only)
    for option, given in (("--exhaustive-depth", args.exhaustive_depth), ("--memory-limit", args.memory_limit),
                          ("--markdown", args.markdown), ("--junit", args.junit), ("--html", args.html)):
        if given is not None:
            raise UsageError(f"--shard writes a partial certificate (--json) only; {option} belongs to `rollcert merge`")
    if args.fail_fast:
        raise UsageError("--fail-fast stops one run at its first violation; a shard cannot see the other shards'")
    if args.json is None:
        raise UsageError("--shard needs --json PATH: where to write the partial certificate")
    check_writable(args.json)
    _set_call_timeout(args.call_timeout)
    corpus = corpus_directory(args.corpus)
    target = resolve_with_findings(args, args.target)
    source = target_source(args)
    announce_seed(args.seed)
    profile = PROFILES[args.profile]
    property_ids = [p for p in ALL_PROPERTY_IDS if only is None or p in only]
    mine = shard_units(property_ids, profile, index, count)
    corpus_record = None
    from_corpus: dict[str, Any] = {}  # property -> PropertyReplay, for the properties whose first unit is here
    if corpus is not None:
        # Replayed here, supervised, before any unit runs (as certify does): an entry that
        # crashes or hangs the target is its property's error naming the file, never dropped.
        firsts = [unit.property_id for unit in mine if unit.round in (None, 0)]
        replayed = corpus_replayer(source, in_process=args.in_process)(corpus, firsts)
        from_corpus = dict(replayed.properties)
        # Counted as every shard counts them (files no target can read), so that the partials agree.
        shown = portable_path(corpus, "corpus") if isinstance(corpus, Path) else str(corpus)
        corpus_record = {"directory": shown, "skipped": replayed.unreadable}
    run = run_unit
    done: dict[Unit, UnitResult] = {}
    skipped: list[Unit] = []
    # In waves by round, so that a round this shard's own earlier rounds make useless is skipped (shards.needed).
    for wave in sorted({-1 if unit.round is None else unit.round for unit in mine}):
        todo = []
        for unit in mine:
            if (-1 if unit.round is None else unit.round) != wave:
                continue
            found = from_corpus.get(unit.property_id) if unit.round in (None, 0) else None
            if found is not None and found.result is not None:  # decided by the corpus: the machine does not run
                done[unit] = UnitResult(unit, found.result, RoundRecord(), (found.replayed, found.failed))
                continue
            if needed(unit, [d for u, d in done.items() if u.property_id == unit.property_id]):
                todo.append(unit)
            else:
                skipped.append(unit)
        names = [unit.name for unit in todo]
        try:
            if args.in_process and args.jobs == 1:
                ran: dict[str, Any] = {name: run(target, name, profile, int(args.seed)) for name in names}
            else:
                ran = certify_in_workers(run, source, names, args.profile, int(args.seed), args.jobs) if names else {}
        except KeyboardInterrupt as interruption:
            print("rollcert: interrupted; no partial certificate written", file=sys.stderr)
            return interrupted_status(interruption)
        for unit in todo:
            outcome = ran[unit.name]
            if isinstance(outcome, PropertyResult):  # the unit's worker died: an error, which ends the property
                outcome = UnitResult(unit, replace(outcome, property_id=unit.property_id), RoundRecord())
            found = from_corpus.get(unit.property_id) if unit.round in (None, 0) else None
            if found is not None:
                outcome = replace(outcome, corpus=(found.replayed, found.failed))
            if args.reproducible:
                outcome.result.make_reproducible()
            done[unit] = outcome
    header = {
        "suite_version": SUITE_VERSION, "target": target_json(target), "target_text": portable_target(args.target),
        "profile": args.profile, "seed": int(args.seed), "seed_source": seed_source(args.seed),
        "only": list(only) if only is not None else None, "corpus": corpus_record,
    }
    ordered = [done[unit] for unit in mine if unit in done]
    write_output(args.json, json.dumps(partial_json(header, index, count, ordered, skipped), indent=2) + "\n")
    verdicts = ", ".join(f"{d.unit.name} {d.result.verdict}" for d in ordered) or "none"
    print(
        f"rollcert: shard {index}/{count} of {target.name}: {len(ordered)} work units run ({verdicts}), "
        f"{len(skipped)} skipped (an earlier round of this shard ended their property); wrote {args.json}"
    )
    return 0


def _configure_merge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("partials", nargs="+", type=Path, metavar="PART", help="the partial certificate of every shard")
    parser.add_argument("--json", type=Path, help="write the certificate as JSON")
    parser.add_argument("--markdown", type=Path, help="write the certificate as Markdown")
    parser.add_argument("--junit", type=Path, help="write the certificate as JUnit XML")
    parser.add_argument("--html", type=Path, help="write the certificate as one self-contained HTML page")
    add_corpus_option(parser)
    add_reproducible_option(parser)


def _merge(args: argparse.Namespace) -> int:
    """``rollcert merge PART...``: the certificate a serial run gives, from every shard's partial."""
    from rollcert.stateful_tests.corpus import CorpusSummary
    from rollcert.stateful_tests.corpus import add_counterexamples
    from rollcert.stateful_tests.shards import ShardError
    from rollcert.stateful_tests.shards import merge
    from rollcert.stateful_tests.shards import read_partial

    check_writable(args.json, args.markdown, args.junit, args.html)
    created = _source_date() if args.reproducible else None
    corpus = corpus_directory(args.corpus)
    try:
        certificate, counts = merge([(path, read_partial(path)) for path in args.partials])
    except ShardError as error:
        raise UsageError(str(error)) from None
    header = read_partial(args.partials[0]).header
    if header["corpus"] is not None:
        added = 0
        if corpus is not None:
            from_corpus = {pid for pid, r in certificate.results.items() if r.reason.startswith("from the corpus")}
            added = add_counterexamples(corpus, certificate.results, certificate.target.name, skip=from_corpus)
        certificate.corpus = CorpusSummary(
            header["corpus"]["directory"], sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values()),
            header["corpus"]["skipped"], added,
        )
    if args.reproducible:
        for result in certificate.results.values():
            result.make_reproducible()
    return _write_certificate(args, certificate, created)


def _write_certificate(args: argparse.Namespace, certificate: Any, created: str | None) -> int:
    """Print ``certificate`` and write it where the options say: the one ending of ``certify`` and ``merge``."""
    from rollcert.reports.certificate import render_junit
    from rollcert.reports.certificate import render_markdown
    from rollcert.reports.certificate import render_text
    from rollcert.reports.certificate import to_json

    print(render_text(certificate))
    record = to_json(certificate)
    if created is not None:
        record["created"] = created
        if "exhaustive" in record:
            record["exhaustive"].update(seconds=0.0, states_per_second=0)
    write_output(args.json, json.dumps(record, indent=2) + "\n")
    write_output(args.markdown, render_markdown(certificate))
    write_output(args.junit, render_junit(certificate))
    if args.html is not None:
        from rollcert.reports.html_certificate import from_certificate_data
        from rollcert.reports.html_certificate import render_html

        write_output(args.html, render_html(from_certificate_data(certificate)))
    status: int = certificate.exit_status
    return status


def _configure_campaign(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", default="bundled", help=TARGET_HELP)
    parser.add_argument("--budget", type=budget_option, required=True, help="how long: 2h, 30m, 90s")
    add_run_options(parser)
    parser.add_argument("--only", help="comma-separated property IDs, e.g. R2,R3")
    add_corpus_option(parser)
    add_set_aside_option(parser)
    parser.add_argument("--json", type=Path, help="write the final certificate (with the campaign's tallies) as JSON")
    parser.add_argument(
        "-j", "--jobs", type=whole_number(1), default=1, metavar="N", help="worker processes (default: %(default)s)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no line per round on stderr")


def budget_option(text: str) -> float:
    from rollcert.stateful_tests.campaign import parse_budget

    try:
        return parse_budget(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _campaign(args: argparse.Namespace) -> int:
    """``rollcert campaign``: rounds with fresh seeds until the budget; findings into the corpus."""
    import time

    from rollcert.command.parallel import certify_in_workers
    from rollcert.command.processes import signal_name
    from rollcert.reports.certificate import render_text
    from rollcert.reports.certificate import to_json
    from rollcert.stateful_tests.campaign import CampaignProgress
    from rollcert.stateful_tests.campaign import PropertyCampaign
    from rollcert.stateful_tests.certify import ROUND_SEED_STRIDE
    from rollcert.stateful_tests.certify import RoundRecord
    from rollcert.stateful_tests.certify import assemble
    from rollcert.stateful_tests.corpus import CorpusSummary
    from rollcert.stateful_tests.corpus import add_counterexample
    from rollcert.stateful_tests.profiles import PROFILES
    from rollcert.stateful_tests.shards import Unit
    from rollcert.stateful_tests.shards import UnitResult
    from rollcert.stateful_tests.shards import run_unit
    from rollcert.stateful_tests.shards import units
    from rollcert.stateful_tests.verdicts import PropertyResult

    started = time.monotonic()
    stop_at = started + args.budget
    only = _only(args.only)
    check_writable(args.json)
    corpus = corpus_directory(args.corpus)
    target = resolve_with_findings(args, args.target)
    source = target_source(args)
    announce_seed(args.seed)
    base = int(args.seed)
    property_ids = [p for p in ALL_PROPERTY_IDS if only is None or p in only]
    # Round 0 of each unit, seeded afresh per campaign round: round k of an endless certification.
    names = [u.name for u in units(property_ids, PROFILES[args.profile]) if u.round in (None, 0)]
    tallies = {pid: PropertyCampaign(pid) for pid in property_ids}
    added = rounds = 0
    ran: dict[str, Any] = {}
    new: list[str] = []

    kept: set[str] = set()

    def keep(ran: dict[str, Any]) -> None:
        """Tally every unit of this round that finished, a round the budget or a signal cut included;
        called as each unit finishes (:class:`_Arrivals`), so that its finding is in a shared corpus
        for other machines' runs at once, and again at the round's end (nothing is counted twice)."""
        nonlocal added
        elapsed = time.monotonic() - started
        for name in names:
            if name not in ran or name in kept:
                continue
            kept.add(name)
            done = ran[name]
            unit = Unit.parse(name)
            if isinstance(done, PropertyResult):  # its worker died
                done = UnitResult(unit, replace(done, property_id=unit.property_id), RoundRecord())
            if tallies[unit.property_id].add(done, rounds, elapsed, target.name):
                new.append(unit.property_id)
                found = done.result.counterexample
                if corpus is not None and found is not None:
                    added += add_counterexample(corpus, found, target.name)

    def findings_so_far() -> str:
        return ", ".join(f"{pid} {len(t.findings)}" for pid, t in tallies.items() if t.findings) or "none"

    # Rounds are numbered from 0 everywhere (round k has seed base + k * stride, like unit R2::shard-k).
    live = None if args.quiet else CampaignProgress(started, args.budget, findings_so_far)
    interrupted = ""
    try:
        while time.monotonic() < stop_at:
            seed = base + rounds * ROUND_SEED_STRIDE
            ran, new = _Arrivals(keep), []
            kept.clear()
            if live is not None:
                live.new_round(rounds, len(names))
            try:
                certify_in_workers(
                    run_unit, source, names, args.profile, seed, args.jobs, live, stop_at=stop_at, finished=ran
                )
            finally:  # what finished is kept, however the round ended
                keep(ran)
            if len(ran) < len(names):
                break  # the budget ran out in the middle of this round: the units that finished are kept
            if not args.quiet:
                elapsed = time.monotonic() - started
                print(
                    f"rollcert: campaign round {rounds} (seed {seed}) done at {elapsed:.0f} s of {args.budget:.0f} s; "
                    f"distinct findings: {findings_so_far()}" + (f"; new: {', '.join(new)}" if new else ""),
                    file=sys.stderr, flush=True,
                )
            rounds += 1
    except KeyboardInterrupt as interruption:
        interrupted = signal_name(interruption)
    cut = {"round": rounds, "finished": [n for n in names if n in ran], "stopped": [n for n in names if n not in ran]}
    elapsed = time.monotonic() - started
    unfinished = UNFINISHED if interrupted else "the budget ran out before one round of it finished"
    results = {pid: tallies[pid].result(unfinished) for pid in property_ids}
    certificate = assemble(target, args.profile, base, results, args.target)
    certificate.seed_source = seed_source(args.seed)
    certificate.interrupted = interrupted
    if interrupted:
        say_interrupted(certificate)
    elif cut["stopped"] and not args.quiet:
        print(
            f"rollcert: campaign round {rounds} cut by the budget: kept {', '.join(cut['finished']) or 'no unit'}; "
            f"stopped {', '.join(cut['stopped'])}", file=sys.stderr, flush=True,
        )
    if corpus is not None:
        certificate.corpus = CorpusSummary(str(corpus), 0, 0, 0, added)
    print(render_text(certificate))
    print(f"campaign: {rounds} rounds finished (0 to {rounds - 1}) in {elapsed:.1f} s (budget {args.budget:.0f} s)"
          if rounds else f"campaign: no round finished in {elapsed:.1f} s (budget {args.budget:.0f} s)")
    for pid, tally in tallies.items():
        for finding in tally.findings:
            print(f"  {pid}: {finding.name} ({finding.steps} steps), found after {finding.seconds:.1f} s in round {finding.round}")
    record = to_json(certificate)
    record["campaign"] = {
        "budget_seconds": args.budget, "elapsed_seconds": round(elapsed, 3), "rounds": rounds,
        "round_seeds": f"seed + k * {ROUND_SEED_STRIDE} for round k",
        "properties": {pid: tally.to_json() for pid, tally in tallies.items()},
        **({"cut_round": cut} if cut["stopped"] else {}),
    }
    write_output(args.json, json.dumps(record, indent=2) + "\n")
    return certificate.exit_status


class _Arrivals(dict[str, Any]):
    """A round's results as they arrive (``certify_in_workers``'s ``finished``),
    each handed to ``keep`` the moment it is stored."""

    def __init__(self, keep: Callable[[dict[str, Any]], None]) -> None:
        super().__init__()
        self._keep = keep

    def __setitem__(self, name: str, result: Any) -> None:
        super().__setitem__(name, result)
        self._keep(self)


def _certificates_search(args: argparse.Namespace, source: TargetSource, target: Target) -> ExhaustiveResult:
    """``--exhaustive-depth K``: the search in a supervised worker (or, with
    ``--in-process``, here, on the target already resolved). A worker that ends
    without its result makes the search ``error`` in the certificate, said on
    stderr too."""
    import time

    from rollcert.command.parallel import WorkerEnded
    from rollcert.stateful_tests.exhaustive import DEFAULT_MAX_STATES
    from rollcert.stateful_tests.exhaustive import ExhaustiveResult

    started = time.perf_counter()
    searched = exhaustive_search(
        target if args.in_process else source, args.exhaustive_depth, DEFAULT_MAX_STATES, None, in_process=args.in_process
    )
    if not isinstance(searched, WorkerEnded):
        return searched
    worker_ended(searched)
    return ExhaustiveResult(
        target=target.name, verdict="error", depth=0, requested_depth=args.exhaustive_depth, states=0,
        distinct_states=0, seconds=time.perf_counter() - started, reason=searched.reason,
    )


def exhaustive_search(
    where: TargetSource | Target, depth: int, max_states: int, time_budget_s: float | None, *, in_process: bool
) -> ExhaustiveResult | WorkerEnded:
    """The bounded exhaustive search of ``where`` (a target, or how to resolve one
    in the worker), run by :func:`~rollcert.command.parallel.run_supervised`."""
    from rollcert.command.parallel import WorkerEnded
    from rollcert.command.parallel import run_supervised
    from rollcert.stateful_tests.judge import Violation

    searched = run_supervised(
        partial(_search_in_worker, where, depth, max_states, time_budget_s), "the exhaustive search", in_process=in_process
    )
    if isinstance(searched, WorkerEnded):
        return searched
    outcome, violation = searched
    if violation is None:
        return outcome
    config, steps, explanation, broken = violation
    return replace(outcome, violation=Violation(config, steps, explanation, broken))


def _search_in_worker(
    where: TargetSource | Target, depth: int, max_states: int, time_budget_s: float | None, say: Say
) -> tuple[ExhaustiveResult, tuple[BufferConfig, list[StepRecord], str, tuple[str, ...]] | None]:
    """The search, and its violation taken apart: a :class:`Violation` does not
    pickle (its ``__init__`` takes more than the message it passes on)."""
    from rollcert.command.parallel import TargetSource
    from rollcert.stateful_tests.exhaustive import explore

    target = where.resolve() if isinstance(where, TargetSource) else where
    outcome = explore(target, depth=depth, max_states=max_states, time_budget_s=time_budget_s)
    found = outcome.violation
    return replace(outcome, violation=None), (
        None if found is None else (found.config, found.steps, found.explanation, found.broken)
    )


def _set_call_timeout(seconds: float | None) -> None:
    """``--call-timeout`` goes through the environment, so that the worker
    processes the properties run in inherit it (a bad $ROLLCERT_CALL_TIMEOUT
    was refused by :func:`_check_environment`, before any command ran)."""
    from rollcert.stateful_tests.judge import CALL_TIMEOUT_VARIABLE

    if seconds is not None:
        os.environ[CALL_TIMEOUT_VARIABLE] = repr(seconds)


def _source_date() -> str:
    """The certificate's creation time for ``--reproducible``: $SOURCE_DATE_EPOCH
    (the reproducible-builds convention) or the epoch itself."""
    import datetime

    text = os.environ.get("SOURCE_DATE_EPOCH", "0")
    try:
        seconds = int(text, 10)
    except ValueError:
        raise UsageError(f"SOURCE_DATE_EPOCH={text!r} is not a whole number of seconds") from None
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        raise UsageError(f"SOURCE_DATE_EPOCH={text!r} is out of range") from None


def _configure_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help=TARGET_HELP)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--trace", help="the trace as JSON text (as printed after 'Replay:')")
    source.add_argument("--certificate", type=Path, help="a certificate JSON; replays the counterexample of --property")
    parser.add_argument("--property", help="with --certificate: which property's counterexample")
    add_set_aside_option(parser)
    add_in_process_option(parser)


def _replay(args: argparse.Namespace) -> int:
    from rollcert.command.parallel import WorkerEnded
    from rollcert.command.parallel import run_supervised
    from rollcert.stateful_tests.traces import parse_trace

    if args.trace is not None:
        trace_text = args.trace
    else:
        if args.property is None:
            raise UsageError("--certificate needs --property ID: which property's counterexample to replay")
        from rollcert.reports.stored_certificate import read_certificate_file

        stored = read_certificate_file(args.certificate)  # checked whole: a malformed file is one line, exit 3
        wanted = args.property.upper()
        if wanted not in stored.traces:
            have = ", ".join(stored.traces) or "none"
            raise UsageError(
                f"the certificate {visible(str(args.certificate))} has no counterexample for {visible(wanted)!r} "
                f"(counterexamples: {have})"
            )
        trace_text = json.dumps(stored.traces[wanted])
    try:
        parse_trace(trace_text)  # refused here, before a worker starts; the worker reads it again
    except (ValueError, TypeError) as error:
        raise UsageError(f"bad trace: {error}") from None
    replayed = run_supervised(
        partial(_replay_in_worker, target_source(args), trace_text), "the replay", in_process=args.in_process
    )
    return worker_ended(replayed) if isinstance(replayed, WorkerEnded) else replayed


def _replay_in_worker(source: TargetSource, trace_text: str, say: Say) -> int:
    """Resolve the target, replay the trace (checked already) and ``say`` each step: the exit status."""
    from rollcert.reports.certificate import format_steps
    from rollcert.stateful_tests.family import NotGenerable
    from rollcert.stateful_tests.family import Unjudgeable
    from rollcert.stateful_tests.judge import Violation
    from rollcert.stateful_tests.judge import replay
    from rollcert.stateful_tests.traces import parse_trace
    from rollcert.targets.adapter import HarnessError

    family, config, operations = parse_trace(trace_text)
    target = source.resolve()
    try:
        steps = replay(family, target, config, operations)
    except Violation as violation:
        say("\n".join(format_steps(violation.steps)))
        say(f"Why: {violation.explanation}")
        say(f"VIOLATED at step {len(violation.steps)} of {len(operations)}")
        return 1
    except Unjudgeable as reason:
        say(f"NOT JUDGED (neither agreed nor violated): {reason}")
        return ERROR
    except NotGenerable as error:
        raise UsageError(f"bad trace: {error}") from None
    except HarnessError as error:
        say(f"ERROR: the adapter or the SUT broke: {error}")
        return ERROR
    say("\n".join(format_steps(steps)))
    skipped = len(operations) - len(steps)  # steps a --set-aside finding covers
    say(f"all {len(steps)} steps agree with the model" + (f" ({skipped} set aside)" if skipped else ""))
    return 0


def _configure_smoke(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help=TARGET_HELP)
    add_set_aside_option(parser)
    add_in_process_option(parser)


def _smoke(args: argparse.Namespace) -> int:
    from rollcert.command.parallel import WorkerEnded
    from rollcert.command.parallel import run_supervised

    smoked = run_supervised(partial(_smoke_in_worker, target_source(args)), "the smoke checks", in_process=args.in_process)
    return worker_ended(smoked) if isinstance(smoked, WorkerEnded) else smoked


def _smoke_in_worker(source: TargetSource, say: Say) -> int:
    from rollcert.command.smoke import smoke

    return smoke(source.resolve(), report=say)


def _configure_explore(parser: argparse.ArgumentParser) -> None:
    from rollcert.stateful_tests.exhaustive import DEFAULT_MAX_STATES

    parser.add_argument("target", nargs="?", default="bundled", help=TARGET_HELP)
    parser.add_argument("--depth", type=whole_number(1, 8), default=4, help="longest trace tried (default: %(default)s)")
    parser.add_argument(
        "--max-states", type=whole_number(1), default=DEFAULT_MAX_STATES, help="(default: %(default)s); unknown if exceeded"
    )
    parser.add_argument("--time-budget", type=positive_seconds, default=None, help="seconds; unknown if exceeded")
    parser.add_argument("--json", type=Path, help="write the result as JSON")
    add_set_aside_option(parser)
    add_in_process_option(parser)


def _explore(args: argparse.Namespace) -> int:
    from rollcert.command.parallel import WorkerEnded
    from rollcert.reports.certificate import format_steps

    check_writable(args.json)
    outcome = exhaustive_search(
        target_source(args), args.depth, args.max_states, args.time_budget, in_process=args.in_process
    )
    if isinstance(outcome, WorkerEnded):
        return worker_ended(outcome)
    print(f"{outcome.target}: {outcome.summary()}")
    if outcome.reason:
        print(f"  {outcome.reason}")
    if outcome.violation is not None:
        config = outcome.violation.config
        bound = "" if config.capacity is None else f", capacity {config.capacity}, policy {config.policy}"
        print(f"  shortest counterexample ({outcome.property_id}), initial {config.initial!r}{bound}:")
        print("\n".join(format_steps(outcome.violation.steps)))
        print(f"  {outcome.violation.explanation}")
    write_output(args.json, json.dumps(outcome.to_json(), indent=2) + "\n" if args.json is not None else "")
    return {"passed": 0, "violated": 1}.get(outcome.verdict, 2)


def _configure_prove(parser: argparse.ArgumentParser) -> None:
    from rollcert.proofs.runner import DEFAULT_TIMEOUT_SECONDS
    from rollcert.stateful_tests.refinement import DEFAULT_DEPTH

    parser.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH")
    parser.add_argument("--show-counterexamples", action="store_true", help="print each refutation's decoded counterexample")
    parser.add_argument("--only", metavar="NAME", action="append", help="run only this obligation (repeatable)")
    parser.add_argument(
        "--timeout", metavar="SECONDS", type=positive_seconds, default=DEFAULT_TIMEOUT_SECONDS,
        help="z3 budget per query (default: %(default)s); running out is UNKNOWN, a failure",
    )
    parser.add_argument("--list", action="store_true", help="list the obligations and exit")
    parser.add_argument("--no-crosshair", action="store_true", help="skip the CrossHair checks (the mirrors, and the symbolic runs of the production code)")
    parser.add_argument(
        "--refinement-depth", metavar="K", type=whole_number(1, 6), default=DEFAULT_DEPTH,
        help="length of the operation sequences the production code is checked on against the model "
        "(default: %(default)s, about 10 s; 4 takes about a minute per family)",
    )
    parser.add_argument("--no-refinement", action="store_true", help="skip the refinement checks of the production code")
    parser.add_argument(
        "--thorough", action="store_true",
        help="also run the wider CrossHair checks of the production code (every operation kind at every step; "
        "minutes, and a search may end UNKNOWN with its path count)",
    )


def _prove(args: argparse.Namespace) -> int:
    from rollcert.command.prove import check_names
    from rollcert.command.prove import list_checks
    from rollcert.command.prove import prove
    from rollcert.stateful_tests.refinement import RefinementBounds

    unknown = [name for name in args.only or [] if name not in check_names()]
    if unknown:
        raise UsageError(f"no obligation or check named {unknown[0]!r}; `rollcert prove --list` shows the names")
    check_writable(args.json)
    if args.list:
        list_checks()
        return 0
    status, record = prove(
        args.only, args.timeout, show_counterexamples=args.show_counterexamples, crosshair=not args.no_crosshair,
        refinement=None if args.no_refinement else RefinementBounds(depth=args.refinement_depth),
        thorough=args.thorough,
    )
    if args.json is not None:
        write_output(args.json, json.dumps(record, indent=2) + "\n")
    return status


def _configure_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="a target to certify now (e.g. specimen:NAME) or a certificate JSON file")
    parser.add_argument("--property", help="which property's counterexample (default: the first violated)")
    parser.add_argument("--all", action="store_true", help="show every step at once")
    add_run_options(parser)


def _explain(args: argparse.Namespace) -> int:
    from rollcert.reports.explain import explain_main

    return explain_main(args.source, args.property, args.all, profile=args.profile, seed=args.seed)


def _configure_html(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "certificate", type=Path, help="a certificate JSON (drawn from what it records; its target is never run)"
    )
    parser.add_argument("output", type=Path, help="the HTML file to write")


def _html(args: argparse.Namespace) -> int:
    from rollcert.reports.html_certificate import html_main

    check_writable(args.output)
    return html_main(args.certificate, args.output)


BUILT_IN: tuple[Command, ...] = (
    Command("certify", "certify an implementation and print its certificate", _configure_certify, _certify),
    Command("campaign", "rounds with fresh seeds until a time budget; findings into the corpus", _configure_campaign, _campaign),
    Command("merge", "merge the partial certificates of every shard into the serial run's certificate", _configure_merge, _merge),
    Command("replay", "replay a trace (a counterexample's steps) against a target", _configure_replay, _replay),
    Command("smoke", "a handful of operations, one line per check: is the adapter wired up? (wiring, not behaviour)", _configure_smoke, _smoke),
    Command("explore", "bounded exhaustive search: every trace up to a depth", _configure_explore, _explore),
    Command("prove", "the symbolic proofs (z3) and the CrossHair checks", _configure_prove, _prove),
    Command("explain", "walk through a counterexample, one step per Enter", _configure_explain, _explain),
    Command("html", "draw a JSON certificate as one self-contained HTML page", _configure_html, _html),
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is a :class:`UsageError` (one line, exit 3)."""

    def error(self, message: str) -> Any:  # argparse's error() never returns
        where = self.prog.removeprefix("rollcert").strip()
        raise UsageError(f"{where}: {message}" if where else message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rollcert", description="Certify rollback logs against the rollcert model.")
    subcommands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in (*BUILT_IN, *COMMANDS.values()):
        command.configure(subcommands.add_parser(command.name, help=command.help, description=command.help))
    return parser


def _check_environment() -> None:
    """The environment is the user's input too: a bad ``$ROLLCERT_CALL_TIMEOUT`` is a
    usage error before any command runs, not an error the target is blamed for
    halfway (``rollcert smoke`` reported it as "the adapter raised UsageError");
    so is a bad ``$ROLLCERT_DEADLINE``."""
    from rollcert.command.parallel import chosen_deadline
    from rollcert.stateful_tests.judge import call_timeout

    call_timeout()
    chosen_deadline(0.0)


def interrupted_status(interruption: KeyboardInterrupt) -> int:
    """130 after Ctrl-C, 143 after SIGTERM (as a shell reports each signal)."""
    from rollcert.command.processes import Terminated

    return TERMINATED if isinstance(interruption, Terminated) else INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    """The ``rollcert`` command. Run as the command (``argv`` None), SIGTERM unwinds
    like Ctrl-C and every process the run started ends with it
    (:mod:`rollcert.command.processes`); called with ``argv`` (a test, another
    program's process), the process around it is left as it is."""
    if argv is not None:
        # --deadline and --call-timeout reach the workers through the environment:
        # put it back as it was, so that one call does not set the next one's.
        from rollcert.command.parallel import DEADLINE_VARIABLE
        from rollcert.stateful_tests.judge import CALL_TIMEOUT_VARIABLE

        saved = {name: os.environ.get(name) for name in (DEADLINE_VARIABLE, CALL_TIMEOUT_VARIABLE)}
        try:
            return _main(list(argv))
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    from rollcert.command.processes import end_descendants
    from rollcert.command.processes import guard_the_run

    guard_the_run()
    try:
        return _main(sys.argv[1:])
    finally:
        end_descendants()


def _main(arguments: list[str]) -> int:
    try:
        load_plugins()
        try:
            args = build_parser().parse_args(arguments)
        except SystemExit as exit_request:  # --help and --version
            return 0 if exit_request.code in (0, None) else USAGE_ERROR
        command = {c.name: c for c in (*BUILT_IN, *COMMANDS.values())}[args.command]
        set_deadline(args)
        _check_environment()
        return command.run(args)
    except UsageError as error:  # it may quote a target or a file: one line, escaped
        print(f"rollcert: {visible(str(error))}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt as interruption:  # any worker is stopped by now (parallel.py); say so in one line
        print("rollcert: interrupted", file=sys.stderr)
        return interrupted_status(interruption)
    except BrokenPipeError:  # the reader went away (``rollcert properties | head``): nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the interpreter's final flush stays quiet
        return 0


if __name__ == "__main__":
    sys.exit(main())
