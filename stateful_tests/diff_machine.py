"""The diff family (S1–S3): self-authored diffs against the model, with a second writer.

An author snapshots the buffer and later applies diffs against its snapshots
(positional and content-anchored, with read-sets that do and do not overlap
what happens next); a tool writes into the same buffer in between; rollbacks
and rollbacks of applied diffs are interleaved. After every step the SUT is
compared with :mod:`rollcert.model.diffs`, in both directions:

- **soundness** (the verdict): the SUT must never accept a diff the rule
  rejects, never produce other bytes than the model (after an apply, a
  rollback of an applied diff, or anything else), and never report another
  revision or depth;
- **precision** (a figure): of the diffs the rule accepts, the share the SUT
  accepted. A ``StaleBaseError`` where the rule accepts, with nothing changed,
  is sound but imprecise: a second reading of the model
  (:meth:`DiffFamily.predict`), and the run goes on from the unchanged state.

Only what is this family's own lives here: the rules and their alphabets, how
a step is done to a SUT, the apply's context lines and story, the precision
tally, and the minimisation moves that know what a snapshot or an applied diff
is. Stepping, judging, the machine's bookkeeping, minimising, traces and
certificates are the generic harness's (:mod:`rollcert.stateful_tests.family`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from typing import ClassVar
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from rollcert.model.contract import Hunk
from rollcert.model.contract import Region
from rollcert.model.diffs import DiffModelState
from rollcert.model.diffs import DiffOutcome
from rollcert.model.diffs import common_prefix
from rollcert.model.diffs import content_alignments
from rollcert.model.diffs import diff_step
from rollcert.model.diffs import effective_regions
from rollcert.model.diffs import initial_diff_state
from rollcert.model.diffs import locate
from rollcert.model.diffs import reject_apply
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import error_kind
from rollcert.model.operations import ApplyDiff
from rollcert.model.operations import DiffOperation
from rollcert.model.operations import Rollback
from rollcert.model.operations import RollbackDiff
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeSnapshot
from rollcert.model.operations import ToolWrite
from rollcert.stateful_tests import shrink
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.family import Candidates
from rollcert.stateful_tests.family import LiveSession
from rollcert.stateful_tests.family import NotGenerable
from rollcert.stateful_tests.family import Prediction
from rollcert.stateful_tests.family import PropertyFamily
from rollcert.stateful_tests.family import Reading
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.family import Tracker
from rollcert.stateful_tests.family import explain
from rollcert.stateful_tests.harness import FamilyMachine
from rollcert.stateful_tests.world import SMALL_ALPHABET
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import world_of
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HarnessError
from rollcert.targets.adapter import KnownFinding
from rollcert.targets.adapter import NotAssessable
from rollcert.targets.adapter import Target

#: The rules of each diff property's machine.
RULES_BY_PROPERTY: dict[str, tuple[str, ...]] = {
    "S1": ("snapshot", "agent_edit", "tool_write", "apply_diff", "rollback"),
    "S2": ("snapshot", "agent_edit", "tool_write", "apply_diff", "rollback_diff"),
    "S3": ("snapshot", "agent_edit", "rollback", "branch", "apply_diff"),
}

#: The rewrite stories (DiffMachine.rewrite_story): a tool rewrites one byte in
#: place between the snapshot and the apply, strictly inside a read the diff
#: declares (S1: its ends and its length untouched) ...
INSIDE_A_READ = "inside a read"
#: ... or where the diff neither reads nor writes (S2: the diff applies, and
#: rolling it back must keep the tool's byte).
BESIDE_THE_DIFF = "beside the diff"
#: The rewrite story each machine tells now and then (see :data:`REWRITE_SHARE`).
REWRITE_STORY_BY_PROPERTY: dict[str, str] = {"S1": INSIDE_A_READ, "S2": BESIDE_THE_DIFF}

#: Past this many steps, a counterexample's leading edits are folded into its
#: start before any other move (see :meth:`DiffFamily.candidates`).
LONG_TRACE = 16

#: Snapshots per example: more only lengthen traces without new situations.
MAX_SNAPSHOTS = 3
#: One diff rollback in this many asks for one step past the horizon (refused).
PAST_THE_HORIZON_SHARE = 8

#: Swarm testing (Groce et al., 2012): one example in this many runs with only
#: some of its machine's optional rules enabled (each kept with even odds, read
#: out of the start word), so the rules it keeps come round more often. With
#: every rule on, an apply is one step in five and the edits that move its base
#: are spread over three rules; a run whose examples each lean on a few rules
#: meets the combinations one rule dilutes (an S1 run at quick met a content
#: diff accepted on a moved base in 7 of 117 examples).
SWARM_SHARE = 2
#: The rules swarm testing may switch off, per machine: never the snapshot and
#: the apply, nor the rule its property judges (S2's ``rollback_diff``; S3's
#: rollbacks and the edits after them, which make the stale snapshots). Only S1
#: swarms so far: with S2's rules all switchable (its ``rollback_diff`` too), an
#: undo that restores the author's snapshot when the lengths agree passed 2
#: seeds in 10 (none before).
SWARM_RULES_BY_PROPERTY: dict[str, frozenset[str]] = {"S1": frozenset({"agent_edit", "tool_write", "rollback"})}

#: What each diff property needs. A *diff applier* (GNU patch, git apply,
#: diff-match-patch) declares DIFFS without CORE: it reads, writes and applies
#: diffs but keeps no log, so it has neither ``rollback`` nor ``rollback_diff``.
#: S1 judges applies only and is assessed on it; S2 (rolling an applied diff
#: back) and S3 (snapshots of rolled-away states) need the log and are
#: *not assessed* there, never passed.
DIFF_REQUIRED_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "S1": frozenset({Capability.DIFFS}),
    "S2": frozenset({Capability.DIFFS, Capability.CORE}),
    "S3": frozenset({Capability.DIFFS, Capability.CORE}),
}

#: The capability each optional diff rule needs (as machines.RULE_CAPABILITY):
#: without CORE the S1 machine runs without its rollback rule.
DIFF_RULE_CAPABILITY: dict[str, Capability] = {"rollback": Capability.CORE, "branch": Capability.CORE}

#: The reading of an apply the rule accepts but the SUT refused, changing nothing.
IMPRECISE = "imprecise: refused a diff the rule accepts, changing nothing"
#: The reading of an apply the rule rejects, accepted because its changed reads
#: were only rewritten with equal bytes (allowed, not required; counted apart).
EQUAL_BYTES = "accepted over reads rewritten with equal bytes (allowed, not required)"
#: The reading of an edit (a tool write, or the agent's own) placed at another
#: offset with the same bytes as a result (``model.diffs.content_alignments``: an
#: insertion slides as a deletion does, its bytes read at the other place):
#: allowed, not required; the steps judged right only under such a reading are
#: counted as ``alignment_accepted``.
ALIGNED = "the same edit aligned elsewhere, leaving the same bytes (allowed, not required)"


def _snapshot_moved(state: DiffModelState, operation: ApplyDiff) -> bool:
    index = operation.snapshot
    return 0 <= index < len(state.snapshots) and state.snapshots[index].content != state.content


def _positional_on_moved_base(state: object, operation: object) -> bool:
    return (
        isinstance(state, DiffModelState)
        and isinstance(operation, ApplyDiff)
        and operation.mode == "positional"
        and _snapshot_moved(state, operation)
    )


def _declared_read_changed(state: object, operation: object) -> bool:
    """A content diff on a moved base whose declared reads the rule would find changed."""
    if not (isinstance(state, DiffModelState) and isinstance(operation, ApplyDiff)) or not operation.reads:
        return False
    if operation.mode != "content" or not _snapshot_moved(state, operation):
        return False
    base = state.snapshots[operation.snapshot].cells
    return any(
        0 <= r.start < r.end <= len(base) and locate(base[r.start : r.end], state.current) is None
        for r in operation.reads
    )


#: What a diff applier (a patch file, a dmp patch) cannot be told, set aside by
#: its focused target so that the run reaches the tool's own staleness rule.
POSITIONAL_ON_MOVED_BASE = KnownFinding(
    "positional_on_moved_base",
    "a positional diff on a moved base: a patch cannot say it is positional, so the tool places it by its context",
    _positional_on_moved_base,  # takes any state: the diff machine hands it a DiffModelState
)
DECLARED_READ_CHANGED = KnownFinding(
    "declared_read_changed",
    "a content diff whose declared read changed: a patch cannot carry its read-set, so the tool never checks it",
    _declared_read_changed,
)


def _show(data: bytes) -> str:
    return "'" + repr(data)[2:-1] + "'"


def _rule_says(before: DiffModelState, outcome: DiffOutcome) -> str:
    if outcome.error is StaleBaseError:
        where = f"region {outcome.conflict.describe()} of B0 changed" if outcome.conflict else outcome.message
        return f"reject (StaleBaseError): {where}"
    return f"accept, giving {_show(outcome.state.content)}"


@dataclass(frozen=True)
class DiffAlphabets:
    """The bytes each writer uses: the agent (and the initial buffer), a tool, a hunk."""

    agent: bytes = strategies.DIFF_ALPHABET
    tool: bytes = strategies.TOOL_ALPHABET
    hunk: bytes = strategies.HUNK_ALPHABET
    #: Bytes the target adds to every writer's letters (e.g. ``\n`` for a line tool).
    shared: bytes = b""


def diff_alphabets(target: Target) -> DiffAlphabets:
    """The writers' letters for ``target``.

    With no ``Target.alphabet`` they are the defaults. A target that names an
    alphabet keeps each writer's letters that lie in it and adds its other bytes
    to every writer: a line-based diff applier names ``ab12XY\n`` so that the
    buffers, the tool's writes and the hunks all contain line breaks (on text
    without them the whole buffer is one line, and every diff replaces it).
    """
    if target.alphabet is None:
        return DiffAlphabets()
    allowed = target.alphabet
    if len(set(allowed)) > SMALL_ALPHABET and all(
        b in allowed for b in strategies.DIFF_ALPHABET + strategies.TOOL_ALPHABET + strategies.HUNK_ALPHABET
    ):
        return DiffAlphabets()  # a large alphabet (ASCII) bounds the wide draws only (see world.world_of)
    roles = strategies.DIFF_ALPHABET + strategies.TOOL_ALPHABET + strategies.HUNK_ALPHABET
    shared = bytes(sorted({b for b in allowed if b not in roles}))
    writers = (strategies.DIFF_ALPHABET, strategies.TOOL_ALPHABET, strategies.HUNK_ALPHABET)
    kept = [bytes(b for b in role if b in allowed) for role in writers]
    if not all(kept):
        raise NotAssessable(
            f"the target's alphabet {allowed!r} leaves a writer of the diff machine (the agent, the tool, "
            f"the hunks) none of its letters {roles!r}: the diffs could not tell the writers apart"
        )
    return DiffAlphabets(kept[0] + shared, kept[1] + shared, kept[2] + shared, shared)


def _initial_buffers(alphabets: DiffAlphabets) -> st.SearchStrategy[bytes]:
    """Initial buffers for a target that adds shared bytes: lines of distinct
    letters (``a\nb\nc\n``) and short random text over the agent's letters."""
    separator = alphabets.shared[:1]
    lines = st.integers(2, 12).map(lambda n: b"".join(bytes([c]) + separator for c in b"abcdefghijkl"[:n]))
    repeated = st.lists(st.sampled_from(list(alphabets.agent)), min_size=3, max_size=8).map(bytes)
    return st.one_of(lines, repeated)


class DiffMachine(FamilyMachine):
    """Base of the generated diff machines; :meth:`DiffFamily.build_machine` attaches the rules."""

    alphabets: ClassVar[DiffAlphabets] = DiffAlphabets()
    #: The target's declared world: what the wide draws take (rollcert.stateful_tests.world).
    world: ClassVar[World] = strategies.DEFAULT_WORLD
    #: Draw length-preserving edits half the time (the S3 machine: see
    #: strategies.diff_substitutions).
    same_length_edits: ClassVar[bool] = False
    #: Now and then let a tool empty the buffer right before an apply (the S1
    #: machine: see :data:`EMPTYING_SHARE`).
    emptying_applies: ClassVar[bool] = False
    #: Now and then tell a whole story in one apply: snapshot, a tool's one-byte
    #: rewrite in place, the diff (S1: :data:`INSIDE_A_READ`, S2:
    #: :data:`BESIDE_THE_DIFF`; see :data:`REWRITE_SHARE`).
    rewrite_story: ClassVar[str | None] = None
    #: The rules swarm testing may switch off (:data:`SWARM_RULES_BY_PROPERTY`).
    swarm_optional: ClassVar[frozenset[str]] = frozenset()
    #: The optional rules this example runs (:func:`swarm_rules`).
    enabled_rules: frozenset[str] = frozenset()

    @initialize(initial=strategies.diff_initial_buffers(), word=strategies.WORD)
    def start(self, initial: bytes, word: bytes) -> None:
        # A wide example (strategies.example_is_wide) starts wide half the time: any byte, lines, past a threshold.
        self.wide = strategies.example_is_wide(word)
        if self.wide and strategies.is_wide(strategies.Word(word)):
            initial = strategies.wide_diff_initial(word[::-1], self.world)
        self.begin(BufferConfig(initial), word)
        self.enabled_rules = swarm_rules(word, self.swarm_optional)
        _long_start(self, word)


def swarm_rules(word: bytes, optional: frozenset[str]) -> frozenset[str]:
    """Which of the ``optional`` rules an example keeps (:data:`SWARM_SHARE`):
    all of them, or each with even odds. Read out of a hash of the start word,
    so the example's other draws stay as they were."""
    chooser = strategies.Word(hashlib.blake2b(word, digest_size=8, person=b"swarm").digest())
    if chooser.pick(SWARM_SHARE):
        return optional
    return frozenset(name for name in sorted(optional) if chooser.pick(2))


def _swarm_enabled(name: str) -> Callable[[DiffMachine], bool]:
    return lambda machine: name in machine.enabled_rules


def _long_start(machine: DiffMachine, word: bytes) -> None:
    """Now and then a long history of the agent's edits before the first rule (strategies.start_history_length)."""
    for further in strategies.history_words(word, strategies.start_history_length(word)):
        content = machine.live.model.content
        edit = strategies.history_edit_from(content, further, machine.world, machine.alphabets.agent, machine.wide)
        machine.run(Splice(*edit))


@initialize(data=st.data())
def start_over_target_alphabet(machine: DiffMachine, data: st.DataObject) -> None:
    """The ``start`` of a machine whose target adds shared bytes (see :func:`diff_alphabets`)."""
    initial = data.draw(_initial_buffers(machine.alphabets), label="initial")
    word = data.draw(strategies.WORD, label="wide start")
    machine.wide = strategies.example_is_wide(word)
    if machine.wide and strategies.is_wide(strategies.Word(word)):
        initial = strategies.wide_diff_initial(word[::-1], machine.world)
    machine.begin(BufferConfig(initial), word)
    machine.enabled_rules = swarm_rules(word, machine.swarm_optional)
    _long_start(machine, word)


def _edit(machine: DiffMachine, data: st.DataObject, alphabet: bytes) -> tuple[int, int, bytes]:
    content = machine.live.model.content
    if machine.wide:
        drawn = strategies.wide_edit_from(content, data.draw(strategies.WORD, label="wide"), machine.world)
        if drawn is not None:
            return drawn
    edits = strategies.diff_edits(content, alphabet)
    if machine.same_length_edits and content:
        edits = st.one_of(strategies.diff_substitutions(content, alphabet), edits)
    return data.draw(edits, label="edit")


@precondition(lambda machine: machine.session is not None and len(machine.live.model.snapshots) < MAX_SNAPSHOTS)
@rule()
def snapshot(machine: DiffMachine) -> None:
    machine.run(TakeSnapshot())


@rule(data=st.data())
def agent_edit(machine: DiffMachine, data: st.DataObject) -> None:
    """One edit of the agent's; now and then a long history of them, so that
    every diff run too reaches depths past 16 and 64 (strategies.history_length)."""
    machine.run(Splice(*_edit(machine, data, machine.alphabets.agent)))
    word = data.draw(strategies.WORD, label="history")
    count = strategies.history_length(word)
    if count > 1:
        for further in strategies.history_words(word, count - 1):
            content = machine.live.model.content
            edit = strategies.history_edit_from(content, further, machine.world, machine.alphabets.agent, machine.wide)
            machine.run(Splice(*edit))


@rule(data=st.data())
def tool_write(machine: DiffMachine, data: st.DataObject) -> None:
    machine.run(ToolWrite(*_edit(machine, data, machine.alphabets.tool)))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def rollback(machine: DiffMachine, data: st.DataObject) -> None:
    steps = data.draw(st.integers(1, machine.live.model.depth), label="steps")
    if data.draw(st.integers(0, PAST_THE_HORIZON_SHARE - 1), label="past the horizon") == 0:
        steps = machine.live.model.depth + 1  # refused: a branch of the model too (model_coverage)
    machine.run(Rollback(steps))


@precondition(lambda machine: machine.session is not None and machine.live.model.depth >= 1)
@rule(data=st.data())
def branch(machine: DiffMachine, data: st.DataObject) -> None:
    """Roll back one step and edit again: the new state is as deep as the old one.

    The S3 machine's new edit also leaves the buffer as long as the state it
    replaced: a snapshot of that state is then at the live depth and length with
    other bytes, the lure that a revision counter stepping back on rollback,
    with a size check, calls current. (Drawn freely, the lengths matched about
    one time in four, and a quick run missed revision_reuse on 1 seed in 10.)"""
    rolled_away = len(machine.live.model.content)
    machine.run(Rollback(1))
    offset, delete_length, insert = _edit(machine, data, machine.alphabets.agent)
    if machine.same_length_edits:
        offset, delete_length, insert = _keeping_length(
            machine.live.model.content, rolled_away, offset, delete_length, insert, machine.alphabets.agent
        )
    machine.run(Splice(offset, delete_length, insert))


def _keeping_length(
    content: bytes, wanted: int, offset: int, delete_length: int, insert: bytes, letters: bytes
) -> tuple[int, int, bytes]:
    """The edit ``(offset, delete_length, insert)`` of ``content``, its insert
    cut or padded (or its delete lengthened) so that the result has ``wanted``
    bytes; an edit that would then change nothing becomes a one-byte
    substitution (the machine never draws a step that changes nothing). The
    edit as drawn if no such edit starts at ``offset``."""
    inserted = wanted - len(content) + delete_length
    if inserted < 0:
        if offset + delete_length - inserted > len(content):
            return offset, delete_length, insert
        return offset, delete_length - inserted, b""
    insert = (insert + letters[:1] * inserted)[:inserted]
    if delete_length or insert:
        return offset, delete_length, insert
    if not content:
        return offset, delete_length, insert
    at = min(offset, len(content) - 1)
    other = next((bytes([c]) for c in letters if c != content[at]), letters[:1])
    return at, 1, other


@precondition(lambda machine: machine.session is not None and bool(machine.live.model.snapshots))
@rule(data=st.data())
def apply_diff(machine: DiffMachine, data: st.DataObject) -> None:
    if (
        machine.emptying_applies
        and machine.live.model.content
        and strategies.draw_index(data, EMPTYING_SHARE, "emptied first") == 0
    ):
        # A tool truncates the file, and the author's diff comes after it.
        machine.run(ToolWrite(*strategies.emptying_write(machine.live.model.content)))
    state = machine.live.model
    snapshots = state.snapshots
    story = machine.rewrite_story is not None and strategies.draw_index(data, REWRITE_SHARE, "rewrite story") == 0
    if machine.same_length_edits:
        # The S3 machine: a snapshot of a rolled-away state at the live depth and
        # length, with other bytes (the lure a stepping-back revision counter and
        # a size check call current), is drawn three times as often.
        lures = [
            i
            for i, snap in enumerate(snapshots)
            if snap.serial not in state.serials
            and snap.depth == state.depth
            and len(snap.cells) == len(state.current)
            and snap.content != state.content
        ]
        order = [*lures, *lures, *range(len(snapshots))]
        index = order[strategies.draw_index(data, len(order), "snapshot")]
    else:
        # A snapshot whose content the live buffer no longer has is drawn twice
        # as often: a diff on an unmoved base tests no rebasing at all, and every
        # way of rebasing wrong (offsets trusted, hunks placed by searching for
        # their text, regions checked by their ends) needs a moved one. Drawn
        # uniformly, an S1 run at quick met a moved hunk in 4 of 120 examples
        # (fuzzy_reconcile and positional_on_advanced_base passed one seed in 10).
        moved = [i for i, snap in enumerate(snapshots) if snap.content != state.content]
        order = [*moved, *range(len(snapshots))]
        index = order[strategies.draw_index(data, len(order), "snapshot")]
    of_the_live_state = [i for i, snap in enumerate(snapshots) if snap.serial == state.serials[-1]]
    if story and len(state.content) >= MIN_REWRITE_LENGTH and (len(snapshots) < MAX_SNAPSHOTS or of_the_live_state):
        # The whole story at once: the author snapshots (or, with no room for
        # another, takes the one already of the live state: seed 2 of
        # read_set_ends_only drew the story 19 times in 115 examples and 16 found
        # the snapshots full); once the diff is drawn, a tool rewrites one byte of
        # it in place; then the diff is applied.
        if len(snapshots) < MAX_SNAPSHOTS:
            machine.run(TakeSnapshot())
            snapshots = machine.live.model.snapshots
            index = len(snapshots) - 1
        else:
            index = of_the_live_state[-1]
    else:
        if story and machine.rewrite_story == BESIDE_THE_DIFF:
            _as_long_as_the_snapshot(machine, data, index)
        story = False
    base = snapshots[index].content
    mode = data.draw(strategies.anchor_modes(), label="mode")
    hunks = data.draw(strategies.hunk_lists(base), label="hunks")
    if machine.alphabets.shared:  # the same places, replacements drawn over the target's letters too
        letters = list(machine.alphabets.hunk)
        hunks = [
            (start, end, bytes(data.draw(st.lists(st.sampled_from(letters), min_size=int(end == start), max_size=2))))
            for start, end, _ in hunks
        ]
    # One hunk in WIDE_SHARE writes a wide replacement (any byte, lines, past a threshold).
    wide = strategies.wide_replacement(data.draw(strategies.WORD, label="wide hunk"), machine.world) if machine.wide else None
    if wide is not None and hunks:
        start, end, _ = hunks[-1]
        hunks = [*hunks[:-1], (start, end, wide)]
    reads = data.draw(strategies.read_region_lists(base), label="reads")
    if story:
        mode = "content"
        hunks, reads = _rewrite_in_place(machine, data, base, hunks, reads)
    operation = ApplyDiff(
        index,
        mode,  # type: ignore[arg-type]  # drawn from the anchor modes
        tuple(Hunk(*h) for h in hunks),
        tuple(Region(*r) for r in reads),
    )
    machine.run(operation)


#: One apply in this many of the S1 machine comes right after a tool emptied the
#: buffer (strategies.emptying_write): the plain edits delete two bytes at most,
#: so a buffer of three or more was never emptied, and an applier that skips its
#: staleness check on an empty live base ("nothing there to conflict with")
#: passed S1. As a kind of tool write it emptied the buffer often enough, but an
#: apply rarely came next (a run's examples repeat their rules).
EMPTYING_SHARE = 10

#: One apply in this many tells a rewrite story, where a machine has one. Drawn
#: freely, the pieces came together too rarely: an applier that checks a read
#: region by its ends and length passed S1 on a seed in three (a read of three
#: bytes with one edit exactly in its middle that kept the length, and hunks
#: elsewhere), and a base moved at an equal length was never among the few
#: diffs an S2 run rolls back, so an undo that restores the author's snapshot
#: when the lengths agree ("same length, so nobody else wrote") passed S2.
REWRITE_SHARE = 4

#: A rewrite story needs a buffer this long: a read with a byte strictly inside.
MIN_REWRITE_LENGTH = 3


def _rewrite_in_place(
    machine: DiffMachine,
    data: st.DataObject,
    base: bytes,
    hunks: Sequence[tuple[int, int, bytes]],
    reads: list[tuple[int, int]],
) -> tuple[list[tuple[int, int, bytes]], list[tuple[int, int]]]:
    """The tool's one-byte rewrite of the story (the live base is still ``base``,
    the snapshot just taken), away from every hunk and the byte on either side
    of it; the diff's hunks and declared reads, as they are to be applied. When
    the drawn hunks leave no byte free (several hunks over a short base: seed 2
    of read_set_ends_only told the story three times and found no place each
    time), the diff keeps its last hunk only.

    Beside the diff: away from its reads too. Inside a read: strictly inside a
    declared read of three or more bytes, and at neither end of any other; if
    no drawn read has such a byte, a read of three bytes is declared around
    one (instead of the drawn reads)."""
    hunk_list = list(hunks)
    free = _free_places(base, hunk_list)
    if len(hunk_list) > 1 and not [p for p in free if 0 < p < len(base) - 1]:
        hunk_list = hunk_list[-1:]
        free = _free_places(base, hunk_list)
    if machine.rewrite_story == BESIDE_THE_DIFF:
        places = [p for p in free if not any(start <= p < end for start, end in reads)]
    else:
        places = [
            p
            for p in free
            if any(start < p < end - 1 for start, end in reads) and not any(p in (start, end - 1) for start, end in reads)
        ]
        if not places:
            places = [p for p in free if 0 < p < len(base) - 1]
            reads = []  # a read around the byte, once it is drawn
    rewrite = strategies.draw_tool_substitution(data, base, machine.alphabets.tool, text=machine.world.text, places=places)
    if rewrite is None:
        return hunk_list, reads
    machine.run(ToolWrite(*rewrite))
    offset = rewrite[0]
    return hunk_list, reads if reads or machine.rewrite_story == BESIDE_THE_DIFF else [(offset - 1, offset + 2)]


def _free_places(base: bytes, hunks: Sequence[tuple[int, int, bytes]]) -> list[int]:
    """The bytes of ``base`` neither a hunk nor the byte on either side of it touches."""
    hunk_spans = effective_regions(len(base), tuple(Hunk(*h) for h in hunks), ())
    return [p for p in range(len(base)) if not any(r.start <= p < r.end for r in hunk_spans)]


#: The most bytes :func:`_as_long_as_the_snapshot` adds or removes to match a
#: snapshot's length (a wide snapshot kilobytes away is left alone).
AS_LONG_REACH = 8


def _as_long_as_the_snapshot(machine: DiffMachine, data: st.DataObject, index: int) -> None:
    """S2's rewrite story with no room for a new snapshot: a tool write that
    leaves the live base as long as snapshot ``index`` and different from it (a
    byte rewritten in place if the lengths agree already, else a tool edit cut
    or padded to that length, as the S3 machine's ``branch``), if the lengths
    are at most :data:`AS_LONG_REACH` apart (and, on a text target, the buffer
    is ASCII, so no cut splits a character)."""
    content, wanted = machine.live.model.content, len(machine.live.model.snapshots[index].cells)
    edit: tuple[int, int, bytes] | None = None
    if len(content) == wanted:
        edit = strategies.draw_tool_substitution(data, content, machine.alphabets.tool, text=machine.world.text)
    elif abs(len(content) - wanted) <= min(AS_LONG_REACH, machine.world.max_insert or AS_LONG_REACH) and not (
        machine.world.text and not content.isascii()
    ):
        edit = _keeping_length(content, wanted, *_edit(machine, data, machine.alphabets.tool), machine.alphabets.tool)
    if edit is not None and (edit[1] or edit[2]):
        machine.run(ToolWrite(*edit))


@precondition(
    lambda machine: machine.session is not None and any(h is not None for h in machine.live.handles.get("applied", []))
)
@rule(data=st.data())
def rollback_diff(machine: DiffMachine, data: st.DataObject) -> None:
    applied = [i for i, handle in enumerate(machine.live.handles.get("applied", [])) if handle is not None]
    machine.run(RollbackDiff(data.draw(st.sampled_from(applied[::-1]), label="applied diff")))


DIFF_RULES: dict[str, Callable[..., Any]] = {
    "snapshot": snapshot,
    "agent_edit": agent_edit,
    "tool_write": tool_write,
    "rollback": rollback,
    "branch": branch,
    "apply_diff": apply_diff,
    "rollback_diff": rollback_diff,
}


_Item = TypeVar("_Item")


def ends_first(items: Sequence[_Item]) -> Iterator[_Item]:
    """``items`` from both ends inwards: first, last, second, second to last, ..."""
    low, high = 0, len(items) - 1
    while low <= high:
        yield items[low]
        if high != low:
            yield items[high]
        low, high = low + 1, high - 1


class DiffFamily(PropertyFamily[DiffModelState, DiffOperation, DiffOutcome]):
    """S1–S3 over :mod:`rollcert.model.diffs`."""

    name = "diffs"
    property_ids = ("S1", "S2", "S3")
    operation_types = DiffOperation
    legacy_trace_schemas = ("rollcert-diff-trace/1",)
    replay_budget = 3000

    # -- the model ------------------------------------------------------------------------

    def initial_state(self, config: BufferConfig) -> DiffModelState:
        return initial_diff_state(config.initial, config.start_revision)

    def predict(self, state: DiffModelState, operation: DiffOperation) -> Prediction[DiffModelState, DiffOutcome]:
        """The rule's outcome, and for an apply the rule accepts, the sound but
        imprecise refusal. A step the model cannot take (an apply on a snapshot
        that was never taken) is not generable: the diff machines never draw one."""
        try:
            outcome = diff_step(state, operation)
        except (ValueError, TypeError) as error:
            raise NotGenerable(f"{operation.describe()}: {error}") from None
        readings: tuple[Reading[DiffModelState], ...] = (
            Reading(outcome.state, error_kind(outcome.error) if outcome.error else None),
        )
        context: tuple[tuple[str, str], ...] = ()
        if isinstance(operation, ApplyDiff):
            if outcome.error is None:
                readings += (Reading(reject_apply(state), "StaleBaseError", IMPRECISE),)
            if outcome.also_acceptable is not None:
                readings += (Reading(outcome.also_acceptable, None, EQUAL_BYTES),)
            if outcome.diff is not None:
                context = (
                    ("base B0", f"{_show(outcome.diff.base.content)}   (the snapshot the diff was authored on)"),
                    ("live B", _show(state.content)),
                    ("diff", outcome.diff.describe()),
                    ("rule", _rule_says(state, outcome)),
                )
        return Prediction(outcome, readings, context)

    def content(self, state: DiffModelState) -> bytes:
        return state.content

    def reading_key(self, state: DiffModelState) -> Hashable:
        """The history's identities and the live cells: readings of one step that
        differ (an edit's alignments) differ there, and it costs one state's
        cells, not every state's of the history."""
        return (state.serials, state.revision, state.next_identity, state.applied, state.current)

    has_second_readings = True

    def second_readings(self, state: DiffModelState, operation: DiffOperation) -> Iterator[Reading[DiffModelState]]:
        """An edit placed elsewhere with the same bytes as a result: to a target
        that sees only the content an edit leaves (a tool that writes whole files,
        an editor that diffs them), the same edit, whoever made it (SPEC §6a:
        a second writer's edit, and for such a target the agent's own too;
        allowed, never required)."""
        if not isinstance(operation, (Splice, ToolWrite)):
            return
        # Built one at a time: a tool write on a long run of one byte has thousands
        # of alignments, each a whole new state, and the judge takes only as many
        # as its bound (more when a step fails with some left out). The two ends
        # of the run first, inwards: where an editor that diffs whole files puts
        # an edit (the first or the last place that gives the same text).
        alignments = content_alignments(state.content, operation.offset, operation.delete_length, operation.insert)
        for other, inserted in ends_first(alignments):
            yield Reading(diff_step(state, replace(operation, offset=other, insert=inserted)).state, None, ALIGNED, optional=True)

    # -- the system under test ------------------------------------------------------------

    def perform(self, live: LiveSession, operation: DiffOperation) -> None:
        sut = live.sut
        if isinstance(operation, (Splice, ToolWrite)):
            sut.splice(operation.offset, operation.delete_length, operation.insert)
        elif isinstance(operation, Rollback):
            sut.rollback(operation.steps)
        elif isinstance(operation, TakeSnapshot):
            live.handles.setdefault("snapshot", []).append(sut.snapshot())
        elif isinstance(operation, ApplyDiff):
            snapshots = live.handles.get("snapshot", [])
            if not 0 <= operation.snapshot < len(snapshots):
                raise NotGenerable(f"{operation.describe()}: only {len(snapshots)} snapshots were taken")
            applied = live.handles.setdefault("applied", [])
            applied.append(None)
            applied[-1] = sut.apply_diff(
                snapshots[operation.snapshot],
                operation.mode,
                [(h.start, h.end, h.replacement) for h in operation.hunks],
                [(r.start, r.end) for r in operation.reads],
            )
        elif isinstance(operation, RollbackDiff):
            applied = live.handles.get("applied", [])
            handle = applied[operation.applied] if 0 <= operation.applied < len(applied) else None
            if handle is None:
                raise NotGenerable(f"apply #{operation.applied} was not applied by the implementation")
            sut.rollback_diff(handle)
        else:  # pragma: no cover - every operation kind is handled above
            raise HarnessError(f"no way to perform {operation!r}")

    def sent_edits(self, before: DiffModelState, operation: DiffOperation) -> Iterator[tuple[bytes, int, int, bytes]]:
        """An apply's hunks are edits of its snapshot: each replaced bytes of B0."""
        if isinstance(operation, ApplyDiff):
            if 0 <= operation.snapshot < len(before.snapshots):
                base = before.snapshots[operation.snapshot].content
                for hunk in operation.hunks:
                    yield base, hunk.start, hunk.end - hunk.start, hunk.replacement
            return
        yield from super().sent_edits(before, operation)

    def tally(self, tallies: Counter[str], operation: DiffOperation, prediction: Prediction[DiffModelState, DiffOutcome], matched: Reading[DiffModelState] | None) -> None:
        if isinstance(operation, ApplyDiff) and prediction.outcome.error is None:
            tallies["rule_accepts"] += 1
            if matched is prediction.readings[0]:
                tallies["sut_accepts"] += 1
        if matched is not None and matched.note == EQUAL_BYTES:
            tallies["equal_bytes_accepted"] += 1

    def figures(self, tallies: Counter[str]) -> dict[str, float]:
        """Precision: the share of the diffs the rule accepts that the SUT accepted."""
        figures = {"rule_accepts": float(tallies["rule_accepts"]), "sut_accepts": float(tallies["sut_accepts"])}
        if tallies["equal_bytes_accepted"]:
            figures["equal_bytes_accepted"] = float(tallies["equal_bytes_accepted"])
        if tallies["optional_reading_needed"]:
            figures["alignment_accepted"] = float(tallies["optional_reading_needed"])
        if tallies["rule_accepts"]:
            figures["precision"] = round(tallies["sut_accepts"] / tallies["rule_accepts"], 4)
        return figures

    def explain(
        self,
        record: StepRecord,
        before: DiffModelState,
        prediction: Prediction[DiffModelState, DiffOutcome],
        readings: Sequence[Reading[DiffModelState]] = (),
    ) -> str:
        general = explain(record)
        operation, outcome = record.operation, prediction.outcome
        if isinstance(operation, ApplyDiff) and outcome.diff is not None:
            base = outcome.diff.base.content
            story = (
                f"The diff was authored on B0 = {_show(base)} (revision {outcome.diff.base.revision}) and applied "
                f"to the live base B = {_show(before.content)}; S1 says: {_rule_says(before, outcome)}."
            )
            if outcome.diff.base.serial not in before.serials:
                story += (
                    " B0's state was rolled away since the snapshot (S3): a revision number or a size"
                    " that happens to match cannot vouch for it, only content and history can."
                )
            accepted_elsewhere = any(reading.error is None for reading in readings)
            if outcome.error is not None and record.actual.error is None and accepted_elsewhere:
                # Never claim a difference no reading has: under another alignment of
                # an earlier tool write the rules accept this diff, only not with these bytes.
                story += (
                    " The implementation applied it. Under another alignment of an earlier tool write (the same"
                    " bytes, which a reader of content cannot tell apart) the rules accept it too, but not with"
                    " the bytes the implementation produced."
                )
            elif outcome.error is not None and record.actual.error is None:
                story += (
                    " The implementation applied it anyway: its result rests on bytes the diff's author never saw."
                    if record.actual.buffer != record.expected.buffer
                    else " The implementation applied it anyway; the bytes it produced happen to equal the"
                    " unchanged base, but the refusal the author relies on to re-author never came."
                )
            return f"{story} {general}"
        if isinstance(operation, RollbackDiff):
            return (
                f"Rolling back an applied diff must give back the live base it was applied to "
                f"({_show(outcome.state.content)}), never the author's snapshot. {general}"
            )
        return general

    # -- certification ---------------------------------------------------------------------

    def required_capabilities(self, property_id: str) -> frozenset[Capability]:
        return DIFF_REQUIRED_CAPABILITIES[property_id]

    def build_machine(self, target: Target, property_id: str, tracker: Tracker) -> type[DiffMachine]:
        names = [
            name
            for name in RULES_BY_PROPERTY[property_id]
            if name not in DIFF_RULE_CAPABILITY or DIFF_RULE_CAPABILITY[name] in target.capabilities
        ]
        swarm = SWARM_RULES_BY_PROPERTY.get(property_id, frozenset())
        namespace: dict[str, Any] = {
            name: precondition(_swarm_enabled(name))(DIFF_RULES[name]) if name in swarm else DIFF_RULES[name]
            for name in names
        }
        alphabets = diff_alphabets(target)
        namespace.update(
            family=self, target=target, tracker=tracker, alphabets=alphabets, same_length_edits=property_id == "S3",
            world=world_of(target),
            emptying_applies=property_id == "S1",
            rewrite_story=REWRITE_STORY_BY_PROPERTY.get(property_id),
            swarm_optional=swarm,
        )
        if alphabets.shared:
            namespace["start"] = start_over_target_alphabet
        return type(f"{property_id}DiffMachine", (DiffMachine,), namespace)

    # -- minimisation --------------------------------------------------------------------------

    def without_step(self, operations: list[DiffOperation], index: int) -> list[DiffOperation] | None:
        """``operations`` without step ``index``, snapshot and apply numbers fixed
        up; ``None`` if a later step refers to the removed one."""
        removed = operations[index]
        if isinstance(removed, TakeSnapshot):
            return shrink.without_numbered(
                operations,
                index,
                lambda op: op.snapshot if isinstance(op, ApplyDiff) else None,
                lambda op, number: replace(op, snapshot=number),
            )
        if isinstance(removed, ApplyDiff):
            return shrink.without_numbered(
                operations,
                index,
                lambda op: op.applied if isinstance(op, RollbackDiff) else None,
                lambda op, number: RollbackDiff(number),
            )
        return operations[:index] + operations[index + 1 :]

    def simpler(self, operation: DiffOperation) -> Iterator[DiffOperation]:
        if isinstance(operation, (Splice, ToolWrite)):
            yield from shrink.simpler_edits(operation, leaps=False)
        elif isinstance(operation, Rollback) and type(operation.steps) is int and operation.steps > 1:
            yield Rollback(operation.steps - 1)
        elif isinstance(operation, ApplyDiff):
            for i in range(len(operation.reads)):
                yield replace(operation, reads=operation.reads[:i] + operation.reads[i + 1 :])
            if len(operation.hunks) > 1:
                for i in range(len(operation.hunks)):
                    yield replace(operation, hunks=operation.hunks[:i] + operation.hunks[i + 1 :])
            for i, hunk in enumerate(operation.hunks):
                for j in range(len(hunk.replacement)):
                    smaller = Hunk(hunk.start, hunk.end, hunk.replacement[:j] + hunk.replacement[j + 1 :])
                    yield replace(operation, hunks=operation.hunks[:i] + (smaller,) + operation.hunks[i + 1 :])
            for i, region in enumerate(operation.reads):
                if region.end - region.start > 1:
                    for shorter in (Region(region.start + 1, region.end), Region(region.start, region.end - 1)):
                        yield replace(operation, reads=operation.reads[:i] + (shorter,) + operation.reads[i + 1 :])

    def candidates(self, config: BufferConfig, operations: list[DiffOperation]) -> Candidates:
        yield from shrink.start_revision_moves(config, operations)
        if len(operations) > LONG_TRACE:
            # A long history (strategies.history_length) before the story: its edits
            # folded into the start at once. Deleted one by one, each a replay of the
            # whole trace, they cost minutes where the judge carries many alignments
            # of repeated text (an emptied buffer's story: 96 steps, 193 s).
            yield from shrink.folded_setup(self, config, operations, lambda op: isinstance(op, (Splice, ToolWrite)))
        emptying = self._emptying_writes(config, operations)
        for deletions in (shrink.single_deletions, shrink.block_deletions, shrink.pair_deletions):
            for shorter_config, shorter in deletions(self, config, operations):
                yield shorter_config, self._still_emptying(shorter_config, shorter, emptying)
        yield from shrink.edit_with_its_rollback_shortened(config, operations, (Splice, ToolWrite))
        yield from _rollbacks_merged(config, operations)
        yield from _edits_merged(config, operations)
        yield from self._applies_as_splices(config, operations)
        yield from shrink.simpler_operations(self, config, operations)
        yield from shrink.shorter_initial(config, operations)
        # A wide start's bytes made letters, where the bug does not need them.
        yield from shrink.plainer_initial(config, operations)
        # Last, as in the rollback family: only a trace nothing else improves is folded.
        yield from shrink.folded_setup(self, config, operations, lambda op: isinstance(op, (Splice, ToolWrite)))

    def _applies_as_splices(self, config: BufferConfig, operations: list[DiffOperation]) -> Candidates:
        """An apply that only sets the scene (it made an edit, nothing more)
        told as the plain edit it made: one fewer diff for a reader to follow,
        and its snapshot may then go too. A diff of several hunks becomes the
        one edit that spans them (the snapshot's bytes between the hunks written
        again). Applies after it are renumbered; if a later rollback_diff names
        it, it must stay. Whether the edit still fails is, as ever, the replay's
        to say (its new bytes are new cells, which a content diff may notice)."""
        bases = self._snapshot_contents(config, operations)
        number = -1
        for index, operation in enumerate(operations):
            if not isinstance(operation, ApplyDiff):
                continue
            number += 1
            hunks = operation.hunks
            first, last = hunks[0], hunks[-1]
            if len(hunks) == 1:
                edit = Splice(first.start, first.end - first.start, first.replacement)
            elif index in bases:
                base = bases[index]
                spanned = b"".join(
                    hunk.replacement + base[hunk.end : following.start]
                    for hunk, following in zip(hunks, (*hunks[1:], last), strict=True)
                )
                edit = Splice(first.start, last.end - first.start, spanned)
            else:
                continue
            rest: list[DiffOperation] | None = []
            for later in operations[index + 1 :]:
                if isinstance(later, RollbackDiff):
                    if later.applied == number:
                        rest = None
                        break
                    if later.applied > number:
                        later = RollbackDiff(later.applied - 1)
                assert rest is not None
                rest.append(later)
            if rest is not None:
                yield config, operations[:index] + [edit] + rest

    @staticmethod
    def _emptying_writes(config: BufferConfig, operations: list[DiffOperation]) -> frozenset[int]:
        """The ids of the tool writes that delete the whole buffer (as the model has it)."""
        found: set[int] = set()
        try:
            state = initial_diff_state(config.initial)
            for operation in operations:
                if (
                    isinstance(operation, ToolWrite)
                    and operation.offset == 0
                    and not operation.insert
                    and 0 < operation.delete_length == len(state.current)
                ):
                    found.add(id(operation))
                state = diff_step(state, operation).state
        except (ValueError, TypeError):
            pass
        return frozenset(found)

    @staticmethod
    def _still_emptying(
        config: BufferConfig, operations: list[DiffOperation], emptying: frozenset[int]
    ) -> list[DiffOperation]:
        """``operations`` (a trace with steps deleted) with each of the tool writes
        that emptied the buffer (``emptying``, by id) made to delete the whole
        buffer it now meets. A tool that truncates the file deletes whatever is
        there; with its length fixed, no step before it could be dropped (the
        buffer would no longer end up empty), and a counterexample kept the
        agent's edits that only made the buffer longer."""
        if not emptying:
            return operations
        result: list[DiffOperation] = []
        try:
            state = initial_diff_state(config.initial)
            for operation in operations:
                if id(operation) in emptying and isinstance(operation, ToolWrite) and state.current:
                    operation = replace(operation, delete_length=len(state.current))
                result.append(operation)
                state = diff_step(state, operation).state
        except (ValueError, TypeError):
            return operations
        return result

    @staticmethod
    def _snapshot_contents(config: BufferConfig, operations: list[DiffOperation]) -> dict[int, bytes]:
        """Step index -> the content of the snapshot that step's apply_diff names
        (as the model has it); steps the model refuses to read are left out."""
        contents: dict[int, bytes] = {}
        try:
            state = initial_diff_state(config.initial)
            for index, operation in enumerate(operations):
                if isinstance(operation, ApplyDiff) and 0 <= operation.snapshot < len(state.snapshots):
                    contents[index] = state.snapshots[operation.snapshot].content
                state = diff_step(state, operation).state
        except (ValueError, TypeError):
            pass
        return contents

    def generable(self, config: BufferConfig, operations: Sequence[DiffOperation], target: Target) -> bool:
        """Whether the machine could have drawn this trace: no empty buffer, no
        edit that changes nothing, no hunk that inserts nothing at a point, no
        step the target sets aside. Shrinking must not wander into steps that
        only confuse a reader."""
        if not config.initial:
            return False
        state = initial_diff_state(config.initial)
        for operation in operations:
            if isinstance(operation, (Splice, ToolWrite)) and not (operation.delete_length or operation.insert):
                return False
            if isinstance(operation, ApplyDiff) and any(
                h.start == h.end and not h.replacement for h in operation.hunks
            ):
                return False
            if target.sets_aside(state, operation):
                return False
            try:
                state = diff_step(state, operation).state
            except (ValueError, TypeError):
                return False
        return True


def _rollbacks_merged(config: BufferConfig, operations: list[DiffOperation]) -> Candidates:
    """Two rollbacks in a row told as one over as many records."""
    for index in range(len(operations) - 1):
        first, second = operations[index], operations[index + 1]
        if isinstance(first, Rollback) and isinstance(second, Rollback):
            yield config, [*operations[:index], Rollback(first.steps + second.steps), *operations[index + 2 :]]


def _edits_merged(config: BufferConfig, operations: list[DiffOperation]) -> Candidates:
    """A run of consecutive edits of one writer told as the one edit that turns
    the bytes before the run into the bytes after it (the bytes they share at
    both ends kept), longest runs first. A tool write cut or padded to a length
    (or one that empties the buffer) after others keeps them all otherwise:
    deleting any one changes what the last must delete."""
    contents: list[bytes] = []
    try:
        state = initial_diff_state(config.initial)
        contents.append(state.content)
        for operation in operations:
            state = diff_step(state, operation).state
            contents.append(state.content)
    except (ValueError, TypeError):
        return
    runs: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(operations) + 1):
        if index == len(operations) or not (
            isinstance(operations[index], (Splice, ToolWrite)) and type(operations[index]) is type(operations[start])
        ):
            if index - start > 1 and isinstance(operations[start], (Splice, ToolWrite)):
                runs.append((start, index))
            start = index
    for first, end in runs:
        for length in range(end - first, 1, -1):
            for low in range(first, end - length + 1):
                high = low + length
                before, after = contents[low], contents[high]
                prefix = common_prefix(before, after)
                suffix = common_prefix(before[prefix:][::-1], after[prefix:][::-1])
                edit = type(operations[low])(prefix, len(before) - prefix - suffix, after[prefix : len(after) - suffix])
                merged = [edit] if edit.delete_length or edit.insert else []
                yield config, [*operations[:low], *merged, *operations[high:]]


#: The diff family: one object serves every run.
DIFFS = DiffFamily()
