"""R7, the concurrent family: programs, runs, checks, minimisation, counterexamples.

A *program* is drawn by Hypothesis (one word, which seeds its choices): a
starting buffer, a sequential prefix (the splices that give the log some depth,
perhaps a checkpoint), then two or three threads, each a short sequence of
splices, rollbacks, checkpoints, rollbacks to a checkpoint, reads and
observations of length, depth and revision. One program
has many possible interleavings, so each is **run N times**; every run yields a
:class:`~rollcert.stateful_tests.linearizability.History` and every history is
checked (:func:`rollcert.stateful_tests.linearizability.check`).

What makes an interleaving likely to land inside an operation:

- the threads start together at a ``threading.Barrier``;
- ``sys.setswitchinterval`` is set very short during the run (and restored after),
  so the interpreter hands the GIL over every microsecond or so;
- *forced yields*: a per-thread trace function that, on a random share of the
  lines executed inside the SUT (2–10%, varied from run to run), calls
  ``time.sleep(0)`` — which releases the GIL — so another thread runs in the
  middle of a method (say, between two steps of a rollback).

The threads are started once and reused from run to run (:class:`_Workers`):
starting and joining threads for every run cost a third of its CPU.

Shrinking works on the *program*, never on a recorded history: deleting a call
from a history deletes an effect the other calls saw, and what is left proves
nothing. Each candidate program is run up to N times again, and kept at the
first run that is not linearizable (see :func:`minimise`). A violation reports per-thread timelines, the longest partial
sequential order found, the call that could not be placed with what the model
allowed there, and "failed k of N runs".

Coverage (the situations of R7 in :mod:`rollcert.model.properties`) is counted on
the sequential orders the checker found: overlap that the run never reached
makes the verdict ``unknown``, not ``passed``. So is the world (SPEC §6a,
:mod:`rollcert.stateful_tests.world`): a quarter of the programs are *wide* —
bytes of the target's whole declared world, a start, an insert and a removal
past the record-layout thresholds and the target's chunk — and the result
states the world the checked orders reached, with the same dimensions as every
other property, except the few no short program reaches, which it names with
the reason (:func:`r7_beyond`). Another quarter race a checkpoint: one thread
checkpoints and rolls back to it while the others splice, since a token is only
judged by the rollback that uses it.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from functools import partial
from types import FrameType
from typing import Any

from hypothesis import given
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from rollcert.model.errors import ERROR_KINDS
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.properties import OBSERVATIONS
from rollcert.model.properties import R7
from rollcert.model.properties import ConcurrentCall
from rollcert.model.reference import Outcome
from rollcert.stateful_tests.causes import unknown_reason
from rollcert.stateful_tests.linearizability import DEFAULT_BUDGET
from rollcert.stateful_tests.linearizability import Action
from rollcert.stateful_tests.linearizability import Call
from rollcert.stateful_tests.linearizability import Checkpoint
from rollcert.stateful_tests.linearizability import CheckResult
from rollcert.stateful_tests.linearizability import History
from rollcert.stateful_tests.linearizability import Observe
from rollcert.stateful_tests.linearizability import PlacedCall
from rollcert.stateful_tests.linearizability import RollbackCall
from rollcert.stateful_tests.linearizability import RollbackToLabel
from rollcert.stateful_tests.linearizability import SpliceCall
from rollcert.stateful_tests.linearizability import check
from rollcert.stateful_tests.linearizability import overlapping
from rollcert.stateful_tests.linearizability import predict
from rollcert.stateful_tests.linearizability import replay_order
from rollcert.stateful_tests.profiles import Profile
from rollcert.stateful_tests.program_family import ProgramFamily
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import HistoryCall
from rollcert.stateful_tests.verdicts import OrderedCall
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.verdicts import StuckCall
from rollcert.stateful_tests.world import BUFFER
from rollcert.stateful_tests.world import BUFFER_PAST_CHUNK
from rollcert.stateful_tests.world import CHARACTER_BOUNDARY
from rollcert.stateful_tests.world import DEPTH
from rollcert.stateful_tests.world import DIMENSIONS
from rollcert.stateful_tests.world import HIGH_BYTE
from rollcert.stateful_tests.world import INSERTED
from rollcert.stateful_tests.world import MULTIBYTE
from rollcert.stateful_tests.world import REMOVED
from rollcert.stateful_tests.world import SIZE_THRESHOLDS
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import WorldTally
from rollcert.stateful_tests.world import world_of
from rollcert.stateful_tests.world import world_report
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import exact_bytes
from rollcert.targets.adapter import observed_int

#: Runs of each program, per profile: one program has many interleavings.
RUNS_PER_PROGRAM: dict[str, int] = {"quick": 8, "ci": 16, "thorough": 32}
#: Programs after which a pass needs no second round (see certify_linearizability):
#: more than two rounds of quick (100 each) or ci (300), so only thorough's first
#: round (2000 programs x 32 runs, 40 times quick's whole run) is enough by itself.
#: Its second round was 100 of thorough's 650 s serially (2026-12-04), and the R7
#: specimens are all found within quick's first round (seeds 0-9).
PROGRAMS_FOR_A_PASS = 1000
#: The switch interval during a run (seconds); CPython's default is 0.005.
SWITCH_INTERVAL = 1e-6
#: Share of SUT lines after which a forced yield releases the GIL, per run of a
#: program (cycling through them). Measured on 200 drawn programs x 8 runs per
#: R7 specimen: runs without forced yields found almost nothing (1 failing run in
#: 1,600), and yielding after 30% of the lines found no more failing programs
#: than 2-10% at twice the cost per run (each yield is a thread switch); the
#: spread keeps some runs that cut operations finely and some that let them run.
YIELD_PROBABILITIES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.05)
#: A thread that has not finished after this long is hung (a deadlock): ``error``.
HANG_SECONDS = 10.0
#: Minimisation: candidate programs tried at most, and seconds spent at most.
#: (60 before candidates got cheap; with 60, benchmarks.suite showed
#: counterexamples of 6-8 steps where 100 gives 3-5, for about 0.1 s more.)
SHRINK_CANDIDATES = 100
SHRINK_SECONDS = 30.0
#: Round r uses seed ``seed + r * ROUND_SEED_STRIDE`` (as the other families).
ROUND_SEED_STRIDE = 1_000_003
#: The bytes generated buffers and inserts are made of: few, so text repeats (a
#: target whose declared alphabet lacks one of them gets its world's letters).
ALPHABET = b"ab12"
#: Share of programs whose data is *wide* (:func:`_widen`): bytes of the target's
#: whole world, and a start, an insert and a delete past one of the record-layout
#: thresholds. Drawn last, so every other program is the one drawn before.
WIDE_PROGRAM_SHARE = 0.25
#: What R7 does not ask of a run, whatever the target declared, and why: its
#: world is the threads' programs, kept short so that the checker can try every
#: order of their calls.
BEYOND_R7: dict[str, str] = {
    dimension.name: "an R7 program makes at most 16 edits (a prefix of 2-4, up to 3 threads of up to 4 "
    "calls): short, so that the checker can try every order of its calls"
    for dimension in DEPTH
}
#: What R7 does not ask of a text target, and why (its edits would split characters).
BEYOND_R7_TEXT: dict[str, str] = {
    name: "a thread's offsets are drawn before the run, blind to where the other threads' edits moved "
    "the text, so a text target is sent ASCII only (a multi-byte character could be split)"
    for name in (MULTIBYTE.name, CHARACTER_BOUNDARY.name, HIGH_BYTE.name)
}
#: The most bytes a program's other inserts may add to its long start or insert:
#: 16 splices of at most 8 bytes. Which order the threads' calls run in is not
#: known when the program is drawn, so under a declared buffer limit a long run
#: is drawn only where it fits beside all of them (:func:`_fits`).
OTHER_INSERTS_AT_MOST = 16 * 8
#: A long start is its rung plus this many bytes at most (room for a thread's
#: offset and the run it removes); a long insert, its rung plus this many.
LONG_START_SLACK = 24
LONG_INSERT_SLACK = 17


# -- programs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """What Hypothesis draws and the minimiser shrinks: a starting buffer, a
    sequential prefix, and the threads' action sequences."""

    initial: bytes
    prefix: tuple[Action, ...]
    threads: tuple[tuple[Action, ...], ...]

    @property
    def size(self) -> int:
        return len(self.prefix) + sum(len(t) for t in self.threads)

    def is_valid(self) -> bool:
        """Every rollback_to names a checkpoint its own thread (or the prefix) took
        earlier, so its token exists when it runs."""
        prefix_labels = {a.label for a in self.prefix if isinstance(a, Checkpoint)}
        if any(isinstance(a, RollbackToLabel) for a in self.prefix):
            return False
        for actions in self.threads:
            known = set(prefix_labels)
            for action in actions:
                if isinstance(action, RollbackToLabel) and action.label not in known:
                    return False
                if isinstance(action, Checkpoint):
                    known.add(action.label)
        return bool(self.threads)

    def describe(self) -> list[str]:
        lines = [f"initial {self.initial!r}"]
        lines.append("prefix:  " + ("; ".join(a.describe() for a in self.prefix) or "(none)"))
        for number, actions in enumerate(self.threads, 1):
            lines.append(f"T{number}:      " + "; ".join(a.describe() for a in actions))
        return lines


def _kinds(target: Target) -> list[str]:
    """The actions this target can be driven on (observations of what it reports)."""
    # Weighted by repetition: rollbacks and cheap observations are what overlap
    # needs most (an observer looking between the steps of a rollback).
    kinds = ["splice", "splice", "rollback", "rollback", "rollback", "read", "length", "length"]
    if target.supports(Capability.DEPTH):
        kinds.append("depth")
    if target.supports(Capability.REVISIONS):
        kinds.append("revision")
    if target.supports(Capability.CHECKPOINTS):
        kinds += ["checkpoint", "rollback_to"]
    return kinds


#: How many threads a program has (2 or 3) and how many actions a thread (1-4),
#: in the proportions Hypothesis drew them when it drew the programs (500
#: programs, seed 0): short threads most often. Uniform counts made programs
#: about a quarter longer, and the minimiser left longer counterexamples.
_THREAD_COUNT_WEIGHTS = (62, 38)
_ACTION_COUNT_WEIGHTS = (41, 23, 21, 15)


def _random_bytes(rng: random.Random, smallest: int, largest: int, letters: bytes = ALPHABET) -> bytes:
    return bytes(rng.choice(letters) for _ in range(rng.randint(smallest, largest)))


def letters_of(world: World) -> bytes:
    """The small draws' letters: :data:`ALPHABET`, or — where a target declared an
    alphabet without all of it — the letters of the target's world."""
    return ALPHABET if all(b in world.wide for b in ALPHABET) else world.letters


#: Share of programs (on a target with checkpoints) drawn around a *raced
#: checkpoint*: one thread takes a checkpoint, perhaps edits, and rolls back to
#: it, while every other thread's first action is a splice. Drawn freely, a thread
#: that rolls back to a checkpoint it took itself while another splices is rare
#: (checkpoint and rollback_to are two kinds in a dozen, and a rollback_to may
#: name the prefix's): the checkpoint_reads_depth_unlocked specimen, whose
#: token is only wrong when a splice lands inside checkpoint(), was found in
#: 0 of 10 seeds. A token is only ever judged by the rollback that uses it.
RACED_CHECKPOINT_SHARE = 0.25


def _action(rng: random.Random, kind: str, known: list[int], labels: Iterator[int], letters: bytes) -> Action:
    """One thread action of ``kind``; a checkpoint takes the next label and adds it
    to ``known`` (the labels this thread may roll back to)."""
    if kind == "splice":
        return SpliceCall(Splice(rng.randint(0, 6), rng.randint(0, 2), _random_bytes(rng, 0, 3, letters)))
    if kind == "rollback":
        return RollbackCall(Rollback(rng.choice((1, 2, 2, 3, 3))))
    if kind == "checkpoint":
        label = next(labels)
        known.append(label)
        return Checkpoint(label)
    if kind == "rollback_to":
        return RollbackToLabel(rng.choice(known)) if known else RollbackCall(Rollback(2))
    return Observe(kind)


def _raced_checkpoint(
    rng: random.Random, kinds: Sequence[str], labels: Iterator[int], letters: bytes
) -> tuple[Action, ...]:
    """A thread that takes a checkpoint, perhaps does one thing in between — the
    edit the checkpoint is the safety net for, or a look — and rolls back to it.
    Never a rollback in between: one that passes the checkpoint kills it, and
    the rollback_to that judges the token would only be refused, as it should."""
    label = next(labels)
    middle: list[Action] = []
    if rng.random() < 0.5:
        looks = [kind for kind in kinds if kind in OBSERVATIONS]
        kind = "splice" if rng.random() < 0.6 or not looks else rng.choice(looks)
        middle.append(_action(rng, kind, [label], labels, letters))
    return (Checkpoint(label), *middle, RollbackToLabel(label))


def _race_a_checkpoint(
    rng: random.Random,
    kinds: Sequence[str],
    threads: list[tuple[Action, ...]],
    labels: Iterator[int],
    letters: bytes,
) -> list[tuple[Action, ...]]:
    """``threads`` with one of them (any) replaced by a :func:`_raced_checkpoint`
    thread and every other opening with a splice, which races the checkpoint (two
    splicers fail a raced program's runs about twice as often as one). The other
    threads keep the rest of their actions, except that a rollback_to of the
    checkpoint the splice replaced becomes the ``rollback(2)`` the generator
    draws when a thread knows no checkpoint, so the program stays valid."""
    checkpointer = rng.randrange(len(threads))
    raced: list[tuple[Action, ...]] = []
    for number, actions in enumerate(threads):
        if number == checkpointer:
            raced.append(_raced_checkpoint(rng, kinds, labels, letters))
            continue
        replaced = actions[0].label if isinstance(actions[0], Checkpoint) else None
        rest = tuple(
            RollbackCall(Rollback(2)) if isinstance(a, RollbackToLabel) and a.label == replaced else a
            for a in actions[1:]
        )
        raced.append((_action(rng, "splice", [], labels, letters), *rest))
    return raced


def _wide_bytes(rng: random.Random, world: World, length: int) -> bytes:
    """``length`` bytes of ``world``: raw bytes of it (high bytes, NUL, invalid
    UTF-8), or text pieces (letters, line breaks, CRLF, multi-byte characters),
    a random unit tiled (so a long run repeats and costs one multiplication). A
    text target gets ASCII pieces only (see :data:`BEYOND_R7_TEXT`)."""
    pieces = world.pieces()
    if world.text:
        pieces = tuple(piece for piece in pieces if piece.isascii()) or (letters_of(world)[:1],)
    if not world.text and rng.random() < 0.5:
        unit = bytes(rng.choices(world.wide, k=rng.randint(1, 24)))
    else:
        unit = b"".join(rng.choices(pieces, k=rng.randint(1, 12)))
    return (unit * -(-length // len(unit)))[:length]


def _fits(world: World, length: int) -> bool:
    """Whether a run of ``length`` bytes fits ``world``'s buffer limit beside every
    other insert a program may make (:data:`OTHER_INSERTS_AT_MOST`)."""
    return world.max_buffer is None or length + OTHER_INSERTS_AT_MOST <= world.max_buffer


def _widen(rng: random.Random, program: Program, world: World) -> Program:
    """``program`` with wide data (:data:`WIDE_PROGRAM_SHARE`); the calls and
    their order stay the program's own, only the data changes.

    Every insert is, half the time, a few bytes of the world. One threshold of
    :data:`~rollcert.stateful_tests.world.SIZE_THRESHOLDS` is the program's
    *rung* — the top one half the time, since a run past it is past every other
    too. Half the time the start is past the rung (a quarter of those, past
    the target's declared chunk instead), with room for the threads' offsets,
    and then, mostly, one thread's splice removes a run past the rung; half the
    time one insert is past it. Each of these is needed in some linearizable
    history of the first two rounds, or R7 goes on to rounds three and four
    (and is ``unknown`` if it still has not): their shares were chosen for that."""
    places = [(-1, i) for i, a in enumerate(program.prefix) if isinstance(a, SpliceCall)]
    for number, actions in enumerate(program.threads):
        places += [(number, i) for i, a in enumerate(actions) if isinstance(a, SpliceCall)]
    # Under a declared buffer limit, only the rungs whose long start fits (r7_beyond says the rest are not asked).
    rungs = [t for t in SIZE_THRESHOLDS if _fits(world, t + LONG_START_SLACK)] or [0]
    rung = rungs[-1] if rng.random() < 0.5 else rng.choice(rungs)
    long_start = rung > 0 and rng.random() < 0.5
    if not long_start:
        initial = _wide_bytes(rng, world, rng.randint(1, 12))
    else:
        chunk = world.chunk is not None and _fits(world, world.chunk + LONG_START_SLACK) and rng.random() < 0.25
        past = world.chunk if chunk and world.chunk is not None else rung
        # 8 bytes of room: a thread's offset (at most 6) plus the run it removes stays inside the start.
        initial = _wide_bytes(rng, world, past + 8 + rng.randint(1, LONG_START_SLACK - 8))
    # A long insert beside a long start only where both fit the buffer limit.
    fits = _fits(world, rung + LONG_INSERT_SLACK + (len(initial) if long_start else 0))
    long_insert = rng.choice(places) if places and rung > 0 and fits and rng.random() < 0.5 else None
    in_threads = [place for place in places if place[0] >= 0]
    long_delete = rng.choice(in_threads) if long_start and in_threads and rng.random() < 0.75 else None
    prefix, threads = list(program.prefix), [list(actions) for actions in program.threads]
    for place in places:
        actions = prefix if place[0] < 0 else threads[place[0]]
        action = actions[place[1]]
        assert isinstance(action, SpliceCall)
        splice = action.operation
        if place == long_insert:
            splice = replace(splice, insert=_wide_bytes(rng, world, rung + rng.randint(1, LONG_INSERT_SLACK)))
        elif rng.random() < 0.5:
            splice = replace(splice, insert=_wide_bytes(rng, world, rng.randint(1, 8)))
        if place == long_delete:
            splice = replace(splice, delete_length=rung + 1)
        actions[place[1]] = SpliceCall(splice)
    return Program(initial, tuple(prefix), tuple(tuple(actions) for actions in threads))


def within_limits(program: Program, world: World) -> Program:
    """``program`` cut to the target's declared size limits: no insert past the
    insert limit, and the start and the inserts together (the largest buffer any
    interleaving can make) no longer than the buffer limit — the longest cut
    first. A thread's buffer depends on the interleaving, so the bound is the
    worst case, not the buffer each call meets."""
    if world.max_insert is None and world.max_buffer is None:
        return program
    initial = program.initial
    parts = [list(program.prefix), *(list(actions) for actions in program.threads)]
    inserts = [(n, i) for n, actions in enumerate(parts) for i, a in enumerate(actions) if isinstance(a, SpliceCall)]

    def splice_at(place: tuple[int, int]) -> Splice:
        action = parts[place[0]][place[1]]
        assert isinstance(action, SpliceCall)
        return action.operation

    def cut(place: tuple[int, int], length: int) -> None:
        splice = splice_at(place)
        parts[place[0]][place[1]] = SpliceCall(replace(splice, insert=splice.insert[:length]))

    if world.max_insert is not None:
        for place in inserts:
            cut(place, world.max_insert)
    if world.max_buffer is not None:
        while (excess := len(initial) + sum(len(splice_at(p).insert) for p in inserts) - world.max_buffer) > 0:
            longest = max(inserts, key=lambda place: len(splice_at(place).insert), default=None)
            longest_insert = 0 if longest is None else len(splice_at(longest).insert)
            if longest is None or len(initial) >= longest_insert:
                initial = initial[: max(0, len(initial) - excess)]
            else:
                cut(longest, max(0, longest_insert - excess))
    return Program(initial, tuple(parts[0]), tuple(tuple(actions) for actions in parts[1:]))


#: The world of a target that declared nothing: every byte, no limits.
DEFAULT_WORLD = World()


def program_from(rng: random.Random, kinds: Sequence[str], checkpoints: bool, world: World = DEFAULT_WORLD) -> Program:
    """One program, every choice made by ``rng``: a starting buffer of up to 4
    bytes, a prefix of 2-4 inserts (so the threads start with records to roll
    back, and rollbacks that change the length), perhaps a checkpoint in it, then
    2-3 threads of 1-4 actions of the ``kinds`` (weighted by repetition). A share
    of programs (:data:`RACED_CHECKPOINT_SHARE`) then has one thread checkpoint
    and roll back to its checkpoint while the others open with a splice, and a
    share (:data:`WIDE_PROGRAM_SHARE`) gets wide data from ``world``; each
    decision is drawn after the program it changes, so a program that is
    neither is the one drawn before either existed. Last, the program is cut to
    ``world``'s size limits."""
    letters = letters_of(world)
    labels = iter(range(1_000))
    initial = _random_bytes(rng, 0, 4, letters)
    prefix: list[Action] = [
        SpliceCall(Splice(rng.randint(0, 4), 0, _random_bytes(rng, 1, 3, letters))) for _ in range(rng.randint(2, 4))
    ]
    if checkpoints and rng.random() < 0.5:
        prefix.insert(rng.randint(0, len(prefix)), Checkpoint(next(labels)))
    prefix_labels = [a.label for a in prefix if isinstance(a, Checkpoint)]
    threads: list[tuple[Action, ...]] = []
    for _ in range(rng.choices((2, 3), _THREAD_COUNT_WEIGHTS)[0]):
        known = list(prefix_labels)
        count = rng.choices((1, 2, 3, 4), _ACTION_COUNT_WEIGHTS)[0]
        threads.append(tuple(_action(rng, rng.choice(kinds), known, labels, letters) for _ in range(count)))
    if checkpoints and "rollback_to" in kinds and rng.random() < RACED_CHECKPOINT_SHARE:
        threads = _race_a_checkpoint(rng, kinds, threads, labels, letters)
    program = Program(initial, tuple(prefix), tuple(threads))
    if rng.random() < WIDE_PROGRAM_SHARE:
        program = _widen(rng, program, world)
    return within_limits(program, world)


def programs(target: Target) -> st.SearchStrategy[Program]:
    """Programs over the actions ``target`` supports, each made from one drawn word.

    R7's programs are small and its own minimiser shrinks them (Hypothesis's
    shrinker is off), so Hypothesis's structure-aware drawing bought little
    here and cost much: about 40 strategy draws per program, several ms, paid also for
    every example a round draws after a failure was found (a whole round of them:
    more than the failure's finding and minimising together). One 64-bit word
    seeding a ``random.Random`` makes a program in ~0.1 ms."""
    kinds = _kinds(target)
    checkpoints = target.supports(Capability.CHECKPOINTS)
    world = world_of(target)
    return st.integers(0, 2**64 - 1).map(lambda word: program_from(random.Random(word), kinds, checkpoints, world))


# -- running a program -------------------------------------------------------------------------


def _error_kind(error: Exception) -> str:
    for name, kind in ERROR_KINDS.items():
        if type(error) is kind:
            return name
    for name, kind in ERROR_KINDS.items():
        if isinstance(error, kind):
            return name
    return f"undocumented {type(error).__name__}"


def _perform(sut: SystemUnderTest, action: Action, tokens: dict[int, object]) -> bytes | int | None:
    if isinstance(action, SpliceCall):
        op = action.operation
        sut.splice(op.offset, op.delete_length, op.insert)
        return None
    if isinstance(action, RollbackCall):
        sut.rollback(action.operation.steps)
        return None
    if isinstance(action, Checkpoint):
        tokens[action.label] = sut.checkpoint()
        return None
    if isinstance(action, RollbackToLabel):
        sut.rollback_to(tokens[action.label])
        return None
    # Compared with the model as plain values rollcert made (a target's bytes subclass
    # or int subclass could answer == with True), as the judge does.
    if action.what == "read":
        return exact_bytes(sut.read(), "read()")
    if action.what == "length":
        return observed_int("length", sut.length())
    if action.what == "depth":
        return observed_int("depth", sut.depth())
    return observed_int("revision", sut.revision())


@dataclass
class _Recorded:
    thread: str
    called: int
    returned: int | None
    action: Action
    error: str | None
    value: bytes | int | None


def _yielding_tracer(rng: random.Random, probability: float) -> Callable[[FrameType, str, Any], Any]:
    """A trace function that releases the GIL after a random share of lines."""

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and rng.random() < probability:
            time.sleep(0)
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    return on_call


def _call(
    sut: SystemUnderTest,
    thread: str,
    action: Action,
    tokens: dict[int, object],
    tracer: Callable[[FrameType, str, Any], Any] | None,
) -> _Recorded | None:
    if isinstance(action, RollbackToLabel) and action.label not in tokens:
        return None  # its checkpoint raised: this call was never made
    error: str | None = None
    value: bytes | int | None = None
    called = time.perf_counter_ns()
    if tracer is not None:
        sys.settrace(tracer)
    try:
        value = _perform(sut, action, tokens)
    except HarnessError:
        raise
    except Exception as raised:  # the SUT's outcome, judged by the checker
        error = _error_kind(raised)
    finally:
        if tracer is not None:
            sys.settrace(None)
    returned = time.perf_counter_ns()
    return _Recorded(thread, called, returned, action, error, value)


class _Workers:
    """The threads R7's programs run on, started once and reused for every run.

    Starting and joining two or three threads per run cost about a third of a
    run's CPU (and more wall time on a loaded box, where each new thread waits
    to be scheduled); handing a job to a parked worker costs one queue put.
    A worker that does not come back within :data:`HANG_SECONDS` (a deadlock in
    the SUT) breaks the pool: the caller reports a harness error and the next
    run starts fresh threads (the stuck ones are daemons, left behind as before).
    A pool belongs to the process that started it: after a fork its threads do
    not exist, so a child starts its own."""

    SIZE = 3  # the most threads a program has

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.broken = False
        self._jobs: list[queue.SimpleQueue[Callable[[], None] | None]] = [queue.SimpleQueue() for _ in range(self.SIZE)]
        self._done: queue.SimpleQueue[int] = queue.SimpleQueue()
        for number in range(self.SIZE):
            threading.Thread(target=self._serve, args=(number,), daemon=True, name=f"rollcert-R7-T{number + 1}").start()

    def _serve(self, number: int) -> None:
        jobs = self._jobs[number]
        while (job := jobs.get()) is not None:
            job()  # a job catches everything it raises (see run_program's work)
            self._done.put(number)

    def run(self, jobs: Sequence[Callable[[], None]]) -> bool:
        """Run ``jobs[n]`` on worker ``n``; ``False`` if one hung."""
        for number, job in enumerate(jobs):
            self._jobs[number].put(job)
        deadline = time.monotonic() + HANG_SECONDS
        for _ in jobs:
            try:
                self._done.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._retire()
                return False
            except BaseException:  # Ctrl-C while the jobs run: their "done" must not answer the next run
                self._retire()
                raise
        return True

    def _retire(self) -> None:
        """No more runs on these threads; those that come back (a stuck one, if it
        ever does) stop."""
        self.broken = True
        for jobs_of_worker in self._jobs:
            jobs_of_worker.put(None)


_workers: _Workers | None = None


def _pool() -> _Workers:
    global _workers
    if _workers is None or _workers.broken or _workers.pid != os.getpid():
        _workers = _Workers()
    return _workers


def run_program(
    target: Target, program: Program, *, forced_yields: bool, seed: int, yield_probability: float = 0.05
) -> History:
    """Run ``program`` once on a fresh SUT and return the history it produced; with
    ``forced_yields``, the threads release the GIL after ``yield_probability`` of
    the lines they run inside the SUT."""
    if len(program.threads) > _Workers.SIZE:
        raise ValueError(f"a program has at most {_Workers.SIZE} threads, got {len(program.threads)}")
    sut = target.factory(BufferConfig(program.initial))
    tokens: dict[int, object] = {}
    recorded: list[_Recorded] = []
    try:
        for action in program.prefix:
            done = _call(sut, "prefix", action, tokens, None)
            if done is not None:
                recorded.append(done)
        per_thread: list[list[_Recorded]] = [[] for _ in program.threads]
        failures: list[BaseException] = []
        barrier = threading.Barrier(len(program.threads))

        def work(number: int, actions: tuple[Action, ...]) -> None:
            rng = random.Random(seed * 31 + number)
            tracer = _yielding_tracer(rng, yield_probability) if forced_yields and yield_probability else None
            try:
                barrier.wait(timeout=HANG_SECONDS)
                for action in actions:
                    if rng.random() < 0.5:
                        time.sleep(0)
                    done = _call(sut, f"T{number + 1}", action, tokens, tracer)
                    if done is not None:
                        per_thread[number].append(done)
            except BaseException as failure:  # a harness failure, reported by the caller
                failures.append(failure)

        jobs = [partial(work, number, actions) for number, actions in enumerate(program.threads)]
        previous = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            finished = _pool().run(jobs)
        finally:
            sys.setswitchinterval(previous)
        if not finished:
            raise HarnessError(f"a thread of the R7 program did not finish within {HANG_SECONDS:.0f} s (a deadlock?)")
        if failures:
            raise HarnessError(f"the R7 runner failed: {type(failures[0]).__name__}: {failures[0]}") from failures[0]
    finally:
        sut.close()
    for records in per_thread:
        recorded += records
    calls = tuple(
        Call(index, r.thread, r.called, r.returned, r.action, r.error, r.value) for index, r in enumerate(recorded)
    )
    return History(program.initial, calls)


# -- coverage -------------------------------------------------------------------------------------


def _model_action(placed: PlacedCall) -> Operation | str:
    action = placed.call.action
    if isinstance(action, (SpliceCall, RollbackCall)):
        return action.operation
    if isinstance(action, Checkpoint):
        return TakeCheckpoint()
    if isinstance(action, RollbackToLabel):
        return RollbackTo(placed.before.index_of(action.label) or 0)
    return action.what


def _plain_action(action: Action) -> Operation | str:
    """An overlapping call's kind, for the situations (which only ask what kind it
    is, so a rollback_to keeps its program label in place of a model index)."""
    if isinstance(action, (SpliceCall, RollbackCall)):
        return action.operation
    if isinstance(action, Checkpoint):
        return TakeCheckpoint()
    if isinstance(action, RollbackToLabel):
        return RollbackTo(action.label)
    return action.what


def situations_reached(history: History, order: Sequence[int], world: WorldTally | None = None) -> set[str]:
    """R7's situations reached by ``history`` along the sequential ``order`` found.

    With ``world``, also counts there the world this order reached, as the other
    families count theirs (:meth:`WorldTally.edit`, :meth:`WorldTally.observed`):
    each splice against the model's buffer before it — the buffer the target
    showed, in the order that explains what it showed — and the length and depth
    of every state a call reached."""
    reached: set[str] = set()
    if world is not None:
        world.initial(history.initial)
        world.observed(len(history.initial), 0)
    for placed in replay_order(history, order):
        call = placed.call
        if world is not None:
            if isinstance(call.action, SpliceCall):
                op = call.action.operation
                world.edit(placed.before.model.current, op.offset, op.delete_length, op.insert)
            after = placed.prediction.after.model
            if after is not placed.before.model:  # a look, a checkpoint or a refusal reached no new state
                world.observed(len(after.current), after.depth)
        concurrent = ConcurrentCall(
            call.thread,
            _model_action(placed),
            tuple(_plain_action(other.action) for other in overlapping(history, call)),
        )
        error = ERROR_KINDS.get(placed.prediction.error or "") if placed.prediction.error else None
        outcome = Outcome(placed.prediction.after.model, error)
        for situation in R7.situations:
            if situation.name not in reached and situation.reached(placed.before.model, concurrent, outcome):
                reached.add(situation.name)
    return reached


def history_key(history: History) -> Hashable:
    """What the checker and the situations see of a history: each call's thread,
    action and result, and the order of the calls and returns in time (not the
    times themselves). Two histories with the same key get the same verdict,
    the same order and the same situations."""
    events = sorted(
        [(call.called, 0, call.id) for call in history.calls]
        + [(call.returned, 1, call.id) for call in history.calls if call.returned is not None]
    )
    calls = tuple((c.thread, c.action, c.error, c.value, c.returned is None) for c in history.calls)
    return (history.initial, calls, tuple((is_return, call_id) for _, is_return, call_id in events))


# -- the machine -----------------------------------------------------------------------------------


class NotLinearizable(AssertionError):
    """A program whose runs produced a history no sequential order explains."""

    def __init__(self, program: Program, history: History, result: CheckResult, failed: int, runs: int) -> None:
        super().__init__(f"not linearizable in {failed} of {runs} runs")
        self.program = program
        self.history = history
        self.result = result
        self.failed = failed
        self.runs = runs


@dataclass
class _Tally:
    examples: int = 0
    histories: int = 0
    calls: int = 0
    unknown: int = 0
    reached: Counter[str] | None = None
    #: The world reached: one linearizable history per program (see :func:`run_many`).
    world: WorldTally = field(default_factory=WorldTally)


def run_many(
    target: Target,
    program: Program,
    runs: int,
    *,
    seed: int,
    budget: int = DEFAULT_BUDGET,
    tally: _Tally | None = None,
    stop_at_first_failure: bool = False,
) -> NotLinearizable | None:
    """Run ``program`` ``runs`` times, check every history; the first failure, if any,
    with how many runs failed (of how many were made: ``stop_at_first_failure``
    ends at the first, for the minimiser, which only asks whether one fails)."""
    first: tuple[History, CheckResult] | None = None
    failed = 0
    made = 0
    # Runs of one program often repeat a history exactly (in 32 runs, about 4 in
    # 10 do): its verdict and situations are those of the first time.
    judged: dict[Hashable, tuple[CheckResult, set[str]]] = {}
    # The world is counted on one linearizable history per program: the edits it
    # sends are the same in every run, and counting each history's order again
    # cost about 4% of R7's time for counts that only grow.
    world_counted = False
    for run in range(runs):
        made += 1
        probability = YIELD_PROBABILITIES[run % len(YIELD_PROBABILITIES)]
        history = run_program(
            target, program, forced_yields=probability > 0, seed=seed + run, yield_probability=probability
        )
        key = history_key(history)
        if key in judged:
            result, situations = judged[key]
        else:
            result = check(history, budget=budget)
            wanted = tally is not None and tally.reached is not None and result.verdict == "linearizable"
            world = tally.world if wanted and tally is not None and not world_counted else None
            situations = situations_reached(history, result.order, world) if wanted else set()
            world_counted = world_counted or world is not None
            judged[key] = (result, situations)
        if tally is not None:
            tally.histories += 1
            tally.calls += len(history.calls)
        if result.verdict == "unknown":
            if tally is not None:
                tally.unknown += 1
        elif result.verdict == "not_linearizable":
            failed += 1
            if first is None:
                first = (history, result)
            if stop_at_first_failure:
                break
        elif tally is not None and tally.reached is not None:
            tally.reached.update(situations)
    if first is None:
        return None
    return NotLinearizable(program, first[0], first[1], failed, made)


#: Data longer than this is also shrunk by halves (a wide program's, see :func:`_widen`).
HALVED_PAST = 8
#: A wide failing program's small-data version gets this many times the runs (see :func:`minimise`).
SHORT_DATA_RUNS = 4


def _without(actions: tuple[Action, ...], index: int) -> tuple[Action, ...]:
    return actions[:index] + actions[index + 1 :]


#: The bytes a reader sees as themselves in a counterexample: printable ASCII but the space.
VISIBLE = frozenset(range(0x21, 0x7F))


def visible_letters(world: World) -> bytes:
    """The letters a counterexample's data is made visible with (:func:`_made_visible`):
    the visible ones of the program letters (:func:`letters_of`), so that a target's
    declared alphabet is kept."""
    return bytes(b for b in letters_of(world) if b in VISIBLE)


def _made_visible(data: bytes, letters: bytes) -> bytes:
    """``data`` with every byte a reader cannot see as itself (a control, a byte
    past 0x7E, a space) replaced by one of ``letters``."""
    if not letters:
        return data
    return bytes(b if b in VISIBLE else letters[b % len(letters)] for b in data)


def _visible_splice(op: Splice, letters: bytes) -> Splice:
    """``op`` with its insert made visible; a splice that inserts and deletes
    nothing (a no-op on the bytes, drawn now and then) inserts one letter."""
    if not op.insert and not op.delete_length and letters:
        return replace(op, insert=letters[:1])
    return replace(op, insert=_made_visible(op.insert, letters))


def _smaller_actions(action: Action, letters: bytes = b"") -> Iterator[Action]:
    """Simpler versions of ``action``. An insert is first made of visible letters
    (``letters``; a splice that changes nothing gets one), and a pure insert
    (nothing deleted) is never cut to nothing: an R7 counterexample whose splices
    insert ``b''`` changes no byte a reader can see go wrong (issue 43)."""
    if isinstance(action, RollbackCall) and action.operation.steps > 1:
        yield RollbackCall(Rollback(action.operation.steps - 1))
    if isinstance(action, SpliceCall):
        op = action.operation
        shown = _visible_splice(op, letters)
        if shown != op:
            yield SpliceCall(shown)
        # A wide program's kilobytes are halved first: a byte at a time, the budget runs out.
        if len(op.insert) > HALVED_PAST:
            yield SpliceCall(replace(op, insert=op.insert[: len(op.insert) // 2]))
        if len(op.insert) > 1 or (op.insert and op.delete_length):
            yield SpliceCall(replace(op, insert=op.insert[:-1]))
        if op.delete_length > HALVED_PAST:
            yield SpliceCall(replace(op, delete_length=op.delete_length // 2))
        if op.delete_length:
            yield SpliceCall(replace(op, delete_length=op.delete_length - 1))
        if op.offset:
            yield SpliceCall(replace(op, offset=op.offset - 1))
    if isinstance(action, Observe) and action.what == "read":
        yield Observe("length")


def _short_data(program: Program) -> Program:
    """``program`` with every byte string cut to :data:`HALVED_PAST` bytes and
    every removal to two: the same calls, with a small-scope program's data."""

    def short(action: Action) -> Action:
        if not isinstance(action, SpliceCall):
            return action
        op = action.operation
        return SpliceCall(replace(op, delete_length=min(op.delete_length, 2), insert=op.insert[:HALVED_PAST]))

    return Program(
        program.initial[:HALVED_PAST],
        tuple(short(a) for a in program.prefix),
        tuple(tuple(short(a) for a in actions) for actions in program.threads),
    )


def _all_visible(program: Program, letters: bytes) -> Program:
    """``program`` with its starting buffer and every insert made visible (:func:`_made_visible`)."""

    def shown(action: Action) -> Action:
        if not isinstance(action, SpliceCall):
            return action
        return SpliceCall(_visible_splice(action.operation, letters))

    return Program(
        _made_visible(program.initial, letters),
        tuple(shown(a) for a in program.prefix),
        tuple(tuple(shown(a) for a in actions) for actions in program.threads),
    )


def shrink_candidates(program: Program, letters: bytes = b"") -> Iterator[Program]:
    """Smaller programs, biggest cuts first: whole threads, single actions, then
    simpler actions and a shorter starting buffer; with ``letters``, data made of
    visible letters is simpler than data of other bytes (:func:`_smaller_actions`)."""
    threads = program.threads
    for index in range(len(threads)):
        yield replace(program, threads=threads[:index] + threads[index + 1 :])
    # All the data visible at once, early: one candidate, where byte by byte would
    # wait behind every other cut and a shrinking budget spent in time can run out.
    if (shown := _all_visible(program, letters)) != program:
        yield shown
    for index in range(len(program.prefix)):
        yield replace(program, prefix=_without(program.prefix, index))
    for number, actions in enumerate(threads):
        for index in range(len(actions)):
            smaller = _without(actions, index)
            if smaller:
                yield replace(program, threads=threads[:number] + (smaller,) + threads[number + 1 :])
    for index, action in enumerate(program.prefix):
        for simpler in _smaller_actions(action, letters):
            yield replace(program, prefix=program.prefix[:index] + (simpler,) + program.prefix[index + 1 :])
    for number, actions in enumerate(threads):
        for index, action in enumerate(actions):
            for simpler in _smaller_actions(action, letters):
                changed = actions[:index] + (simpler,) + actions[index + 1 :]
                yield replace(program, threads=threads[:number] + (changed,) + threads[number + 1 :])
    if (visible_initial := _made_visible(program.initial, letters)) != program.initial:
        yield replace(program, initial=visible_initial)
    if len(program.initial) > HALVED_PAST:
        yield replace(program, initial=program.initial[: len(program.initial) // 2])
    if program.initial:
        yield replace(program, initial=program.initial[:-1])


def minimise(target: Target, failure: NotLinearizable, runs: int, *, seed: int) -> NotLinearizable:
    """Greedy minimisation of the *program*: take the first smaller candidate that
    still fails in some of its ``runs`` runs, and go on from it; stop when a whole
    round of candidates has none that fails, or the budget is spent.

    After an improvement the candidates of the smaller program are tried from
    the same position on (wrapping round to the start), not from the first:
    the cuts before it were just tried on a program one cut larger and did not
    fail, and starting over spent most of the budget trying them again. Each
    distinct candidate is run once per minimisation. A candidate with one
    thread left has no interleaving to vary, so one run judges it. A
    candidate's runs stop at its first failure.

    A wide program (:func:`_widen`) is first tried with a small program's data
    (:func:`_short_data`), in :data:`SHORT_DATA_RUNS` times as many runs: most
    failures do not need its kilobytes, a reader should not have to scroll
    past them, and a failure that shows in one run in twenty would otherwise
    keep them whenever that one candidate's runs happened not to fail. Then,
    as many runs again, the program with every byte made visible
    (:func:`_all_visible`), so that the counterexample shows text a reader can
    see go wrong."""
    best = failure
    tried = 0
    tried_programs: set[Program] = set()
    started = time.monotonic()
    position = 0
    short = _short_data(failure.program)
    if short != failure.program and short.is_valid():
        tried_programs.add(short)
        tried += 1
        found = run_many(target, short, runs * SHORT_DATA_RUNS, seed=seed + 104_729, stop_at_first_failure=True)
        best = found if found is not None else best
    letters = visible_letters(world_of(target))
    # The same for data a reader can see (issue 43): a failure that shows in one
    # run in eight is kept in its visible form only if its candidate gets the runs.
    shown = _all_visible(best.program, letters)
    if shown != best.program and shown.is_valid():
        tried_programs.add(shown)
        tried += 1
        found = run_many(target, shown, runs * SHORT_DATA_RUNS, seed=seed + 15_485_863, stop_at_first_failure=True)
        best = found if found is not None else best
    while True:
        candidates = list(shrink_candidates(best.program, letters))
        for offset in range(len(candidates)):
            index = (position + offset) % len(candidates)
            candidate = candidates[index]
            if tried >= SHRINK_CANDIDATES or time.monotonic() - started > SHRINK_SECONDS:
                return best
            if candidate in tried_programs or not candidate.is_valid():
                continue
            tried_programs.add(candidate)
            tried += 1
            candidate_runs = runs if len(candidate.threads) > 1 else 1
            found = run_many(target, candidate, candidate_runs, seed=seed + tried * 7919, stop_at_first_failure=True)
            if found is not None:
                best = found
                position = index
                break
        else:
            return best


def r7_beyond(world: World) -> dict[str, str]:
    """The dimensions R7 does not ask of ``world``'s runs beyond what the target
    declared out of it, each with why (:data:`BEYOND_R7`, and :data:`BEYOND_R7_TEXT`
    for a text target)."""
    declared = world.out_of_world()
    beyond = dict(BEYOND_R7)
    if world.text:
        beyond.update(BEYOND_R7_TEXT)
    limit = (
        f"with a buffer limit of {world.max_buffer} bytes, a run this long does not fit beside the other "
        f"inserts of a program whose calls may run in any order (up to {OTHER_INSERTS_AT_MOST} bytes)"
    )
    for threshold, removed, inserted, buffer in zip(SIZE_THRESHOLDS, REMOVED, INSERTED, BUFFER, strict=True):
        if not _fits(world, threshold + LONG_START_SLACK):
            beyond[removed.name] = beyond[buffer.name] = limit
        if not _fits(world, threshold + LONG_INSERT_SLACK):
            beyond[inserted.name] = limit
    if world.chunk is not None and not _fits(world, world.chunk + LONG_START_SLACK):
        beyond[BUFFER_PAST_CHUNK.name] = limit
    return {name: why for name, why in beyond.items() if name not in declared}


def _with_beyond(not_exercised: dict[str, str], beyond: dict[str, str]) -> dict[str, str]:
    """What the target declared out of its world and what is beyond R7, in the
    certificate's order of dimensions."""
    merged = {**not_exercised, **beyond}
    return {d.name: merged[d.name] for d in DIMENSIONS if d.name in merged}


def certify_linearizability(target: Target, profile: Profile, seed: int) -> PropertyResult:
    """Certify R7 on ``target``: draw programs, run each N times, check every history."""
    result = PropertyResult("R7", "passed", R7.title)
    missing = [c.value for c in (Capability.CORE, Capability.CONCURRENT) if not target.supports(c)]
    if missing:
        result.verdict = "not_assessed"
        result.reason = f"the target lacks the capability: {', '.join(missing)}"
        return result
    runs = RUNS_PER_PROGRAM.get(profile.name, 8)
    tally = _Tally(reached=Counter())
    # The world's dimensions are required like the situations, as in every family
    # (rollcert.stateful_tests.world), except those beyond R7's programs (r7_beyond).
    world = world_of(target)
    beyond = r7_beyond(world)
    dimensions = tuple(d for d in world.required() if d.name not in beyond)
    tally.world.chunk = world.chunk
    started = time.perf_counter()

    found: list[NotLinearizable] = []

    @given(programs(target))
    def one_program(program: Program) -> None:
        # A failure is kept, not raised: Hypothesis replays a failing example and,
        # since an interleaving does not repeat on demand, would call it flaky.
        # The remaining examples of the round return at once.
        if found:
            return
        tally.examples += 1
        failure = run_many(target, program, runs, seed=seed + tally.examples, tally=tally)
        if failure is not None:
            found.append(failure)

    test = profile.hypothesis_settings()(one_program)
    assert tally.reached is not None
    try:
        for round_number in range(profile.rounds):
            hypothesis_seed(seed + round_number * ROUND_SEED_STRIDE)(test)()
            if found:
                raise found[0]
            # At least two rounds, or PROGRAMS_FOR_A_PASS programs: an interleaving
            # bug shows in a few runs in a hundred, so a pass is worth a second
            # round's fresh programs when a round is small (quick 100, ci 300).
            reached_all = all(tally.reached[s.name] for s in R7.situations)
            enough = round_number >= 1 or tally.examples >= PROGRAMS_FOR_A_PASS
            if enough and reached_all and all(tally.world.reached[d.name] for d in dimensions):
                break
    except NotLinearizable as failure:
        minimal = minimise(target, failure, runs, seed=seed)
        # Count again on the minimal program, so "k of N" describes what is shown.
        # (If the recount happens not to fail, what the minimiser saw is shown.)
        recount = run_many(target, minimal.program, runs, seed=seed + 1) or minimal
        text = explain(target, minimal, recount.failed, recount.runs)
        result.verdict = "violated"
        result.reason = text
        result.counterexample = _counterexample(target, minimal, text, recount.failed, recount.runs)
    except HarnessError as error:
        result.verdict = "error"
        result.reason = f"the adapter or the SUT broke: {error}"
    except HypothesisException as error:
        result.verdict = "error"
        result.reason = f"the test harness failed: {type(error).__name__}: {error}"
    result.seconds = round(time.perf_counter() - started, 3)
    result.examples, result.steps = tally.examples, tally.calls
    result.coverage = {s.name: tally.reached[s.name] for s in R7.situations}
    result.scheduling_dependent = True  # the counts above depend on how the threads ran
    result.figures = {"histories": float(tally.histories), "histories_over_budget": float(tally.unknown)}
    result.world = world_report(world, tally.world, dimensions, chunk_matters=True)
    result.world["not_exercised"] = _with_beyond(result.world["not_exercised"], beyond)
    if result.verdict == "passed":
        result.missing_situations = [s.description for s in R7.situations if not tally.reached[s.name]]
        result.missing_situations += [f"{d.description} ({d.name})" for d in dimensions if not tally.world.reached[d.name]]
        if result.missing_situations:
            result.verdict = "unknown"
            situations_missed = [s.description for s in R7.situations if not tally.reached[s.name]]
            dimensions_missed = [(d.name, d.description) for d in dimensions if not tally.world.reached[d.name]]
            result.reason = unknown_reason("R7", situations_missed, dimensions_missed, {})
        elif tally.unknown:
            result.verdict = "unknown"
            result.reason = (
                f"{tally.unknown} of {tally.histories} histories exhausted the checker's budget "
                f"({DEFAULT_BUDGET} nodes): they were not decided"
            )
    return result


# -- counterexamples for people ---------------------------------------------------------------------

#: Columns per event (a call or a return) in the text lanes: a bar spans at
#: least its own two events, six columns, room for ``[#12]``.
TEXT_COLUMNS_PER_EVENT = 3


def _history_calls(history: History) -> tuple[HistoryCall, ...]:
    start = min((c.called for c in history.calls), default=0)
    return tuple(
        HistoryCall(
            c.id, c.thread, round((c.called - start) / 1000, 1),
            None if c.returned is None else round((c.returned - start) / 1000, 1),
            c.action.describe(), c.describe_result(),
        )
        for c in history.calls
    )


@dataclass(frozen=True)
class Lane:
    """One thread's calls on the axis of events: per call the rank of its call
    and the rank of its return (the last rank when it never returned)."""

    thread: str
    bars: tuple[tuple[HistoryCall, int, int], ...]


def lane_layout(calls: Sequence[HistoryCall]) -> tuple[tuple[Lane, ...], int]:
    """The lanes of a history, and how many events the axis has.

    The axis is the order of the events — each call and each return, sorted by
    time, a call before a return at the same instant, as the checker reads them
    — not their durations: linearizability depends only on which call returned
    before which other was called, and a history spans microseconds of prefix
    and milliseconds of threads, which a time scale crushes into unreadable
    slivers. On this axis every bar is at least two events wide, two bars
    overlap exactly when the calls did, and the drawing fits any width."""
    if not calls:
        return (), 0
    events = sorted(
        [(c.called, 0, c.id) for c in calls] + [(c.returned, 1, c.id) for c in calls if c.returned is not None]
    )
    rank = {(kind, call_id): n for n, (_, kind, call_id) in enumerate(events)}
    last = len(events) - 1
    lanes = tuple(
        Lane(thread, tuple(
            (c, rank[(0, c.id)], rank[(1, c.id)] if c.returned is not None else last)
            for c in calls if c.thread == thread
        ))
        for thread in dict.fromkeys(c.thread for c in calls)
    )
    return lanes, len(events)


def lanes(calls: Sequence[HistoryCall], per_event: int = TEXT_COLUMNS_PER_EVENT) -> list[str]:
    """One lane per thread: each call a bar from its call (``[``) to its return
    (``]``; ``>`` running to the right edge: the outcome is unknown), labelled
    with its number, on the axis of events (:func:`lane_layout`)."""
    layout, events = lane_layout(calls)
    if not layout:
        return []
    name_width = max(len(lane.thread) for lane in layout)
    rows = []
    for lane in layout:
        bar = [" "] * (events * per_event)
        for call, first, last in lane.bars:
            start, end = first * per_event, last * per_event + per_event - 1
            inside = end - start - 1
            label = f"#{call.id}"[:inside]
            bar[start : end + 1] = ["["] + list(label) + ["="] * (inside - len(label)) + [
                "]" if call.returned is not None else ">"
            ]
        rows.append(f"    {lane.thread:<{name_width}} |{''.join(bar)}|")
    return rows


def timeline(history: History) -> list[str]:
    """The history's lanes (see :func:`lanes`), one row per thread."""
    return lanes(_history_calls(history))


def history_text(target_name: str, history: ConcurrentHistory) -> str:
    """An R7 counterexample for people, from its record alone: the program, the
    history as lanes with a line per call, the linearisation attempt that went
    furthest, and why it stops — what the model answers the next call there, and
    at the other places real time allows in that order."""
    calls = {call.id: call for call in history.calls}

    def named(call_id: int) -> str:
        call = calls[call_id]
        return f"{call.thread} #{call.id} {call.action} {call.result}"

    label_width = max((len(f"{c.action} {c.result}") for c in history.calls), default=0)
    thread_width = max((len(c.thread) for c in history.calls), default=0)
    lines = [
        f"R7 on {target_name}: no sequential order explains this history "
        f"(the program below failed {history.failed} of {history.runs} runs).",
        "  Program (the prefix runs first, then the threads at once, on one shared buffer):",
        *(f"    {line}" for line in history.program),
        "  Timeline, one lane per thread ([ called, ] returned, > never returned; left to right in the order "
        "things happened, the times are in the list):",
        *lanes(history.calls),
        *(
            f"    #{c.id:<3} {c.thread:<{thread_width}} {f'{c.action} {c.result}':<{label_width}}  "
            f"{c.called:9.1f} – " + (f"{c.returned:.1f} µs" if c.returned is not None else "? (no reply)")
            for c in history.calls
        ),
        f"  Longest sequential order found ({len(history.order)} of {len(history.calls)} calls; it respects real "
        "time, and each call gives what was observed):",
    ]
    for number, placed in enumerate(history.order, 1):
        lines.append(
            f"    {number}. {named(placed.call)}   -> buffer {placed.buffer!r}, depth {placed.depth}, "
            f"revision {placed.revision}"
        )
    lines.append("  Could not be placed next (every call that may come next fails):")
    for stuck in history.stuck:
        allowed = stuck.allowed if stuck.allowed == "cannot run here" else f"the model would {stuck.allowed}"
        lines.append(f"    {named(stuck.call)}, but here {allowed}")
        for other in stuck.elsewhere:
            lines.append(f"      placed {other.replace(': ', ', the model would ', 1)}")
    return "\n".join(lines)


def history_why(history: ConcurrentHistory) -> str:
    """Why the linearisation attempt failed, in one or two sentences."""
    if not history.stuck:
        return "No order of the calls that respects real time replays through the model with the results observed."
    calls = {call.id: call for call in history.calls}
    parts = []
    for stuck in history.stuck:
        call = calls[stuck.call]
        here = "cannot run there" if stuck.allowed == "cannot run here" else f"would {stuck.allowed} there"
        others = "; ".join(stuck.elsewhere)
        parts.append(
            f"{call.thread} #{call.id} {call.action} {call.result}: after the longest order the model {here}"
            + (f", and at the other places real time allows ({others})" if others else "")
        )
    return (
        "Every order of the calls that respects real time was tried, and none replays through the model with "
        f"the results observed. {'; '.join(parts)}. So a caller got a result no order of whole operations "
        "gives: it saw, or acted on, the buffer between two steps of another thread's call."
    )


def explain(target: Target, failure: NotLinearizable, failed: int, runs: int) -> str:
    history = concurrent_history(failure, failed, runs)
    return history_text(target.name, history) + "\n  Why: " + history_why(history)


def _elsewhere(history: History, result: CheckResult, stuck: Call) -> tuple[str, ...]:
    """What the model would answer ``stuck`` at each other place of the longest
    order that real time allows (after every call of the order that returned
    before it was called, before every one called after it returned)."""
    placed = replay_order(history, result.order)
    answers: list[str] = []
    for position in range(len(placed)):
        before_it = placed[:position]
        after_it = placed[position:]
        if any(p.call.returned is not None and p.call.returned < stuck.called for p in after_it):
            continue
        if stuck.returned is not None and any(stuck.returned < p.call.called for p in before_it):
            continue
        prediction = predict(placed[position].before, stuck.action)
        where = f"before {placed[position].call.thread} #{placed[position].call.id} {placed[position].call.action.describe()}"
        answer = "cannot run" if prediction is None else prediction.describe()
        answers.append(f"{where}: {answer}")
    return tuple(answers)


def concurrent_history(failure: NotLinearizable, failed: int, runs: int) -> ConcurrentHistory:
    """The counterexample as data a certificate can carry: the program, the
    history (times in µs from the first call), the longest order with the model
    state after each call, and each stuck call with what the model allowed."""
    history, result = failure.history, failure.result
    calls = _history_calls(history)
    order = tuple(
        OrderedCall(p.call.id, p.prediction.after.model.current, p.prediction.after.model.depth,
                    p.prediction.after.model.revision)
        for p in replay_order(history, result.order)
    )
    stuck = tuple(
        StuckCall(
            s.call.id,
            "cannot run here" if s.allowed is None else s.allowed.describe(),
            _elsewhere(history, result, s.call),
        )
        for s in result.stuck
    )
    return ConcurrentHistory(tuple(failure.program.describe()), calls, order, stuck, failed, runs)


def _counterexample(target: Target, failure: NotLinearizable, text: str, failed: int = 1, runs: int = 1) -> Counterexample:
    """The whole history (:class:`ConcurrentHistory`), and the longest sequential
    order's model operations as judged steps (all as the model says: each alone
    replays fine, the failure needs the concurrent timeline)."""
    from rollcert.stateful_tests.family import NO_SEQUENTIAL_ORDER
    from rollcert.stateful_tests.family import Observed
    from rollcert.stateful_tests.family import StepRecord

    steps: list[StepRecord] = []
    for placed in replay_order(failure.history, failure.result.order):
        action = _model_action(placed)
        if isinstance(action, str):
            continue
        after = placed.prediction.after.model
        observed = Observed(placed.prediction.error, after.current, after.depth, after.revision)
        steps.append(StepRecord(len(steps) + 1, action, placed.before.model.current, observed, observed, True))
    return Counterexample(
        "R7", target.name, failure.history.initial, None, "reject", tuple(steps), text,
        history=concurrent_history(failure, failed, runs), broken=("R7",), harm=NO_SEQUENTIAL_ORDER,
    )


class ConcurrentPrograms(ProgramFamily):
    """R7's row of the family table: concurrent programs over one shared buffer."""

    name = "programs"
    property_ids = ("R7",)

    def required_capabilities(self, property_id: str) -> frozenset[Capability]:
        return frozenset({Capability.CORE, Capability.CONCURRENT})

    def certify(self, target: Target, property_id: str, profile: Profile, seed: int) -> PropertyResult:
        return certify_linearizability(target, profile, seed)


PROGRAMS = ConcurrentPrograms()
