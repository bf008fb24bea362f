"""The glossary: every term the tour, the certificates and the HTML page use, defined once.

A learner who meets "horizon" or a coverage chip named ``undo_above_write``
before anyone said what it means stops learning. Each :class:`Term` here says
what the word means in rollcert and shows it in a two-line example; the
coverage chips (the situations of :mod:`rollcert.model.properties`) take their
definition from the situation itself, where it is stated once, and only add the
example. ``docs/glossary.md`` is written from this module (``rollcert docs``,
checked by ``tests/test_glossary.py``), and the HTML certificate embeds the
definitions of the terms it shows, so the page explains itself when it is
mailed without the repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import replace

from rollcert.model.properties import PROPERTIES


@dataclass(frozen=True)
class Term:
    """One defined word: its name, other names it goes by, what it means, and a
    two-line example (``example[0]`` sets the scene, ``example[1]`` shows it)."""

    name: str
    section: str
    definition: str
    example: tuple[str, str]
    aliases: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor for ``### name``."""
        kept = "".join(ch for ch in self.name.lower() if ch.isalnum() or ch in " -_")
        return kept.replace(" ", "-")

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


#: The sections, in the order the glossary prints them.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("buffer", "The buffer and its log"),
    ("rules", "Rollback, checkpoints and out-of-log writes"),
    ("durable", "Bounded and durable journals"),
    ("diffs", "Self-authored diffs"),
    ("concurrency", "Concurrent callers (R7)"),
    ("certificate", "Certificates and verdicts"),
    ("drawing", "Reading a drawn counterexample"),
    ("situations", "Coverage chips: the situations a run must reach"),
    ("dimensions", "Coverage chips: the world's dimensions"),
)

_T = Term

TERMS: tuple[Term, ...] = (
    # -- the buffer and its log ----------------------------------------------------------------
    _T("buffer", "buffer", "A finite string of bytes that is edited in place.",
       ("`b'int x'` is a buffer of 5 bytes;", "a text editor's document or an agent's context window is one.")),
    _T("splice", "buffer",
       "The one way to edit: `splice(offset, delete_length, insert)` replaces `delete_length` bytes at "
       "`offset` with `insert`; valid when `0 <= offset <= len` and `offset + delete_length <= len`.",
       ("`splice(6, 3, b'list[int]')` on `b'def f(int)'`", "gives `b'def f(list[int])'`.")),
    _T("inverse record", "buffer",
       "What undoes one splice: the offset, the bytes it removed and the bytes (or length) it inserted. "
       "The journal keeps one per live edit.",
       ("`splice(0, 1, b'XY')` on `b'abc'` logs", "offset 0, removed `b'a'`, inserted `b'XY'`: undoing puts `a` back.")
       , ("record", "undo record")),
    _T("journal", "buffer",
       "The log of inverse records, newest last. In memory, or a file (a durable journal). "
       "The drawn journal is what the model says it holds, never what the implementation claims.",
       ("after two splices the journal holds", "#1 (the first splice's record) and #2 (the second's).")
       , ("log", "undo log")),
    _T("depth", "buffer",
       "The number of live records: how many single steps a rollback can still undo. A splice adds one "
       "(unless a full journal evicts one at the same time), each rollback step takes one away, adopting "
       "sets it to 0. An out-of-log write, a checkpoint or a read does not change it.",
       ("fresh buffer: depth 0; two splices: depth 2;", "`rollback(2)`: depth 0 again.")),
    _T("horizon", "buffer",
       "The oldest state a rollback can still reach: the buffer at depth 0. It moves forward when the "
       "oldest record is evicted or compacted away, or when the current buffer is adopted.",
       ("`b'a'`, splice to `b'ab'`, splice to `b'abc'`, capacity 2 with evict_oldest, splice to `b'abcd'`:",
        "the horizon is now `b'ab'`; `b'a'` is out of reach for ever.")),
    _T("revision", "buffer",
       "A counter that grows by one on every successful mutation — a splice, each *step* of a rollback "
       "(`rollback(3)` adds 3, not 1), each applied diff — and is never reused, not even after a rollback. "
       "A refused operation, an out-of-log write, a checkpoint, an adoption and a compaction leave it as it is.",
       ("splice, splice, `rollback(2)`:", "revisions 1, 2, then 4 — not 0, and not 3.")),
    _T("serial", "buffer",
       "The model's identity for one state of the history. Every splice makes a state with a fresh serial; a "
       "rollback does not hand serials out again. A checkpoint names a serial, so it lives exactly as long "
       "as its state.",
       ("splice (serial 1), `rollback(1)`, splice again:", "the new state gets serial 2, though its depth is 1 as before.")),
    _T("documented error", "buffer",
       "One of the errors of `model/errors.py` (`JournalError`, `DivergenceError`, `UnreachableRollbackError`, "
       "`StaleBaseError`, `RecoveryError`) or `ValueError`/`TypeError` for bad arguments. An operation "
       "either succeeds with the state the model predicts or raises one of these and changes nothing.",
       ("`rollback(3)` at depth 2", "raises `UnreachableRollbackError`; the buffer and depth stay as they were.")),
    _T("model", "buffer",
       "The reference model (`model/reference.py`, `model/diffs.py`): a naive, obviously right step function "
       "that keeps every state of the history. It is the oracle every implementation is compared with.",
       ("the model keeps `(b'a', b'ab', b'abc')`;", "`rollback(2)` is a pointer move back to `b'a'`.")
       , ("oracle", "reference model")),
    # -- rollback, checkpoints, out-of-log writes ----------------------------------------------
    _T("rollback", "rules",
       "`rollback(n)` undoes the newest n records, newest first, one step at a time (LIFO). All of it or "
       "nothing: a rollback that cannot finish raises and changes nothing (with one allowed exception, see "
       "barrier).",
       ("`b''`, splice in `a`, splice in `b`:", "`rollback(2)` undoes `b`, then `a`, and gives `b''` back.")),
    _T("multi-step rollback", "rules",
       "A rollback that undoes two or more records in one call. It is still n single LIFO steps: each step "
       "moves the revision by one, and a concurrent caller must never see it halfway.",
       ("depth 3, revision 3, `rollback(2)`:", "depth 1, revision 5 (two steps), in one call.")),
    _T("LIFO", "rules",
       "Last in, first out: the newest record is undone first. Only under LIFO replay is each record's "
       "absolute offset still right when it is undone.",
       ("records #1 at offset 0 and #2 at offset 5:", "undo #2 first, then #1; the other way round puts bytes in the wrong place.")),
    _T("checkpoint", "rules",
       "An opaque token naming one state; `rollback_to(token)` rolls back to it, one LIFO step at a time. "
       "It dies when a rollback goes below it or the horizon moves past it. The model names the state by its "
       "serial (the SPEC calls the pair depth and epoch).",
       ("checkpoint at depth 1, `rollback(1)`, splice:", "`rollback_to` that token is refused, though the depth is 1 again.")
       , ("token", "epoch", "rollback_to")),
    _T("dead checkpoint", "rules",
       "A checkpoint whose state left the history (rolled away, evicted, adopted over). `rollback_to` it raises "
       "`UnreachableRollbackError`.",
       ("checkpoint on `b'ab'`, `rollback(1)`, splice to `b'aX'`:", "the token names `b'ab'`, which is gone: refused.")),
    _T("ABA", "rules",
       "Mistaking a new state for an old one because a number matches (a depth, a revision that stepped "
       "back): state A, then B, then something that looks like A again.",
       ("a token that stores only the depth 1,", "after rollback and a new edit, lands on the new depth-1 state.")),
    _T("out-of-log write", "rules",
       "Any change to the buffer that did not go through the journaled API: a bug, another process editing the "
       "file. It cannot be prevented; a rollback must not cross it silently. Drawn as written behind the log's "
       "back.",
       ("depth 2, then another program writes `X` into the file:",
        "the journal's records no longer describe the buffer below that point.")
       , ("tamper", "tampered", "written behind the log's back")),
    _T("barrier", "rules",
       "What an out-of-log write made at depth t leaves at t. Records above it (made later) undo normally; "
       "the step that would undo record t raises `DivergenceError` and changes nothing — or, for a multi-step "
       "rollback, may stop at the barrier with the state there.",
       ("depth 2, out-of-log write, splice (depth 3):", "`rollback(1)` works; the next `rollback(1)` raises DivergenceError.")),
    _T("divergence", "rules",
       "The buffer no longer matches what the log says: an out-of-log write was detected. *Strict* detection "
       "notices any out-of-log write, *local* detection only one that touches the span being restored.",
       ("a digest per record (strict) or the anchors of the restored span (local)", "tell the rollback to raise DivergenceError.")
       , ("strict", "local")),
    _T("adopt", "rules",
       "`adopt_current()`: take the current buffer as the new horizon, discarding the log and every "
       "checkpoint on purpose. The only way past a barrier. Depth becomes 0; the revision does not move.",
       ("after a DivergenceError at depth 2,", "`adopt_current()` gives depth 0, no barrier, the same bytes.")
       , ("adopt_current", "adoption")),
    _T("anchor", "rules",
       "A few bytes on each side of an edit, kept in its record to check (or, wrongly, to search for) the "
       "place when undoing. Checking them at the recorded offset is sound; taking the first match of a "
       "search is not.",
       ("record at offset 23 with anchors `b'bbbb'`/`b'aaaa'`:", "a first-match scan finds an earlier copy and undoes there.")
       , ("anchors",)),
    # -- bounded and durable -------------------------------------------------------------------
    _T("capacity", "durable",
       "The most records a bounded journal keeps. When it is full, the *policy* says what a splice does: "
       "`reject` refuses it (`JournalError`), `evict_oldest` drops the oldest record and moves the horizon.",
       ("capacity 2, `reject`, depth 2:", "the next splice raises JournalError; with `evict_oldest` it goes through, depth stays 2.")
       , ("policy", "reject", "evict_oldest", "bounded journal")),
    _T("eviction", "durable",
       "Dropping the oldest record of a full journal (policy `evict_oldest`) so a new one fits; the horizon "
       "moves forward by one and checkpoints below it die.",
       ("capacity 1, `b''`, splice `a`, splice `b`:", "record #1 is evicted; the horizon is `b'a'`.")
       , ("evict",)),
    _T("compaction", "durable",
       "`compact(keep)` folds all but the newest `keep` records of a durable journal into a new base snapshot: "
       "the horizon moves, the buffer and the revision do not.",
       ("depth 5, `compact(2)`:", "depth 2; the three oldest states are out of reach.")
       , ("compact",)),
    _T("durable journal", "durable",
       "A journal kept in a file: every record is written and fsynced before the buffer changes, so a crash "
       "recovers the last committed state.",
       ("`open_durable_buffer(RealDirectory('state/'), b'x')`,", "splice, kill -9, reopen: the splice is there.")),
    _T("torn record", "durable",
       "The last record of a journal file, cut off by a crash in the middle of writing it. Recovery drops it "
       "(its operation never returned); damage anywhere else is corruption.",
       ("a crash after 10 of a record's 30 bytes:", "recovery cuts the 10 bytes off and yields the state before that splice.")
       , ("torn tail",)),
    _T("corruption", "durable",
       "A committed record that is damaged (a bad checksum) or out of place (duplicated, dropped, swapped, "
       "copied from another journal). Recovery refuses it with `RecoveryError`, never skips it.",
       ("one bit flipped in record 2 of 4:", "opening the journal raises RecoveryError with the byte offset.")),
    _T("batched mode", "durable",
       "A durable journal that syncs on `flush()`, every N records or every T ms, instead of on every record. "
       "A crash may lose what came after the last flush, never more, never out of order.",
       ("batched, splice, splice, flush, splice, crash:", "recovery yields the state after 2 or after 3 splices.")
       , ("batched", "flush", "recovery window")),
    # -- diffs ---------------------------------------------------------------------------------
    _T("snapshot", "diffs",
       "A named copy of the buffer an author reads before writing a diff: B0. The live base B is what the buffer "
       "holds when the diff arrives.",
       ("snapshot of `b'abc'` (B0), a tool inserts `X` at 0:", "the live base B is `b'Xabc'`.")
       , ("B0", "live base", "base")),
    _T("tool write", "diffs",
       "Another writer (a tool) editing the same buffer between a snapshot and a diff's apply, through the same "
       "journaled API: unlike an out-of-log write it is logged, and it moves the live base away from B0.",
       ("snapshot of `b'abc'`, tool writes `splice(0, 0, b'X')`:", "the live base is `b'Xabc'`, depth and revision +1.")
       , ("tool_write", "tool writes")),
    _T("diff", "diffs",
       "Hunks written against a snapshot B0, each `[start, end) -> replacement`, plus the regions the author read "
       "to decide them. Applying it to the live base is one journal record.",
       ("on B0 `b'abc'`, hunk `[1, 2) -> b'Z'`, reads `[0, 3)`:", "applied to an unchanged base it gives `b'aZc'`.")
       , ("hunk", "hunks")),
    _T("positional diff", "diffs",
       "A diff that says *where* by offsets or line numbers only. On a base that moved its numbers point at other "
       "bytes, so it applies only to an unchanged base.",
       ("hunk at offset 2 on B0 `b'abc'`, live base `b'XXabc'`:", "offset 2 is now `a`, not `c`: refused with StaleBaseError.")
       , ("positional",)),
    _T("content-anchored diff", "diffs",
       "A diff whose hunks are tied to the bytes around them, so it may move with them to where they now stand — "
       "if they are provably unchanged (traced through the edits, never found by searching).",
       ("hunk after `b'ab'` on B0 `b'abc'`, live base `b'XXabc'`:", "moved by 2 to offset 4, since `abc` is unchanged.")
       , ("content diff", "content-anchored", "content")),
    _T("read-set", "diffs",
       "The regions of B0 an author declares it read to write the diff. If any of them changed, the author might "
       "have written something else.",
       ("a diff renaming `f` that read the whole signature `[0, 12)`:", "a tool's change at offset 10 makes it stale.")
       , ("reads",)),
    _T("effective read-set", "diffs",
       "The declared reads plus each hunk widened by one byte on each side (clipped at the ends): everything that "
       "must be unchanged between B0 and B for the diff to apply.",
       ("hunk `[3, 5)` on an 8-byte B0, no declared reads:", "the effective read-set is `[2, 6)`.")),
    _T("write-set", "diffs",
       "The regions a diff's hunks replace. Checking only the write-set for conflicts is the classic mistake: it "
       "misses changes to what the author read.",
       ("hunk `[3, 5)`, read `[0, 8)`, a tool rewrote `[0, 1)`:", "the write-set is untouched, the read-set is not: stale.")),
    _T("rebasing", "diffs",
       "Moving an edit's positions past another edit: an inverse recorded at offset o, after a later edit before "
       "it that changed the length by δ, is at o + δ; a content diff's hunks move the same way.",
       ("record at offset 5, then an insert of 3 bytes at 0:", "rebased, the record is at offset 8.")
       , ("rebase", "rebased")),
    _T("stale", "diffs",
       "A diff whose snapshot is not the live base any more. A stale diff still applies if its effective read-set "
       "is unchanged; otherwise `StaleBaseError` names the first changed region.",
       ("snapshot, a tool write elsewhere,", "the diff is stale but may still apply (moved); a write inside its reads: refused.")
       , ("StaleBaseError",)),
    _T("precision", "diffs",
       "For S1–S3: the share of the diffs the rule accepts that the implementation accepted. A cautious "
       "implementation that refuses more is sound (it passes) with a lower precision.",
       ("the rule accepted 40 stale diffs, the implementation 30 of them:", "precision 75%.")),
    _T("forward conflict", "diffs",
       "A diff that no longer fits the live base when it is applied: cheap, the author re-authors. A *backward* "
       "conflict is an undo after other writes landed around it: nobody can re-author it, so rolling back a diff "
       "restores exactly the base it was applied to.",
       ("snapshot B0 `b'abc'`, a tool writes `X` at 0, apply diff D, `rollback_diff(D)`:",
        "gives `b'Xabc'`, the base D was applied to; never `b'abc'`, the author's B0.")
       , ("backward conflict",)),
    # -- concurrency ---------------------------------------------------------------------------
    _T("program", "concurrency",
       "What R7 runs: a starting buffer, a sequential prefix (run before any thread starts), then two or "
       "three threads, each a short list of calls on one shared buffer. One program is run many times, "
       "since each run may interleave differently.",
       ("prefix: splice in `12`, splice in `a`;", "T1: `rollback(2)`; T2: `length()`.")
       , ("prefix", "thread")),
    _T("history", "concurrency",
       "What one run of a program recorded: per call its thread, when it was called and when it returned (an "
       "interval in time), and what came back (ok, an error, or an observed value).",
       ("T1 `rollback(2)` from 3.0 to 9.5 µs, ok;", "T2 `length()` from 4.1 to 4.6 µs, returned 5.")
       , ("call", "calls", "interval")),
    _T("lane", "concurrency",
       "One row of a drawn history: one thread's calls, each drawn as a bar from where it was called to where "
       "it returned. Bars of different lanes that overlap in time ran at once.",
       ("lane T1: `[====rollback(2)====]`", "lane T2: `      [length()]` (inside T1's bar: they overlapped).")
       , ("lanes", "timeline")),
    _T("linearizable", "concurrency",
       "A history is linearizable when some sequential order of its calls (a *linearisation*) respects real "
       "time — a call that returned before another was called comes first — and replays through the model with "
       "exactly the results observed.",
       ("T2 read length 5 while T1 rolled back from 9 bytes to 3:",
        "no order gives 5 (before: 9, after: 3): not linearizable.")
       , ("linearizability", "linearisation", "linearization", "sequential order", "not linearizable")),
    _T("longest order", "concurrency",
       "When no linearisation exists, the checker shows the longest sequential order it could build and the "
       "calls that could come next, each with what the model would have answered there.",
       ("longest order: prefix, T1 `rollback(2)` -> 3 bytes;", "stuck: T2 `length()` returned 5, but here the model returns 3.")
       , ("stuck", "could not be placed")),
    _T("Wing–Gong search", "concurrency",
       "How R7 looks for a linearisation: repeatedly place a call that nothing still pending must precede, step "
       "the model, and back up when the observed result does not match; (calls placed, model state) pairs already "
       "seen are cut. A search that runs out of budget is `unknown`.",
       ("three calls, T1's splice and T2's two reads overlapping:", "try splice first, then the reads; back up and try a read first.")
       , ("Wing-Gong", "memoisation")),
    _T("unknown outcome", "concurrency",
       "A call that never returned (a request that timed out). It may be placed anywhere after its call, or "
       "nowhere; drawn as a bar running off the right edge.",
       ("T1 `splice(...)` called at 2 µs, no reply:", "the checker may count it as done at any later point, or not at all.")),
    # -- certificates --------------------------------------------------------------------------
    _T("property", "certificate",
       "One rule with an ID (R0–R7, S1–S3), stated once with its prose in `model/properties.py`. Each gets one "
       "verdict in a certificate.",
       ("R2 Offset stability:", "each inverse restores its bytes exactly where they were removed.")
       , ("rule",)),
    _T("target", "certificate",
       "The implementation being certified (the system under test), reached through an adapter: `bundled`, "
       "`specimen:NAME`, a third-party name, `subprocess:COMMAND` or `module:attribute`.",
       ("`rollcert certify specimen:fifo_replay`", "certifies the specimen `fifo_replay` as its target.")
       , ("implementation", "SUT", "system under test")),
    _T("adapter", "certificate",
       "The small class that maps rollcert's calls (read, splice, undo, ...) onto a target's own API and declares "
       "its capabilities.",
       ("`class MyAdapter(CheckedAdapter)` with `read`, `edit`, `undo_steps`", "and `Target('my-editor', ..., MyAdapter)`.")),
    _T("capability", "certificate",
       "What a target declares it can do (core, depth, revisions, checkpoints, journal faults, out-of-log writes, "
       "diffs, crash, bounded, concurrent). A property needing a missing one is `not_assessed`.",
       ("a target without `checkpoints`", "gets no `rollback_to` calls, and R3's checkpoint situations are not asked of it.")
       , ("capabilities",)),
    _T("situation", "certificate",
       "A named interesting case a property's run must reach before `passed` means anything. Each is a chip on "
       "the HTML page with how often it was reached; one never reached makes the verdict `unknown`.",
       ("R4's situations include `divergence_met`:", "a run that never met an out-of-log write cannot pass R4.")
       , ("situations", "coverage", "coverage chip", "chip", "coverage reached")),
    _T("model branch", "certificate",
       "A branch of the reference model's step functions (an arc coverage.py finds in `model/reference.py` or "
       "`model/diffs.py`). A property requires every branch its machine can reach on the target; one never "
       "reached makes the verdict `unknown`, named as `model/reference.py:289->290 (_rollback_steps)`. A branch "
       "no generated run can reach is marked `# unreachable: <why>` in the model.",
       ("R2 on a target that is never rolled back past its horizon:", "unknown, naming the branch of the refusal.")
       , ("model branches", "model coverage")),
    _T("world", "certificate",
       "What a run explored, stated in the certificate: the bytes drawn from (for text, the code points the "
       "draws can hold and their Unicode categories, never \"any code point\"), the largest buffer, insert and "
       "delete reached, the largest revision and revision step, how far buffers went past 64 KiB and 1 MiB, "
       "and how many text inserts held a combining mark or changed under NFC, NFD or NFKC. A target may "
       "declare a narrower world (an alphabet, size limits); it then passes *within* it.",
       ("a text editor that takes only UTF-8 declares that alphabet:", "its R2 verdict reads `passed within` that world.")
       , ("passed within",)),
    _T("passed", "certificate",
       "The property held on every step of every example the run explored, and every situation was reached: "
       "random testing over the world the certificate states, evidence and not a proof.",
       ("R2 passed, 100 examples, 2,400 steps,", "`shifted` 31, `repeated_text` 12, `ambiguous_context` 4.")),
    _T("violated", "certificate",
       "The run found a counterexample: a replayable list of steps at whose last step the target left the rules.",
       ("R3 violated: counterexample of 3 steps,", "exit status 1.")),
    _T("unknown", "certificate",
       "The run could not decide: a situation never reached, a budget spent, a history too large to check. "
       "Never counted as passed. The reason names the cause first: an operation that never succeeded, and for "
       "each world dimension out of reach, why it matters to the property.",
       ("R7 unknown:", "the run never reached: an observation overlapped a rollback that undid two or more records.")),
    _T("not_assessed", "certificate",
       "The target lacks a capability the property needs, so it was not run. Never counted as passed.",
       ("a target without `crash`", "gets R5 not_assessed.")
       , ("not assessed",)),
    _T("error", "certificate",
       "The run broke: the target's process crashed or hung, broke the protocol, or the harness failed. Never "
       "scored as violated. (An undocumented exception the target raises on an operation is its outcome, judged "
       "by R0.)",
       ("a protocol server that exits mid-run:", "that property's verdict is error; the others still run.")),
    _T("counterexample", "certificate",
       "The steps that show a violation, minimised until no step can be removed or simplified, with the expected "
       "and actual outcome at the failing step and a replay command.",
       ("`splice(23, 0, b'a')`, `rollback(1)`:", "two steps, and the buffer differs at [22, 23).")
       , ("minimal counterexample", "failing step", "minimised")),
    _T("trace", "certificate",
       "A counterexample as data (JSON, schema `rollcert-trace/2`): the family, the starting buffer and the "
       "operations. `rollcert replay TARGET --trace` runs it again.",
       ("`{\"family\":\"rollback\",\"initial\":\"YQ==\",\"operations\":[...]}`", "replays on any target of that family.")
       , ("replay",)),
    _T("reading", "certificate",
       "One way the model's rules can be satisfied by what was observed. Where the rules allow several outcomes "
       "and the target cannot be seen to take one (it reports no depth, say), the judge keeps every reading "
       "consistent with what it saw and declares a violation only when none is left.",
       ("a multi-step rollback meets a barrier: it may refuse, or stop at the barrier;",
        "a target that shows no depth keeps both readings until its bytes rule one out.")
       , ("readings", "judge")),
    _T("harm", "certificate",
       "What a counterexample's failing step did to its caller, as a class, most harmful first: a lost "
       "acknowledged state, a refused operation that went through, wrong bytes (a state that never existed), no "
       "sequential order explains what callers saw (R7), an allowed operation refused, the wrong error, the wrong "
       "depth, the wrong revision. A typed refusal that left the buffer as it was is never wrong bytes. Of two "
       "counterexamples of one length the minimiser keeps the more harmful.",
       ("a rollback leaves `b'aXc'` where the model has `b'abc'`:", "harm: wrong bytes."),),
    _T("machine", "certificate",
       "The Hypothesis state machine that drives one property's operations against the target and the model. "
       "A counterexample may be found by one property's machine and reported under another (R0 takes the "
       "shortest of all).",
       ("R0: counterexample of 2 steps", "(found while exploring R1).")),
    _T("specimen", "certificate",
       "A deliberately broken implementation in `specimens/`, one bug class each, with a story. The suite must "
       "kill (violate) every one on the property its story breaks.",
       ("`specimen:first_match_scan`", "undoes at the first position whose anchors match: R2 violated.")
       , ("specimens", "story")),
    _T("kill matrix", "certificate",
       "`rollcert specimens`: every specimen against every property, one cell each (X killed as its story says, "
       "x also caught, - survived where it must die, . passed, n not assessed, ? unknown, e error).",
       ("`fifo_replay   X  .  .  X  ...`", "R0 and R3 killed, as its story says.")),
    _T("profile", "certificate",
       "How hard a run searches: `quick`, `ci` or `thorough` (examples per round, steps per example). With the "
       "seed it fixes what the run draws.",
       ("`--profile quick --seed 0`", "draws the same examples every time (R7's interleavings aside).")
       , ("seed",)),
    _T("known finding", "certificate",
       "A finding a findings file sets aside by property and shape, with a reason, so the next one can show. The "
       "certificate lists it.",
       ("`property = \"R0\"`, `operation = \"rollback\"`, `when = \"steps > depth\"`", "reason: undo past the start does nothing.")
       , ("set aside", "findings file")),
    # -- drawing -------------------------------------------------------------------------------
    _T("deleted", "drawing",
       "Bytes a splice takes out, marked `[-…-]` in text and red (struck through) on the HTML page; *inserted* "
       "bytes are marked `{+…+}` and green.",
       ("`splice(1, 1, b'X')` on `b'abc'`:", "before `'a[-b-]c'`, after `'a{+X+}c'`.")
       , ("inserted",)),
    _T("undone", "drawing",
       "Bytes a rollback takes out (what the record inserted), marked `[-…-]` and orange; *restored* bytes (what "
       "it puts back) are marked `{+…+}` and blue.",
       ("`rollback(1)` of that splice:", "before `'a[-X-]c'`, after `'a{+b+}c'`.")
       , ("restored",)),
    _T("differs from the model", "drawing",
       "At the failing step, the bytes where the actual buffer differs from the expected one, marked `⟦…⟧` and "
       "yellow with a red outline.",
       ("expected `'aaaa⟦b⟧aaaa'`,", "actual `'aaaa⟦a⟧aaaa'`: byte 4 is wrong.")
       , ("corrupt",)),
    _T("expected", "drawing",
       "At the failing step, the outcome the model allows (bytes, error or success, depth, revision); where the "
       "rules allow more than one, each is shown. *Actual* is what the target did.",
       ("expected `''` (raised JournalError, depth 0, revision 0)", "actual `''` (succeeded, depth 0, revision 1).")
       , ("actual", "expected outcome")),
    _T("where to look", "drawing",
       "For R2, R4 and S1, a sentence at the failing step saying what the implementation should have checked, "
       "and where.",
       ("R2: at offset 23 take out `b'a'` and put back `b''`;", "the bytes there were exactly what the record inserted.")
       , ("look at",)),
)


def situation_examples() -> dict[str, tuple[str, str]]:
    """A two-line example per situation name (the definition is the situation's own)."""
    return dict(_SITUATION_EXAMPLES)


_SITUATION_EXAMPLES: tuple[tuple[str, tuple[str, str]], ...] = (
    ("rollback", ("splice, splice, `rollback(1)`:", "one record undone.")),
    ("refusal", ("`rollback(2)` at depth 1", "raises UnreachableRollbackError and changes nothing.")),
    ("journal_refused", ("`arm_journal_fault()`, then `splice(0, 0, b'a')`", "raises JournalError; the buffer stays `b''`.")),
    ("shifted", ("splice 3 bytes in at 0, splice at 5,", "`rollback(1)`: the second record's offset depends on the first edit.")),
    ("repeated_text", ("`b'abab'`, splice `ab` in at 2,", "`rollback(1)`: `ab` also stands at 0 and 4.")),
    ("ambiguous_context", ("`b'aaaaXaaaa'`-like text with two spots whose 4 bytes each side match,",
                           "a one-step rollback there: an anchor search has two candidates.")),
    ("multi_step", ("depth 3, `rollback(2)`:", "two records undone in one call.")),
    ("dead_checkpoint", ("checkpoint at depth 1, `rollback(1)`, splice, `rollback_to` it:", "refused: another state is at depth 1 now.")),
    ("past_horizon", ("`rollback(3)` at depth 2,", "or a checkpoint of another buffer: refused.")),
    ("divergence_met", ("splice, out-of-log write, `rollback(1)`:", "DivergenceError.")),
    ("rollback_to_meets_write", ("checkpoint, splice, out-of-log write, `rollback_to` the checkpoint:", "DivergenceError.")),
    ("undo_above_write", ("out-of-log write at depth 1, splice (depth 2), `rollback(1)`:", "undone normally, back to depth 1.")),
    ("adopt", ("after a DivergenceError,", "`adopt_current()`: depth 0, the barrier gone.")),
    ("write_below_records", ("depth 2, then an out-of-log write:", "a barrier with two records below it.")),
    ("torn_record", ("a crash while `splice(0, 0, b'xyz')`'s record is written, its last 2 bytes lost:", "recovery drops the record.")),
    ("crash_during_rollback", ("a crash in the middle of `rollback(2)` on a durable journal:", "recovery yields the state before or after it.")),
    ("crash_during_compaction", ("a crash while `compact(1)` rewrites the file:", "recovery yields the journal before or after it.")),
    ("restart", ("two splices, then a crash while idle:", "both splices are recovered.")),
    ("corruption", ("a bit flipped in record 1 of 3:", "recovery raises RecoveryError.")),
    ("record_out_of_place", ("record 2 written twice (every checksum still right):", "recovery raises RecoveryError: the chain breaks.")),
    ("second_writer", ("a second process opens a journal in use:", "JournalInUseError names the holder.")),
    ("batched_crash_unflushed", ("batched: flush, splice, crash:", "recovery may yield the state before the splice.")),
    ("batched_flush", ("batched: splice, splice, `flush()`:", "both splices are now durable.")),
    ("lost_checkpoint_refused", ("batched: checkpoint after an unflushed splice, crash, splice again to that depth:",
                                 "`rollback_to` it is refused.")),
    ("eviction", ("capacity 2, `evict_oldest`, depth 2, splice:", "record #1 dropped, horizon moved.")),
    ("refused_full", ("capacity 2, `reject`, depth 2, splice:", "JournalError, nothing changes.")),
    ("rollback_to_horizon", ("after an eviction, `rollback(2)` at depth 2:", "back to the moved horizon, not the original buffer.")),
    ("stale_content_accepted", ("snapshot, a tool write far from the hunk, apply the content diff:", "accepted on a changed base.")),
    ("moved_hunks", ("snapshot `b'abc'`, a tool inserts `XX` at 0, apply a hunk at 3:", "accepted, placed at 5.")),
    ("read_region_changed", ("a diff that read `[0, 2)` and writes at 5, a tool rewrote byte 0:",
                             "refused, though the hunk's own surroundings are intact.")),
    ("positional_rejected", ("snapshot, a tool write that moves the text, a positional diff:", "refused with StaleBaseError.")),
    ("rolled_back_onto_moved_base", ("snapshot, a tool write, apply diff D, `rollback_diff(D)`:",
                                     "back to the base with the tool's write, not to B0.")),
    ("rolled_back_after_writes", ("apply diff D, splice, `rollback_diff(D)`:", "undoes the splice and D, newest first.")),
    ("dead_diff_refused", ("apply diff D, `rollback(1)`, splice, `rollback_diff(D)`:", "refused: D's state is gone.")),
    ("rolled_away_snapshot", ("snapshot at depth 1, `rollback(1)`, a different splice to depth 1 and the same length, apply:",
                              "the rule refuses or moves the diff.")),
    ("edit_after_rollback", ("splice, `rollback(1)`, splice:", "the new state gets revision 3, not 1 again.")),
    ("overlap", ("T1 `splice(...)` from 2 to 6 µs,", "T2 `read()` from 4 to 5 µs.")),
    ("mutations_overlapped", ("T1 `rollback(2)` and T2 `splice(0, 0, b'a')`", "in flight at the same time.")),
    ("observed_multi_step_rollback", ("T1 `rollback(2)` from 9 bytes back to 3,", "T2 `length()` during it.")),
)


def _chips() -> dict[str, tuple[str, str]]:
    """Each situation name, with the properties that name it and its description
    (a name two properties share, like ``rollback``, with the first one's words)."""
    chips: dict[str, tuple[str, str]] = {}
    for prop in PROPERTIES.values():
        for situation in prop.situations:
            if situation.name not in chips:
                owners = sorted({p.id for p in PROPERTIES.values() if any(s.name == situation.name for s in p.situations)})
                chips[situation.name] = (", ".join(owners), situation.description)
    return chips


def _chip_sentence(owners: str, description: str) -> str:
    return f"coverage chip of {owners}: {description}."


def situation_terms() -> tuple[Term, ...]:
    """One term per situation name that is not already a word of :data:`TERMS`
    (``rollback``, ``adopt`` and ``eviction`` are both: :func:`all_terms` adds
    the chip's meaning to the word's own entry)."""
    examples = situation_examples()
    words = {name.lower() for term in TERMS for name in term.names()}
    return tuple(
        Term(name, "situations", "A " + _chip_sentence(owners, description), examples.get(name, ("", "")))
        for name, (owners, description) in _chips().items()
        if name.lower() not in words
    )


_DIMENSION_EXAMPLES: dict[str, tuple[str, str]] = {
    "line_break": ("`splice(2, 0, b'\\n')`", "inserts a line break."),
    "crlf": ("`splice(0, 0, b'\\r\\n')`", "inserts a CRLF pair (a log that normalises it to `\\n` undoes wrongly)."),
    "nul": ("`splice(1, 0, b'\\x00')`", "inserts a NUL byte (where a C string would end)."),
    "high_byte": ("`splice(0, 0, b'\\xe9')`", "inserts a byte above 0x7F."),
    "invalid_utf8": ("`splice(0, 0, b'\\xff\\xfe')`", "inserts bytes no UTF-8 decoder accepts."),
    "multibyte_utf8": ("`splice(0, 0, 'é'.encode())`", "inserts `b'\\xc3\\xa9'`: one character in two bytes."),
    "splits_character": ("on `b'\\xc3\\xa9'` (é), `splice(1, 0, b'x')`", "starts inside the character."),
    "character_boundary": ("on `b'a\\xc3\\xa9'`, `splice(1, 0, b'x')`", "edits right next to the character."),
    "buffer_past_chunk": ("a target that declares 32 KiB chunks,", "a buffer of 40,000 bytes observed."),
}


def _dimension_example(name: str) -> tuple[str, str]:
    """A dimension's example: written for the byte classes, made from the
    threshold for the sizes (``removed_past_128``: a splice that removes 129)."""
    if name in _DIMENSION_EXAMPLES:
        return _DIMENSION_EXAMPLES[name]
    what, _, threshold = name.rpartition("_past_")
    n = int(threshold) + 1 if threshold.isdigit() else 0
    return {
        "removed": (f"`splice(0, {n}, b'')`", f"removes {n} bytes in one edit."),
        "inserted": (f"`splice(0, 0, b'a' * {n})`", f"inserts {n} bytes in one edit."),
        "buffer": (f"a buffer of {n} bytes", "observed after a step."),
        "depth": (f"{n} splices without a rollback", f"make depth {n}."),
    }.get(what, ("", ""))


def dimension_terms() -> tuple[Term, ...]:
    """One term per coverage dimension of the world (``stateful_tests/world.py``),
    its definition the dimension's own description."""
    from rollcert.stateful_tests.world import DIMENSIONS

    return tuple(
        Term(d.name, "dimensions", f"A coverage dimension of every run's world: {d.description}.", _dimension_example(d.name))
        for d in DIMENSIONS
    )


def all_terms() -> tuple[Term, ...]:
    chips = _chips()
    words = tuple(
        replace(term, definition=f"{term.definition} As a {_chip_sentence(*chips[term.name])}")
        if term.name in chips else term
        for term in TERMS
    )
    return words + situation_terms() + dimension_terms()


def lookup(word: str) -> Term | None:
    """The term ``word`` names (by its name or an alias, case-insensitive)."""
    wanted = word.lower()
    for term in all_terms():
        if wanted in (name.lower() for name in term.names()):
            return term
    return None


def glossary_markdown() -> str:
    """``docs/glossary.md``: every term once, by section."""
    lines = [
        "# Glossary",
        "",
        "Every term the tour, the certificates and the HTML page use, defined once, each with a",
        "two-line example. Other names a term goes by are listed after it. The coverage chips are",
        "the situations of `model/properties.py`; their definitions are quoted from there.",
        "",
        "Written by `rollcert docs` from `reports/glossary.py`; do not edit by hand —",
        "`tests/test_glossary.py` fails when this file differs from what the command writes.",
    ]
    terms = all_terms()
    for key, heading in SECTIONS:
        lines += ["", f"## {heading}"]
        for term in (t for t in terms if t.section == key):
            lines += ["", f"### {term.name}", ""]
            also = f" *Also:* {', '.join(term.aliases)}." if term.aliases else ""
            lines += [term.definition + also, ""]
            lines += [f"> {term.example[0]}  ", f"> {term.example[1]}"]
    return "\n".join(lines) + "\n"


def mentioned(text: str, words: tuple[str, ...]) -> set[str]:
    """Which of ``words`` occur in ``text`` as whole words (case-insensitive)."""
    found = set()
    for word in words:
        if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, flags=re.IGNORECASE):
            found.add(word)
    return found
