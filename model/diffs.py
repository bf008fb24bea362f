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

import hashlib
from dataclasses import dataclass
from dataclasses import replace
from operator import itemgetter

from rollcert.model.contract import AnchorMode
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.contract import check_diff
from rollcert.model.contract import check_integer
from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite

#: One byte of the model's buffer: (identity, byte value).
Cell = tuple[int, int]
Cells = tuple[Cell, ...]



def content_of(cells: Cells) -> bytes:
    """The bytes a reader sees: the cells without their identities."""
    return bytes(map(itemgetter(1), cells))  # a generator took 4x as long on a buffer of some KiB


def digest_of(data: bytes) -> str:
    """The content digest a snapshot carries (SHA-256, hex)."""
    return hashlib.sha256(data).hexdigest()


def fresh_cells(data: bytes, first_identity: int) -> Cells:
    """``data`` as new cells numbered from ``first_identity`` (never used before)."""
    return tuple((first_identity + i, byte) for i, byte in enumerate(data))


# -- the vocabulary: regions, hunks, snapshots, diffs ------------------------------------


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


def _moved_with_their_regions(diff: Diff, shift: dict[Region, int]) -> tuple[tuple[int, int, bytes], ...]:
    """Each hunk moved by the shift of its own widened region (base -> live)."""
    length = len(diff.base.cells)
    return tuple(
        (h.start + offset, h.end + offset, h.replacement)
        for h in diff.hunks
        for offset in (shift[Region(max(0, h.start - 1), min(length, h.end + 1))],)
    )


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
        placed = _moved_with_their_regions(diff, shift)
    cells, identity = splice_placed(live, placed, next_identity)
    return Accepted(cells, identity, placed)


def apply_over_equal_rewrites(diff: Diff, live: Cells, next_identity: int) -> Accepted | None:
    """What S1 also *allows* (never requires) for a content diff the rule rejects:
    applying it when every effective read region whose cells are gone was only
    rewritten with equal bytes — the same bytes, contiguous, standing exactly
    between the region's own neighbours (located by identity, as everything in
    this model), or against the buffer's end where the region touched it.

    A content-based applier cannot see such a rewrite, and the result is the
    one the author meant, so accepting is not a violation; rejecting stays the
    rule's answer. ``None`` when some region really changed (or the diff is
    positional, or the rule accepts anyway). Nothing is searched by content:
    a region's place is fixed by its neighbours' identities.
    """
    if diff.mode != "content" or content_of(live) == diff.base.content:
        return None
    base = diff.base.cells
    shift: dict[Region, int] = {}
    rewritten = False
    for region in diff.effective_reads:
        cells = base[region.start : region.end]
        # An empty region (the snapshot was empty) is located nowhere, as in apply().
        position = locate(cells, live) if cells else None
        if position is None:
            position = _between_neighbours(base, region, live)
            if position is None:
                return None
            rewritten = True
        shift[region] = position - region.start
    if not rewritten:
        return None  # the rule accepts this diff itself
    placed = _moved_with_their_regions(diff, shift)
    cells, identity = splice_placed(live, placed, next_identity)
    return Accepted(cells, identity, placed)


def _between_neighbours(base: Cells, region: Region, live: Cells) -> int | None:
    """Where ``region``'s bytes stand in ``live`` if they stand, unchanged in
    value, exactly between the cells that neighboured them in ``base``."""
    wanted = content_of(base[region.start : region.end])
    if region.start > 0:
        left = locate(base[region.start - 1 : region.start], live)
        if left is None:
            return None
        position = left + 1
    elif region.end < len(base):
        right = locate(base[region.end : region.end + 1], live)
        if right is None:
            return None
        position = right - len(wanted)
    else:
        position = 0
    end = position + len(wanted)
    if position < 0 or content_of(live[position:end]) != wanted:
        return None
    if region.end < len(base):
        right = locate(base[region.end : region.end + 1], live)
        if right != end:
            return None
    elif end != len(live):
        return None
    return position


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
    and applied diff and is never reused (S3); it starts at ``start_revision``
    (0, or a high number a run asks for to reach a narrow counter's wrap cheaply).
    """

    states: tuple[Cells, ...]
    serials: tuple[int, ...]
    next_serial: int
    next_identity: int
    revision: int = 0
    snapshots: tuple[Snapshot, ...] = ()
    start_revision: int = 0
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


def initial_diff_state(initial: bytes, start_revision: int = 0) -> DiffModelState:
    if not isinstance(initial, (bytes, bytearray)):
        raise TypeError(f"initial buffer must be bytes, got {type(initial).__name__}")
    if type(start_revision) is not int or start_revision < 0:
        raise ValueError(f"start_revision must be an int >= 0, got {start_revision!r}")
    return DiffModelState(
        states=(fresh_cells(bytes(initial), 0),),
        serials=(0,),
        next_serial=1,
        next_identity=len(initial),
        revision=start_revision,
        start_revision=start_revision,
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
    #: For a rejected apply: the state an applier may reach instead by applying
    #: it over reads rewritten with equal bytes (:func:`apply_over_equal_rewrites`).
    also_acceptable: DiffModelState | None = None


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


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share (bisection over slice comparisons:
    a wide buffer has kilobytes)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def content_alignments(content: bytes, offset: int, delete_length: int, insert: bytes) -> tuple[tuple[int, bytes], ...]:
    """The other single edits of ``content`` that delete as many bytes and insert as
    many as this one and leave exactly the bytes it leaves, as ``(offset, insert)``:
    deleting ``'\nd'`` at 1 or ``'d\n'`` at 2 of ``'a\nd\nb'``; inserting ``'\nb'`` at
    7 or ``'b\n'`` at 8 of ``'aaaaaaa\n'``; inserting ``'a'`` at 0, 1 or 2 of ``'aa'``.

    The model tells them apart by the cells' identities, so each traces a
    snapshot's regions differently; a target that sees only content cannot
    (SPEC §6a). The judge keeps each as a reading of a second writer's edit:
    allowed, never required. An insertion slides as a deletion does: the bytes
    it puts in are read at the other place (``'b\n'``, not ``'\nb'``), since content
    cannot tell which of two equal line breaks is the new one. The places form
    one run around ``offset`` (where the result and ``content`` still agree
    before and after the edited span), found in one pass."""
    if offset < 0 or delete_length < 0 or offset + delete_length > len(content):
        return ()
    result = content[:offset] + insert + content[offset + delete_length :]
    prefix = common_prefix(result, content)
    suffix = common_prefix(result[::-1], content[::-1])
    kept = len(content) - delete_length  # the bytes outside the edited span
    return tuple(
        (other, result[other : other + len(insert)])
        for other in range(max(0, kept - suffix), min(prefix, kept) + 1)
        if other != offset
    )


def same_bytes_alignments(content: bytes, offset: int, delete_length: int, insert: bytes) -> tuple[int, ...]:
    """The offsets of :func:`content_alignments` where the same bytes are inserted:
    deleting ``'\nd'`` at 1 or ``'d\n'`` at 2 of ``'a\nd\nb'``, inserting ``'a'`` at
    0, 1 or 2 of ``'aa'`` (a tool that puts an edit's own bytes at another place
    that leaves the same text)."""
    return tuple(other for other, inserted in content_alignments(content, offset, delete_length, insert) if inserted == insert)


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
        raise ValueError(f"no snapshot #{index} was taken in this run")  # unreachable: the diff machines author only on snapshots they took
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
            raise ValueError(f"steps must be >= 0, got {steps}")  # unreachable: no diff machine draws a negative step count
        return _roll_back(state, steps)
    if isinstance(operation, TakeSnapshot):
        cells = state.current
        snapshot = Snapshot(state.revision, digest_of(content_of(cells)), cells, state.serials[-1], state.depth)
        return DiffOutcome(replace(state, snapshots=state.snapshots + (snapshot,)))
    if isinstance(operation, ApplyDiff):
        diff = author(state, operation)
        result = apply(diff, state.current, state.next_identity)
        if isinstance(result, Rejected):
            # S1: a stale diff changes nothing (or, where its reads were only
            # rewritten with equal bytes, may apply as its author meant).
            allowed = apply_over_equal_rewrites(diff, state.current, state.next_identity)
            accepted = None
            if allowed is not None:
                after = _push(state, allowed.cells, allowed.next_identity)
                accepted = replace(after, applied=state.applied + ((after.serials[-1], operation.snapshot),))
            return DiffOutcome(reject_apply(state), StaleBaseError, result.reason, result.conflict, diff, accepted)
        # S2: the whole diff is one new state, so one rollback step undoes all of it.
        after = _push(state, result.cells, result.next_identity)
        record = (after.serials[-1], operation.snapshot)
        return DiffOutcome(replace(after, applied=state.applied + (record,)), diff=diff)
    if isinstance(operation, RollbackDiff):
        index = check_integer("applied", operation.applied)
        made = state.applied[index] if 0 <= index < len(state.applied) else None
        if made is None:
            raise ValueError(f"apply_diff #{index} did not apply in this run")  # unreachable: rollback_diff names only applies that applied
        serial = made[0]
        # S2 / S3: an applied diff can be rolled back while the state it made is
        # in the history; the result is the live base it was applied to.
        if serial not in state.serials or state.serials.index(serial) == 0:
            return DiffOutcome(state, UnreachableRollbackError, f"apply_diff #{index} was rolled away or evicted")
        return _roll_back(state, state.depth - state.serials.index(serial) + 1)
    raise TypeError(f"not a diff operation: {operation!r}")  # unreachable: every DiffOperation kind is dispatched above


def applied_base(state: DiffModelState, index: int) -> Cells | None:
    """The live base the ``index``-th applied diff was applied to, while it is in the history."""
    record = state.applied[index] if 0 <= index < len(state.applied) else None
    serial = record[0] if record is not None else None
    if serial is None or serial not in state.serials:
        return None
    position = state.serials.index(serial)
    return state.states[position - 1] if position else None
