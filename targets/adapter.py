"""The adapter protocol: how rollcert drives a system under test (SUT).

This is the one place that says what an implementation must offer to be
certified. Only ``read``, ``splice`` and ``rollback`` are mandatory (capability
``core``): an editor widget's undo stack or a CRDT's undo manager can be
certified on what it has. Every other method belongs to a capability; a
property whose capability is missing is reported *not assessed*, never
*passed*, and the machines never call a method the SUT did not declare.

A SUT reports failure by raising the documented errors of
:mod:`rollcert.model.errors` (or ``ValueError``/``TypeError`` for bad arguments). Any
other exception is an undocumented outcome and is judged like a wrong answer.
A :class:`HarnessError` is different: the adapter itself broke (a protocol
violation, a dead subprocess, a missing method) and the certificate says
``error``, not ``violated``.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from enum import StrEnum
from typing import Any
from typing import ClassVar
from typing import Protocol
from typing import runtime_checkable

from rollcert.model.contract import check_splice_arguments
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import diff_step
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import CrashDuring
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import Splice
from rollcert.model.operations import ToolWrite
from rollcert.model.reference import DurabilityMode
from rollcert.model.reference import ModelState
from rollcert.model.reference import Policy
from rollcert.model.reference import step


class Capability(StrEnum):
    """What a SUT can be driven on. The value is the wire name."""

    CORE = "core"  # read, splice, rollback
    DEPTH = "depth"  # depth(): number of live records
    REVISIONS = "revisions"  # revision(): grows by one per mutation, never reused
    CHECKPOINTS = "checkpoints"  # checkpoint(), rollback_to(token)
    JOURNAL_FAULTS = "journal_faults"  # arm_journal_fault(): the next append fails
    OUT_OF_LOG_WRITES = "out_of_log_writes"  # write_out_of_log(): bypass the journal
    ADOPT = "adopt"  # adopt_current(): the new horizon after a divergence
    BOUNDED = "bounded"  # honours BufferConfig.capacity and .policy
    DIFFS = "diffs"  # snapshot / diff / apply (S1-S3)
    DURABILITY = "durability"  # crash and recover (R5)
    #: arm_disk_fault(fault): the durable journal's disk fails a write, a sync
    #: or the cut-back after one (R1, R5); reopen(): a new process, no crash.
    DISK_FAULTS = "disk_faults"
    #: The SUT may be called from several threads at once (R7); it also offers
    #: length(), an observation that must be as atomic as read().
    CONCURRENT = "concurrent"


class HarnessError(Exception):
    """The adapter or the SUT's process broke; not a verdict on the rules."""


class UsageError(Exception):
    """A mistake of the person running rollcert, not a verdict: a bad option, an
    unreadable trace, an unwritable output path. Every subcommand reports it as
    one line on stderr and exits 3; it is the only usage-error type."""


class TargetError(UsageError):
    """The TARGET argument names nothing certifiable (it does not import, does
    not build, or is not a Target); the message says how to mend it."""


class NotAssessable(Exception):
    """What the target declares leaves a property nothing to exercise (for example
    an alphabet without the distinct letters the diff machine's writers need).
    The property is *not assessed*, saying why: no fault of the target, and never
    a pass."""


class CapabilityMissing(HarnessError):
    """A method of a capability the SUT did not declare was called."""


class CallTimeout(BaseException):
    """Raised into a call of an in-process target that overran the call timeout
    (``rollcert certify --call-timeout``). A ``BaseException``, so that a target's
    ``except Exception`` does not swallow it; the judge turns it into a
    :class:`HarnessError` naming the call."""


#: How much of an exception's message a verdict or a step quotes: a target's
#: message may be megabytes long, and the certificate holds it once per step.
MESSAGE_LIMIT = 500


def exact_bytes(value: object, what: str) -> bytes:
    """``value`` as plain ``bytes`` whose comparisons rollcert can trust.

    A target may answer with a ``bytes`` subclass whose ``__eq__`` always says
    True (or whose ``__bytes__``, ``__len__`` or ``__getitem__`` lie); compared as
    it is, a wrong buffer would equal the model's. The copy is made with
    ``bytes``'s own slicing, which reads the stored bytes and calls none of the
    subclass's methods. Anything not ``bytes`` is the adapter's fault."""
    if type(value) is bytes:
        return value
    if isinstance(value, bytes):
        return bytes.__getitem__(value, slice(None))
    raise HarnessError(f"{what} returned {type(value).__name__}, not bytes")


def visible(text: str) -> str:
    """``text`` with every character that could steer a terminal or hide what a
    reader sees written as an escape: C0 and C1 controls and DEL (an ESC starts a
    sequence that can clear the screen or recolour a verdict), and format
    characters (a right-to-left override reorders the rest of the line). A
    target's words reach the user's terminal and certificates through here.
    Uses ``str``'s own methods: the text may be a subclass the target made."""
    if str.isprintable(text):
        return str(text)
    return "".join(
        character if str.isprintable(character) or character == " " else repr(character)[1:-1]
        for character in str.__iter__(text)
    )


#: The largest magnitude a depth or revision may have, as on the wire (protocol.MAX_INTEGER_DIGITS):
#: far beyond any real count, and Python refuses to print an int of more than 4300 digits, so a
#: larger one could not even be shown in a counterexample.
INTEGER_BOUND = 10**100


def observed_int(name: str, value: object) -> int:
    """``value`` as an observation of ``name()``: a plain ``int`` (not a bool, not a
    subclass with its own ``==``) of at most 100 digits, or the adapter's fault. The
    one way a count a target reports enters a comparison (the judge, R7)."""
    if type(value) is not int:
        raise HarnessError(f"{name}() returned {type(value).__name__}, not int")
    if not -INTEGER_BOUND < value < INTEGER_BOUND:
        raise HarnessError(f"{name}() returned an integer of about {int(value.bit_length() * 0.30103) + 1} digits")
    return value


def exception_message(error: BaseException, limit: int = MESSAGE_LIMIT) -> str:
    """An exception's message on one line, at most ``limit`` characters (and "...").
    A target's ``__str__`` may raise or run to megabytes; neither may turn its
    answer into a crash of rollcert or flood a certificate."""
    try:
        text = str(error)
    except KeyboardInterrupt:
        raise
    except BaseException as broken:  # the message is the target's code too
        return f"<its __str__ raised {type(broken).__name__}>"
    if not isinstance(text, str):
        return ""
    # str's own methods: a str subclass the target returned may override them
    text = visible(" ".join(str.split(str.__getitem__(text, slice(0, limit + 1)))))
    return text[:limit] + "..." if len(text) > limit else text


def describe_exception(error: BaseException, limit: int = MESSAGE_LIMIT) -> str:
    """One bounded line naming an exception a target raised: its type and the
    start of its message (see :func:`exception_message`)."""
    text = exception_message(error, limit)
    kind = visible(str.__getitem__(type(error).__name__, slice(0, limit)))  # the class is the target's too
    return f"{kind}: {text}" if text else kind


@dataclass(frozen=True)
class BufferConfig:
    """How to build a fresh buffer for one test case."""

    initial: bytes = b""
    capacity: int | None = None
    policy: Policy = "reject"
    #: Journal to durable storage (the R5 machine asks for it); a SUT whose
    #: journal is always durable may ignore it.
    durable: bool = False
    #: When a durable journal syncs (R5): "per_operation" (every operation
    #: before it returns) or "batched" (on flush(), and whenever the SUT likes;
    #: the model relies on flush() alone). Only meaningful with ``durable``.
    durability: DurabilityMode = "per_operation"
    #: The revision the fresh buffer starts at, as if that many mutations had
    #: happened before (asked only of a target with ``Target.starts_at_revision``;
    #: the judge counts every revision from the one the buffer first reports, so
    #: a factory that ignores it is judged as fairly). How a run reaches revisions
    #: past 2^8, 2^16 and 2^32 without that many steps (issue 42).
    start_revision: int = 0
    #: The chunk size, in bytes, to build the buffer's storage with; ``None``: the
    #: target's own (asked only of a target with ``Target.sets_chunk_bytes``). How
    #: a run reaches storage paths that need many chunks — a second-level index,
    #: its regrouping — on buffers of a few hundred bytes (issue 42).
    chunk_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.chunk_bytes is not None and (type(self.chunk_bytes) is not int or self.chunk_bytes < 1):
            raise ValueError(f"chunk_bytes must be a whole number of bytes, at least 1, or None; got {self.chunk_bytes!r}")

    def journal_phrase(self) -> str:
        """How a counterexample names the journal it ran on: nothing for an
        in-memory one, the durability mode when it is not the default (and the
        start revision and chunk size, where the run asked for them)."""
        revision = f", started at revision {self.start_revision}" if self.start_revision else ""
        revision += f", in chunks of {self.chunk_bytes} bytes" if self.chunk_bytes is not None else ""
        if not self.durable:
            return revision
        return ", on a durable journal" + (" (batched)" if self.durability == "batched" else "") + revision


#: A diff's hunks as the machines pass them: ``(start, end, replacement)`` in the snapshot.
HunkTriples = Sequence[tuple[int, int, bytes]]
#: A diff's declared read regions as the machines pass them: ``(start, end)`` in the snapshot.
ReadPairs = Sequence[tuple[int, int]]


@runtime_checkable
class SystemUnderTest(Protocol):
    """One live buffer of the implementation, as the machines see it."""

    def read(self) -> bytes: ...
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None: ...
    def rollback(self, steps: int) -> None: ...
    def depth(self) -> int: ...
    def revision(self) -> int: ...
    def checkpoint(self) -> object: ...
    def rollback_to(self, token: object) -> None: ...
    def arm_journal_fault(self) -> None: ...
    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None: ...
    def adopt_current(self) -> None: ...
    # -- capability DURABILITY (R5) -------------------------------------------------
    def compact(self, keep: int) -> None: ...
    def run_with_crash(self, action: Callable[[], None], io_event: int, lost: int) -> bool:
        """Arm a crash at the ``io_event``-th I/O call (losing the last ``lost``
        unsynced bytes), run ``action``, then crash
        (if it has not happened) and recover. True if the crash interrupted the
        action. ``action`` catches ``Exception`` itself, so the adapter's crash
        signal must be a ``BaseException`` to reach the adapter."""
        ...
    def restart(self) -> None:
        """Crash while idle and recover."""
        ...
    def corrupt_committed_record(self, damage: str) -> bool:
        """Do ``damage`` (one of ``model.operations.DAMAGES``) to the committed journal
        at the newest record that is not the last; False if there is none to damage."""
        ...
    def repair_corruption(self) -> None:
        """Undo the flip and recover again (after recovery rightly refused)."""
        ...
    def flush(self) -> None:
        """Make every operation so far durable (batched mode; nothing to do otherwise)."""
        ...
    # -- capability DISK_FAULTS (R1, R5) ------------------------------------------------
    def arm_disk_fault(self, fault: str) -> None:
        """Make the disk fail at the next splice's record: ``fault`` is one of
        ``model.operations.DISK_FAULTS`` (its write or its sync fails; with
        ``..._then_cut_back`` the truncation that should remove it fails too)."""
        ...
    def reopen(self) -> None:
        """End the process without a crash (what was written stays in the
        file, synced or not) and open the journal again."""
        ...
    # -- capability DIFFS (S1-S3): self-authored diffs --------------------------------
    def snapshot(self) -> object:
        """An opaque token for the current state, to author diffs against."""
        ...
    def apply_diff(self, snapshot: object, mode: str, hunks: HunkTriples, reads: ReadPairs) -> object:
        """Author a diff against ``snapshot`` (``mode`` "positional" or "content";
        hunks ``(start, end, replacement)`` and read regions ``(start, end)`` in
        the snapshot's coordinates) and apply it to the live base; return an
        opaque handle on the applied diff, or raise ``StaleBaseError``."""
        ...
    def rollback_diff(self, applied: object) -> None:
        """Roll back to the live base the diff ``applied`` was applied to."""
        ...
    # -- end of capability DIFFS ------------------------------------------------------
    # -- capability CONCURRENT (R7) -----------------------------------------------------
    def length(self) -> int:
        """The buffer's length in bytes, observed on its own (not through read())."""
        ...
    def close(self) -> None: ...


class UnsupportedOperations:
    """Mixin for adapters: every optional method raises :class:`CapabilityMissing`.

    An adapter inherits from it and overrides what its capabilities cover.
    """

    def depth(self) -> int:
        raise CapabilityMissing("depth")

    def revision(self) -> int:
        raise CapabilityMissing("revisions")

    def checkpoint(self) -> object:
        raise CapabilityMissing("checkpoints")

    def rollback_to(self, token: object) -> None:
        raise CapabilityMissing("checkpoints")

    def arm_journal_fault(self) -> None:
        raise CapabilityMissing("journal_faults")

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        raise CapabilityMissing("out_of_log_writes")

    def adopt_current(self) -> None:
        raise CapabilityMissing("adopt")

    def compact(self, keep: int) -> None:
        raise CapabilityMissing("durability")

    def run_with_crash(self, action: Callable[[], None], io_event: int, lost: int) -> bool:
        raise CapabilityMissing("durability")

    def restart(self) -> None:
        raise CapabilityMissing("durability")

    def corrupt_committed_record(self, damage: str) -> bool:
        raise CapabilityMissing("durability")

    def repair_corruption(self) -> None:
        raise CapabilityMissing("durability")

    def arm_disk_fault(self, fault: str) -> None:
        raise CapabilityMissing("disk_faults")

    def reopen(self) -> None:
        raise CapabilityMissing("disk_faults")

    def flush(self) -> None:
        raise CapabilityMissing("durability")

    # -- capability DIFFS (S1-S3) ------------------------------------------------------
    def snapshot(self) -> object:
        raise CapabilityMissing("diffs")

    def apply_diff(self, snapshot: object, mode: str, hunks: HunkTriples, reads: ReadPairs) -> object:
        raise CapabilityMissing("diffs")

    def rollback_diff(self, applied: object) -> None:
        raise CapabilityMissing("diffs")

    # -- end of capability DIFFS --------------------------------------------------------

    def length(self) -> int:
        raise CapabilityMissing("concurrent")

    def close(self) -> None:
        return None


SutFactory = Callable[[BufferConfig], SystemUnderTest]


@dataclass(frozen=True)
class HistoryBound:
    """A real undo history's bound: it keeps at most ``BufferConfig.capacity``
    records and, when full, follows one ``policy`` (``"reject"`` or
    ``"evict_oldest"``), not whichever the machines ask for.

    Why: ``Capability.BOUNDED`` alone promises both policies, and a package's
    undo stack has one (textual's ``deque(maxlen=max_checkpoints)`` evicts the
    oldest), so R6 could never be assessed on a real package. A target that
    declares a bound gets bounded buffers with its own policy only, and R6
    asks only for the situations that policy can reach. The factory builds the
    history with the configured capacity (textual: ``TextArea(max_checkpoints=N)``).
    """

    policy: Policy
    #: What the bound is in the package, for the certificate's notes.
    description: str = ""

    #: The R6 situations only a journal with this policy can reach.
    POLICY_SITUATIONS: ClassVar[dict[str, frozenset[str]]] = {
        "reject": frozenset({"refused_full"}),
        "evict_oldest": frozenset({"eviction", "rollback_to_horizon"}),
    }

    def __post_init__(self) -> None:
        if self.policy not in self.POLICY_SITUATIONS:
            raise ValueError(f"a history bound's policy is one of {', '.join(self.POLICY_SITUATIONS)}, got {self.policy!r}")

    def unreachable_situations(self) -> frozenset[str]:
        """The other policies' situations: a run on this history cannot reach them."""
        return frozenset().union(*(names for policy, names in self.POLICY_SITUATIONS.items() if policy != self.policy))


@dataclass(frozen=True)
class KnownFinding:
    """A violation a target's plain certificate already reports, named so that a
    *focused* registration of the same adapter can set it aside.

    Several findings of one package compete for the shortest counterexample:
    "undo on an empty history does nothing" is one step long, so every property
    would report it and nothing behind it. A focused target lists findings in
    ``Target.set_aside``; the machines skip the steps they cover and shrinking
    never brings them back, so the run reaches what lies behind. Its
    certificate names what was set aside; the plain target still reports it.
    """

    name: str
    description: str
    #: Whether ``operation``, from the model state ``state``, would trigger the
    #: finding. Every family's machines ask (the rollback family with a
    #: ``ModelState``, the diff family with a ``DiffModelState``), so a finding
    #: checks the kinds it is about and answers False to the rest.
    applies: Callable[[Any, Any], bool]
    #: World dimensions (names of ``rollcert.stateful_tests.world.DIMENSIONS``)
    #: that setting this finding aside puts out of reach: a history capped at 50
    #: batches, once its deeper edits are skipped, never gets past depth 64. A
    #: focused certificate lists them as not exercised, naming this finding,
    #: instead of ending ``unknown`` for a state it chose not to enter.
    unreachable: tuple[str, ...] = ()


@dataclass(frozen=True)
class SizeLimits:
    """The largest buffer and the largest insert a target takes (``None``: no limit).

    A target with limits may refuse anything bigger with ``ValueError`` (protocol
    version 2 declares them at the handshake), and such a refusal breaks no rule.
    Judging the machines' bigger operations against the model would call it a
    violation, so the machines do not ask them: an operation whose insert is
    over the insert limit, or whose result (as the model predicts it) is over the
    buffer limit, is not taken, as a finding set aside is not; an initial buffer
    over the buffer limit is cut to it. What was not asked is recorded in the
    target's notes, and nothing within the limits is left out.
    """

    max_buffer_bytes: int | None = None
    max_insert_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_buffer_bytes", "max_insert_bytes"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"{name} must be a whole number of bytes, at least 0, or None; got {value!r}")

    def exceeded_by(self, state: Any, operation: Any) -> bool:
        """Whether ``operation`` from the model state ``state`` inserts, or would
        leave if it took effect, more than the limits allow. A target may check its
        limits before anything else, so an edit that the model refuses for another
        reason (a journal fault, a full log) still counts by the size it asks for;
        a crash counts by the operation it interrupts. An edit with invalid
        arguments is never over the limits: the target must refuse it anyway."""
        inner = getattr(operation, "operation", None)
        if isinstance(operation, CrashDuring) and inner is not None:
            return self.exceeded_by(state, inner)
        if self.max_insert_bytes is not None:
            if isinstance(operation, ApplyDiff):
                inserted = max((len(hunk.replacement) for hunk in operation.hunks), default=0)
            else:
                inserted = len(getattr(operation, "insert", b""))
            if inserted > self.max_insert_bytes:
                return True
        if self.max_buffer_bytes is None:
            return False
        return any(length > self.max_buffer_bytes for length in _possible_lengths(state, operation))


def _possible_lengths(state: Any, operation: Any) -> list[int]:
    """The buffer lengths ``operation`` may leave from ``state``: the edit's own
    arithmetic for an edit, else every state the model allows after it."""
    diffs = isinstance(state, DiffModelState)
    if not diffs and not isinstance(state, ModelState):
        return []
    try:
        if isinstance(operation, (Splice, OutOfLogWrite, ToolWrite)):
            text_length = len(state.content if diffs else state.current)
            check_splice_arguments(text_length, operation.offset, operation.delete_length, operation.insert)
            return [text_length - operation.delete_length + len(operation.insert)]
        if diffs:
            diff_outcome = diff_step(state, operation)
            return [len(s.content) for s in (diff_outcome.state, diff_outcome.also_acceptable) if s is not None]
        outcome = step(state, operation)
    except (ValueError, TypeError):
        return []
    return [len(s.current) for s in (outcome.state, outcome.also_acceptable, *outcome.window) if s is not None]


@dataclass(frozen=True)
class Target:
    """A certifiable implementation: a name, what it can do, and a factory.

    ``rollcert certify module:attr`` resolves ``attr`` to a ``Target`` (or to a
    zero-argument callable returning one).
    """

    name: str
    version: str
    capabilities: frozenset[Capability]
    factory: SutFactory
    description: str = ""
    notes: dict[str, str] = field(default_factory=dict)
    #: The bytes the generated buffers and inserts are made of; ``None`` is the
    #: suite's default. A target whose package is not byte-transparent outside
    #: some alphabet (e.g. one that normalises line endings) names the alphabet it
    #: is honest on, and its documentation says what was therefore not exercised.
    alphabet: bytes | None = None
    #: Known findings this (focused) target's runs do not generate; see :class:`KnownFinding`.
    set_aside: tuple[KnownFinding, ...] = ()
    #: Properties this target is known to break (a specimen's story): ``rollcert
    #: explain`` walks through those first. Never used to decide a verdict.
    breaks: frozenset[str] = frozenset()
    #: The one policy of a real bounded history (with ``Capability.BOUNDED``); see :class:`HistoryBound`.
    history_bound: HistoryBound | None = None
    #: The largest buffer and insert the target takes; see :class:`SizeLimits`.
    limits: SizeLimits | None = None
    #: A text façade (SPEC §2): its buffer is UTF-8 text and a splice that would
    #: split a code point is bad input, so the machines send it valid UTF-8 edits
    #: at code-point boundaries only (and do not ask it to split a character).
    text: bool = False
    #: The implementation's own chunk or page size in bytes, where it has one: every
    #: run then also reaches buffers longer than it, so code that crosses from one
    #: chunk to the next is certified, not only unit-tested.
    chunk_bytes: int | None = None
    #: Its factory honours ``BufferConfig.start_revision``: the machines then start
    #: some examples just below 2^8, 2^16, 2^31 and 2^32, so a counter kept in
    #: fewer bits wraps within a few steps and the certificate's world states the
    #: largest revision reached (issue 42). Without it, a run's revisions stay as
    #: low as its histories are short, and the world says so.
    starts_at_revision: bool = False
    #: Its arguments travel over a wire whose request fields are typed
    #: (rollcert-protocol: an ``int`` field is a JSON integer, never a boolean,
    #: a float or a string), so an argument of another type cannot reach it: the
    #: client refuses it itself with the model's TypeError, as a typed API
    #: would. R0's ``bad_arguments`` then sends it no such argument — it would
    #: certify the client, not the target — only wrong signs and ranges, which
    #: travel as integers and must come back ValueError.
    typed_wire: bool = False
    #: Its API checks every argument as ``model.contract`` does: an argument of
    #: another type (a bool, float, string or None offset, an int or list insert)
    #: is a TypeError, a negative rollback count or compaction keep a ValueError,
    #: and any bytes-like insert is taken as bytes. Only then does R0's
    #: ``bad_arguments`` send such arguments (the bundled target declares it).
    #: SPEC §2 defines a splice's range and nothing more: many Python buffers take
    #: ``True`` as offset 1, a list of ints as an insert or ``rollback(-1)`` as
    #: nothing, as slicing and ``range`` do. Without the declaration a target is
    #: sent splices out of range only (as before issue 42), never reported for
    #: Python's own leniency. A server gets no argument of another type either
    #: way (``typed_wire``).
    checks_arguments: bool = False
    #: Its factory honours ``BufferConfig.chunk_bytes`` (an in-memory buffer; it
    #: needs ``chunk_bytes`` declared): the machines then build some examples with
    #: chunks of 1-4 bytes, so that code run only past dozens of chunks or groups
    #: of them is certified on small buffers, and the world states how many
    #: chunks a buffer reached.
    sets_chunk_bytes: bool = False

    def __post_init__(self) -> None:
        if self.chunk_bytes is not None and (type(self.chunk_bytes) is not int or self.chunk_bytes < 1):
            raise ValueError(f"target {self.name!r}: chunk_bytes must be a whole number of bytes, at least 1, or None")
        if self.sets_chunk_bytes and self.chunk_bytes is None:
            raise ValueError(f"target {self.name!r}: sets_chunk_bytes needs its own chunk_bytes declared")
        if self.history_bound is not None and Capability.BOUNDED not in self.capabilities:
            raise ValueError(f"target {self.name!r} declares a history bound without Capability.BOUNDED")

    def buffer_config(self, config: BufferConfig) -> BufferConfig:
        """``config`` as this target can honour it: a bounded buffer of a target
        with a :class:`HistoryBound` takes the bound's policy; an initial buffer
        longer than the target's buffer limit is cut to it."""
        limit = None if self.limits is None else self.limits.max_buffer_bytes
        if limit is not None and len(config.initial) > limit:
            config = replace(config, initial=config.initial[:limit])
        if self.history_bound is None or config.capacity is None or config.policy == self.history_bound.policy:
            return config
        return replace(config, policy=self.history_bound.policy)

    def supports(self, *needed: Capability) -> bool:
        return all(c in self.capabilities for c in needed)

    def sets_aside(self, state: Any, operation: Any) -> bool:
        """Whether the machines do not take ``operation`` from ``state``: a known
        finding set aside covers it, or it is over the target's size limits."""
        if self.limits is not None and self.limits.exceeded_by(state, operation):
            return True
        return any(finding.applies(state, operation) for finding in self.set_aside)
