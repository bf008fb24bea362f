"""Self-authored diffs on a journaled buffer: snapshot, author, apply, roll back.

:class:`DiffableBuffer` wraps (never modifies) a :class:`impl.JournaledBuffer`
and routes every mutation through itself — the agent's splices, a tool's
splices, rollback steps, checkpoints, compaction, adoption — so that it can
keep a *revision map*: a tree of the states the buffer has been in, each node
holding the edit that made it from its parent. A rollback moves back up the
tree (it restores the original bytes, so it returns to the very same node);
a new edit after a rollback starts a new branch.

How the rules are kept, and at what cost:

- S1: applying a diff authored on snapshot B0 to the live base B first asks
  whether B *is* B0 (the same node: O(1)) or has B0's content (a length
  check, then one comparison of the bytes: O(n), the only cost that grows
  with the buffer). If not, a positional diff is rejected. A content diff's
  effective read regions are traced along the tree path from B0's node to B's
  (up to their common ancestor, undoing edits; down to B, doing them), as
  lists of intervals of surviving bytes: a region whose bytes were deleted, or
  which ends up split by an insertion, conflicts. This is exact — the same
  answer as the model's identity-tagged bytes — with no text search. Its cost
  is proportional to the number of mutations between B0 and B (times the
  regions), not to the buffer size. The hunks move by the offset of their own widened region.
- The map is bounded (``history_limit`` states). A diff whose path leaves the
  kept history is rejected as unprovable: rejecting is the sound answer when
  the evidence is gone (a precision loss, never a wrong accept).
- S2: an applied diff is one splice of the inner buffer (from its first
  hunk's start to its last hunk's end), hence one journal record and one
  revision; rolling it back restores exactly the live base it was applied to.
  ``rollback_diff`` rolls back to the state before the apply, or raises
  ``UnreachableRollbackError`` if that state was rolled away or evicted.
- S3: revisions come from the inner buffer and are never reused; snapshots
  name a node of the tree, so a snapshot of a rolled-away state is judged by
  the path from its node, never by a revision number that matches.
- An out-of-log write (the storage changed behind the buffer's back) leaves
  the current state with no known history: it becomes a fresh root, so stale
  diffs across it are rejected unless the content is identical.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rollcert.impl.journaled_buffer import Checkpoint
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.model.contract import ANCHOR_MODES
from rollcert.model.contract import AnchorMode
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.contract import check_diff
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError

#: States kept in the revision map by default; diffs older than this are unprovable.
DEFAULT_HISTORY_LIMIT = 10_000

#: One edit of a node: (offset, removed length, inserted length) in the
#: coordinates of the state it applies to. A node's edits are ascending and
#: non-overlapping (one for a splice, one per hunk for a diff).
Edit = tuple[int, int, int]
Interval = tuple[int, int]

_buffer_ids = itertools.count(1)


@dataclass(frozen=True)
class DiffSnapshot:
    """What the author saw: the buffer, the state (node), revision, digest and bytes."""

    buffer_id: int
    node: int
    revision: int
    digest: str
    content: bytes


@dataclass(frozen=True)
class AuthoredDiff:
    """A diff authored against ``base``, validated by the contract's authoring rule."""

    base: DiffSnapshot
    mode: AnchorMode
    hunks: tuple[Hunk, ...]
    reads: tuple[Region, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.base, DiffSnapshot):
            raise TypeError(f"a diff's base must be a DiffSnapshot, got {type(self.base).__name__}")
        check_diff(len(self.base.content), self.mode, tuple(self.hunks), tuple(self.reads))

    @property
    def effective_reads(self) -> tuple[Region, ...]:
        """What the diff depends on: each declared read, and each hunk's span grown
        by one byte on both sides (clipped to the base) so that an insertion right
        beside a hunk counts as touching it — in base order, each region once.

        Computed here, not borrowed from the model: the certifier compares two
        independently written versions of S1, so a mistake in either shows.
        """
        length = len(self.base.content)
        spans = {(region.start, region.end) for region in self.reads}
        for hunk in self.hunks:
            spans.add((hunk.start - 1 if hunk.start > 0 else 0, hunk.end + 1 if hunk.end < length else length))
        return tuple(Region(start, end) for start, end in sorted(spans))


@dataclass(frozen=True)
class AppliedDiff:
    """A handle on an applied diff: the buffer and the state the apply made."""

    buffer_id: int
    node: int


class _Node(NamedTuple):
    """One state in the revision map (a NamedTuple: built on every splice)."""

    parent: int | None
    level: int
    edits: tuple[Edit, ...]


#: A placed hunk: (start, end, replacement) in live coordinates.
Placed = tuple[int, int, bytes]


def map_intervals(intervals: list[Interval], edits: tuple[Edit, ...]) -> list[Interval] | None:
    """Carry the positions of some bytes through one node's edits.

    ``None`` if an edit removed any of them; otherwise their new intervals
    (an insertion strictly inside an interval splits it). Edits are applied
    last first, so each is still in the coordinates it was given in.
    """
    pieces = intervals
    for offset, removed, inserted in reversed(edits):
        moved: list[Interval] = []
        for start, end in pieces:
            if removed and offset < end and start < offset + removed:
                return None
            if offset + removed <= start:
                moved.append((start + inserted - removed, end + inserted - removed))
            elif offset >= end or not inserted:
                moved.append((start, end))
            else:
                moved.append((start, offset))
                moved.append((offset + inserted, end + inserted))
        pieces = moved
    return pieces


def map_gap(position: int, edits: tuple[Edit, ...], *, left: bool) -> int:
    """Where a gap between bytes goes through one node's edits (for reporting
    where a conflicting region's stretch now lies). A region's start gap keeps
    to the left of text inserted at it, its end gap to the right, so the
    reported stretch covers whatever replaced or was added at the region."""
    for offset, removed, inserted in reversed(edits):
        if left:
            if position <= offset:
                continue
            position = offset if position < offset + removed else position + inserted - removed
        else:
            if position < offset or (position == offset and removed):
                continue
            position = offset + inserted if position < offset + removed else position + inserted - removed
    return position


def _inverse(edits: tuple[Edit, ...]) -> tuple[Edit, ...]:
    """The edits that take a node's state back to its parent's, in the node's coordinates."""
    shift = 0
    inverse: list[Edit] = []
    for offset, removed, inserted in edits:
        inverse.append((offset + shift, inserted, removed))
        shift += inserted - removed
    return tuple(inverse)


class DiffableBuffer:
    """A journaled buffer that also takes self-authored diffs (S1–S3).

    Every mutation must go through this object (not the wrapped buffer), so
    that the revision map sees it. ``write`` is the same journaled splice as
    ``splice``, for a second writer such as a tool.
    """

    def __init__(
        self,
        buffer: JournaledBuffer | None = None,
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
    ) -> None:
        if buffer is None:
            buffer = JournaledBuffer()
        if not isinstance(buffer, JournaledBuffer):
            raise TypeError(f"expected a JournaledBuffer, got {type(buffer).__name__}")
        if type(history_limit) is not int or history_limit < 1:
            raise ValueError(f"history_limit must be a positive int, got {history_limit!r}")
        self._buffer = buffer
        self._id = next(_buffer_ids)
        self._lock = threading.RLock()
        self._history_limit = history_limit
        self._nodes: dict[int, _Node] = {}
        self._order: deque[int] = deque()
        self._node_ids = itertools.count()
        #: The node of the state at each depth of the inner buffer.
        self._path: list[int] = [self._new_node(None, ())]
        for _ in range(buffer.depth):  # records made before wrapping: no known history
            self._path.append(self._new_node(None, ()))
        self._expected_version = buffer.storage.version

    # -- observation -----------------------------------------------------------------

    @property
    def journaled(self) -> JournaledBuffer:
        """The wrapped buffer (read it freely; mutate it only through this object)."""
        return self._buffer

    def read(self) -> bytes:
        return self._buffer.read()

    def __len__(self) -> int:
        return len(self._buffer)

    @property
    def depth(self) -> int:
        return self._buffer.depth

    @property
    def revision(self) -> int:
        """The inner buffer's revision: one per splice, rollback step and applied diff; never reused."""
        return self._buffer.revision

    # -- the buffer's own operations, routed through the revision map ------------------

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        """A journaled splice (see ``JournaledBuffer.splice``), noted in the map."""
        if isinstance(insert, (bytearray, memoryview)):
            # len() of a memoryview counts items, not bytes: a view of an
            # array('H') has half as many items as bytes. The map must record
            # the byte length the buffer really inserted.
            insert = bytes(insert)
        with self._lock:
            self._sync()
            depth = self._buffer.depth
            self._buffer.splice(offset, delete_length, insert)
            self._advance(depth, ((offset, delete_length, len(insert)),))

    def write(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Another writer's splice (a tool): journaled and mapped like any other."""
        self.splice(offset, delete_length, insert)

    def rollback(self, steps: int = 1) -> None:
        with self._lock:
            self._sync()
            self._buffer.rollback(steps)
            self._truncate()

    def checkpoint(self) -> Checkpoint:
        return self._buffer.checkpoint()

    def rollback_to(self, token: Checkpoint) -> None:
        with self._lock:
            self._sync()
            self._buffer.rollback_to(token)
            self._truncate()

    def adopt_current(self) -> None:
        with self._lock:
            self._sync()
            self._buffer.adopt_current()
            self._path = self._path[-1:]

    def compact(self, keep: int) -> None:
        with self._lock:
            self._sync()
            self._buffer.compact(keep)
            self._drop_below()

    # -- diffs ------------------------------------------------------------------------------

    def snapshot(self) -> DiffSnapshot:
        """The current state, for authoring a diff against it (copies the bytes)."""
        with self._lock:
            self._sync()
            content = self._buffer.read()
            return DiffSnapshot(
                self._id, self._path[-1], self.revision, hashlib.sha256(content).hexdigest(), content
            )

    def author_diff(
        self,
        base: DiffSnapshot,
        mode: AnchorMode,
        hunks: Sequence[Hunk],
        reads: Sequence[Region] = (),
    ) -> AuthoredDiff:
        """Build a diff against ``base``; ``ValueError``/``TypeError`` if it is malformed."""
        if mode not in ANCHOR_MODES:
            raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
        return AuthoredDiff(base, mode, tuple(hunks), tuple(reads))

    def apply_diff(self, diff: AuthoredDiff) -> AppliedDiff:
        """Apply ``diff`` to the live base under S1, as one journal record (S2).

        Raises ``StaleBaseError`` (nothing changed) if the base went stale in a
        way the rule rejects, ``ValueError`` for a diff of another buffer,
        ``JournalError`` if the record cannot be committed.
        """
        if not isinstance(diff, AuthoredDiff):
            raise TypeError(f"expected an AuthoredDiff, got {type(diff).__name__}")
        with self._lock:
            self._sync()
            if diff.base.buffer_id != self._id:
                raise ValueError("the diff was authored on a snapshot of another buffer")
            placed = self._place(diff)
            storage = self._buffer.storage
            span_start, span_end = placed[0][0], placed[-1][1]
            pieces: list[bytes] = []
            cursor = span_start
            for start, end, replacement in placed:
                pieces.append(storage.read_range(cursor, start))
                pieces.append(replacement)
                cursor = end
            depth = self._buffer.depth
            self._buffer.splice(span_start, span_end - span_start, b"".join(pieces))
            self._advance(depth, tuple((start, end - start, len(rep)) for start, end, rep in placed))
            return AppliedDiff(self._id, self._path[-1])

    def rollback_diff(self, applied: AppliedDiff) -> None:
        """Roll back to the live base ``applied`` was applied to (undoing it and
        everything after it), or raise ``UnreachableRollbackError`` and change nothing."""
        if not isinstance(applied, AppliedDiff):
            raise TypeError(f"expected an AppliedDiff, got {type(applied).__name__}")
        with self._lock:
            self._sync()
            if applied.buffer_id != self._id:
                raise UnreachableRollbackError("the diff was applied to another buffer")
            try:
                position = self._path.index(applied.node)
            except ValueError:
                position = 0
            if position == 0:
                raise UnreachableRollbackError("the diff's state was rolled away, evicted or adopted away")
            self.rollback(len(self._path) - position)

    # -- S1: where the hunks go, or why they cannot -------------------------------------------

    def _place(self, diff: AuthoredDiff) -> list[Placed]:
        """The hunks in live coordinates, or ``StaleBaseError``."""
        if self._base_unchanged(diff.base):
            return [(h.start, h.end, h.replacement) for h in diff.hunks]
        if diff.mode == "positional":
            raise self._stale(diff, "the base moved and the diff is positional (offsets or line numbers)")
        return self._rebase(diff)

    def _base_unchanged(self, base: DiffSnapshot) -> bool:
        """The same state, or the same content (rule 1 of S1)."""
        if base.node == self._path[-1]:
            return True
        return len(self._buffer) == len(base.content) and self._buffer.read() == base.content

    def _regions_to_check(self, diff: AuthoredDiff) -> tuple[Region, ...]:
        return diff.effective_reads

    def _rebase(self, diff: AuthoredDiff) -> list[Placed]:
        """Rule 3 of S1: check every region, then move each hunk with its widened region."""
        route = self._route(diff.base.node, self._path[-1])
        if route is None:
            raise self._stale(diff, "the history between the snapshot and the live base is no longer kept (unprovable)")
        shifts = {region: self._shift(diff, region, route) for region in self._regions_to_check(diff)}
        length = len(diff.base.content)
        placed: list[Placed] = []
        for hunk in diff.hunks:
            widened = Region(max(0, hunk.start - 1), min(length, hunk.end + 1))
            shift = shifts[widened] if widened in shifts else self._shift(diff, widened, route)
            placed.append((hunk.start + shift, hunk.end + shift, hunk.replacement))
        return placed

    def _shift(self, diff: AuthoredDiff, region: Region, route: list[tuple[Edit, ...]]) -> int:
        """How far ``region`` moved between the snapshot and the live base, or
        ``StaleBaseError`` if any of its bytes is gone or it is no longer contiguous."""
        pieces: list[Interval] | None = [(region.start, region.end)] if region.end > region.start else None
        for edits in route:
            if pieces is None:
                break
            pieces = map_intervals(pieces, edits)
        if pieces is None or any(pieces[i][1] != pieces[i + 1][0] for i in range(len(pieces) - 1)):
            start, end = region.start, region.end
            for edits in route:
                start, end = map_gap(start, edits, left=True), map_gap(end, edits, left=False)
            raise self._stale(
                diff,
                f"region [{region.start}, {region.end}) of the snapshot (now [{start}, {end}) of the "
                "live base) changed in between",
                conflict=(region.start, region.end),
                live_conflict=(start, end),
            )
        return pieces[0][0] - region.start

    def _stale(
        self,
        diff: AuthoredDiff,
        why: str,
        *,
        conflict: Interval | None = None,
        live_conflict: Interval | None = None,
    ) -> StaleBaseError:
        return StaleBaseError(
            f"stale base: the diff was authored on revision {diff.base.revision}, the live base is "
            f"revision {self.revision}; {why}",
            base_revision=diff.base.revision,
            live_revision=self.revision,
            conflict=conflict,
            live_conflict=live_conflict,
        )

    def _route(self, source: int, target: int) -> list[tuple[Edit, ...]] | None:
        """The edits that take ``source``'s state to ``target``'s along the tree,
        or ``None`` if part of the path is no longer kept (or there is none)."""
        up: list[tuple[Edit, ...]] = []
        down: list[tuple[Edit, ...]] = []
        a, b = source, target
        while a != b:
            node_a, node_b = self._nodes.get(a), self._nodes.get(b)
            if node_a is None or node_b is None:
                return None
            if node_a.level >= node_b.level:
                if node_a.parent is None:
                    return None
                up.append(_inverse(node_a.edits))
                a = node_a.parent
            else:
                if node_b.parent is None:
                    return None
                down.append(node_b.edits)
                b = node_b.parent
        return up + down[::-1]

    # -- the revision map --------------------------------------------------------------------

    def _new_node(self, parent: int | None, edits: tuple[Edit, ...]) -> int:
        node_id = next(self._node_ids)
        level = 0 if parent is None or parent not in self._nodes else self._nodes[parent].level + 1
        self._nodes[node_id] = _Node(parent if level else None, level, edits)
        self._order.append(node_id)
        while len(self._order) > self._history_limit:
            self._nodes.pop(self._order.popleft(), None)
        return node_id

    def _advance(self, depth_before: int, edits: tuple[Edit, ...]) -> None:
        """A record was committed: a new child state (and maybe an eviction)."""
        node = self._new_node(self._path[-1], edits)
        if self._buffer.depth == depth_before:  # the oldest record was evicted
            del self._path[0]
        self._path.append(node)
        self._expected_version = self._buffer.storage.version

    def _truncate(self) -> None:
        """After a rollback: the states above the new depth left the history."""
        del self._path[self._buffer.depth + 1 :]
        self._expected_version = self._buffer.storage.version

    def _drop_below(self) -> None:
        """After a compaction: the states below the new horizon left the log."""
        del self._path[: len(self._path) - 1 - self._buffer.depth]
        self._expected_version = self._buffer.storage.version

    def _sync(self) -> None:
        """An out-of-log write leaves the current state with no known history."""
        if self._buffer.storage.version != self._expected_version:
            self._path[-1] = self._new_node(None, ())
            self._expected_version = self._buffer.storage.version
