"""What a certification run decides, as plain records: per property a verdict
(with its coverage, figures and counterexample), and the certificate that holds
them. Kept apart from :mod:`rollcert.stateful_tests.certify`, which produces
them, so that every family's runner (the concurrent one included) and every
renderer can use them without importing the machinery.

Verdicts (SPEC §6): ``passed`` — no violation and every situation the property
names was reached; ``violated`` — a shrunk counterexample; ``unknown`` — no
violation, but the run never reached some situation (or a budget ran out), so it
proves nothing; ``not_assessed`` — the target lacks a capability the property
needs; ``error`` — the adapter, the SUT's process or the harness broke.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import harm_signature
from rollcert.stateful_tests.world import reproducible_world
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Target

VERDICTS = ("passed", "violated", "unknown", "not_assessed", "error")


@dataclass(frozen=True)
class HistoryCall:
    """One call of an R7 history as a person reads it: the thread, its interval
    in microseconds from the first call (``returned`` is ``None`` when the
    outcome is unknown), the call and what came back, in words."""

    id: int
    thread: str
    called: float
    returned: float | None
    action: str
    result: str


@dataclass(frozen=True)
class OrderedCall:
    """One call of the longest sequential order the checker built, with the
    model's state after it."""

    call: int
    buffer: bytes
    depth: int
    revision: int


@dataclass(frozen=True)
class StuckCall:
    """A call that could have come next after the longest order and did not fit:
    what the model answers there, and what it would answer at each other place
    real time allows in that order (``elsewhere``: "before #3: return 9")."""

    call: int
    allowed: str
    elsewhere: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConcurrentHistory:
    """An R7 counterexample in full: the program, the history one of its runs
    recorded, and the linearisation attempt that failed — everything ``explain``
    and ``html`` draw, so a certificate holds it and nothing is run again (an
    interleaving does not repeat on demand)."""

    program: tuple[str, ...]
    calls: tuple[HistoryCall, ...]
    order: tuple[OrderedCall, ...]
    stuck: tuple[StuckCall, ...]
    failed: int
    runs: int

    def call(self, call_id: int) -> HistoryCall:
        for call in self.calls:
            if call.id == call_id:
                return call
        raise KeyError(call_id)



@dataclass(frozen=True)
class Counterexample:
    """A minimal failing trace: the starting config, the steps, and why it fails."""

    property_id: str
    target: str
    initial: bytes
    capacity: int | None
    policy: str
    steps: tuple[StepRecord, ...]
    explanation: str
    #: The run used a durable journal (the R5 machine); replay must too.
    durable: bool = False
    #: The property family whose trace this is (see stateful_tests.families).
    family: str = "rollback"
    #: The durable journal's mode (R5): "per_operation" or "batched"; replay must use it too.
    durability: str = "per_operation"
    #: R7: the concurrent program, its observed history and the failed
    #: linearisation (``steps`` then hold the longest order's operations only).
    history: ConcurrentHistory | None = None
    #: The properties whose own clause the failing step broke (``("R0",)``: none
    #: in particular). ``property_id`` is the machine that found it.
    broken: tuple[str, ...] = ()
    #: What the failing step did to its caller (``family.HARMS``).
    harm: str = ""
    #: The revision the buffer was asked to start at (``BufferConfig.start_revision``).
    start_revision: int = 0
    #: The chunk size the buffer was asked to keep its storage in (``BufferConfig.chunk_bytes``).
    chunk_bytes: int | None = None

    @property
    def signature(self) -> str:
        """The failing step's harm signature (``family.HarmSignature``); an R7
        history's harm alone. With :attr:`broken`, what tells findings apart."""
        if self.history is not None or not self.steps:
            return self.harm
        return str(harm_signature(self.steps[-1]))

    def finding_key(self) -> tuple[tuple[str, ...], str]:
        """Two counterexamples with one key are one finding (issue 43): the rules
        broken and the signature's coarse part (``HarmSignature.coarse``)."""
        if self.history is not None or not self.steps:
            return (self.broken or (self.property_id,), self.harm)
        return (self.broken or (self.property_id,), harm_signature(self.steps[-1], classes=False).coarse())

    def rule(self, reported: str | None = None) -> str:
        """The property whose rule a reader is shown as broken: ``reported`` if
        the failing step broke it, else the first rule it broke (SPEC §6a: never
        the machine's rule, unless that is the one that broke)."""
        broken = self.broken or (self.property_id,)
        for wanted in (reported, self.property_id):
            if wanted in broken:
                return wanted
        return broken[0]

    def config(self) -> BufferConfig:
        """The buffer configuration the counterexample starts from."""
        return BufferConfig(
            self.initial,
            self.capacity,
            self.policy,  # type: ignore[arg-type]
            self.durable,
            self.durability,  # type: ignore[arg-type]
            self.start_revision,
            self.chunk_bytes,
        )


@dataclass
class PropertyResult:
    property_id: str
    verdict: str
    title: str = ""
    examples: int = 0
    steps: int = 0
    seconds: float = 0.0
    coverage: dict[str, int] = field(default_factory=dict)
    missing_situations: list[str] = field(default_factory=list)
    counterexample: Counterexample | None = None
    reason: str = ""
    #: Measured figures that are not verdicts, e.g. the diff machines' precision
    #: (the share of rule-accepted diffs the SUT accepted; S1-S3).
    figures: dict[str, float] = field(default_factory=dict)
    #: Whether the coverage counts depend on how threads happened to interleave
    #: (R7 runs each program on real threads): two runs of one seed count
    #: different numbers of overlaps, so a reproducible certificate keeps only
    #: whether each situation was reached.
    scheduling_dependent: bool = False
    #: Findings of other rules this property's machine met while exploring, by
    #: the property they break (minimised for it); ``certify`` reports each there.
    found_elsewhere: dict[str, Counterexample] = field(default_factory=dict)
    #: Every distinct finding reported under this property (issue 43), the
    #: counterexample first: each minimised on its own, distinct by the rules it
    #: broke and its harm signature (:meth:`Counterexample.finding_key`).
    findings: list[Counterexample] = field(default_factory=list)
    #: The machine whose exploration found this verdict's counterexample, when
    #: it is not this property's own ("found while exploring Rk").
    found_by: str = ""
    #: The world the run reached (``rollcert.stateful_tests.world.world_report``):
    #: the bytes drawn from, the largest buffer, insert, delete and depth, and per
    #: coverage dimension its count; empty for a run that explores no data (R7).
    world: dict[str, Any] = field(default_factory=dict)
    #: The reference model's branches this property's run must reach, and those it
    #: reached, by name (``rollcert.stateful_tests.model_coverage``); empty if not measured.
    model_branches: dict[str, Any] = field(default_factory=dict)

    def progress_summary(self) -> str:
        """A few words after the verdict on the live display (one line)."""
        if self.verdict == "violated" and self.counterexample is not None:
            return f"counterexample of {len(self.counterexample.steps)} steps"
        if self.verdict in ("passed", "violated"):
            return ""
        return self.reason.splitlines()[0] if self.reason else ""

    def make_reproducible(self) -> None:
        """Drop what differs between two runs of the same target, profile and seed:
        the wall-clock seconds, and scheduling-dependent counts (kept as reached, 1,
        or not, 0). Verdicts, examples, steps and counterexamples are untouched."""
        self.seconds = 0.0
        if self.scheduling_dependent:
            self.coverage = {name: min(count, 1) for name, count in self.coverage.items()}
            # R7 counts its world on the order the checker found, which follows
            # the interleaving too (two serial runs of seed 0: high_byte 120 and 122).
            self.world = reproducible_world(self.world)


@dataclass
class CertificateData:
    target: Target
    profile: str
    seed: int
    results: dict[str, PropertyResult]
    #: The bounded exhaustive search's result, when one was asked for
    #: (``rollcert.stateful_tests.exhaustive.ExhaustiveResult``).
    exhaustive: Any = None
    #: What the corpus gave, when one was used (``rollcert.stateful_tests.corpus.CorpusSummary``).
    corpus: Any = None
    #: Where the seed came from when it was not given (``--seed auto``): recorded, so a rotated seed can be rerun.
    seed_source: str = ""
    #: What stopped the run before it finished (``"SIGTERM"``, ``"SIGINT"``), or ``""``:
    #: its certificate holds the verdicts reached, the rest ``unknown``, and is never green.
    interrupted: str = ""

    @property
    def exit_status(self) -> int:
        verdicts = {r.verdict for r in self.results.values()}
        if self.interrupted:
            verdicts.add("unknown")  # a run stopped short decided less than it was asked to
        if self.exhaustive is not None:
            verdicts.add(self.exhaustive.verdict)
        if "violated" in verdicts:
            return 1
        if verdicts & {"unknown", "error"}:
            return 2
        if verdicts <= {"not_assessed"}:
            return 2  # nothing was exercised: a gate must not go green on it
        return 0
