"""The "plain machine" of SPEC §7, and the suite measured against it.

SPEC §7 asks the suite to be "at least 10x faster than the plain machine": a
Hypothesis ``RuleBasedStateMachine`` such as a competent user would write without
rollcert's targeting. This module builds that machine for a (target, property)
pair and compares it with rollcert's machine of the same property:

- **Same operations.** The plain machine has exactly the rules rollcert's machine
  of the property has on the target (``rollcert.stateful_tests.machines.rules_for``), with
  the same validity preconditions (no rollback at depth 0; an out-of-log write
  must change the bytes, at most one barrier per depth), and judges every step
  through the same :class:`rollcert.stateful_tests.judge.Session`. rollcert's composite
  rules (``branch``: roll back then splice; ``write_behind_checkpoint``:
  checkpoint, splice, out-of-log write) are kept too, with uniform draws, so
  the plain machine is if anything stronger than a hand-written one. Only the
  *search* differs: strategies and minimiser.
- **Uniform strategies.** The initial buffer and inserted text are
  ``st.binary()`` (all 256 byte values; ``--alphabet printable`` draws from the
  95 printable ASCII characters instead); offsets are uniform in ``0..len``,
  delete lengths in ``0..len-offset``; a rollback's steps are uniform in
  ``1..depth``; ``rollback_to`` picks one of the checkpoints (or another
  buffer's checkpoint, which rollcert's machine also offers) uniformly.
  Capacity (bounded properties) is uniform in 1..4 and the policy is either, as
  in rollcert's machine.
- **Hypothesis's own shrinking on** (the default phases, explain included):
  that is the baseline's minimiser. ``deadline=None``, no example database,
  health checks off (as rollcert's profile), derandomised per seed with
  ``hypothesis.seed(seed)``.
- **Budget.** ``max_examples`` is 400 = the quick profile's 100 examples x its
  4 rounds, the most one quick rollcert run can spend; 20 steps per example
  (the quick profile's). Each plain run has a wall-time budget (default 60 s)
  enforced by a watchdog in a child process; a run that exceeds it counts as
  *not found*, and is reported as a timeout.

Usage::

    python -m benchmarks.plain_machine --seeds 5 [--budget 60] [--json PATH]
    python -m benchmarks.plain_machine --specimens first_match_scan --seeds 3
    python -m benchmarks.plain_machine --seeds 5 --first-seed 5   # seeds 5..9
    python -m benchmarks.plain_machine --throughput --seeds 3     # steps per second, bundled impl

For each rollback-class specimen (its story property) and seeds 0..N-1 it runs
rollcert's machine (``certify_property`` with the quick profile, in this
process) and the plain machine (in a child process, one per run), interleaved
so that a noisy neighbour hits both alike, and prints found/N, minimal/N (the
shrunk length against ``benchmarks.shortest.SHORTEST``), median and max seconds
including shrinking, and the ratio of medians (plain / rollcert). A plain run
that did not find the bug within its budget contributes its budget (or the
time it took to give up) to the median, so a ratio with ``>`` in front of it is
a lower bound. Nothing here asserts a timing.

``--throughput`` measures the other SPEC §7 comparison: *steps per second* on
an implementation that passes (the bundled one), so that neither side finds
anything and the figure is the cost of generating, judging and running steps.
For each in-memory property and seed, rollcert's quick run (``certify_property``)
and a plain run with the same budget per round (100 examples of up to 20 steps,
no shrinking needed) run back to back in this process, in alternating order,
timed in CPU seconds of this process (on a shared machine wall time also counts
the neighbours' turns); the ratio is rollcert's steps per second over the plain
machine's, per pair, and the median is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import ClassVar

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import Phase
from hypothesis import assume
from hypothesis import note
from hypothesis import seed as hypothesis_seed
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import get_state_machine_test
from hypothesis.stateful import initialize
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from rollcert.model.operations import Operation
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import RollbackToForeign
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.reference import POLICIES
from rollcert.model.reference import splice_bytes
from rollcert.stateful_tests.judge import Session
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.machines import REQUIRED_CAPABILITIES
from rollcert.stateful_tests.machines import ROLLBACK
from rollcert.stateful_tests.machines import RULES as ROLLCERT_RULES
from rollcert.stateful_tests.machines import rules_for
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target

#: The rollback-class specimens SPEC §7's comparison is about.
ROLLBACK_SPECIMENS = (
    "best_effort_log",
    "fifo_replay",
    "first_match_scan",
    "depth_checkpoints",
    "no_divergence_check",
    "evict_newest",
)
#: Issue 23's specimens whose bug lives in the *data* (bytes past 0x7F, CRLF,
#: characters, record sizes): the classes a plain ``st.binary()`` machine finds
#: and the small-scope draws alone did not.
WORLD_SPECIMENS = (
    "text_decoded_log",
    "crlf_normalising_undo",
    "character_column",
    "record_cut_at_128",
)
#: ``--specimens all``: every in-memory rollback specimen both machines can drive.
SIDE_BY_SIDE_SPECIMENS = ROLLBACK_SPECIMENS + WORLD_SPECIMENS

#: 400: the quick profile's examples per round times its rounds.
PLAIN_MAX_EXAMPLES = PROFILES["quick"].max_examples * PROFILES["quick"].rounds
PLAIN_STEPS = PROFILES["quick"].steps_per_example
DEFAULT_BUDGET = 60.0
PRINTABLE = bytes(range(32, 127))


def plain_settings(max_examples: int = PLAIN_MAX_EXAMPLES, steps: int = PLAIN_STEPS) -> settings:
    """rollcert's quick settings (no deadline, no database, no health checks) but
    with every one of Hypothesis's phases, shrinking included: the baseline's minimiser."""
    return settings(
        PROFILES["quick"].hypothesis_settings(),
        max_examples=max_examples,
        stateful_step_count=steps,
        phases=tuple(Phase),
    )


class PlainMachine(RuleBasedStateMachine):
    """Base of the plain machines; :func:`build_plain_machine` attaches the rules."""

    target: Target
    bounded: bool = False
    text: st.SearchStrategy[bytes] = st.binary()
    #: When the first violation of this run was raised (before any shrinking);
    #: shared by every example of a run, reset by :func:`run_plain`.
    first_failure: ClassVar[list[float]] = []
    #: Steps executed by every example of a run (one counter per built machine class).
    executed: ClassVar[list[int]] = [0]

    def __init__(self) -> None:
        super().__init__()
        self.session: Session | None = None

    @property
    def live(self) -> Session:
        assert self.session is not None
        return self.session

    @initialize(initial=st.data())
    def start(self, initial: st.DataObject) -> None:
        buffer = initial.draw(self.text, label="initial buffer")
        config = BufferConfig(buffer)
        if self.bounded:
            config = BufferConfig(
                buffer,
                initial.draw(st.integers(1, 4), label="capacity"),
                initial.draw(st.sampled_from(POLICIES), label="policy"),
            )
        note(f"config: {config}")
        self.session = Session(ROLLBACK, self.target, config)

    def run(self, operation: Operation) -> None:
        if self.target.sets_aside(self.live.model, operation):
            return
        note(f"step {len(self.live.steps) + 1}: {operation.describe()}")
        self.executed[0] += 1
        try:
            self.live.execute(operation)
        except Violation:
            if not self.first_failure:
                self.first_failure.append(time.perf_counter())
            raise

    def draw_edit(self, data: st.DataObject) -> tuple[int, int, bytes]:
        length = len(self.live.model.current)
        offset = data.draw(st.integers(0, length), label="offset")
        delete_length = data.draw(st.integers(0, length - offset), label="delete_length")
        insert = data.draw(self.text, label="insert")
        return offset, delete_length, insert

    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()


def _has_depth(machine: PlainMachine) -> bool:
    return machine.session is not None and machine.live.model.depth >= 1


@rule(data=st.data())
def splice(machine: PlainMachine, data: st.DataObject) -> None:
    machine.run(Splice(*machine.draw_edit(data)))


@precondition(_has_depth)
@rule()
def rollback_one(machine: PlainMachine) -> None:
    machine.run(Rollback(1))


@precondition(_has_depth)
@rule(data=st.data())
def rollback_many(machine: PlainMachine, data: st.DataObject) -> None:
    machine.run(Rollback(data.draw(st.integers(1, machine.live.model.depth), label="steps")))


@precondition(_has_depth)
@rule(data=st.data())
def branch(machine: PlainMachine, data: st.DataObject) -> None:
    machine.run(Rollback(data.draw(st.integers(1, machine.live.model.depth), label="steps")))
    machine.run(Splice(*machine.draw_edit(data)))


@precondition(lambda machine: machine.session is not None and bool(machine.live.model.checkpoints))
@rule(data=st.data())
def rollback_to(machine: PlainMachine, data: st.DataObject) -> None:
    choices: list[int | None] = [*range(len(machine.live.model.checkpoints)), None]
    index = data.draw(st.sampled_from(choices), label="checkpoint")
    machine.run(RollbackToForeign() if index is None else RollbackTo(index))


@precondition(
    lambda machine: (
        machine.session is not None and machine.live.model.depth not in machine.live.model.barriers
    )
)
@rule(data=st.data())
def out_of_log_write(machine: PlainMachine, data: st.DataObject) -> None:
    _out_of_log_write_from(machine, data)


def _out_of_log_write_from(machine: PlainMachine, data: st.DataObject) -> None:
    # The model's rule, not targeting: only writes that change the bytes, at most
    # one barrier per depth (rollcert's machine has the same constraint).
    state = machine.live.model
    offset, delete_length, insert = machine.draw_edit(data)
    assume(splice_bytes(state.current, offset, delete_length, insert) != state.current)
    machine.run(OutOfLogWrite(offset, delete_length, insert))


@rule(data=st.data())
def write_behind_checkpoint(machine: PlainMachine, data: st.DataObject) -> None:
    """rollcert's composite R4 rule (checkpoint, splice, out-of-log write), with uniform draws."""
    machine.run(TakeCheckpoint())
    machine.run(Splice(*machine.draw_edit(data)))
    if machine.live.model.depth not in machine.live.model.barriers:
        _out_of_log_write_from(machine, data)


@rule(data=st.data())
def bad_splice(machine: PlainMachine, data: st.DataObject) -> None:
    length = len(machine.live.model.current)
    offset = data.draw(st.integers(-2, length + 2), label="offset")
    delete_length = data.draw(st.integers(-2, length + 2), label="delete_length")
    machine.run(Splice(offset, delete_length, b"x"))


@precondition(
    lambda machine: (
        machine.session is not None
        and machine.live.model.capacity is not None
        and machine.live.model.policy == "evict_oldest"
    )
)
@rule(data=st.data())
def checkpoint_before_eviction(machine: PlainMachine, data: st.DataObject) -> None:
    """rollcert's composite R6 rule (fill the journal, checkpoint, evict one
    record or past the checkpoint, rollback_to), with uniform draws: the plain
    machine gets the same story, so a difference is the draws'."""
    capacity = machine.live.model.capacity
    assert capacity is not None  # the precondition
    for _ in range(capacity - machine.live.model.depth):
        machine.run(Splice(*machine.draw_edit(data)))
    taken = len(machine.live.model.checkpoints)
    machine.run(TakeCheckpoint())
    if len(machine.live.model.checkpoints) == taken:
        return
    evictions = capacity + 1 if data.draw(st.booleans(), label="past the checkpoint") else 1
    for _ in range(evictions):
        machine.run(Splice(*machine.draw_edit(data)))
    machine.run(RollbackTo(taken))


@precondition(
    lambda machine: (
        machine.session is not None
        and not (
            machine.live.model.capacity is not None
            and machine.live.model.policy == "reject"
            and machine.live.model.depth + 2 > machine.live.model.capacity
        )
    )
)
@rule(data=st.data())
def edit_then_undo(machine: PlainMachine, data: st.DataObject) -> None:
    """rollcert's R0 rule (paste, edit, undo at once), with uniform draws: the
    paste an insert of the machine's text at any offset, the edit any edit."""
    length = len(machine.live.model.current)
    offset = data.draw(st.integers(0, length), label="paste offset")
    machine.run(Splice(offset, 0, data.draw(machine.text, label="paste")))
    machine.run(Splice(*machine.draw_edit(data)))
    machine.run(Rollback(1))


PLAIN_RULES: dict[str, Callable[..., Any]] = {
    "splice": splice,
    "edit_then_undo": edit_then_undo,
    "rollback_one": rollback_one,
    "rollback_many": rollback_many,
    "branch": branch,
    # Rules that draw nothing are rollcert's own, unchanged.
    "checkpoint": ROLLCERT_RULES["checkpoint"],
    "rollback_to": rollback_to,
    "arm_journal_fault": ROLLCERT_RULES["arm_journal_fault"],
    "out_of_log_write": out_of_log_write,
    "write_behind_checkpoint": write_behind_checkpoint,
    "adopt_current": ROLLCERT_RULES["adopt_current"],
    "bad_splice": bad_splice,
    "checkpoint_before_eviction": checkpoint_before_eviction,
}


def build_plain_machine(target: Target, property_id: str, alphabet: str = "bytes") -> type[PlainMachine]:
    """A plain machine with the rules rollcert's machine of ``property_id`` has on ``target``."""
    if property_id == "R5":
        raise ValueError("the plain machine covers the in-memory rollback properties, not R5")
    missing = REQUIRED_CAPABILITIES[property_id] - target.capabilities
    if missing:
        raise ValueError(f"{target.name} lacks {sorted(c.value for c in missing)} for {property_id}")
    names = rules_for(property_id, target.capabilities)
    unknown = [name for name in names if name not in PLAIN_RULES]
    if unknown:
        raise ValueError(f"rollcert's {property_id} machine has rules the plain machine lacks: {unknown}")
    namespace: dict[str, Any] = {name: PLAIN_RULES[name] for name in names}
    text = st.binary() if alphabet == "bytes" else st.lists(st.sampled_from(list(PRINTABLE))).map(bytes)
    namespace.update(
        target=target,
        bounded=property_id == "R6" and Capability.BOUNDED in target.capabilities,
        text=text,
        first_failure=[],
        executed=[0],
    )
    return type(f"Plain{property_id}Machine", (PlainMachine,), namespace)


#: The run in progress in this process, for the child's watchdog.
_RUNNING: dict[str, Any] = {}


@dataclass
class PlainRun:
    found: bool
    length: int | None
    seconds: float
    first_failure_seconds: float | None
    timeout: bool = False
    error: str = ""


def run_plain(
    target: Target,
    property_id: str,
    seed: int,
    *,
    max_examples: int = PLAIN_MAX_EXAMPLES,
    alphabet: str = "bytes",
) -> PlainRun:
    """One plain run, in this process and without a budget: find, shrink, report."""
    machine = build_plain_machine(target, property_id, alphabet)
    machine.first_failure.clear()
    test = get_state_machine_test(machine, settings=plain_settings(max_examples))
    started = time.perf_counter()
    _RUNNING.update(machine=machine, started=started)
    try:
        hypothesis_seed(seed)(test)()
    except Violation as violation:
        seconds = time.perf_counter() - started
        first = machine.first_failure[0] - started if machine.first_failure else None
        return PlainRun(True, len(violation.steps), seconds, first)
    except Exception as error:  # reported, not hidden
        seconds = time.perf_counter() - started
        return PlainRun(False, None, seconds, None, error=f"{type(error).__name__}: {error}"[:300])
    return PlainRun(False, None, time.perf_counter() - started, None)


def _child(specimen_name: str, seed: int, budget: float, max_examples: int, alphabet: str) -> None:
    """Entry of the child process: one plain run under a watchdog; one JSON line out."""
    from rollcert.specimens import load_all

    specimen = load_all()[specimen_name]
    assert specimen.target is not None
    story = sorted(specimen.breaks)[0]

    def out_of_time() -> None:
        # Say whether a failure had been seen (shrinking was still going on) before dying.
        machine, started = _RUNNING.get("machine"), _RUNNING.get("started")
        first = machine.first_failure if machine is not None else []
        seen = round(first[0] - started, 3) if first and started is not None else None
        print(json.dumps({"timeout": True, "first_failure_seconds": seen}), flush=True)
        os._exit(3)

    watchdog = threading.Timer(budget, out_of_time)
    watchdog.daemon = True
    watchdog.start()
    result = run_plain(specimen.target, story, seed, max_examples=max_examples, alphabet=alphabet)
    watchdog.cancel()
    print(json.dumps(result.__dict__), flush=True)


def run_plain_budgeted(
    specimen_name: str,
    seed: int,
    budget: float,
    max_examples: int = PLAIN_MAX_EXAMPLES,
    alphabet: str = "bytes",
) -> PlainRun:
    """One plain run in a child process, killed after ``budget`` seconds of searching."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.plain_machine",
        "--child",
        specimen_name,
        str(seed),
        "--budget",
        str(budget),
        "--max-examples",
        str(max_examples),
        "--alphabet",
        alphabet,
    ]
    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(
            command, cwd=root, capture_output=True, text=True, timeout=budget + 60, check=False
        )
    except subprocess.TimeoutExpired:
        return PlainRun(False, None, budget, None, timeout=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode == 3:  # out of time; counted as not found, whether or not it was shrinking
        seen = json.loads(lines[-1]).get("first_failure_seconds") if lines else None
        return PlainRun(False, None, budget, seen, timeout=True)
    if done.returncode != 0 or not lines:
        return PlainRun(False, None, 0.0, None, error=f"child exited {done.returncode}: {done.stderr[-300:]}")
    return PlainRun(**json.loads(lines[-1]))


class FirstViolationClock:
    """A progress sink that notes when rollcert's run first saw a violation, before
    its minimiser starts: the figure the plain machine's ``first_failure`` is."""

    def __init__(self) -> None:
        self.begun = time.perf_counter()
        self.first_violation: float | None = None

    def started(self, property_id: str, budget: object) -> None:
        pass

    def advanced(self, property_id: str, examples: int, steps: int) -> None:
        pass

    def violation(self, property_id: str, text: str) -> None:
        if self.first_violation is None:
            self.first_violation = time.perf_counter() - self.begun

    def finished(self, property_id: str, verdict: str, detail: str) -> None:
        pass


def _summary(
    shortest: int | None, found: list[bool], lengths: list[int | None], seconds: list[float]
) -> dict[str, Any]:
    """found/runs, minimal/runs (length at most ``shortest``), median and max seconds."""
    minimal = sum(
        1
        for hit, n in zip(found, lengths, strict=True)
        if hit and shortest and n is not None and n <= shortest
    )
    return {
        "found": sum(found),
        "runs": len(found),
        "minimal": minimal,
        "lengths": [n for n in lengths if n is not None],
        "median_seconds": round(statistics.median(seconds), 3),
        "max_seconds": round(max(seconds), 3),
    }


def compare(
    seeds: int,
    budget: float,
    names: tuple[str, ...] = ROLLBACK_SPECIMENS,
    *,
    max_examples: int = PLAIN_MAX_EXAMPLES,
    alphabet: str = "bytes",
    rollcert_seeds: int | None = None,
    first_seed: int = 0,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """rollcert's quick machine and the plain machine, per specimen, on the same seeds, interleaved."""
    from benchmarks.shortest import SHORTEST
    from rollcert.specimens import load_all
    from rollcert.stateful_tests.certify import certify_property

    registry = load_all()
    profile = PROFILES["quick"]
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        specimen = registry[name]
        assert specimen.target is not None
        story = sorted(specimen.breaks)[0]
        shortest = SHORTEST.get(name)
        ours: list[dict[str, Any]] = []
        plain: list[PlainRun] = []
        plain_seeds: list[int] = []
        # A property the plain machine has no rules for (R5, the diff and concurrency
        # families) is said once, not run: a child per seed only printed its traceback.
        try:
            build_plain_machine(specimen.target, story, alphabet)
            not_covered = ""
        except (ValueError, KeyError) as error:
            not_covered = f"the plain machine does not cover {story}: {error}"
        for index in range(max(seeds, rollcert_seeds or 0)):
            seed = first_seed + index
            if index < (rollcert_seeds or seeds):
                clock = FirstViolationClock()
                result = certify_property(specimen.target, story, profile, seed, progress=clock)
                seconds = time.perf_counter() - clock.begun
                found = result.verdict == "violated" and result.counterexample is not None
                length = len(result.counterexample.steps) if found and result.counterexample else None
                ours.append(
                    {
                        "seed": seed,
                        "found": found,
                        "length": length,
                        "seconds": seconds,
                        "first_failure_seconds": clock.first_violation,
                    }
                )
            if index < seeds:
                plain.append(
                    PlainRun(False, None, 0.0, None, error=not_covered)
                    if not_covered
                    else run_plain_budgeted(name, seed, budget, max_examples, alphabet)
                )
                plain_seeds.append(seed)
                if progress:
                    print(f"  {name} seed {seed}: plain {plain[-1]}", file=sys.stderr, flush=True)

        ours_summary = _summary(
            shortest, [r["found"] for r in ours], [r["length"] for r in ours], [r["seconds"] for r in ours]
        )
        plain_summary = _summary(
            shortest, [r.found for r in plain], [r.length for r in plain], [r.seconds for r in plain]
        )
        plain_summary["timeouts"] = sum(r.timeout for r in plain)
        # Out of time after a failure had been seen: Hypothesis was still shrinking it.
        plain_summary["timeouts_while_shrinking"] = sum(
            r.timeout and r.first_failure_seconds is not None for r in plain
        )
        plain_summary["errors"] = list(dict.fromkeys(r.error for r in plain if r.error))
        plain_summary["not_covered"] = not_covered
        found_seconds = [
            r.first_failure_seconds for r in plain if r.found and r.first_failure_seconds is not None
        ]
        shrink_seconds = [
            r.seconds - r.first_failure_seconds
            for r in plain
            if r.found and r.first_failure_seconds is not None
        ]
        plain_summary["median_seconds_to_first_failure"] = (
            round(statistics.median(found_seconds), 3) if found_seconds else None
        )
        # A run out of time while shrinking did see the violation: its first failure
        # counts for "who sees it first", though it gave its user no report in time.
        seen_seconds = [r.first_failure_seconds for r in plain if r.first_failure_seconds is not None]
        plain_summary["median_seconds_to_first_seen"] = (
            round(statistics.median(seen_seconds), 3) if seen_seconds else None
        )
        plain_summary["median_shrink_seconds"] = (
            round(statistics.median(shrink_seconds), 3) if shrink_seconds else None
        )
        plain_summary["runs_detail"] = [
            {"seed": n, **r.__dict__} for n, r in zip(plain_seeds, plain, strict=True)
        ]
        ours_firsts = [
            r["first_failure_seconds"] for r in ours if r["found"] and r["first_failure_seconds"] is not None
        ]
        ours_summary["median_seconds_to_first_failure"] = (
            round(statistics.median(ours_firsts), 3) if ours_firsts else None
        )
        ours_summary["runs_detail"] = ours
        ratio = plain_summary["median_seconds"] / ours_summary["median_seconds"] if not not_covered else 0.0
        rows[name] = {
            "property": story,
            "first_seed": first_seed,
            "shortest": shortest,
            "rollcert": ours_summary,
            "plain": plain_summary,
            # Unfound plain runs count their budget (or their time to give up), so
            # when more than half of them were not found this is a lower bound.
            "ratio": round(ratio, 1),
            "ratio_is_lower_bound": plain_summary["found"] * 2 <= plain_summary["runs"],
        }
    return rows


#: The properties both machines cover on the bundled implementation (R5 has no plain machine).
THROUGHPUT_PROPERTIES = ("R0", "R1", "R2", "R3", "R4", "R6")


def throughput(
    seeds: int, properties: tuple[str, ...] = THROUGHPUT_PROPERTIES, *, progress: bool = True
) -> dict[str, dict[str, Any]]:
    """Steps per second of rollcert's quick machine and of the plain machine, per
    property, on the bundled implementation, the two run back to back per seed."""
    from rollcert.stateful_tests.certify import certify_property
    from rollcert.targets.adapters.bundled import TARGET

    profile = PROFILES["quick"]
    rows: dict[str, dict[str, Any]] = {}
    for property_id in properties:
        pairs: list[dict[str, float]] = []
        for seed in range(seeds):
            # CPU seconds of this process: both runs are single-threaded here, and on a
            # shared box wall time counts the neighbours' turns on the CPU as well. The
            # order alternates from seed to seed, so a drift hits both sides alike.
            machine = build_plain_machine(TARGET, property_id)
            test = get_state_machine_test(
                machine, settings=plain_settings(profile.max_examples, profile.steps_per_example)
            )
            plain_seconds = 0.0
            if seed % 2:
                started = time.process_time()
                hypothesis_seed(seed)(test)()
                plain_seconds = time.process_time() - started
            started = time.process_time()
            result = certify_property(TARGET, property_id, profile, seed)
            ours_seconds = time.process_time() - started
            if not seed % 2:
                started = time.process_time()
                hypothesis_seed(seed)(test)()
                plain_seconds = time.process_time() - started
            pair = {
                "seed": seed,
                "rollcert_steps": result.steps,
                "rollcert_seconds": ours_seconds,
                "rollcert_verdict": result.verdict,
                "plain_steps": machine.executed[0],
                "plain_seconds": plain_seconds,
            }
            pair["ratio"] = (result.steps / ours_seconds) / (machine.executed[0] / plain_seconds)
            pairs.append(pair)
            if progress:
                print(f"  {property_id} seed {seed}: {pair}", file=sys.stderr, flush=True)
        ours_rate = sum(p["rollcert_steps"] for p in pairs) / sum(p["rollcert_seconds"] for p in pairs)
        plain_rate = sum(p["plain_steps"] for p in pairs) / sum(p["plain_seconds"] for p in pairs)
        rows[property_id] = {
            "rollcert_steps_per_second": round(ours_rate, 1),
            "plain_steps_per_second": round(plain_rate, 1),
            "ratio_median_of_pairs": round(statistics.median(p["ratio"] for p in pairs), 3),
            "ratio_min_of_pairs": round(min(p["ratio"] for p in pairs), 3),
            "pairs": pairs,
        }
    return rows


def print_throughput(rows: dict[str, dict[str, Any]]) -> None:
    print(
        f"{'prop':<6}{'rollcert steps/s':>18}{'plain steps/s':>15}{'ratio (median)':>16}{'ratio (min)':>13}  >= 1?"
    )
    for property_id, row in rows.items():
        ratio = row["ratio_median_of_pairs"]
        print(
            f"{property_id:<6}{row['rollcert_steps_per_second']:>18}{row['plain_steps_per_second']:>15}"
            f"{ratio:>16}{row['ratio_min_of_pairs']:>13}  {'met' if ratio >= 1 else 'NOT met'}"
        )


def _verdict(row: dict[str, Any]) -> str:
    if row["plain"].get("not_covered"):
        return "no plain machine for this property"
    if row["plain"]["found"] == 0:
        return "plain never found it: ratio is a lower bound"
    if row["ratio"] >= 10:
        return "met"
    return "not met (lower bound)" if row["ratio_is_lower_bound"] else "NOT met"


def _of(summary: dict[str, Any], key: str) -> str:
    return f"{summary[key]}/{summary['runs']}"


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    header = (
        f"{'specimen':<21}{'prop':<5}| {'found':<7}{'minimal':<8}{'med s':>7}{'max s':>7} "
        f"| {'found':<6}{'t/o':<4}{'minimal':<8}{'med s':>7}{'max s':>7}{'shrink':>7} | {'ratio':>7}  10x?"
    )
    print(f"{'':<26}| {'rollcert (quick)':<36}| {'plain machine':<46}|")
    print(header)
    for name, row in rows.items():
        ours, plain = row["rollcert"], row["plain"]
        ratio = "-" if plain.get("not_covered") else f"{'>' if row['ratio_is_lower_bound'] else ''}{row['ratio']}"
        shrink = plain["median_shrink_seconds"]
        print(
            f"{name:<21}{row['property']:<5}| {_of(ours, 'found'):<7}{_of(ours, 'minimal'):<8}"
            f"{ours['median_seconds']:>7}{ours['max_seconds']:>7} "
            f"| {_of(plain, 'found'):<6}{plain['timeouts']:<4}{_of(plain, 'minimal'):<8}"
            f"{plain['median_seconds']:>7}{plain['max_seconds']:>7}{'-' if shrink is None else shrink:>7} "
            f"| {ratio:>7}  {_verdict(row)}"
        )
    print_first_violations(rows)
    for name, row in rows.items():
        print(
            f"  {name}: rollcert lengths {row['rollcert']['lengths']}, plain lengths {row['plain']['lengths']}"
            f" (plain timeouts while shrinking: {row['plain'].get('timeouts_while_shrinking', 0)})"
        )
        for error in row["plain"]["errors"]:
            print(f"    plain error: {error}")


def first_violation_verdict(row: dict[str, Any]) -> str:
    """Issue 23's reading of one row: does rollcert find what the plain machine
    finds, and see its first violation sooner (medians over the runs that found it)?"""
    ours, plain = row["rollcert"], row["plain"]
    if plain.get("not_covered"):
        return "no plain machine for this property" + ("" if ours["found"] else "; rollcert did not find it")
    if not plain["found"]:
        if plain.get("timeouts_while_shrinking"):
            # Seen, not reported: Hypothesis was still minimising when the budget ran out.
            return (
                "the plain machine saw a failure but was still shrinking it at the budget"
                + ("" if ours["found"] else "; MISSED by rollcert")
            )
        return "only rollcert finds it" if ours["found"] else "neither finds it"
    if not ours["found"]:
        return "MISSED: the plain machine finds it, rollcert does not"
    if ours["found"] < plain["found"]:
        return "MISSED on some seeds the plain machine finds it on"
    faster = ours["median_seconds_to_first_failure"] <= plain["median_seconds_to_first_failure"]
    return "rollcert sooner" if faster else "SLOWER: the plain machine sees it first"


def print_first_violations(rows: dict[str, dict[str, Any]]) -> None:
    """Seconds to the first violation (before any shrinking), side by side."""
    print(f"\n{'specimen':<24}{'rollcert found':>15}{'first s':>9}{'plain found':>13}{'first s':>9}  reading")
    for name, row in rows.items():
        ours, plain = row["rollcert"], row["plain"]
        ours_first = ours.get("median_seconds_to_first_failure")
        plain_first = plain.get("median_seconds_to_first_failure") or plain.get("median_seconds_to_first_seen")
        print(
            f"{name:<24}{_of(ours, 'found'):>15}{'-' if ours_first is None else ours_first:>9}"
            f"{_of(plain, 'found'):>13}{'-' if plain_first is None else plain_first:>9}  {first_violation_verdict(row)}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=5, help="plain-machine seeds (default 5)")
    parser.add_argument("--rollcert-seeds", type=int, help="rollcert seeds (default: --seeds)")
    parser.add_argument("--first-seed", type=int, default=0, help="run seeds FIRST..FIRST+N-1")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="seconds per plain run")
    parser.add_argument("--max-examples", type=int, default=PLAIN_MAX_EXAMPLES)
    parser.add_argument("--alphabet", choices=("bytes", "printable"), default="bytes")
    parser.add_argument(
        "--specimens",
        help="comma-separated, or 'all' (the rollback-class and world specimens; default: the rollback-class ones)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--throughput", action="store_true", help="steps per second on the bundled implementation instead"
    )
    parser.add_argument("--child", nargs=2, metavar=("SPECIMEN", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]), args.budget, args.max_examples, args.alphabet)
        return
    if args.throughput:
        rates = throughput(args.seeds)
        print_throughput(rates)
        if args.json is not None:
            args.json.write_text(json.dumps(rates, indent=2) + "\n")
        return
    if args.specimens == "all":
        names = SIDE_BY_SIDE_SPECIMENS
    else:
        names = tuple(args.specimens.split(",")) if args.specimens else ROLLBACK_SPECIMENS
    rows = compare(
        args.seeds,
        args.budget,
        names,
        max_examples=args.max_examples,
        alphabet=args.alphabet,
        rollcert_seeds=args.rollcert_seeds,
        first_seed=args.first_seed,
    )
    print_table(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
