"""Self-authored diffs in the reference model: identity-tagged bytes, snapshots,
diffs, the read-set staleness rule (S1), rollback of an applied diff (S2) and
no ABA (S3).

An agent snapshots its context, authors a diff against that snapshot, and
applies it later, while tools keep writing into the same context. Whether the
diff still means what its author meant depends on whether the bytes it *read*
are still there, untouched. Comparing text cannot answer that exactly (the
same text may have been deleted and typed again, or may occur twice), so the
model gives every byte an identity: a *cell* is ``(identity, byte)``. Every
inserted byte gets a fresh identity that is never handed out again; a rollback
restores the earlier cells, identities included. "Region R of the snapshot B0
is unchanged in the live base B" then means exactly: the cells of ``B0[R]``
occur in B, contiguous and in order. No search, no guessing.

Like :mod:`rollcert.model.reference`, everything here is naive on purpose: the model
keeps every state as a tuple of cells and recomputes everything from scratch.
It is the oracle; the fast implementation is ``rollcert.impl.diffs``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from rollcert.model.errors import StaleBaseError, UnreachableRollbackError
from rollcert.model.operations import Rollback, Splice
from rollcert.model.reference import check_integer, check_splice_arguments

#: One byte of the model's buffer: (identity, byte value).
Cell = tuple[int, int]
Cells = tuple[Cell, ...]

AnchorMode = Literal["positional", "content"]
ANCHOR_MODES: tuple[AnchorMode, ...] = ("positional", "content")


def content_of(cells: Cells) -> bytes:
    """The bytes a reader sees: the cells without their identities."""
    return bytes(byte for _, byte in cells)


def digest_of(data: bytes) -> str:
    """The content digest a snapshot carries (SHA-256, hex)."""
    return hashlib.sha256(data).hexdigest()


def fresh_cells(data: bytes, first_identity: int) -> Cells:
    """``data`` as new cells numbered from ``first_identity`` (never used before)."""
    return tuple((first_identity + i, byte) for i, byte in enumerate(data))


# -- the vocabulary: regions, hunks, snapshots, diffs ------------------------------------


@dataclass(frozen=True)
class Region:
    """A half-open span ``[start, end)`` of the snapshot the diff was authored on."""

    start: int
    end: int

    def describe(self) -> str:
        return f"[{self.start}, {self.end})"


@dataclass(frozen=True)
class Hunk:
    """Replace ``[start, end)`` of the snapshot with ``replacement`` (B0 coordinates)."""

    start: int
    end: int
    replacement: bytes

    def describe(self) -> str:
        return f"[{self.start}, {self.end}) -> {self.replacement!r}"


@dataclass(frozen=True)
class Snapshot:
    """What an author saw: the revision, the content digest, and the cells.

    ``serial`` is the identity of the state the snapshot was taken of (the same
    serial the model's history uses), so "is this snapshot's state still in the
    history?" is a question about identity, never about a revision number.
    ``depth`` is the depth of that state; it is never used to decide anything,
    only to recognise the tempting case of S3 (a stale snapshot at the depth
    the buffer has again).
    """

    revision: int
    digest: str
    cells: Cells
    serial: int
    depth: int

    @property
    def content(self) -> bytes:
        return content_of(self.cells)


def check_diff(base_length: int, mode: object, hunks: tuple[Hunk, ...], reads: tuple[Region, ...]) -> None:
    """The authoring rule of a diff; ``ValueError``/``TypeError`` naming what is wrong.

    Hunks lie inside the base, their starts strictly increase, and each ends at
    or before the next begins (so "all hunks or none" has one meaning). Read
    regions lie inside the base and are non-empty: an empty region at an
    insertion point is both before and after the insertion, and the two ways of
    rebasing it disagree.
    """
    if mode not in ANCHOR_MODES:
        raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
    if not hunks:
        raise ValueError("a diff needs at least one hunk")
    previous: Hunk | None = None
    for hunk in hunks:
        if not isinstance(hunk, Hunk):
            raise TypeError(f"a hunk must be a Hunk, got {type(hunk).__name__}")
        start, end = check_integer("hunk start", hunk.start), check_integer("hunk end", hunk.end)
        if not isinstance(hunk.replacement, bytes):
            raise TypeError(f"a hunk's replacement must be bytes, got {type(hunk.replacement).__name__}")
        if not 0 <= start <= end <= base_length:
            raise ValueError(f"hunk {hunk.describe()} lies outside the {base_length}-byte base")
        if previous is not None and not (previous.start < start and previous.end <= start):
            raise ValueError(
                f"hunks must be sorted and non-overlapping: {previous.describe()} then {hunk.describe()}"
            )
        previous = hunk
    for region in reads:
        if not isinstance(region, Region):
            raise TypeError(f"a read region must be a Region, got {type(region).__name__}")
        start, end = check_integer("region start", region.start), check_integer("region end", region.end)
        if not 0 <= start < end <= base_length:
            raise ValueError(
                f"read region {region.describe()} must be non-empty and inside the {base_length}-byte base"
            )


def effective_regions(base_length: int, hunks: tuple[Hunk, ...], reads: tuple[Region, ...]) -> tuple[Region, ...]:
    """The read-set S1 checks: the declared reads plus every hunk widened by one
    byte on each side (clipped to the base), sorted, duplicates removed.

    Widening makes an insertion that touches a hunk a conflict: text typed
    right next to the place being rewritten changes what the rewrite means.
    """
    widened = (Region(max(0, h.start - 1), min(base_length, h.end + 1)) for h in hunks)
    return tuple(sorted(set(reads) | set(widened), key=lambda r: (r.start, r.end)))


@dataclass(frozen=True)
class Diff:
    """A diff authored against ``base``: hunks and read-set in base coordinates.

    A *positional* diff names places by offset or line number; those mean
    nothing once the base changed. A *content* diff is anchored on its read-set
    (its declared reads and the bytes around each hunk), so it can be moved to
    the live base when exactly those bytes are still there.
    """

    base: Snapshot
    mode: AnchorMode
    hunks: tuple[Hunk, ...]
    reads: tuple[Region, ...] = ()

    def __post_init__(self) -> None:
        check_diff(len(self.base.cells), self.mode, self.hunks, self.reads)

    @property
    def effective_reads(self) -> tuple[Region, ...]:
        return effective_regions(len(self.base.cells), self.hunks, self.reads)

    def describe(self) -> str:
        hunks = ", ".join(h.describe() for h in self.hunks)
        reads = ", ".join(r.describe() for r in self.reads) or "none"
        return f"{self.mode} diff on revision {self.base.revision}: hunks {hunks}; reads {reads}"


# -- the rule (S1) ---------------------------------------------------------------------


def locate(region_cells: Cells, live: Cells) -> int | None:
    """Where ``region_cells`` (non-empty) stand in ``live``, contiguous and in
    order, or ``None``. Identities are unique within one buffer, so the first
    cell alone says where to look; nothing is searched by content."""
    first = region_cells[0]
    for position, cell in enumerate(live):
        if cell == first:
            return position if live[position : position + len(region_cells)] == region_cells else None
    return None


@dataclass(frozen=True)
class Accepted:
    """The diff applies: the live base after it, and where each hunk landed."""

    cells: Cells
    next_identity: int
    placed: tuple[tuple[int, int, bytes], ...]


@dataclass(frozen=True)
class Rejected:
    """The diff is stale: the first effective read region that changed (or
    ``None`` for a positional diff, which conflicts with any change)."""

    conflict: Region | None
    reason: str


def splice_placed(live: Cells, placed: tuple[tuple[int, int, bytes], ...], next_identity: int) -> tuple[Cells, int]:
    """Apply hunks given in live coordinates, last first, with fresh cells."""
    cells = live
    identity = next_identity
    for start, end, replacement in reversed(placed):
        cells = cells[:start] + fresh_cells(replacement, identity) + cells[end:]
        identity += len(replacement)
    return cells, identity


def apply(diff: Diff, live: Cells, next_identity: int) -> Accepted | Rejected:
    """S1, exactly as SPEC §4 states it.

    1. The live content equals the snapshot's: apply at the original positions.
    2. Otherwise a positional diff is rejected.
    3. Otherwise a content diff applies iff every effective read region's cells
       stand in the live base, contiguous and in order; each hunk is moved by
       the offset of its own widened region. Else the first changed region is
       the conflict.
    """
    base = diff.base.cells
    if content_of(live) == diff.base.content:
        placed = tuple((h.start, h.end, h.replacement) for h in diff.hunks)
    elif diff.mode == "positional":
        return Rejected(None, "the base moved and the diff is positional")
    else:
        shift: dict[Region, int] = {}
        for region in diff.effective_reads:
            cells = base[region.start : region.end]
            position = locate(cells, live) if cells else None
            if position is None:
                return Rejected(region, f"read region {region.describe()} changed since the snapshot")
            shift[region] = position - region.start
        length = len(base)
        placed = tuple(
            (h.start + offset, h.end + offset, h.replacement)
            for h in diff.hunks
            for offset in (shift[Region(max(0, h.start - 1), min(length, h.end + 1))],)
        )
    cells, identity = splice_placed(live, placed, next_identity)
    return Accepted(cells, identity, placed)


# -- operations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolWrite:
    """Another writer (a tool) splices the same buffer, through the same journaled API."""

    offset: int
    delete_length: int
    insert: bytes
    kind: ClassVar[str] = "tool_write"

    def describe(self) -> str:
        return f"tool writes: splice(offset={self.offset}, delete_length={self.delete_length}, insert={self.insert!r})"


@dataclass(frozen=True)
class TakeSnapshot:
    """The author snapshots the buffer; the snapshot is named by its order in the run."""

    kind: ClassVar[str] = "snapshot"

    def describe(self) -> str:
        return "snapshot()"


@dataclass(frozen=True)
class ApplyDiff:
    """Author a diff against the ``snapshot``-th snapshot and apply it to the live base."""

    snapshot: int
    mode: AnchorMode
    hunks: tuple[Hunk, ...]
    reads: tuple[Region, ...] = ()
    kind: ClassVar[str] = "apply_diff"

    def describe(self) -> str:
        hunks = ", ".join(h.describe() for h in self.hunks)
        reads = ", ".join(r.describe() for r in self.reads) or "none"
        return f"apply_diff(snapshot #{self.snapshot}, {self.mode}, hunks {hunks}; reads {reads})"


@dataclass(frozen=True)
class RollbackDiff:
    """Roll back the ``applied``-th apply_diff of the run (and everything after it)."""

    applied: int
    kind: ClassVar[str] = "rollback_diff"

    def describe(self) -> str:
        return f"rollback_diff(apply #{self.applied})"


DiffOperation = Splice | ToolWrite | Rollback | TakeSnapshot | ApplyDiff | RollbackDiff


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {type(text).__name__}")
    return base64.b64decode(text.encode("ascii"), validate=True)


def diff_operation_to_json(operation: DiffOperation) -> dict[str, Any]:
    """A JSON-ready dict; bytes are base64."""
    if isinstance(operation, (Splice, ToolWrite)):
        return {
            "op": operation.kind,
            "offset": operation.offset,
            "delete_length": operation.delete_length,
            "insert": _b64(operation.insert),
        }
    if isinstance(operation, Rollback):
        return {"op": operation.kind, "steps": operation.steps}
    if isinstance(operation, ApplyDiff):
        return {
            "op": operation.kind,
            "snapshot": operation.snapshot,
            "mode": operation.mode,
            "hunks": [[h.start, h.end, _b64(h.replacement)] for h in operation.hunks],
            "reads": [[r.start, r.end] for r in operation.reads],
        }
    if isinstance(operation, RollbackDiff):
        return {"op": operation.kind, "applied": operation.applied}
    return {"op": operation.kind}


def _field(record: dict[str, Any], name: str) -> int:
    value = record.get(name)
    if type(value) is not int:
        raise TypeError(f"operation field {name!r} must be an integer, got {value!r}")
    return value


def _pairs(value: object, name: str) -> list[list[Any]]:
    if not isinstance(value, list) or not all(isinstance(item, list) for item in value):
        raise TypeError(f"operation field {name!r} must be a list of lists")
    return value


def diff_operation_from_json(record: object) -> DiffOperation:
    """Parse one diff-machine operation; ``ValueError``/``TypeError`` naming what is wrong."""
    if not isinstance(record, dict):
        raise TypeError(f"an operation must be a JSON object, got {type(record).__name__}")
    kind = record.get("op")
    if kind in ("splice", "tool_write"):
        fields = (_field(record, "offset"), _field(record, "delete_length"), _unb64(record.get("insert")))
        return Splice(*fields) if kind == "splice" else ToolWrite(*fields)
    if kind == "rollback":
        return Rollback(_field(record, "steps"))
    if kind == "snapshot":
        return TakeSnapshot()
    if kind == "rollback_diff":
        return RollbackDiff(_field(record, "applied"))
    if kind == "apply_diff":
        mode = record.get("mode")
        if mode not in ANCHOR_MODES:
            raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
        hunks = []
        for item in _pairs(record.get("hunks"), "hunks"):
            if len(item) != 3 or type(item[0]) is not int or type(item[1]) is not int:
                raise TypeError(f"a hunk is [start, end, base64 replacement], got {item!r}")
            hunks.append(Hunk(item[0], item[1], _unb64(item[2])))
        reads = []
        for item in _pairs(record.get("reads"), "reads"):
            if len(item) != 2 or type(item[0]) is not int or type(item[1]) is not int:
                raise TypeError(f"a read region is [start, end], got {item!r}")
            reads.append(Region(item[0], item[1]))
        return ApplyDiff(_field(record, "snapshot"), mode, tuple(hunks), tuple(reads))
    raise ValueError(f"unknown diff operation {kind!r}")


# -- the model's state and step function ---------------------------------------------------


@dataclass(frozen=True)
class DiffModelState:
    """Everything the diff model knows, immutable.

    ``states[0]`` is the horizon and ``states[-1]`` the live base, each a tuple
    of cells; rollback is a pointer move, so it restores the original cells.
    ``serials[i]`` is the identity of ``states[i]``. ``snapshots`` are the
    snapshots taken in the run, in order. ``applied[k]`` is, for the k-th
    apply_diff of the run, the serial of the state it made (``None`` if it was
    rejected). ``revision`` grows by one per splice, tool write, rollback step
    and applied diff and is never reused (S3).
    """

    states: tuple[Cells, ...]
    serials: tuple[int, ...]
    next_serial: int
    next_identity: int
    revision: int = 0
    snapshots: tuple[Snapshot, ...] = ()
    applied: tuple[tuple[int, int] | None, ...] = ()

    @property
    def current(self) -> Cells:
        return self.states[-1]

    @property
    def content(self) -> bytes:
        return content_of(self.current)

    @property
    def depth(self) -> int:
        return len(self.states) - 1


def initial_diff_state(initial: bytes) -> DiffModelState:
    if not isinstance(initial, (bytes, bytearray)):
        raise TypeError(f"initial buffer must be bytes, got {type(initial).__name__}")
    return DiffModelState(
        states=(fresh_cells(bytes(initial), 0),), serials=(0,), next_serial=1, next_identity=len(initial)
    )


@dataclass(frozen=True)
class DiffOutcome:
    """What the model predicts for one diff-machine operation (``error`` None on success)."""

    state: DiffModelState
    error: type[Exception] | None = None
    message: str = ""
    conflict: Region | None = None
    #: For an apply_diff: the snapshot it was authored on and the diff (for
    #: explanations and coverage).
    diff: Diff | None = None


def _push(state: DiffModelState, cells: Cells, next_identity: int) -> DiffModelState:
    return replace(
        state,
        states=state.states + (cells,),
        serials=state.serials + (state.next_serial,),
        next_serial=state.next_serial + 1,
        next_identity=next_identity,
        revision=state.revision + 1,
    )


def _edit(state: DiffModelState, offset: int, delete_length: int, insert: bytes) -> DiffOutcome:
    offset, delete_length, insert = check_splice_arguments(len(state.current), offset, delete_length, insert)
    cells = state.current[:offset] + fresh_cells(insert, state.next_identity) + state.current[offset + delete_length :]
    return DiffOutcome(_push(state, cells, state.next_identity + len(insert)))


def _roll_back(state: DiffModelState, steps: int) -> DiffOutcome:
    if steps > state.depth:
        return DiffOutcome(state, UnreachableRollbackError, f"rollback({steps}) goes past the horizon (depth {state.depth})")
    kept = len(state.states) - steps
    return DiffOutcome(
        replace(state, states=state.states[:kept], serials=state.serials[:kept], revision=state.revision + steps)
    )


def author(state: DiffModelState, operation: ApplyDiff) -> Diff:
    """The diff an ApplyDiff step authors (``ValueError`` for a bad one)."""
    index = check_integer("snapshot", operation.snapshot)
    if not 0 <= index < len(state.snapshots):
        raise ValueError(f"no snapshot #{index} was taken in this run")
    return Diff(state.snapshots[index], operation.mode, operation.hunks, operation.reads)


def reject_apply(state: DiffModelState) -> DiffModelState:
    """The state after an apply_diff that was refused: only the tally of applies grows."""
    return replace(state, applied=state.applied + (None,))


def diff_step(state: DiffModelState, operation: DiffOperation) -> DiffOutcome:
    """Apply one operation to the diff model. Bad arguments raise ValueError/TypeError."""
    if isinstance(operation, (Splice, ToolWrite)):
        return _edit(state, operation.offset, operation.delete_length, operation.insert)
    if isinstance(operation, Rollback):
        steps = check_integer("steps", operation.steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        return _roll_back(state, steps)
    if isinstance(operation, TakeSnapshot):
        cells = state.current
        snapshot = Snapshot(state.revision, digest_of(content_of(cells)), cells, state.serials[-1], state.depth)
        return DiffOutcome(replace(state, snapshots=state.snapshots + (snapshot,)))
    if isinstance(operation, ApplyDiff):
        diff = author(state, operation)
        result = apply(diff, state.current, state.next_identity)
        if isinstance(result, Rejected):
            # S1: a stale diff changes nothing.
            return DiffOutcome(reject_apply(state), StaleBaseError, result.reason, result.conflict, diff)
        # S2: the whole diff is one new state, so one rollback step undoes all of it.
        after = _push(state, result.cells, result.next_identity)
        record = (after.serials[-1], operation.snapshot)
        return DiffOutcome(replace(after, applied=state.applied + (record,)), diff=diff)
    if isinstance(operation, RollbackDiff):
        index = check_integer("applied", operation.applied)
        made = state.applied[index] if 0 <= index < len(state.applied) else None
        if made is None:
            raise ValueError(f"apply_diff #{index} did not apply in this run")
        serial = made[0]
        # S2 / S3: an applied diff can be rolled back while the state it made is
        # in the history; the result is the live base it was applied to.
        if serial not in state.serials or state.serials.index(serial) == 0:
            return DiffOutcome(state, UnreachableRollbackError, f"apply_diff #{index} was rolled away or evicted")
        return _roll_back(state, state.depth - state.serials.index(serial) + 1)
    raise TypeError(f"not a diff operation: {operation!r}")


def applied_base(state: DiffModelState, index: int) -> Cells | None:
    """The live base the ``index``-th applied diff was applied to, while it is in the history."""
    record = state.applied[index] if 0 <= index < len(state.applied) else None
    serial = record[0] if record is not None else None
    if serial is None or serial not in state.serials:
        return None
    position = state.serials.index(serial)
    return state.states[position - 1] if position else None


# -- the properties S1-S3 ------------------------------------------------------------------

#: (state before, operation, predicted outcome) -> reached?
DiffSituationPredicate = Callable[[DiffModelState, DiffOperation, DiffOutcome], bool]


@dataclass(frozen=True)
class DiffSituation:
    name: str
    description: str
    reached: DiffSituationPredicate


@dataclass(frozen=True)
class DiffProperty:
    """A diff property: like ``rollcert.model.properties.Property``, over diff-model steps."""

    id: str
    title: str
    statement: str
    situations: tuple[DiffSituation, ...]


def _stale(before: DiffModelState, outcome: DiffOutcome) -> bool:
    return outcome.diff is not None and outcome.diff.base.content != before.content


def _stale_content_accepted(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, ApplyDiff) and operation.mode == "content" and outcome.error is None and _stale(before, outcome)


def _read_region_changed(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """Rejected because a *declared read* changed while every hunk's own
    surroundings are intact: the case a write-set check lets through."""
    if not isinstance(operation, ApplyDiff) or outcome.error is not StaleBaseError or outcome.diff is None:
        return False
    diff = outcome.diff
    hunk_regions = effective_regions(len(diff.base.cells), diff.hunks, ())
    return operation.mode == "content" and all(
        locate(diff.base.cells[r.start : r.end], before.current) is not None for r in hunk_regions if r.end > r.start
    )


def _positional_rejected(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, ApplyDiff) and operation.mode == "positional" and outcome.error is StaleBaseError


def _moved_content_diff(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A content diff accepted whose hunks landed somewhere else than in the snapshot."""
    if not _stale_content_accepted(before, operation, outcome) or outcome.diff is None:
        return False
    result = apply(outcome.diff, before.current, before.next_identity)
    return isinstance(result, Accepted) and any(
        placed[0] != hunk.start for placed, hunk in zip(result.placed, outcome.diff.hunks, strict=True)
    )


def _rolled_back_onto_moved_base(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A rollback_diff of a diff that was applied to a base other than its
    snapshot: restoring the snapshot would erase the writes in between."""
    if not isinstance(operation, RollbackDiff) or outcome.error is not None:
        return False
    base = applied_base(before, operation.applied)
    record = before.applied[operation.applied]
    return base is not None and record is not None and content_of(base) != before.snapshots[record[1]].content


def _rolled_back_after_writes(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    if not isinstance(operation, RollbackDiff) or outcome.error is not None:
        return False
    record = before.applied[operation.applied]
    return record is not None and before.serials[-1] != record[0]


def _dead_diff_refused(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    return isinstance(operation, RollbackDiff) and outcome.error is UnreachableRollbackError


def _rolled_away_snapshot(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """A diff on a snapshot whose state was rolled away, applied to a live base
    with other content of the same length at the same depth: a counter that
    steps back on rollback would show the snapshot's revision again, a size
    check would agree, and together they would call the stale base current."""
    if not isinstance(operation, ApplyDiff) or outcome.diff is None:
        return False
    snapshot = outcome.diff.base
    tempting = (
        snapshot.serial not in before.serials
        and snapshot.depth == before.depth
        and len(snapshot.cells) == len(before.current)
        and snapshot.content != before.content
    )
    # ... and where it matters: the rule does not simply apply the diff where it was written.
    original = tuple((h.start, h.end, h.replacement) for h in outcome.diff.hunks)
    result = apply(outcome.diff, before.current, before.next_identity)
    return tempting and (isinstance(result, Rejected) or result.placed != original)


def _revision_after_branch(before: DiffModelState, operation: DiffOperation, outcome: DiffOutcome) -> bool:
    """An edit made after a rollback: the new state must get a new revision."""
    return (
        isinstance(operation, (Splice, ToolWrite))
        and outcome.error is None
        and before.revision > 0
        and before.depth < before.revision
    )


S1 = DiffProperty(
    "S1",
    "Read-set staleness rule",
    """A diff authored against snapshot B0 may be applied to the live base B
    only if what it depended on is still there. If B's content equals B0's, it
    applies where it was written. Otherwise a positional diff (offsets, line
    numbers) is rejected: its numbers point into a text that no longer exists.
    A content diff applies iff every region of its effective read-set (the
    declared reads, and each hunk widened by one byte) is unchanged between B0
    and B — the same bytes, contiguous, in order, traced through every edit
    and rollback, never guessed by searching for similar text — and its hunks
    are moved to where those regions now stand. Anything else is
    StaleBaseError naming the first changed region, and nothing changes.
    Checking only the write-set is the classic mistake: it applies a diff whose
    reasoning rests on text a tool has just replaced. Rejecting more than the
    rule does is sound but imprecise (a figure on the certificate, not a
    violation).""",
    (
        DiffSituation("stale_content_accepted", "a content diff accepted on a base that changed elsewhere", _stale_content_accepted),
        DiffSituation("moved_hunks", "a content diff accepted with its hunks moved to new positions", _moved_content_diff),
        DiffSituation(
            "read_region_changed",
            "a content diff rejected because a declared read changed while its hunks' surroundings did not",
            _read_region_changed,
        ),
        DiffSituation("positional_rejected", "a positional diff rejected on a moved base", _positional_rejected),
    ),
)

S2 = DiffProperty(
    "S2",
    "Rollback-conflict asymmetry",
    """A forward conflict is cheap: reject, and the author re-authors against
    the live base. A backward conflict cannot be re-authored: once tools have
    written around an applied diff, there is nobody to ask what the undo
    should have meant. So an applied diff is one transaction in the log, and
    rolling it back yields exactly the live base it was applied to — never the
    author's snapshot B0, which would silently erase every write that landed
    between the snapshot and the apply — or raises UnreachableRollbackError
    (its state was rolled away or evicted) and changes nothing.""",
    (
        DiffSituation(
            "rolled_back_onto_moved_base",
            "a rollback of a diff that was applied to a base other than its snapshot",
            _rolled_back_onto_moved_base,
        ),
        DiffSituation("rolled_back_after_writes", "a rollback of a diff with later writes on top of it", _rolled_back_after_writes),
        DiffSituation("dead_diff_refused", "a rollback of a diff whose state was rolled away, refused", _dead_diff_refused),
    ),
)

S3 = DiffProperty(
    "S3",
    "No ABA",
    """Revisions are never reused, not even after a rollback. A snapshot, a
    diff or a checkpoint from a state that was rolled away is judged by content
    and history, never by a counter that happens to match: after rolling back
    and editing again, the buffer may be exactly as deep as it was when the
    snapshot was taken, and a counter that stepped back on rollback shows the
    snapshot's revision again. Trusting it applies a stale diff as if nothing
    had changed, onto text its author never saw.""",
    (
        DiffSituation(
            "rolled_away_snapshot",
            "a diff on a rolled-away snapshot, at the depth and length its state had, that the rule "
            "rejects or moves",
            _rolled_away_snapshot,
        ),
        DiffSituation("edit_after_rollback", "an edit after a rollback (a revision a stepping-back counter would reuse)", _revision_after_branch),
    ),
)

DIFF_PROPERTIES: dict[str, DiffProperty] = {p.id: p for p in (S1, S2, S3)}
