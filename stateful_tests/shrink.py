"""The last shrinking pass over a counterexample, by deterministic replay.

Hypothesis's own shrink phase is off (it spent 30 s and more per violation on
these machines). Because a trace is plain data that replays deterministically,
this pass finishes the job the way quickcheck-state-machine and delta
debugging do: take the first shorter or simpler candidate trace that still
fails on replay, and start again from it, until none does or the replay budget
is spent. The result is 1-minimal: no single step can be removed and no
argument made simpler while it still fails. A move is taken only if the
shorter trace fails again on further replays (:data:`CONFIRMING_REPLAYS`), so
a target that answers differently from run to run is not handed a
counterexample that fails once in a while.

The loop and the moves that make sense for any family (delete a step, delete
two, delete a block, fold the steps that only build the starting buffer into
it, simplify one operation, shorten or plainen the initial buffer) are here; each family composes them with moves of its own, in the order
that reaches its shortest counterexamples soonest
(``PropertyFamily.candidates``). One move is not greedy: a breadth-first
search of every shorter trace over a small alphabet (:func:`small_scope_search`),
offered after all the others, for the dead ends where no single move helps.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rollcert.model.operations import Rollback
from rollcert.stateful_tests.family import Candidates
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import harm_rank
from rollcert.stateful_tests.judge import Violation
from rollcert.stateful_tests.judge import replay
from rollcert.stateful_tests.world import REVISION_WRAPS
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import Target

Family = PropertyFamily[Any, Any, Any]

#: The small-scope search (:func:`small_scope_search`) tries traces of at most
#: this many steps (beyond three, the candidates multiply past any budget) ...
SMALL_SCOPE_LONGEST = 3
#: ... and at most this many of them per pass, out of the family's replay budget:
#: each is a replay of a few steps, a tenth of a millisecond on the bundled
#: buffers (durable ones included) but 50-200 ms over the protocol, where every
#: replay starts the server (the family's budget bounds the whole pass either
#: way). The deepest greedy dead end of a specimen, flush_without_sync's, needs 393.
SMALL_SCOPE_CANDIDATES = 600
#: A candidate that failed is replayed this many times more, and must fail the
#: same rule each time, before the minimiser moves to it. A deterministic target
#: pays this only on the few accepted moves; a target whose answers vary from run
#: to run (pycrdt's undo: the same eleven steps gave other text in 52 of 200
#: fresh documents) would otherwise hand over a counterexample that fails once
#: in four replays.
CONFIRMING_REPLAYS = 2


def without_numbered(
    operations: list[Any],
    index: int,
    reference_of: Callable[[Any], int | None],
    renumbered: Callable[[Any, int], Any],
) -> list[Any] | None:
    """``operations`` without step ``index``, a step that *made* something later
    steps name by its number (the k-th checkpoint, snapshot or applied diff):
    the names above it move down by one, and if a later step names the removed
    one, ``None`` — the trace would no longer mean anything. ``reference_of``
    says which number a step names (``None``: none of this kind)."""
    removed_kind = type(operations[index])
    number = sum(isinstance(op, removed_kind) for op in operations[:index])
    result: list[Any] = []
    for op in operations[:index] + operations[index + 1 :]:
        reference = reference_of(op)
        if reference == number:
            return None
        if reference is not None and reference > number:
            op = renumbered(op, reference - 1)
        result.append(op)
    return result


def chunk_bytes_moves(config: BufferConfig, operations: list[Any]) -> Candidates:
    """A trace built with small chunks (``BufferConfig.chunk_bytes``) on the
    target's own chunk: a reader should not be told the chunk size mattered when
    it did not."""
    if config.chunk_bytes is not None:
        yield replace(config, chunk_bytes=None), operations


def start_revision_moves(config: BufferConfig, operations: list[Any]) -> Candidates:
    """A trace that starts at a high revision (``BufferConfig.start_revision``) from
    revision 0 (the bug may not need it), else from just below the wrap it is
    below: a counter that wraps then does so at the first mutation, and the steps
    that only counted up to it can go."""
    start = config.start_revision
    if start:
        yield replace(config, start_revision=0), operations
        # Lower wraps first (a smaller number is the plainer story); the one just
        # above only from a start that is not already right below a wrap.
        for wrap in REVISION_WRAPS:
            if wrap - 1 < start or (wrap - 1 > start and start + 1 not in REVISION_WRAPS):
                yield replace(config, start_revision=wrap - 1), operations
            if wrap - 1 >= start:
                break


def single_deletions(family: Family, config: BufferConfig, operations: list[Any]) -> Candidates:
    """The trace without one step (later references renumbered)."""
    for index in range(len(operations)):
        shorter = family.without_step(operations, index)
        if shorter is not None:
            yield config, shorter


def halving_deletions(family: Family, config: BufferConfig, operations: list[Any]) -> Candidates:
    """Aligned blocks of steps, a half of the trace first, then quarters, eighths,
    down to two steps (delta debugging's chunks): a long history loses most of its
    steps in a few accepted moves, where one step per move spent the replay
    budget with 51 steps left (a folded R0 finding of R3's long-history machine)."""
    size = len(operations) // 2
    while size >= 2:
        for first in range(0, len(operations) - size + 1, size):
            shorter = _without_block(family, operations, first, size)
            if shorter is not None:
                yield config, shorter
        size //= 2


def pair_deletions(family: Family, config: BufferConfig, operations: list[Any]) -> Candidates:
    """Two steps that only make sense together (an edit and the rollback that undoes it)."""
    for first in range(len(operations)):
        for second in range(first + 1, len(operations)):
            without_second = family.without_step(operations, second)
            both = family.without_step(without_second, first) if without_second is not None else None
            if both is not None:
                yield config, both


def block_deletions(family: Family, config: BufferConfig, operations: list[Any]) -> Candidates:
    """A block of consecutive steps, longest first (edits that only set up the
    offsets a later step was drawn against must go together)."""
    for length in range(len(operations) - 1, 1, -1):
        for first in range(len(operations) - length + 1):
            block = _without_block(family, operations, first, length)
            if block is not None:
                yield config, block


def _without_block(family: Family, operations: list[Any], first: int, size: int) -> list[Any] | None:
    """``operations`` without the ``size`` steps from ``first`` (last first, so the
    family renumbers what follows), or ``None`` when one of them cannot go."""
    shorter: list[Any] | None = operations
    for index in range(first + size - 1, first - 1, -1):
        shorter = family.without_step(shorter, index) if shorter is not None else None
    return shorter


def folded_setup(
    family: Family, config: BufferConfig, operations: list[Any], builds_bytes: Callable[[Any], bool]
) -> Candidates:
    """The trace started from the buffer its first few steps build, those steps
    dropped: ``splice, splice, splice, rollback_to`` from ``''`` becomes
    ``rollback_to`` from ``'abc'`` when only the bytes mattered.

    ``builds_bytes`` picks the kinds of step that can be setup (the families'
    edits); the leading run of them that the model accepts is folded, longest
    first, never the last step (that is where the trace fails). Whether the
    steps *only* built bytes — no later rollback, checkpoint, snapshot or
    comparison needing their records, depth or revisions — is not guessed
    here: :func:`minimise` replays every candidate and keeps it only if it
    still fails, and a rollback of a record that no longer exists is refused
    (or not generable), so a violation that needs the records refuses the fold
    by itself. The steps count shrinks and the initial buffer grows, so no
    move undoes another and the loop still ends. Families list it late among the
    greedy moves: tried first, it leads the greedy search to another trace of
    as many steps on a longer buffer as often as to a shorter one. The rollback
    family tries it once more before the moves that only make a trace plainer,
    which on a wide paste spent the replay budget first."""
    unjudgeable: tuple[type[Exception], ...] = (ValueError, TypeError, *family.not_a_trace)
    try:
        state = family.initial_state(config)
    except unjudgeable:
        return
    built: list[bytes] = []
    for operation in operations[:-1]:
        if not builds_bytes(operation):
            break
        try:
            reading = family.predict(state, operation).readings[0]
        except unjudgeable:
            break
        if reading.error is not None:
            break  # a refused edit is a step of the story, not setup
        state = reading.state
        built.append(family.content(state))
    for length in range(len(built), 0, -1):
        yield replace(config, initial=built[length - 1]), operations[length:]


def small_scope_search(
    family: Family,
    starts: Sequence[BufferConfig],
    operations: list[Any],
    alphabet: Callable[[Any], list[Any]],
    *,
    longest: int = SMALL_SCOPE_LONGEST,
    limit: int = SMALL_SCOPE_CANDIDATES,
) -> Candidates:
    """Every trace shorter than ``operations`` (and at most ``longest`` steps)
    over a small alphabet, breadth-first from each of ``starts``: shortest first.

    The greedy moves stop at a trace no *single* move shortens, and some
    counterexamples sit in a dead end: a crash during a compaction that cannot
    be dropped without re-aiming the damage, a checkpoint and a rollback_to where
    an edit and a rollback(1) would do. This is the non-greedy way out, the
    small-scope bet of :mod:`rollcert.stateful_tests.exhaustive` (most bugs show
    within a few operations on a few bytes) made once more from the simplest
    starting buffers. It only proposes: :func:`minimise` replays every candidate
    on the target and keeps the first that still fails, so whatever it yields is
    a judged counterexample, never a guess. ``alphabet`` gives the operations
    tried from a model state (the family's, for the property's machine); the
    frontier follows the model's main reading. No deduplication: a SUT's state
    (a durable journal's records) is more than the model's, so two traces with
    one model state may still differ. ``limit`` bounds the candidates yielded,
    so a counterexample that is already the shortest costs at most that many
    replays of a few steps."""
    unjudgeable: tuple[type[Exception], ...] = (ValueError, TypeError, *family.not_a_trace)
    frontier: list[tuple[BufferConfig, Any, list[Any]]] = []
    for start in starts:
        try:
            frontier.append((start, family.initial_state(start), []))
        except unjudgeable:
            continue
    yielded = 0
    deepest = min(len(operations) - 1, longest)
    for length in range(1, deepest + 1):
        grown: list[tuple[BufferConfig, Any, list[Any]]] = []
        for start, state, trace in frontier:
            for operation in alphabet(state):
                candidate = [*trace, operation]
                yield start, candidate
                yielded += 1
                if yielded >= limit:
                    return
                if length == deepest:
                    continue  # no longer trace will be tried: no state to carry
                try:
                    grown.append((start, family.predict(state, operation).readings[0].state, candidate))
                except unjudgeable:
                    continue
        frontier = grown


def simpler_operations(family: Family, config: BufferConfig, operations: list[Any]) -> Candidates:
    """One operation replaced by a simpler one."""
    for index, operation in enumerate(operations):
        for simpler in family.simpler(operation):
            yield config, operations[:index] + [simpler] + operations[index + 1 :]


#: Past this many bytes, a buffer or an insert is shrunk by blocks only: the wide
#: draws make kilobytes, and a move per byte would spend the replay budget on them.
BYTEWISE_LIMIT = 64


def _block_sizes(length: int) -> Iterator[int]:
    """Block sizes to cut out of ``length`` bytes: halves, quarters, … down to a
    sixteenth (at most 30 cuts; once an accepted cut has shortened the data, the
    next pass offers finer ones), but never below two bytes."""
    size, smallest = length // 2, max(2, length // 16)
    while size >= smallest:
        yield size
        size //= 2


def _block_cuts(data: bytes) -> Iterator[bytes]:
    """``data`` without one block (see :func:`_block_sizes`)."""
    for size in _block_sizes(len(data)):
        for start in range(0, len(data) - size + 1, size):
            yield data[:start] + data[start + size :]


def shorter_initial(config: BufferConfig, operations: list[Any]) -> Candidates:
    """The initial buffer without a block of its bytes (halves first), then —
    once it is short — without one of its bytes."""
    initial = config.initial
    for shorter in _block_cuts(initial):
        yield replace(config, initial=shorter), operations
    if len(initial) <= BYTEWISE_LIMIT:
        for i in range(len(initial)):
            yield replace(config, initial=initial[:i] + initial[i + 1 :]), operations


def _plainer(data: bytes) -> Iterator[bytes]:
    """``data`` with bytes made ``a``: every byte outside ``a-z`` at once, each
    half at once, then (short data) one byte at a time."""
    letters = bytes(b if 0x61 <= b <= 0x7A else 0x61 for b in data)
    if letters != data:
        yield letters
    half = len(data) // 2
    if len(data) > BYTEWISE_LIMIT:
        for start, end in ((0, half), (half, len(data))):
            plain = data[:start] + b"a" * (end - start) + data[end:]
            if plain != data:
                yield plain
        return
    for i, byte in enumerate(data):
        if byte != ord("a"):
            yield data[:i] + b"a" + data[i + 1 :]


def plainer_initial(config: BufferConfig, operations: list[Any]) -> Candidates:
    """The initial buffer with bytes made ``a``: fewer letters to read."""
    for plain in _plainer(config.initial):
        yield replace(config, initial=plain), operations


def _edit_of(operation: Any) -> Any:
    """The edit an operation makes (a crash's interrupted one), or ``None``: also
    for an edit sent arguments of another type (R0's bad_arguments), whose
    offsets no cut can move."""
    inner = getattr(operation, "operation", None)
    edit = inner if inner is not None else operation
    plain = isinstance(getattr(edit, "insert", None), bytes) and hasattr(edit, "offset")
    return edit if plain and type(edit.offset) is int and type(edit.delete_length) is int else None


def _with_edit(operation: Any, edit: Any) -> Any:
    return replace(operation, operation=edit) if getattr(operation, "operation", None) is not None else edit


def _shifted(operations: list[Any], position: int, size: int) -> list[Any]:
    """``operations`` following a cut of ``size`` bytes at ``position``: every edit's
    offset past it moved back by ``size``, and a removal that spanned the cut bytes
    made shorter by as many of them as it spanned (the replay decides if it still
    means the same). Without the second, a removal of everything a long paste left
    held on to every byte of the paste: the cut made it reach past the end."""
    shifted = []
    for operation in operations:
        edit = _edit_of(operation)
        if edit is not None:
            start, end = edit.offset, edit.offset + edit.delete_length
            moved_start = start if start <= position else max(position, start - size)
            moved_end = end if end <= position else max(position, end - size)
            if (moved_start, moved_end) != (start, end):
                moved = replace(edit, offset=moved_start, delete_length=moved_end - moved_start)
                operation = _with_edit(operation, moved)
        shifted.append(operation)
    return shifted


#: A start buffer past this many bytes is halved before any other move is tried.
LARGE_START_BYTES = 4096


def large_start_halved(config: BufferConfig, operations: list[Any]) -> Candidates:
    """A start buffer of kilobytes (the generator's 64 KiB and 1.25 MiB starts) without
    its first or its last half (and quarter), later offsets moved back with the cut.
    Tried before every other move: each replay of such a trace costs the target's
    and the rules' work over the whole buffer (first_match_scan's R2: 1,847 replays,
    46 s), and most findings need a few bytes of it. A finding that needs the size
    (a chunk boundary at 64 KiB) refuses the cuts in a handful of replays."""
    initial = config.initial
    if len(initial) <= LARGE_START_BYTES:
        return
    # First the bytes no edit comes near: past the furthest reach of any edit, then
    # before the lowest offset (a margin of 64 each side for anchors and context).
    edits = [edit for edit in map(_edit_of, operations) if edit is not None]
    if edits:
        reach = max(edit.offset + max(edit.delete_length, len(edit.insert)) for edit in edits) + 64
        if reach < len(initial):
            yield replace(config, initial=initial[:reach]), operations
        lowest = min(edit.offset for edit in edits) - 64
        if lowest > 0:
            yield replace(config, initial=initial[lowest:]), _shifted(operations, 0, lowest)
    for size in (len(initial) // 2, len(initial) // 4):
        for start in (0, len(initial) - size):
            yield _start_cut(config, operations, start, size)


def _start_cut(config: BufferConfig, operations: list[Any], start: int, size: int) -> tuple[BufferConfig, list[Any]]:
    """The start buffer without ``size`` bytes at ``start``, later offsets moved back with them."""
    initial = config.initial
    return replace(config, initial=initial[:start] + initial[start + size :]), _shifted(operations, start, size)


def cuts_with_shift(config: BufferConfig, operations: list[Any]) -> Candidates:
    """A block cut out of the initial buffer or out of one edit's insert, or an
    insert-only edit taken out, every later offset past the cut moved back with it. A wide draw leaves kilobytes behind, and
    the edits after it point into them: cutting bytes alone would leave those
    offsets out of range, and moving one offset by one byte per replay would spend
    the whole budget on one insert."""
    initial = config.initial
    for size in _block_sizes(len(initial)):
        for start in range(0, len(initial) - size + 1, size):
            yield _start_cut(config, operations, start, size)
    for index, operation in enumerate(operations):
        edit = _edit_of(operation)
        if edit is not None and edit is operation and not edit.delete_length and edit.insert:
            # An insert taken out whole, and what came after following it.
            yield config, [*operations[:index], *_shifted(operations[index + 1 :], edit.offset, len(edit.insert))]
        if edit is None or len(edit.insert) < 4:
            continue
        insert = edit.insert
        for size in _block_sizes(len(insert)):
            for start in range(0, len(insert) - size + 1, size):
                shorter = _with_edit(operation, replace(edit, insert=insert[:start] + insert[start + size :]))
                later = _shifted(operations[index + 1 :], edit.offset + start, size)
                yield config, [*operations[:index], shorter, *later]


def simpler_edits(operation: Any, *, leaps: bool = True) -> Iterator[Any]:
    """Simpler versions of an edit (anything with offset, delete_length and insert):
    a shorter insert, a shorter delete, an offset nearer the start. With
    ``leaps``, also a plainer insert (a byte made ``a``) and a delete or offset
    that jumps straight to 0 — the rollback family's edits may; the diff
    family's must not, since its hunks were drawn against the bytes and offsets
    those edits left behind. A bytearray or memoryview insert stays one (R0's
    bad_arguments sends them: its type may be the story); an edit sent
    arguments of another type has no simpler version: they are the story."""
    kind, numbers = type(operation.insert), {type(operation.offset), type(operation.delete_length)}
    if kind not in (bytes, bytearray, memoryview) or numbers != {int}:
        return
    insert = bytes(operation.insert)
    for shorter in _block_cuts(insert):
        yield replace(operation, insert=kind(shorter))
    if len(insert) <= BYTEWISE_LIMIT:
        for i in range(len(insert)):
            yield replace(operation, insert=kind(insert[:i] + insert[i + 1 :]))
    if leaps:
        for plain in _plainer(insert):
            yield replace(operation, insert=kind(plain))
    if operation.delete_length:
        if leaps:
            yield replace(operation, delete_length=0)
        for smaller in _smaller_numbers(operation.delete_length):
            yield replace(operation, delete_length=smaller)
    if operation.offset:
        if leaps:
            yield replace(operation, offset=0)
        for smaller in _smaller_numbers(operation.offset):
            yield replace(operation, offset=smaller)


def _smaller_numbers(value: int) -> Iterator[int]:
    """``value`` less a half, a quarter, … and finally one: a delete of 472 bytes
    that must stay past 128 reaches 129 in a few accepted moves, not 343."""
    step = value // 2
    while step > 1:
        yield value - step
        step //= 2
    yield value - 1


def minimise(
    family: Family,
    target: Target,
    violation: Violation,
    property_id: str | None = None,
    *,
    keep_finding: bool = False,
    budget: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> Violation:
    """The smallest failing trace reachable from ``violation`` by greedy moves,
    each checked by replaying it on ``target``, within the family's replay budget.

    A candidate counts only if its failing step still breaks the rule's own
    clause — ``property_id``'s, or (without one) one of the rules ``violation``
    broke, or (for R0, whose machine owns every finding) one of those or R0's
    alone: shrinking an R2 finding must not wander off to a shorter mismatch of
    another rule. Among candidates of the
    same length, one that is less harmful (:func:`harm_rank`: a depth off by
    one rather than wrong bytes) is passed over, so the property's harm stays
    in view; a shorter one is always taken.

    With ``keep_finding`` a candidate must keep ``violation``'s finding key (the
    rules it broke, exactly, and its coarse harm signature, ``HarmSignature.coarse``):
    a further finding of a run that met several (issue 43) is minimised without
    slipping into another bug's, nor into a finding already listed (an R6
    finding of R0's machine shrinking to a failure of R0's clause alone).
    ``budget`` replaces the family's replay budget; ``stop`` ends the pass early
    (the further search's time), with the best trace so far."""
    budget = family.replay_budget if budget is None else budget
    skipped: tuple[type[Exception], ...] = (HarnessError, ValueError, TypeError, IndexError, *family.not_a_trace)
    best = violation
    rules = _rules_kept(violation, property_id)
    key = violation.finding_key() if keep_finding else None
    improved = True
    while improved and budget > 0:
        improved = False
        operations = [step.operation for step in best.steps]
        for config, candidate in family.candidates(best.config, operations):
            if not family.generable(config, candidate, target):
                continue
            budget -= 1
            if budget <= 0 or (stop is not None and stop()):
                budget = 0
                break
            try:
                replay(family, target, config, candidate)
            except Violation as found:
                if (
                    _keeps(found, best, rules)
                    and (key is None or found.finding_key() == key)
                    and _fails_again(family, target, config, candidate, rules, skipped, key)
                ):
                    budget -= CONFIRMING_REPLAYS
                    best = found
                    improved = True
                    break
            except skipped:  # not a runnable trace for this target
                continue
    return best


def _fails_again(
    family: Family,
    target: Target,
    config: BufferConfig,
    operations: list[Any],
    rules: tuple[str, ...],
    skipped: tuple[type[Exception], ...],
    key: tuple[tuple[str, ...], str] | None = None,
) -> bool:
    """Whether ``operations`` still breaks one of ``rules`` on each of
    :data:`CONFIRMING_REPLAYS` more replays (see there)."""
    for _ in range(CONFIRMING_REPLAYS):
        try:
            replay(family, target, config, operations)
        except Violation as again:
            if not set(rules) & set(again.broken):
                return False
            if key is not None and again.finding_key() != key:
                return False
        except skipped:
            return False
        else:
            return False
    return True


def _rules_kept(violation: Violation, property_id: str | None) -> tuple[str, ...]:
    """The rules a candidate must still break (see :func:`minimise`): the property's
    own; for R0, which every violation breaks, the rules the first failure broke or
    R0's clause alone (a failure of no rule in particular). Without the last, an R0
    run that first met a bug in a journal of one record (which R6's catch-all clause
    takes) kept a step it did not need: the shorter trace broke R0's clause alone."""
    if property_id is None:
        return violation.broken
    if property_id == "R0":
        return tuple(dict.fromkeys((*violation.broken, "R0")))
    return (property_id,)


def _keeps(found: Violation, best: Violation, rules: tuple[str, ...]) -> bool:
    """Whether the minimiser moves from ``best`` to ``found`` (see :func:`minimise`)."""
    if not set(rules) & set(found.broken):
        return False
    if len(found.steps) < len(best.steps):
        return True
    return harm_rank(found.harm) >= harm_rank(best.harm)


def edit_with_its_rollback_shortened(
    config: BufferConfig, operations: list[Any], edits: tuple[type[Any], ...]
) -> Candidates:
    """An edit (an operation of one of the types ``edits``) deleted together with
    one step less of a later multi-step rollback. Deleting the edit alone changes
    what the rollback undoes, so the trace changes meaning: a snapshot of a state a
    rollback of five records took away, where one record would do, otherwise keeps
    all five edits."""
    for index, operation in enumerate(operations):
        if not isinstance(operation, edits):
            continue
        for later in range(index + 1, len(operations)):
            rollback = operations[later]
            if isinstance(rollback, Rollback) and type(rollback.steps) is int and rollback.steps >= 2:
                shortened = list(operations)
                shortened[later] = Rollback(rollback.steps - 1)
                yield config, shortened[:index] + shortened[index + 1 :]
