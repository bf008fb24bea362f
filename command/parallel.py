"""``rollcert certify -j N``: each property in a worker process of its own.

A property's run depends only on the target, the property, the profile and the
seed (Hypothesis is seeded per round, runs without an example database, and
every machine starts each example from a fresh SUT and model), so the
properties can run anywhere in any order and give what a serial run gives; the
certificate is put together in the parent, in the serial order, and R0 takes
the others' counterexamples there (``certify._fold_findings``), as serially.

Design choices, and why:

- **One process per property**, at most ``jobs`` at a time, started from the
  ``forkserver`` context (``spawn`` where there is none): a fresh interpreter
  state per property, so nothing one property's run left behind (a module-level
  counter of buffer ids, a cache, a thread) can reach another's, and a worker
  that dies takes down exactly one property, which is then ``error`` with the
  signal or exit status that ended it. A process pool would hand a dead
  worker's ``BrokenProcessPool`` to every pending property alike.
- **The target is resolved again in the worker** from :class:`TargetSource`
  (the TARGET text and the ``--set-aside`` file): a ``Target`` holds closures
  (its factory, a findings file's predicates) and is never pickled.
- **One pipe per worker**, carrying progress events and then the result; a
  pipe that reaches its end with no result means the worker died. The parent
  waits on all pipes at once, so it never hangs on a dead worker and wakes at
  least ten times a second to redraw the progress display.
- **A deadline from outside.** Each worker leads a process group of its own,
  and tells the parent the process group of every protocol server it starts.
  A property still running at its wall-clock deadline (``--deadline``) is
  ``error`` naming the deadline, and the parent kills its worker's process group
  and its servers' with SIGKILL: no handler, blocked signal, thread or native
  loop in the target can outlast that (the call timeout, a SIGALRM inside the
  worker, is the finer first net; a target that blocked or disarmed it, or
  spun in threads, used to hang the run with no verdict).
- **Ctrl-C** and SIGTERM reach the parent (the workers are in their own
  process groups); it stops every worker, its servers with it, and re-raises
  :class:`KeyboardInterrupt` (``cli.main`` then ends whatever is left).

Timings: a property's ``seconds`` is measured in its worker around its own run,
as in a serial run, so it does not count the time it waited for a free worker.

:func:`run_supervised` is the same machinery for one worker that runs the whole
target work of another subcommand (``smoke``, ``replay``, ``explore``, the
exhaustive part of ``certify``): the worker resolves the target, does the work,
sends back each line to print and then its result, and a worker that ends
without a result (``os._exit``, a signal, a crash) is said so in one line,
never taken for success. That one worker is a plain fork where it is safe
(see :func:`_supervising_context`): it costs milliseconds, not an interpreter.
"""

from __future__ import annotations

import gc
import multiprocessing
import signal
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.connection import wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias
from typing import TypeVar

from rollcert.model.properties import PROPERTIES
from rollcert.stateful_tests.progress_events import INTERVAL
from rollcert.stateful_tests.progress_events import Budget
from rollcert.stateful_tests.progress_events import ProgressSink
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UsageError
from rollcert.targets.adapter import describe_exception

if TYPE_CHECKING:  # the engine's certify pulls in Hypothesis: imported when a run starts
    from rollcert.stateful_tests.certify import PropertiesRunner
    from rollcert.stateful_tests.profiles import Profile

#: ``certify.certify_property``'s signature: one property of one target, to a verdict.
PropertyRunner: TypeAlias = Callable[..., PropertyResult]

#: Prints one line (or several, joined) of a subcommand's output in rollcert's own process.
Say: TypeAlias = Callable[[str], None]

#: What a supervised worker's work returns (anything that pickles).
Result = TypeVar("Result")

#: Seconds a worker is given to stop after ``terminate`` before it is killed.
TERMINATE_GRACE = 2.0

#: Properties whose runs take longest, started before the others.
LONGEST_FIRST = frozenset({"R7"})

#: The wall-clock deadline of one property's worker, by profile, when ``--deadline``
#: is not given: far beyond any honest run of the profile (the bundled target's whole
#: certification takes about a minute at ``quick``), so that it only ever ends a hang.
DEFAULT_DEADLINES = {"quick": 900.0, "ci": 3600.0, "thorough": 4 * 3600.0}
#: The deadline of a supervised subcommand's one worker (smoke, replay, explore, the search).
DEFAULT_SUPERVISED_DEADLINE = 900.0


#: Overrides every deadline (``rollcert --deadline S`` sets it, so that the corpus
#: replay and the search get it too); ``0`` for none.
DEADLINE_VARIABLE = "ROLLCERT_DEADLINE"


def chosen_deadline(default: float) -> float | None:
    """``$ROLLCERT_DEADLINE`` when set (``None`` for 0: no deadline), else ``default``.
    A bad value is a :class:`UsageError` (``cli`` checks it before any command runs)."""
    import math
    import os

    text = os.environ.get(DEADLINE_VARIABLE)
    if text is None:
        return default
    try:
        seconds = float(text)
    except ValueError:
        raise UsageError(f"${DEADLINE_VARIABLE} must be a number of seconds (0: no deadline), got {text!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(f"${DEADLINE_VARIABLE} must be a finite number of seconds, 0 or more, got {text!r}")
    return seconds or None


def deadline_error(doing: str, seconds: float) -> str:
    """The reason given when ``doing`` overran its deadline and was killed."""
    return (
        f"{doing} did not finish within its deadline of {seconds:g} s (--deadline); rollcert killed its worker's "
        "process group, whatever the target did to signals, threads or native code"
    )


@dataclass(frozen=True)
class TargetSource:
    """How a worker builds the target again: the TARGET as the user typed it and
    the findings file (``--set-aside``) whose findings it sets aside, if any."""

    text: str
    set_aside: Path | None = None

    def resolve(self) -> Target:
        from dataclasses import replace

        from rollcert.targets.findings import load_findings
        from rollcert.targets.resolve import resolve_target

        findings = load_findings(self.set_aside) if self.set_aside is not None else ()
        target = resolve_target(self.text)
        return replace(target, set_aside=(*target.set_aside, *findings)) if findings else target


class _PipeSink:
    """The worker's end of the progress display: every event goes to the parent.

    A :class:`~rollcert.reports.progress.Sampler` calls ``advanced`` from
    its own thread, at most ten times a second; sends are serialised by the
    connection's use from one thread at a time (the GIL and a lock)."""

    def __init__(self, connection: Connection) -> None:
        import threading

        self._connection = connection
        self._lock = threading.Lock()

    def _send(self, *message: Any) -> None:
        with self._lock:
            self._connection.send(message)

    def started(self, property_id: str, budget: Budget | None) -> None:
        self._send("started", property_id, budget)

    def advanced(self, property_id: str, examples: int, steps: int) -> None:
        self._send("advanced", property_id, examples, steps)

    def violation(self, property_id: str, text: str) -> None:
        self._send("violation", property_id, text)

    def finished(self, property_id: str, verdict: str, detail: str) -> None:
        pass  # the parent reports it on receiving the result, after the worker's last send


def _work(
    run_property: PropertyRunner,
    source: TargetSource,
    property_id: str,
    profile: str,
    seed: int,
    connection: Connection,
    report: bool,
) -> None:
    """A worker's whole life: resolve the target, certify one property, send the result.

    ``run_property`` is ``certify.certify_property``, passed in rather than
    imported: it travels to the worker as a reference to a module-level
    function, and this module stays below ``certify`` in the import graph."""
    from rollcert.stateful_tests.profiles import PROFILES

    _lead_own_group()
    _die_with_the_run()
    channel = _PipeSink(connection)
    _announce_servers(channel)
    try:
        try:
            target = source.resolve()
            sink = channel if report else None
            result = run_property(target, property_id, PROFILES[profile], seed, progress=sink)
            del target  # collected below, before the parent hears the result
            message: tuple[Any, ...] = ("result", result)
        except KeyboardInterrupt:
            return  # the parent was interrupted too, and says so
        except BaseException as error:  # a failure to resolve or to run is this property's error
            message = ("failed", f"{type(error).__name__}: {error}")
        _report(connection, message)
    except (KeyboardInterrupt, BrokenPipeError):
        return
    finally:
        connection.close()


def _lead_own_group() -> None:
    """Make this worker the leader of a process group of its own, so that the
    parent can kill it with everything it started in one ``killpg``; and let
    SIGTERM end it (a forked worker inherits the parent's handler, which turns
    SIGTERM into an unwinding ``KeyboardInterrupt``)."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    with contextlib.suppress(ValueError):  # not the main thread: nothing to reset
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _die_with_the_run() -> None:
    """End this worker when rollcert is killed outright (SIGKILL runs no cleanup).

    The worker dies with its parent (:func:`~rollcert.command.processes.die_with_parent`).
    A forkserver worker's parent is the forkserver, which exits when every holder
    of its "alive" pipe has closed it; multiprocessing hands each worker a copy,
    so that, measured, ``kill -KILL`` of ``rollcert certify -j 2`` left the
    forkserver, both workers and the resource tracker running. The worker starts
    no process through the forkserver, so it closes its copy: rollcert's is then
    the last, the forkserver exits with rollcert, the workers with the forkserver,
    and the resource tracker when the last of them has gone."""
    import contextlib
    import os
    from multiprocessing import forkserver

    from rollcert.command.processes import die_with_parent

    die_with_parent()
    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int):
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None  # type: ignore[union-attr]


def _announce_servers(channel: _PipeSink) -> None:
    """Tell the parent the process group of every protocol server this worker
    starts (each leads its own, see ``subprocess_client``), so that a worker
    killed at its deadline does not leave its servers behind."""
    from rollcert.targets.adapters import subprocess_client

    subprocess_client.SERVER_STARTED[:] = [lambda group: channel._send("group", group)]


def _report(connection: Connection, message: tuple[Any, ...]) -> None:
    """A worker's last word: release what its work started, then send ``message``
    (or, if it cannot travel, why not)."""
    _release_what_the_work_started()
    try:
        connection.send(message)
    except Exception as error:  # say why the result could not travel
        connection.send(("failed", f"the result could not be sent to the parent: {describe_exception(error)}"))


def _release_what_the_work_started() -> None:
    """Stop what a worker's work started and no longer holds: a protocol server's
    process group, a durable buffer's state directory (their finalizers run when
    they are collected). A worker ends with ``os._exit``, which runs no finalizer
    left for interpreter exit, so this runs before the parent hears the result
    and may exit: else the servers a target started outlive rollcert (found by
    ``rollcert smoke`` on a server that forks a child, once smoke ran in a worker)."""
    gc.collect()


def _context() -> BaseContext:
    """``forkserver`` where it exists (forks of a small clean server: fast, and no
    copy of the parent's threads or state), else ``spawn``; never plain ``fork``."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        # Imported once in the server, inherited by every fork: workers start in milliseconds.
        context.set_forkserver_preload(["rollcert.stateful_tests.certify"])
    return context


def _how_it_ended(exitcode: int | None) -> str:
    """How a worker process ended, in words: "exited with status 0", "was killed by SIGSEGV"."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def _death(property_id: str, exitcode: int | None) -> str:
    """Why a worker that sent no result is gone, in words."""
    return (
        f"the worker process certifying {property_id} {_how_it_ended(exitcode)} before reporting a verdict "
        "(the SUT or a native extension crashed or exited the process)"
    )


@dataclass
class _Worker:
    #: The property it certifies, or (:func:`run_supervised`) what it runs.
    task: str
    process: BaseProcess
    connection: Connection
    #: When it started (``time.monotonic``), and when it must have finished.
    started: float = 0.0
    deadline: float | None = None
    #: The process groups of the protocol servers it started.
    server_groups: list[int] | None = None

    def overran(self, now: float) -> bool:
        return self.deadline is not None and now - self.started > self.deadline


def certify_in_workers_or_here(
    target: Target,
    *,
    jobs: int = 1,
    source: TargetSource | None = None,
    isolate: bool = False,
    memory_limit: int | None = None,
    deadline: float | None = None,
    call_timeout: float | None = None,
    finished: dict[str, PropertyResult] | None = None,
    **options: Any,
) -> CertificateData:
    """:func:`rollcert.stateful_tests.certify.certify` (which takes ``options``), in
    worker processes when asked.

    With ``jobs`` above 1 the properties run in up to ``jobs`` worker processes,
    each resolving the target anew from ``source`` (default: ``target_text``; a
    Target holds closures and is never pickled); the verdicts and counterexamples
    are those of a serial run.

    With ``isolate`` every property runs in a worker process even with one job
    (``rollcert certify`` does): a target that calls ``os._exit``, crashes the
    interpreter, leaves a thread running, changes the working directory or
    ``sys.stdout``, or fills memory takes down one property's worker, which is
    then ``error``, never the run (an ``os._exit(0)`` used to end ``rollcert
    certify`` with exit status 0 and no certificate). It costs one fork of the
    forkserver per property, and the target resolved again in it: 30-170 ms a
    property for a small Python target.

    ``memory_limit`` (bytes; only with worker processes) caps each worker's
    address space: a target that allocates without bound gets a ``MemoryError``
    (judged like any undocumented exception) instead of the machine's memory.

    ``deadline`` (seconds; only with worker processes; default by profile,
    :data:`DEFAULT_DEADLINES`) is each property's wall-clock limit, enforced by
    this process: past it the property is ``error`` and its worker's process
    group is killed.

    ``call_timeout`` (seconds; only with worker processes) is set in each worker,
    where ``None`` leaves it as inherited (``$ROLLCERT_CALL_TIMEOUT``, else 60):
    see :class:`WorkerLimits`.

    ``finished`` (only with worker processes) receives each property's result as
    it arrives (:func:`certify_in_workers`), so that an interrupted run's
    certificate can hold them."""
    from rollcert.model.properties import ALL_PROPERTY_IDS
    from rollcert.stateful_tests.certify import certify
    from rollcert.stateful_tests.certify import certify_property

    only, target_text = options.get("only"), options.get("target_text")
    property_ids = [p for p in ALL_PROPERTY_IDS if only is None or p in only]
    runner: PropertiesRunner | None = None
    if (jobs > 1 and len(property_ids) > 1) or (isolate and property_ids):
        if source is None:
            if target_text is None or target.set_aside:
                raise ValueError(
                    "certify(jobs > 1 or isolate) re-resolves the target in each worker: give source=TargetSource(...)"
                )
            source = TargetSource(target_text)
        limits = WorkerLimits(memory_limit, call_timeout)
        run_property = certify_property if limits == WorkerLimits() else partial(_certify_within, limits)
        run_unit = partial(_run_unit_within, limits)
        chosen_source = source

        def runner(ids: Sequence[str], profile: str, seed: int, progress: ProgressSink | None) -> dict[str, PropertyResult]:
            if jobs > 1:  # work units to whichever worker is free (one worker: a property each, as serially)
                return certify_units_in_workers(
                    run_unit, chosen_source, ids, profile, seed, jobs, progress, deadline=deadline, finished=finished
                )
            return certify_in_workers(
                run_property, chosen_source, ids, profile, seed, max(jobs, 1), progress, deadline=deadline,
                finished=finished,
            )

    return certify(target, run_properties=runner, **options)


@dataclass(frozen=True)
class WorkerLimits:
    """What a worker process sets on itself before it runs the target: the cap on
    its address space (``--memory-limit``, bytes, ``RLIMIT_AS``: the worker is the
    only process it binds) and the call timeout (``--call-timeout``, seconds;
    ``None`` leaves ``$ROLLCERT_CALL_TIMEOUT`` as inherited). Set in the worker
    rather than inherited from this process's environment: a forkserver holds the
    environment it was started with, so a second run in the same process (a pytest
    session with two gates) would otherwise get the first run's timeout."""

    memory_limit: int | None = None
    call_timeout: float | None = None

    def apply(self) -> None:
        import os
        import resource

        from rollcert.stateful_tests.judge import CALL_TIMEOUT_VARIABLE

        if self.call_timeout is not None:
            os.environ[CALL_TIMEOUT_VARIABLE] = repr(self.call_timeout)
        if self.memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))


def _certify_within(
    limits: WorkerLimits, target: Target, property_id: str, profile: Profile, seed: int, *,
    progress: ProgressSink | None = None,
) -> PropertyResult:
    """``certify_property`` in a worker process within ``limits``. Module-level,
    so that it travels to the worker by reference."""
    from rollcert.stateful_tests.certify import certify_property

    limits.apply()
    return certify_property(target, property_id, profile, seed, progress=progress)


def _run_unit_within(
    limits: WorkerLimits, target: Target, name: str, profile: Profile, seed: int, *,
    progress: ProgressSink | None = None,
) -> Any:
    """``shards.run_unit`` in a worker process within ``limits``. Module-level,
    so that it travels to the worker by reference."""
    from rollcert.stateful_tests.shards import run_unit

    limits.apply()
    return run_unit(target, name, profile, seed, progress=progress)


def certify_in_workers(
    run_property: PropertyRunner,
    source: TargetSource,
    property_ids: Sequence[str],
    profile: str,
    seed: int,
    jobs: int,
    progress: ProgressSink | None = None,
    stop_at: float | None = None,
    deadline: float | None = None,
    finished: dict[str, PropertyResult] | None = None,
) -> dict[str, PropertyResult]:
    """Certify ``property_ids`` in up to ``jobs`` processes; the results in the order given.

    At ``stop_at`` (a ``time.monotonic()`` reading; ``rollcert campaign``'s budget)
    every worker still running is stopped and the results so far are returned.
    A property whose worker runs past ``deadline`` seconds is ``error``, its
    worker's process group killed (default: ``$ROLLCERT_DEADLINE``, else by
    profile, :data:`DEFAULT_DEADLINES`). A task whose worker died before
    reporting, killed by SIGKILL, is handed to a fresh worker again, :data:`RETRIES`
    times at most (:class:`_Tasks`); otherwise, or then, it is ``error`` naming how it died.

    ``finished``, when given, receives each result as it arrives: a caller whose
    run is interrupted (Ctrl-C, SIGTERM: the ``KeyboardInterrupt`` goes through
    here) still holds every verdict reached, for its certificate."""
    # Longest first, so that it does not start last and run alone: R7 runs each
    # program many times (about half a default run). Start order changes no result.
    waiting = sorted(property_ids, key=lambda pid: pid not in LONGEST_FIRST)
    tasks = _Tasks(waiting, progress, finished if finished is not None else {})
    _drive(tasks, run_property, source, profile, seed, jobs, progress is not None, stop_at, deadline)
    return {pid: tasks.results[pid] for pid in property_ids if pid in tasks.results}


#: How many more times a task (a property, a work unit) whose worker was killed by
#: SIGKILL before reporting is handed to a fresh worker: a worker lost to the
#: machine (the OOM killer, an operator's ``kill -9``, a preempted host) must not
#: cost the run its property, while a target that takes every worker down still
#: ends as ``error``. A worker that exited or crashed (``os._exit``, SIGSEGV) is
#: not tried again: that is the target's own doing, its property's ``error`` at once.
RETRIES = 2


class _Tasks:
    """The tasks of one run, handed out as workers free up (pytest-xdist's
    ``--dist load``: the next task goes to whichever worker is free, not to a
    worker chosen in advance), and what became of each."""

    def __init__(self, waiting: list[str], progress: ProgressSink | None, results: dict[str, Any]) -> None:
        self.waiting = waiting
        self.progress = progress
        self.results = results
        self.tries: dict[str, int] = {}

    def take(self) -> str | None:
        """The next task to start, or ``None`` when none is ready."""
        return self.waiting.pop(0) if self.waiting else None

    def left(self) -> bool:
        return bool(self.waiting)

    def heard(self, task: str, kind: str, arguments: tuple[Any, ...]) -> None:
        if self.progress is not None:
            getattr(self.progress, kind)(*arguments)

    def done(self, task: str, result: Any) -> None:
        self.results[task] = result
        if self.progress is not None:  # a property's result, or a work unit's (``shards.UnitResult``)
            shown = result if isinstance(result, PropertyResult) else result.result
            self.progress.finished(task, shown.verdict, shown.progress_summary())

    def died(self, task: str, exitcode: int | None) -> bool:
        """Whether ``task``, whose worker died before reporting, goes to another worker."""
        import sys

        if exitcode != -signal.SIGKILL:
            return False
        tries = self.tries[task] = self.tries.get(task, 0) + 1
        if tries > RETRIES:
            return False
        self.waiting.insert(0, task)
        print(
            f"rollcert: the worker running {task} {_how_it_ended(exitcode)} before reporting; "
            f"it goes to another worker (attempt {tries + 1} of {RETRIES + 1})", file=sys.stderr, flush=True,
        )
        return True

    def lost(self, task: str, exitcode: int | None) -> None:
        """``task``'s last worker died too: its ``error``."""
        self.done(task, _error(task, _death(task, exitcode)))

    def overran(self, task: str, seconds: float) -> None:
        self.done(task, _error(task, deadline_error(f"certifying {task}", seconds)))


def _drive(
    tasks: _Tasks, run_property: PropertyRunner, source: TargetSource, profile: str, seed: int, jobs: int,
    report: bool, stop_at: float | None, deadline: float | None,
) -> None:
    """Run ``tasks`` in up to ``jobs`` worker processes, one fresh process per
    task, until none is left or ``stop_at``: the scheduler of
    :func:`certify_in_workers` and :func:`certify_units_in_workers`."""
    import time

    if deadline is None:
        deadline = chosen_deadline(DEFAULT_DEADLINES.get(profile, max(DEFAULT_DEADLINES.values())))
    context = _context()
    running: dict[Connection, _Worker] = {}
    try:
        while tasks.left() or running:
            if stop_at is not None and time.monotonic() >= stop_at:
                break  # the workers still running are stopped below
            while len(running) < jobs:
                task = tasks.take()
                if task is None:
                    break
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(  # type: ignore[attr-defined]
                    target=_work, args=(run_property, source, task, profile, seed, sender, report),
                    name=f"rollcert-certify-{task}", daemon=True,
                )
                process.start()
                sender.close()  # the worker holds the only writer: its end is our EOF
                running[receiver] = _Worker(task, process, receiver, time.monotonic(), deadline, [])
            if not running:
                continue
            for ready in wait(list(running), timeout=INTERVAL):
                assert isinstance(ready, Connection)
                worker = running[ready]
                message = _receive(worker, tasks)
                if message is None:
                    continue
                del running[ready]
                ready.close()
                if message is _DIED:
                    if not tasks.died(worker.task, worker.process.exitcode):
                        tasks.lost(worker.task, worker.process.exitcode)
                    continue
                worker.process.join(TERMINATE_GRACE)
                if worker.process.is_alive():  # a non-daemon thread the target started keeps it alive
                    _stop(worker)
                tasks.done(worker.task, message)
            now = time.monotonic()
            for connection, worker in list(running.items()):
                if worker.overran(now):
                    del running[connection]
                    _kill(worker)
                    assert worker.deadline is not None
                    tasks.overran(worker.task, worker.deadline)
            tick = getattr(tasks.progress, "tick", None)
            if tick is not None:
                tick()
    finally:  # normally nothing is left; after Ctrl-C or an error, stop every worker
        for worker in running.values():
            _stop(worker)


def certify_units_in_workers(
    run_unit: PropertyRunner,
    source: TargetSource,
    property_ids: Sequence[str],
    profile: str,
    seed: int,
    jobs: int,
    progress: ProgressSink | None = None,
    deadline: float | None = None,
    finished: dict[str, PropertyResult] | None = None,
) -> dict[str, PropertyResult]:
    """Certify ``property_ids`` as work units (a round of a property, or a whole
    property for R7: :func:`~rollcert.stateful_tests.shards.units`) handed out
    one at a time to whichever of ``jobs`` workers is free; each property's
    result is its units merged as a serial run gives it
    (:func:`~rollcert.stateful_tests.shards.merge_rounds`).

    Elastic where a property per worker is not: a long property no longer
    leaves the other workers idle at the end of a run, and a unit whose worker
    was killed (SIGKILL: an operator, the OOM killer) is run again by another worker
    (:data:`RETRIES` times), the other units of its property untouched. A round
    is handed out once its property's previous round is in, and only if it can
    still matter (``shards.needed``: no earlier round ended the property), so
    exactly the rounds the serial loop runs are run: the certificate is the
    serial run's. ``run_unit`` is ``shards.run_unit`` (or it within limits)."""
    from rollcert.stateful_tests.profiles import PROFILES

    tasks = _UnitTasks(property_ids, PROFILES[profile], progress, finished if finished is not None else {})
    _drive(tasks, run_unit, source, profile, seed, jobs, progress is not None, None, deadline)
    return {pid: tasks.results[pid] for pid in property_ids if pid in tasks.results}


class _UnitTasks(_Tasks):
    """The work units of a certification as tasks: handed out round by round,
    those no longer needed dropped, and each property's result merged (and
    reported to ``progress``, summed over its units) once all of its units are in."""

    def __init__(
        self, property_ids: Sequence[str], profile: Profile, progress: ProgressSink | None, results: dict[str, Any]
    ) -> None:
        from rollcert.stateful_tests.shards import units

        listed = units(property_ids, profile)
        ordered = sorted(listed, key=lambda u: (u.property_id not in LONGEST_FIRST, u.round or 0, listed.index(u)))
        super().__init__([u.name for u in ordered], progress, results)
        self.profile = profile
        self.units = {u.name: u for u in listed}
        self.of: dict[str, list[str]] = {}
        for unit in listed:
            self.of.setdefault(unit.property_id, []).append(unit.name)
        self.outcomes: dict[str, Any] = {}  # unit name -> UnitResult, or None: not needed
        self.counts: dict[str, tuple[int, int]] = {}
        self.started: set[str] = set()

    def _prune(self) -> None:
        """Drop the waiting units an earlier round of their property already made useless."""
        from rollcert.stateful_tests.shards import needed

        for name in list(self.waiting):
            unit = self.units[name]
            earlier = [self.outcomes[n] for n in self.of[unit.property_id] if self.outcomes.get(n) is not None]
            if not needed(unit, earlier):
                self.waiting.remove(name)
                self.outcomes[name] = None

    def take(self) -> str | None:
        """The first waiting unit whose property's previous round is in: a round
        starts only once the serial loop would start it, so no unit runs that
        the serial run would not have (none wasted, none that could add a
        finding the serial run lacks: the merge is the serial certificate)."""
        self._prune()
        name = next((n for n in self.waiting if self._ready(n)), None)
        if name is not None:
            self.waiting.remove(name)
            property_id = self.units[name].property_id
            if property_id not in self.started and self.progress is not None:
                from rollcert.stateful_tests.certify import _budget

                self.progress.started(property_id, _budget(property_id, self.profile))
            self.started.add(property_id)
        return name

    def _ready(self, name: str) -> bool:
        unit = self.units[name]
        return not unit.round or f"{unit.property_id}::shard-{unit.round - 1}" in self.outcomes

    def left(self) -> bool:
        self._prune()
        return super().left()

    def heard(self, task: str, kind: str, arguments: tuple[Any, ...]) -> None:
        if self.progress is None or kind in ("started", "finished"):
            return
        property_id = self.units[task].property_id
        if kind == "advanced":
            self.counts[task] = (int(arguments[1]), int(arguments[2]))
            mine = [self.counts[n] for n in self.of[property_id] if n in self.counts]
            self.progress.advanced(property_id, sum(c[0] for c in mine), sum(c[1] for c in mine))
        else:
            getattr(self.progress, kind)(property_id, *arguments[1:])

    def done(self, task: str, result: Any) -> None:
        from dataclasses import replace

        from rollcert.stateful_tests.certify import RoundRecord
        from rollcert.stateful_tests.shards import UnitResult
        from rollcert.stateful_tests.shards import merge_rounds

        unit = self.units[task]
        if isinstance(result, PropertyResult):  # the unit's worker failed or overran: its error
            result = UnitResult(unit, replace(result, property_id=unit.property_id), RoundRecord())
        self.outcomes[task] = result
        self.counts[task] = (result.result.examples, result.result.steps)
        self._prune()
        names = self.of[unit.property_id]
        if any(n not in self.outcomes for n in names):
            return
        merged = merge_rounds([self.outcomes[n] for n in names])
        self.results[unit.property_id] = merged
        if self.progress is not None:
            self.progress.finished(unit.property_id, merged.verdict, merged.progress_summary())

    def lost(self, task: str, exitcode: int | None) -> None:
        property_id = self.units[task].property_id
        self.done(task, _error(property_id, _death(property_id, exitcode)))

    def overran(self, task: str, seconds: float) -> None:
        property_id = self.units[task].property_id
        self.done(task, _error(property_id, deadline_error(f"certifying {task}", seconds)))


#: What :func:`_receive` gives for a worker that died before reporting.
_DIED: Any = object()


def _receive(worker: _Worker, tasks: _Tasks) -> Any:
    """Read one message from ``worker``: its result (or the error that stands for
    it), :data:`_DIED` if it died before reporting, or ``None`` (more to come)."""
    try:
        message = worker.connection.recv()
    except (EOFError, OSError):
        worker.process.join()
        _kill_servers(worker)  # a worker that died took no server with it
        return _DIED
    kind = message[0]
    if kind == "group":
        if worker.server_groups is not None:
            worker.server_groups.append(message[1])
        return None
    if kind == "result":
        return message[1]
    if kind == "failed":
        return _error(worker.task, f"the worker certifying {worker.task} failed: {message[1]}")
    tasks.heard(worker.task, kind, message[1:])
    return None


def _error(property_id: str, reason: str) -> PropertyResult:
    prop = PROPERTIES.get(property_id)
    return PropertyResult(property_id, "error", prop.title if prop is not None else "", reason=reason)


def _stop(worker: _Worker) -> None:
    """End a worker that is still there: asked first (SIGTERM), then its whole
    process group killed, and the servers it announced."""
    worker.process.terminate()
    worker.process.join(TERMINATE_GRACE)
    _kill(worker)


def _kill(worker: _Worker) -> None:
    """SIGKILL to the worker's process group (what it forked goes with it), to
    the worker itself (had it not made its group yet), and to its servers' groups."""
    import contextlib
    import os

    pid = worker.process.pid
    if pid is not None and pid != os.getpgrp():
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)  # the group it leads (see _lead_own_group)
    if worker.process.is_alive():
        worker.process.kill()
    worker.process.join()
    _kill_servers(worker)
    worker.connection.close()


def _kill_servers(worker: _Worker) -> None:
    import contextlib
    import os

    for group in worker.server_groups or ():
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


# -- one supervised worker for a whole subcommand ---------------------------------------------------


@dataclass(frozen=True)
class WorkerEnded:
    """A supervised worker ended without reporting its result (or failed to
    produce one): why, in one line. Never a success: the caller exits 2."""

    reason: str


def note(say: Say, payload: object) -> None:
    """From inside a supervised ``work``: hand ``payload`` (anything that pickles)
    to the supervisor's ``on_note`` at once, and start the deadline anew (see
    :func:`run_supervised`). What a work of many pieces uses so that each piece
    has a deadline of its own, and so that what it finished survives the loss of
    its worker on a later piece."""
    send = getattr(say, "note", None)
    if send is not None:
        send(payload)


def run_supervised(
    work: Callable[[Say], Result], doing: str, *, in_process: bool = False, deadline: float | None = None,
    on_note: Callable[[Any], None] | None = None,
    hear: Say | None = None,
) -> Result | WorkerEnded:
    """``work(say)`` in a worker process of its own; what it returned, or why it has none.

    ``work`` is the whole of a subcommand's target work (resolving the target
    included: the target is imported and built once, in the worker) and must
    pickle (a module-level function, or a ``functools.partial`` of one). Each
    ``say(text)`` prints ``text`` here, in order with what the target writes
    to the inherited stdout/stderr, so the output is a serial run's; what
    ``work`` returns comes back by the same pipe. A :class:`UsageError` the
    worker raises (a target that cannot be imported, a malformed findings file)
    is raised here, to be its one line and exit status 3; any other exception,
    and a worker that ends without a result (``os._exit(0)`` in the target, a
    signal, a crash of a native extension), is a :class:`WorkerEnded` naming it,
    so that the run can never end with exit status 0 and nothing said.

    The worker leads its own process group; past ``deadline`` seconds
    (default :data:`DEFAULT_SUPERVISED_DEADLINE`) the group is killed, with the
    protocol servers it started, and the answer is a :class:`WorkerEnded` naming
    the deadline. Ctrl-C reaches this process: the ``KeyboardInterrupt`` raised
    here stops the worker. ``in_process`` runs ``work`` in this process
    instead, for a debugger (no deadline can then be enforced from outside).

    Each :func:`note` the work sends is given to ``on_note`` here, in order,
    and restarts the deadline: with notes, ``deadline`` bounds each piece of
    the work (a corpus entry), not the whole (a corpus of any size).

    ``hear``, when given, takes each ``say(text)`` instead of printing it (the
    pytest plugin keeps the last as what the worker was doing, to name it if
    the worker never reports)."""
    import time

    from rollcert.stateful_tests.judge import watching_for_ctrl_c

    if in_process:
        with watching_for_ctrl_c():  # a KeyboardInterrupt the target raises is judged, as in the worker
            return work(_SayHere(on_note, hear))
    context = _supervising_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(  # type: ignore[attr-defined]
        target=_work_supervised, args=(work, sender), name="rollcert-supervised", daemon=True,
    )
    process.start()
    sender.close()  # the worker holds the only writer: its end is our EOF
    limit = chosen_deadline(DEFAULT_SUPERVISED_DEADLINE) if deadline is None else deadline
    worker = _Worker(doing, process, receiver, time.monotonic(), limit, [])
    try:
        while True:
            if not receiver.poll(INTERVAL):
                if worker.overran(time.monotonic()):
                    _kill(worker)
                    assert limit is not None
                    return WorkerEnded(deadline_error(doing, limit))
                continue
            try:
                kind, payload = receiver.recv()
            except (EOFError, OSError):
                process.join()
                _kill_servers(worker)
                return WorkerEnded(
                    f"the worker process running {doing} {_how_it_ended(process.exitcode)} before reporting "
                    "its result (the target or a native extension crashed or exited the process)"
                )
            if kind == "group":
                assert worker.server_groups is not None
                worker.server_groups.append(payload)
            elif kind == "say":
                (hear or _say_here)(payload)
            elif kind == "note":
                worker.started = time.monotonic()
                if on_note is not None:
                    on_note(payload)
            elif kind == "usage":
                raise UsageError(payload)
            elif kind == "failed":
                return WorkerEnded(f"the worker process running {doing} failed: {payload}")
            else:
                result: Result = payload
                process.join(TERMINATE_GRACE)  # it is exiting; a thread the target left running may hold it
                return result
    finally:  # after a result, a thread the target left running; after Ctrl-C or an error, anything
        _stop(worker)


def _supervising_context() -> BaseContext:
    """A plain ``fork`` of this process on Linux when it runs one thread, else :func:`_context`.

    The property workers need a fresh interpreter each, so that no property's
    run sees what another's left behind; a subcommand's one worker does not:
    this process has not run the target, and one thread means no lock a fork
    could copy held. A fork then costs milliseconds where starting the
    forkserver costs a second interpreter and the imports this process has
    already made (measured: about 250 ms added to a 0.35 s ``rollcert smoke``,
    against about 15 ms for the fork; benchmarks/supervised_cost.py). Elsewhere
    (macOS's frameworks are not fork-safe; a process with threads, such as a
    test session) the forkserver, which needs ``work`` to pickle."""
    import sys
    import threading

    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return _context()


def forks_here() -> bool:
    """Whether :func:`run_supervised`'s worker is a plain fork of this process now,
    so that its ``work`` may hold what does not pickle (a ``Target`` object's
    closures): see :func:`_supervising_context`."""
    return _supervising_context().get_start_method() == "fork"


def _say_here(text: str) -> None:
    """Print a worker's line: each line with the terminal's escaping (it may quote
    the target: a name, an error kind, a message), the line breaks kept."""
    from rollcert.targets.adapter import visible

    text = "\n".join(visible(line) for line in str(text).split("\n"))
    print(text, flush=True)  # flushed: the worker's own writes to the same stdout come after it


class _SayHere:
    """``say`` for a work run in this process: lines printed, notes handed over."""

    def __init__(self, on_note: Callable[[Any], None] | None, hear: Say | None = None) -> None:
        self._on_note = on_note
        self._hear = hear or _say_here

    def __call__(self, text: str) -> None:
        self._hear(text)

    def note(self, payload: object) -> None:
        if self._on_note is not None:
            self._on_note(payload)


class _SayToParent:
    """The worker's ``say``: the line travels to the parent, after whatever the
    target printed so far (flushed first, so that the order is a serial run's)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def __call__(self, text: str) -> None:
        _flush_standard_streams()
        self._connection.send(("say", text))

    def note(self, payload: object) -> None:
        self._connection.send(("note", payload))


def _flush_standard_streams() -> None:
    import contextlib
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # a target may have closed or replaced them
            stream.flush()


def _work_supervised(work: Callable[[Say], object], connection: Connection) -> None:
    """A supervised worker's whole life: run ``work``, send its result (or why there is none)."""
    from rollcert.stateful_tests.judge import interrupted_by_user
    from rollcert.stateful_tests.judge import watching_for_ctrl_c

    _lead_own_group()
    _die_with_the_run()
    _announce_servers(_PipeSink(connection))
    try:
        with watching_for_ctrl_c():
            try:
                message: tuple[str, object] = ("done", work(_SayToParent(connection)))
            except KeyboardInterrupt as error:
                if interrupted_by_user():
                    return  # the parent was interrupted too, and says so
                message = ("failed", describe_exception(error))
            except UsageError as error:
                message = ("usage", str(error))
            except BaseException as error:  # no traceback: one line, and --in-process for a debugger
                message = ("failed", describe_exception(error))
        _flush_standard_streams()
        _report(connection, message)
    except (KeyboardInterrupt, BrokenPipeError):
        return
    finally:
        connection.close()
