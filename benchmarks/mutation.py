"""Mutation score of the certification (issue 42): how many behaviour-changing
mutants of ``impl/`` does ``rollcert certify`` catch?

Usage (from the repository root; needs the ``bench`` extra, ``pip install -e '.[bench]'``)::

    nice -n 10 python -m benchmarks.mutation                                  # journaled_buffer + chunked_text
    nice -n 10 python -m benchmarks.mutation --skip-equivalent                # the same, without the ones classified equivalent
    nice -n 10 python -m benchmarks.mutation --module impl/diffs.py --limit 40
    python -m benchmarks.mutation --list                                      # count the mutants, run nothing
    python -m benchmarks.mutation --rescore benchmarks/mutation-results.json  # classify the survivors again

A real mutation tool, cosmic-ray, makes the mutants (``cosmic-ray init``) and runs
them (``cosmic-ray exec`` with the ``local`` distributor, one at a time); the
test of every mutant is ``rollcert certify bundled --fail-fast --in-process`` at
the quick profile and seed 0 (``--profile``/``--seed``/``--only`` change that).
``--in-process`` (the verdicts of the isolated run, without a worker process per
property) because a mutant of ``impl/`` cannot take the process down in ways
cosmic-ray's own timeout does not catch.

Why a copy: cosmic-ray writes each mutant into the module file and restores it
afterwards; a run that is killed half-way leaves the mutant on disk. So the run
copies the source folders into a fresh temporary directory laid out as the
``rollcert`` namespace package (``TMP/rollcert/impl``, ...), mutates only there,
and runs the certification with ``PYTHONPATH=TMP``, which puts the copy ahead of
the editable install. No checkout is ever mutated, and the copy is deleted at
the end (``--keep`` keeps it for a look).

How a mutant is scored (cosmic-ray only knows "non-zero exit"; the wrapper,
``python -m benchmarks.mutation --as-test``, prints rollcert's exit status):

- ``killed``: certify exited 1, a property is ``violated``;
- ``error``: certify exited 2, no violation but an ``error``/``unknown`` verdict
  (typically impl code that raised something the harness reports as an error, or
  a coverage goal no longer reached). A detection too, counted apart;
- ``timeout``: the run took longer than ``--timeout`` (an infinite loop): counted apart;
- ``survived``: certify exited 0; each survivor must be classified by hand as
  *equivalent* (changes no observable behaviour) or a *miss* (docs/performance.md,
  "Mutation score"; the reasons live in :data:`CLASSIFIED`);
- ``broken``: certify exited 3 (the target no longer resolves, e.g. an import
  error): a detection, counted apart.

The score is ``(killed + error + timeout + broken) / (mutants - equivalent)``,
and the strict score, ``killed / (mutants - equivalent)``, beside it.

The full operator set of cosmic-ray makes ~750 mutants of journaled_buffer.py and
~930 of chunked_text.py, ten per arithmetic operator (``+`` to ``-``, ``*``, ``/``,
``//``, ``%``, ``**``, ``>>``, ``<<``, ``|``, ``&``, ``^``) and eight per
comparison. At 30 s per surviving mutant that is days of one core, so by default
the run uses :data:`REDUCED_OPERATORS`: one replacement per arithmetic
operator, the boundary and negation of each comparison, and all the others
(numbers, ``not``, booleans, loops, decorators, exceptions). ``--operators all``
takes everything. ``--limit N`` runs a fixed random sample (``--sample-seed``)
of N mutants per module.

Writes every mutant's outcome to ``benchmarks/mutation-results.json`` (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = Path(__file__).resolve().parent / "mutation-results.json"
DEFAULT_MODULES = ("impl/journaled_buffer.py", "impl/chunked_text.py")
#: The source folders copied into the throwaway tree (the ``rollcert.*`` subpackages).
SOURCE_FOLDERS = ("model", "impl", "proofs", "targets", "stateful_tests", "reports", "command", "specimens")
#: The line the ``--as-test`` wrapper prints, and the scorer reads back.
EXIT_MARK = "rollcert-mutation: exit status"
OUTCOMES = {0: "survived", 1: "killed", 2: "error", 3: "broken"}
#: The status the wrapper reports for a mutant that is not Python: not run, not scored.
DOES_NOT_COMPILE = 99
OUTCOMES[DOES_NOT_COMPILE] = "incompetent"
#: The status of a mutant whose turn came after ``--budget`` ran out: not run, not scored.
OUT_OF_BUDGET = 98
OUTCOMES[OUT_OF_BUDGET] = "not-run"
#: The environment variable that carries the budget's end (seconds since the epoch) to the wrapper.
DEADLINE_VARIABLE = "ROLLCERT_MUTATION_DEADLINE"
USAGE_ERROR = 3
#: cosmic-ray's command line, run by this interpreter (its package has no ``__main__``).
COSMIC_RAY = (sys.executable, "-c", "import sys; from cosmic_ray.cli import main; sys.exit(main(sys.argv[1:]))")

_ARITHMETIC_KEPT = ("Add_Sub", "Sub_Add", "Mul_Add", "Div_Mul", "FloorDiv_Mul", "Mod_FloorDiv", "Pow_Mul",
                    "LShift_RShift", "RShift_LShift", "BitOr_BitAnd", "BitAnd_BitOr", "BitXor_BitOr")
_COMPARISON_KEPT = ("Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt",  # boundaries (off by one)
                    "Lt_GtE", "LtE_Gt", "Gt_LtE", "GtE_Lt", "Eq_NotEq", "NotEq_Eq",  # negations
                    "Is_IsNot", "IsNot_Is", "In_NotIn", "NotIn_In")
#: The operators of the default run: a regular expression on cosmic-ray's operator names.
REDUCED_OPERATORS = re.compile(
    r"core/(?:"
    + "|".join(f"ReplaceBinaryOperator_{name}" for name in _ARITHMETIC_KEPT)
    + "|" + "|".join(f"ReplaceComparisonOperator_{name}" for name in _COMPARISON_KEPT)
    + r"|ReplaceUnaryOperator_Delete_\w+|ReplaceUnaryOperator_USub_UAdd|AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue"
    r"|ReplaceAndWithOr|ReplaceOrWithAnd|ReplaceBreakWithContinue|ReplaceContinueWithBreak|ExceptionReplacer"
    r"|NumberReplacer|RemoveDecorator|ZeroIterationForLoop)$"
)


#: The outcome of a mutant ``--skip-equivalent`` left out: classified equivalent, not run.
EQUIVALENT_NOT_RUN = "equivalent-not-run"


@dataclass(frozen=True)
class Mutant:
    """One mutant and what the certification made of it."""

    job_id: str
    module: str
    operator: str
    occurrence: int
    line: int
    column: int
    function: str | None
    #: killed, error, timeout, broken, survived (or skipped: left out by --limit or the operator set).
    outcome: str
    seconds: float | None
    #: The violated (or error/unknown) properties certify printed, e.g. "R0 violated".
    verdicts: str
    diff: str


#: Survivors classified by hand: (module, line, operator) -> ("equivalent" | "miss", why).
#: Keyed by the source line as it stands when the entry was written; an entry that
#: no longer matches a survivor is simply not used (the survivor shows unclassified).
#: A (module, line, operator) key covers every mutant of that operator on the line
#: (two NumberReplacer mutants, n+1 and n-1, say) and is classified by the worst of
#: them; where they differ, a (module, line, operator, occurrence) key (cosmic-ray's
#: occurrence number) classifies one of them and takes precedence.
CLASSIFIED: dict[tuple[str, int, str] | tuple[str, int, str, int], tuple[str, str]] = {
    ("impl/journaled_buffer.py", 79, "ReplaceOrWithAnd"): (
        "miss",
        "the start revision is refused only if it is both not an int and negative: JournaledBuffer(b'ab', "
        "start_revision=-1) is accepted (a splice then brings it to revision 0, a revision the buffer already "
        "showed), and so are 1.5 and True (revisions 2.5 and 2 after a splice); a str raises TypeError for "
        "ValueError. The generators only draw valid start revisions (strategies.start_revision_from: 0, or "
        "1-8 below a wrap) and never build a buffer with a bad one",
    ),
    ("impl/journaled_buffer.py", 90, "ReplaceComparisonOperator_IsNot_Is"): (
        "equivalent",
        "the guard against a capacity on a journal that cannot evict: every journal the bundled target "
        "builds can evict (InMemoryJournal by default, FileJournal says so), so it is false either way",
    ),
    ("impl/journaled_buffer.py", 105, "NumberReplacer", 14): (
        "equivalent",
        "_base_position starting at 1 instead of 0: positions are only ever used as differences from it (a "
        "checkpoint's depth, a barrier's depth), so the offset cancels; the 'no barrier' mark -1 then reads "
        "as depth -2, where no check fires (a rollback never goes below depth 0)",
    ),
    ("impl/journaled_buffer.py", 105, "NumberReplacer"): (
        "miss",
        "_base_position starting at -1 (occurrence 15): inside the buffer the offset cancels as for 1, but a "
        "fresh buffer's first checkpoint then has position -1, and the protocol server "
        "(targets/protocol_server.py) spells a token as position.serial and refuses one that is not digits: "
        "rollback_to that checkpoint fails there with UnreachableRollbackError; the bundled run does not go "
        "through the server",
    ),
    ("impl/journaled_buffer.py", 112, "NumberReplacer"): (
        "equivalent",
        "the 'no barrier' mark -1 becomes 0 or -2 (adopt_current still resets it to -1): a barrier is read as "
        "a depth d = mark - _base_position, so the mark reads as d = -base (at most 0) or -base - 2; every check "
        "fires only at d >= 1 (depth - steps < d <= depth with steps <= depth, dropped < d with dropped >= 0, "
        "and d == depth in the one-step fast path, taken only at depth >= 1), and the base never goes below 0",
    ),
    ("impl/journaled_buffer.py", 120, "NumberReplacer"): (
        "equivalent",
        "the initial undo location (bytearray(), 1 or -1) is never read: rollback reads _undo_at only when "
        "the popped record's serial equals _undo_serial, which starts at -1 (no serial) and is set together "
        "with _undo_at by the same-length splice",
    ),
    ("impl/journaled_buffer.py", 170, "AddNot"): (
        "miss",
        "a bytearray or memoryview insert, splice(0, 1, bytearray(b'J')), raises TypeError where SPEC §2 "
        "(model.contract.check_splice_arguments) accepts any bytes-like insert, and an int insert, "
        "splice(0, 0, 2), inserts two NUL bytes instead of raising TypeError: every machine sends a bytes "
        "insert (bad_splice varies only the range), so no draw has another type",
    ),
    ("impl/journaled_buffer.py", 170, "ReplaceUnaryOperator_Delete_Not"): (
        "miss",
        "the same as AddNot on this line: a bytearray or memoryview insert raises TypeError (SPEC §2 accepts "
        "it) and an int insert, splice(0, 0, 2), inserts NUL bytes; every machine sends a bytes insert",
    ),
    ("impl/journaled_buffer.py", 177, "ReplaceComparisonOperator_LtE_Lt"): (
        "equivalent",
        "the same branch: which of two ValueError messages, never whether one is raised",
    ),
    ("impl/journaled_buffer.py", 177, "ReplaceUnaryOperator_Delete_Not"): (
        "equivalent",
        "inside the bad-argument branch: it only chooses which of two ValueError messages is raised; the "
        "kind (what SPEC §3 documents and the judge compares) is the same",
    ),
    ("impl/journaled_buffer.py", 177, "NumberReplacer"): (
        "equivalent",
        "the same branch: which of two ValueError messages, never whether one is raised",
    ),
    ("impl/journaled_buffer.py", 177, "AddNot"): (
        "equivalent",
        "the same branch: which of two ValueError messages, never whether one is raised",
    ),
    ("impl/journaled_buffer.py", 193, "AddNot"): (
        "miss",
        "if found is None: the same-length fast path is taken exactly when locate found no single chunk, and "
        "unpacking None raises TypeError (nothing changed: the record is not yet appended); when locate finds "
        "one, the general path does the same splice. So a same-length splice across a chunk boundary fails: "
        "JournaledBuffer(76,800 bytes).splice(32767, 2, b'XY') raises TypeError. It needs delete_length == "
        "len(insert) > 0 across a chunk boundary of a buffer past 32 KiB: the edits near a boundary draw their "
        "delete length from 0, the rest of the buffer or uniform over it (and the 64 KiB seam edit removes "
        "2-129 bytes for a 0-4-byte insert), so they almost never match",
    ),
    ("impl/journaled_buffer.py", 205, "NumberReplacer"): (
        "equivalent",
        "a same-length splice moves the storage version by 2 (or by 0) instead of 1, and the same statement "
        "sets the buffer's expected version to it: a version is only ever compared for equality with the one "
        "its reader's own last write left (this buffer's, and DiffableBuffer's, reset after each of its "
        "operations), and an out-of-log write goes through ChunkedText.replace, which always adds 1, so it is "
        "still told apart; 200 random sequences (splices, rollbacks, checkpoints, out-of-log writes, adoption, "
        "compaction, a durable reopen) observe the same bytes, depths, revisions and error kinds",
    ),
    ("impl/journaled_buffer.py", 211, "NumberReplacer"): (
        "equivalent",
        "the 'no same-length record' mark -1 becomes -2: serials start at 1, so no negative mark ever "
        "matches one",
    ),
    ("impl/journaled_buffer.py", 238, "NumberReplacer"): (
        "miss",
        "steps < -1: rollback(-1) raises no ValueError but runs _rollback_locked(-1), which undoes nothing and "
        "leaves depth + 1 and revision - 1 (b'hello', splice(0, 1, b'J'), rollback(-1): depth 2 with one record, "
        "revision 0; a rollback(2) then pops an empty journal); no machine draws a negative step count "
        "(model.reference: bad arguments are bad_splice's, which varies only the range). The other mutant, "
        "steps < 1, refuses rollback(0), which the rollback rule draws (ZERO_STEPS_SHARE)",
    ),
    ("impl/journaled_buffer.py", 260, "NumberReplacer"): (
        "equivalent",
        "the one-step undo of a same-length splice moves the storage version by 2 (or by 0) instead of 1 and "
        "sets the expected version to it in the next statement: the same argument as line 205",
    ),
    ("impl/journaled_buffer.py", 299, "NumberReplacer", 58): (
        "equivalent",
        "adopt_current's base names next serial horizon + 2 instead of horizon + 1: the buffer keeps counting "
        "from horizon + 1 on its own counter, recovery accepts the file (horizon < next serial; each record's "
        "serial above the newest; floors at or above it) and reopens at the next block (reopen_floor): one "
        "serial skipped, none reused (one block of 2^32 more skipped only when horizon + 2 is a multiple of it)",
    ),
    ("impl/journaled_buffer.py", 299, "NumberReplacer"): (
        "miss",
        "horizon + 0 (occurrence 59): adopt_current's base names next serial == horizon serial, which recovery "
        "refuses, so a durable buffer that adopted cannot be reopened: open_durable_buffer(disk, b'hello'), "
        "splice(0, 1, b'J'), adopt_current(), journal.close(), open_durable_buffer(disk) raises RecoveryError. "
        "The R5 machine, the only one on a durable journal, takes no adoption (machines.rules_for: a durable "
        "journal rules out out-of-log writes, adoption and capacities), and the in-memory journal ignores the base",
    ),
    ("impl/journaled_buffer.py", 328, "ReplaceComparisonOperator_LtE_Gt"): (
        "equivalent",
        "dropped < barrier > depth is never true (a barrier never lies above the depth: it is set at the "
        "current depth, no rollback crosses it, evictions and compactions only lower it), so compaction never "
        "refuses above an out-of-log write: it succeeds, which is the model's own outcome (the refusal is "
        "allowed, never required: model.reference.compaction_may_refuse). Nothing else changes: the barrier "
        "still bars every rollback across it, so the base (computed across the write) is never reached; the "
        "in-memory journal keeps no base, and the durable machine takes no out-of-log writes",
    ),
    ("impl/journaled_buffer.py", 328, "ReplaceComparisonOperator_LtE_Lt"): (
        "equivalent",
        "dropped < barrier < depth: a compaction that keeps records below an out-of-log write made at the "
        "current depth (splice, write_out_of_log, compact(1)) succeeds instead of refusing; both are allowed "
        "(model.reference.compaction_may_refuse; success is the model's own outcome), and nothing else "
        "changes: the barrier, now at the new depth, still bars every rollback across it (see line 328 "
        "LtE_Gt)",
    ),
    ("impl/journaled_buffer.py", 403, "ReplaceComparisonOperator_Lt_LtE"): (
        "miss",
        "a rollback that stops exactly at the depth of an out-of-log write is refused with DivergenceError "
        "(depth - steps <= barrier): JournaledBuffer(b'hello'), write_out_of_log(4, 1, b'O') (at depth 0), "
        "splice(0, 1, b'J'), splice(1, 1, b'E'), rollback(2): the model rolls back to b'hellO', the mutant "
        "refuses (a replay of those four steps through the judge reports the violation). Only "
        "_rollback_locked has the check: a rollback(1) takes the fast path, so it needs rollback(n >= 2) or a "
        "rollback_to landing on the write's depth (e.g. a checkpoint taken right after the write, one splice, "
        "rollback_to), which the quick run at seed 0 did not draw: rollback_to's lures are checkpoints whose "
        "way back crosses a write, not ones that stop on it",
    ),
    # impl/chunked_text.py. Its observable behaviour is the bytes, the length and that every write
    # moves ``version``; how the bytes are cut into chunks and groups is not observable, so a mutant
    # that only changes the layout (and keeps every read right) is equivalent.
    ("impl/chunked_text.py", 72, "NumberReplacer"): (
        "equivalent",
        "the check of a chunk size below 1 or of an explicit group size: since issue 42's small chunks the "
        "certifier asks for chunks of 1-4 bytes (never 0) and never for a group size, so only the mutants "
        "that refuse a chunk of one byte change what it sees (size <= 1, size < 2: detected, R0 error, run by "
        "name in session 4); the rest (size < 0, 'and', every group-size one) are equivalent for it",
    ),
    # The two that refuse a chunk of one byte: detected since the small chunks (by occurrence, so that
    # --skip-equivalent runs them).
    ("impl/chunked_text.py", 72, "ReplaceComparisonOperator_Lt_LtE", 0): (
        "miss", "size <= 1 refuses a chunk of one byte: detected (R0 error) since issue 42's small chunks",
    ),
    ("impl/chunked_text.py", 72, "NumberReplacer", 6): (
        "miss", "size < 2 refuses a chunk of one byte: detected (R0 error) since issue 42's small chunks",
    ),
    ("impl/chunked_text.py", 72, "ReplaceComparisonOperator_Lt_LtE"): (
        "equivalent",
        "the check of a chunk size below 1 or of an explicit group size: since issue 42's small chunks the "
        "certifier asks for chunks of 1-4 bytes (never 0) and never for a group size, so only the mutants "
        "that refuse a chunk of one byte change what it sees (size <= 1, size < 2: detected, R0 error, run by "
        "name in session 4); the rest (size < 0, 'and', every group-size one) are equivalent for it",
    ),
    ("impl/chunked_text.py", 86, "NumberReplacer"): (
        "equivalent", "the initial hint is never read: the hint offset starts at -1, which no offset matches",
    ),
    ("impl/chunked_text.py", 241, "NumberReplacer", 100): (
        "equivalent", "'no hint' as -2 instead of -1: no offset is negative, so neither is ever matched",
    ),
    ("impl/chunked_text.py", 142, "AddNot"): (
        "equivalent",
        "locate's one-chunk shortcut taken for a group of several chunks: for an offset past the first chunk "
        "the range then never fits the first chunk, locate says None, and the buffer takes its general "
        "path; inside the first chunk the answer is the same: slower, never wrong",
    ),
    ("impl/chunked_text.py", 185, "ReplaceComparisonOperator_Gt_GtE"): (
        "equivalent", "an edit that ends exactly at its chunk's end goes through the merge-and-re-split path: "
        "the same bytes, another layout",
    ),
    ("impl/chunked_text.py", 197, "ReplaceBinaryOperator_Add_Sub"): (
        "equivalent", "a guard before a loop over range(i + 1, len(rel)), which is empty whenever the guard is false",
    ),
    ("impl/chunked_text.py", 245, "ReplaceComparisonOperator_Gt_GtE"): (
        "equivalent", "a chunk of exactly twice the chunk size is split too: layout only",
    ),
    ("impl/chunked_text.py", 250, "ReplaceComparisonOperator_Lt_GtE"): (
        "equivalent",
        "whether a regrouped run borrows its neighbouring group: either way the same chunks in the same "
        "order with their starts recomputed; only the group sizes (speed) differ",
    ),
    ("impl/chunked_text.py", 139, "NumberReplacer"): (
        "miss",
        "locate picks the group after the right one: wrong with two groups or more (24+ chunks, 768 KiB), "
        "which the generators before issue 42 never built (their buffers stayed under 40 KiB); closed by "
        "the start past 40 chunks (strategies.MANY_CHUNKS)",
    ),
    ("impl/chunked_text.py", 202, "NumberReplacer"): (
        "miss",
        "a length change no longer shifts the start of the next group: the same two-group blind spot "
        "(closed by strategies.MANY_CHUNKS)",
    ),
    ("impl/chunked_text.py", 215, "NumberReplacer"): (
        "miss",
        "an edit that spans two groups merges the wrong chunks: needs two groups and an edit across their "
        "boundary (closed by strategies.MANY_CHUNKS and the offsets near chunk boundaries)",
    ),
    ("impl/chunked_text.py", 143, "NumberReplacer", 45): (
        "equivalent", "the group has one chunk on this path, so its chunk [-1] is its chunk [0]",
    ),
    ("impl/chunked_text.py", 158, "ReplaceComparisonOperator_Gt_GtE"): (
        "equivalent", "the read goes on over the rest of its group with nothing left to read: empty pieces, "
        "the same bytes",
    ),
    ("impl/chunked_text.py", 164, "NumberReplacer"): (
        "miss", "a read across a group boundary skips a group: two groups needed (closed by strategies.MANY_CHUNKS)",
    ),
    ("impl/chunked_text.py", 175, "AddNot"): (
        "equivalent",
        "replace's one-group shortcut taken with several groups: the offset is then read against group 0, "
        "past its last chunk, and the edit goes to the merge-and-re-split path, which walks forward from "
        "there and edits the right bytes (merging every chunk in between: slower, never wrong); and a "
        "splice's replace takes the hint read_range left, not this lookup",
    ),
    ("impl/chunked_text.py", 250, "AddNot"): (
        "equivalent", "whether a regrouped run borrows its neighbouring group: layout only (see line 250 above)",
    ),
    ("impl/chunked_text.py", 261, "ReplaceUnaryOperator_Delete_USub"): (
        "equivalent", "which group's size decides whether the last short group joins the one before: layout only",
    ),
    ("impl/chunked_text.py", 261, "NumberReplacer"): (
        "equivalent",
        "the size below which the last group joins the one before (// 1, // 3), or joining it only when there "
        "are three groups or more (> 2): layout only (> 0 takes new_groups[-2] of a lone group, IndexError: "
        "detected)",
    ),
    ("impl/chunked_text.py", 281, "NumberReplacer"): (
        "equivalent", "the group size doubles at 80 groups instead of 64: layout only",
    ),
    ("impl/chunked_text.py", 285, "NumberReplacer"): (
        "miss",
        "the group size no longer doubles past 64 groups, and _regroup recurses without end (RecursionError): "
        "only a buffer past 64 groups of 16 chunks (32 MiB at the bundled chunk size) shows it, beyond any "
        "size a quick run can afford with a model that keeps every state whole",
    ),
    ("impl/chunked_text.py", 39, "NumberReplacer"): (
        "equivalent",
        "CHUNK_SIZE 31 or 33 KiB (or 32 x 1023, 32 x 1025): a layout parameter, the bytes are the same at any "
        "chunk size >= 1 (the unit tests run 1-4 bytes; differential fuzz at 1-4 agrees); the bundled target "
        "declares it as chunk_bytes, so the generators' chunk-boundary offsets follow it",
    ),
    ("impl/chunked_text.py", 44, "NumberReplacer"): (
        "equivalent", "GROUP_SIZE 17 or 15: layout only, the bytes are the same at any group size >= 1",
    ),
    ("impl/chunked_text.py", 68, "ReplaceBinaryOperator_BitOr_BitAnd"): (
        "equivalent", "int & None in a parameter annotation, never evaluated (from __future__ import annotations)",
    ),
    ("impl/chunked_text.py", 85, "ReplaceUnaryOperator_USub_UAdd"): (
        "equivalent",
        "the initial hint offset (1, 0 or -2 for -1) is never read: __init__ ends with _regroup, whose first "
        "statement sets it to -1 again",
    ),
    ("impl/chunked_text.py", 85, "ReplaceUnaryOperator_Delete_USub"): (
        "equivalent",
        "the initial hint offset (1, 0 or -2 for -1) is never read: __init__ ends with _regroup, whose first "
        "statement sets it to -1 again",
    ),
    ("impl/chunked_text.py", 85, "NumberReplacer"): (
        "equivalent",
        "the initial hint offset (1, 0 or -2 for -1) is never read: __init__ ends with _regroup, whose first "
        "statement sets it to -1 again",
    ),
    ("impl/chunked_text.py", 117, "ReplaceBinaryOperator_Sub_Add"): (
        "equivalent",
        "read_range's one-chunk test with end + start for end - start is never looser (start >= 0): a read "
        "that fits its chunk but starts past 0 goes to _read_across, which walks from the same chunk and "
        "returns the same bytes, only leaving no hint (the replace after it looks its chunk up): slower, never "
        "wrong",
    ),
    ("impl/chunked_text.py", 136, "NumberReplacer", 39): (
        "equivalent",
        "locate with a lone group: group -1 is group 0 (the other mutant, g = 1, raises IndexError on every "
        "same-length splice of a one-group buffer: detected)",
    ),
    ("impl/chunked_text.py", 145, "NumberReplacer"): (
        "miss",
        "locate takes the chunk before the right one (- 2; an offset in a group's first chunk reads index -1, "
        "the group's last chunk, at a negative offset) or after it (- 0), in a group of several chunks: "
        "JournaledBuffer(40,000 bytes).splice(5, 2, b'XY') writes into the last chunk instead, and the bytes "
        "are wrong after it and after its rollback. It needs a same-length splice (delete_length == "
        "len(insert) > 0) in a buffer past 32 KiB: there the drawn delete length is 0, the rest of the "
        "buffer, or uniform over it, and it almost never equals a 0-4-byte insert",
    ),
    ("impl/chunked_text.py", 204, "ReplaceUnaryOperator_Delete_Not"): (
        "equivalent",
        "if chunk or ...: a length-changing edit regroups whenever its chunk is non-empty (the same chunks "
        "re-cut: layout) and leaves a chunk it emptied in place; every lookup skips an empty chunk (bisect_right "
        "takes the last of equal starts), read() joins it as nothing and the merge paths walk over it: the same "
        "bytes, empty chunks kept until their group is regrouped (differential fuzz at chunk sizes 1-4, group "
        "sizes 1-16 agrees)",
    ),
    ("impl/chunked_text.py", 204, "NumberReplacer"): (
        "equivalent", "a chunk is re-split past 3 (or 1) chunk sizes instead of 2: layout only",
    ),
    ("impl/chunked_text.py", 245, "ReplaceBinaryOperator_Mul_Add"): (
        "equivalent", "_regroup splits a chunk longer than size + 2 instead of 2 x size: smaller chunks, layout only",
    ),
    ("impl/chunked_text.py", 250, "ReplaceBinaryOperator_FloorDiv_Mul"): (
        "equivalent",
        "a regrouped run borrows its neighbouring group below two group sizes instead of half of one: layout "
        "only (see line 250 above)",
    ),
    ("impl/chunked_text.py", 280, "NumberReplacer"): (
        "miss",
        "the groups after a regrouped run get their starts from a group's first chunk (- 0) or the one before "
        "its last (- 2) instead of its last: wrong from the second of them on once a group has chunks of "
        "different lengths. Needs three groups (the 40-chunk start: 16, 16 and 9 chunks), a length change in "
        "group 1's first or last chunk, a regroup of group 0, then an edit or lookup in group 2 (read() joins "
        "the chunks and does not see it): JournaledBuffer(40 x 32 KiB + 101 bytes), splice(16 x 32768 + 5, 0, "
        "b'abc'), splice(32767, 2, b''), splice(len, 0, b'Z') leaves the wrong bytes; one start in 32 has three "
        "groups, and then it takes those three edits. (The rels[k][...] mutants of this line are killed)",
    ),
    ("impl/chunked_text.py", 286, "NumberReplacer"): (
        "miss",
        "the regroup after the group size doubles starts the groups at -1 or 1 instead of 0 (every lookup "
        "after it off by one byte), or replaces groups [1:] or [-1:] instead of all (chunks doubled): the "
        "same blind spot as line 285, past 64 groups (32 MiB at the bundled chunk size; at chunk size 1 and "
        "group size 2 a 600-byte buffer shows it)",
    ),
    ("impl/chunked_text.py", 135, "ReplaceComparisonOperator_Eq_NotEq"): (
        "equivalent",
        "locate's one-group shortcut taken with several groups (and the bisect with one, which finds group 0): "
        "group 0 starts at 0, so an offset inside it is right; past it the range never fits group 0's chunk, "
        "locate says None and the buffer takes its general path (a zero-length range at group 0's very end "
        "gets a zero-length write there, which changes nothing): slower, never wrong",
    ),
    ("impl/chunked_text.py", 197, "ReplaceComparisonOperator_Lt_LtE"): (
        "equivalent", "a guard before a loop over range(i + 1, len(rel)), which is empty whenever the guard is false",
    ),
    ("impl/chunked_text.py", 250, "ReplaceUnaryOperator_Delete_Not"): (
        "equivalent",
        "... or pieces: a regrouped run borrows its neighbouring group whenever it has chunks (layout only, "
        "see line 250 above); an empty run is still below half a group at every group size the bundled "
        "storage has (16 and its doublings), so the empty buffer still gets its one empty chunk (at group "
        "size 1, which only unit tests use, it would lose its last group)",
    ),
    # Classified ahead of a survivor (none of these survived in the run that added them, and a later run
    # samples other mutants): from the code, each also run against a bytearray at tiny chunk and group sizes.
    ("impl/chunked_text.py", 39, "ReplaceBinaryOperator_Mul_Add"): (
        "equivalent",
        "CHUNK_SIZE = 32 + 1024 (1,056-byte chunks): layout only (see line 39 NumberReplacer)",
    ),
    ("impl/chunked_text.py", 72, "ReplaceOrWithAnd"): (
        "equivalent",
        "the check of a chunk size below 1 or of an explicit group size: since issue 42's small chunks the "
        "certifier asks for chunks of 1-4 bytes (never 0) and never for a group size, so only the mutants "
        "that refuse a chunk of one byte change what it sees (size <= 1, size < 2: detected, R0 error, run by "
        "name in session 4); the rest (size < 0, 'and', every group-size one) are equivalent for it",
    ),
    ("impl/chunked_text.py", 91, "NumberReplacer"): (
        "equivalent",
        "the version starts at 1 or -1: it is only compared for equality with a value read from it, and "
        "every write still adds 1",
    ),
    ("impl/chunked_text.py", 93, "NumberReplacer", 24): (
        "equivalent",
        "_regroup(0, 1, ...) in __init__: the lists are still empty, so [0:1] is [0:0]",
    ),
    ("impl/chunked_text.py", 107, "NumberReplacer", 29): (
        "equivalent",
        "read_range's one-group shortcut never taken (== 0): the bisect finds group 0 as well",
    ),
    ("impl/chunked_text.py", 117, "ReplaceComparisonOperator_LtE_Lt"): (
        "equivalent",
        "a read that ends exactly at its chunk's end goes to _read_across: the same bytes from the same "
        "chunk, only no hint left (the replace after it looks its chunk up)",
    ),
    ("impl/chunked_text.py", 123, "ReplaceBinaryOperator_BitOr_BitAnd"): (
        "equivalent",
        "an annotation, never evaluated (from __future__ import annotations)",
    ),
    ("impl/chunked_text.py", 135, "AddNot"): (
        "equivalent",
        "locate's one-group shortcut reversed: see line 135 Eq_NotEq",
    ),
    ("impl/chunked_text.py", 135, "NumberReplacer"): (
        "equivalent",
        "locate's one-group shortcut taken with two groups (== 2) or never (== 0): see line 135 Eq_NotEq",
    ),
    ("impl/chunked_text.py", 142, "ReplaceComparisonOperator_Eq_NotEq"): (
        "equivalent",
        "locate's one-chunk shortcut reversed: with several chunks it takes chunk 0, which is right "
        "whenever the range fits it and else gives None (the general path); with one chunk the bisect "
        "finds it",
    ),
    ("impl/chunked_text.py", 142, "NumberReplacer"): (
        "equivalent",
        "locate's one-chunk shortcut taken with two chunks (== 2) or never (== 0): see line 142 Eq_NotEq",
    ),
    ("impl/chunked_text.py", 148, "ReplaceComparisonOperator_LtE_Lt"): (
        "equivalent",
        "locate says None for a range that ends exactly at its chunk's end: the splice takes the general "
        "path, the same bytes",
    ),
    ("impl/chunked_text.py", 158, "NumberReplacer", 51): (
        "equivalent",
        "remaining > -1: the read goes on over the rest of its group with nothing left to read: empty "
        "pieces, the same bytes (the other mutant, > 1, skips to the next group)",
    ),
    ("impl/chunked_text.py", 170, "NumberReplacer", 60): (
        "equivalent",
        "every replace moves the version by 2: still a move, and versions are only compared for equality",
    ),
    ("impl/chunked_text.py", 175, "ReplaceComparisonOperator_Eq_NotEq"): (
        "equivalent",
        "replace's one-group shortcut reversed: see line 175 AddNot",
    ),
    ("impl/chunked_text.py", 175, "NumberReplacer"): (
        "equivalent",
        "replace's one-group shortcut taken with two groups (== 2) or never (== 0): see line 175 AddNot",
    ),
    ("impl/chunked_text.py", 194, "NumberReplacer", 70): (
        "equivalent",
        "'no hint' as -2 instead of -1: no offset is negative",
    ),
    ("impl/chunked_text.py", 197, "NumberReplacer", 73): (
        "equivalent",
        "a guard before a loop over range(i + 1, len(rel)), which is empty whenever the guard is false",
    ),
    ("impl/chunked_text.py", 201, "ReplaceBinaryOperator_Add_Sub"): (
        "equivalent",
        "a guard before a loop over range(g + 1, len(gstarts)), which is empty whenever the guard is "
        "false",
    ),
    ("impl/chunked_text.py", 201, "NumberReplacer", 77): (
        "equivalent",
        "a guard before a loop over range(g + 1, len(gstarts)), which is empty whenever the guard is "
        "false",
    ),
    ("impl/chunked_text.py", 201, "ReplaceComparisonOperator_Lt_LtE"): (
        "equivalent",
        "a guard before a loop over range(g + 1, len(gstarts)), which is empty whenever the guard is "
        "false",
    ),
    ("impl/chunked_text.py", 204, "AddNot"): (
        "equivalent",
        "if chunk or ...: see line 204 Delete_Not (layout only)",
    ),
    ("impl/chunked_text.py", 204, "ReplaceOrWithAnd"): (
        "equivalent",
        "never regroups after an in-chunk edit: chunks grow past twice the chunk size unsplit and emptied "
        "chunks stay (both read right, see line 204 Delete_Not): layout only",
    ),
    ("impl/chunked_text.py", 204, "ReplaceComparisonOperator_Gt_LtE"): (
        "equivalent",
        "regroups after nearly every length change, and never for an oversized chunk (which then stays "
        "whole): layout only",
    ),
    ("impl/chunked_text.py", 204, "ReplaceComparisonOperator_Gt_GtE"): (
        "equivalent",
        "a chunk of exactly twice the chunk size is re-split too: layout only",
    ),
    ("impl/chunked_text.py", 204, "ReplaceBinaryOperator_Mul_Add"): (
        "equivalent",
        "a chunk is re-split past size + 2 instead of 2 x size: layout only",
    ),
    ("impl/chunked_text.py", 245, "AddNot"): (
        "equivalent",
        "_regroup cuts the chunks up to twice the size into pieces of the size (dropping empty ones) and "
        "keeps longer ones whole: layout only",
    ),
    ("impl/chunked_text.py", 245, "ReplaceComparisonOperator_Gt_LtE"): (
        "equivalent",
        "the same as AddNot on this line: layout only",
    ),
    ("impl/chunked_text.py", 245, "NumberReplacer"): (
        "equivalent",
        "_regroup splits chunks past 3 (or 1) chunk sizes instead of 2: layout only",
    ),
    ("impl/chunked_text.py", 250, "ReplaceComparisonOperator_Lt_LtE"): (
        "equivalent",
        "whether a regrouped run borrows its neighbouring group: layout only (see line 250 above)",
    ),
    ("impl/chunked_text.py", 250, "NumberReplacer"): (
        "equivalent",
        "whether a regrouped run borrows its neighbouring group (// 3, // 1): layout only",
    ),
    ("impl/chunked_text.py", 254, "NumberReplacer", 110): (
        "equivalent",
        "first > 1: the last group, regrouped empty with one group before it, does not borrow that one "
        "and becomes a group of one empty chunk, which every lookup skips (or, at the very end, writes "
        "into): layout only",
    ),
    ("impl/chunked_text.py", 261, "ReplaceUnaryOperator_USub_UAdd"): (
        "equivalent",
        "which group's size decides whether the last short group joins the one before: layout only",
    ),
    ("impl/chunked_text.py", 261, "ReplaceComparisonOperator_Lt_LtE"): (
        "equivalent",
        "the size below which the last group joins the one before: layout only",
    ),
    ("impl/chunked_text.py", 261, "ReplaceComparisonOperator_Lt_GtE"): (
        "equivalent",
        "whether the last group joins the one before: layout only",
    ),
    ("impl/chunked_text.py", 261, "ReplaceBinaryOperator_FloorDiv_Mul"): (
        "equivalent",
        "the size below which the last group joins the one before: layout only",
    ),
    ("impl/chunked_text.py", 281, "ReplaceComparisonOperator_Gt_GtE"): (
        "equivalent",
        "the group size doubles at 64 groups instead of 65: layout only",
    ),
    ("impl/chunked_text.py", 281, "ReplaceBinaryOperator_Mul_Add"): (
        "equivalent",
        "the group size doubles past 4 + group size groups (20): layout only; each doubling halves the "
        "groups, so it stops",
    ),
    ("impl/chunked_text.py", 285, "NumberReplacer", 134): (
        "equivalent",
        "the group size triples instead of doubling: layout only",
    ),
    ("impl/chunked_text.py", 285, "ReplaceBinaryOperator_Mul_Add"): (
        "equivalent",
        "the group size grows to 2 + group size (18): 65 groups of 16 regroup into 58, below 4 x 18, so "
        "it stops: layout only",
    ),
    # journaled_buffer.py, classified ahead of a survivor in the same way (the differential check: 200 random
    # sequences of splices, rollbacks, checkpoints, out-of-log writes, adoption, compaction and a durable reopen).
    ("impl/journaled_buffer.py", 44, "NumberReplacer"): (
        "equivalent",
        "buffer ids counted from 2 or 0: ids are only compared for equality (a checkpoint's or a diff's "
        "buffer); durable buffers draw theirs at random above 2^62",
    ),
    ("impl/journaled_buffer.py", 73, "ReplaceBinaryOperator_BitOr_BitAnd"): (
        "equivalent",
        "an annotation, never evaluated (from __future__ import annotations)",
    ),
    ("impl/journaled_buffer.py", 75, "ReplaceBinaryOperator_BitOr_BitAnd"): (
        "equivalent",
        "an annotation, never evaluated (from __future__ import annotations)",
    ),
    ("impl/journaled_buffer.py", 77, "ReplaceBinaryOperator_BitOr_BitAnd"): (
        "equivalent",
        "an annotation, never evaluated (from __future__ import annotations)",
    ),
    ("impl/journaled_buffer.py", 79, "NumberReplacer"): (
        "miss",
        "start_revision < -1: JournaledBuffer(b'ab', start_revision=-1) is accepted (see line 79 "
        "ReplaceOrWithAnd: no generator draws a bad start revision); the other mutant, < 1, refuses the "
        "default 0 (detected)",
    ),
    ("impl/journaled_buffer.py", 86, "NumberReplacer"): (
        "miss",
        "capacity < 0: JournaledBuffer(b'abc', capacity=0) is accepted, and then every splice is refused "
        "as full (reject) or evicts the record it just appended (evict_oldest: depth stays 0); the "
        "bounded machines draw capacities 1-4 and 66-73 only. The other mutant, < 2, refuses capacity 1 "
        "(detected)",
    ),
    ("impl/journaled_buffer.py", 90, "AddNot"): (
        "equivalent",
        "the guard against a capacity on a journal that cannot evict, reversed: false either way (see "
        "line 90 IsNot_Is)",
    ),
    ("impl/journaled_buffer.py", 102, "NumberReplacer", 10): (
        "equivalent",
        "serials counted from 2: they stay unique and above the horizon's 0, and are only compared for "
        "equality in memory (a durable buffer's come from its journal's block)",
    ),
    ("impl/journaled_buffer.py", 103, "NumberReplacer", 13): (
        "miss",
        "the first horizon's serial -1 instead of 0: in memory it is only compared for equality and is "
        "still no record's serial, but the protocol server (targets/protocol_server.py) spells a token as "
        "position.serial and refuses one whose serial is not digits, so there a checkpoint of a fresh "
        "buffer's start cannot be rolled back to (UnreachableRollbackError); the bundled run does not go "
        "through the server. (The other mutant, 1, is killed)",
    ),
    ("impl/journaled_buffer.py", 119, "NumberReplacer"): (
        "equivalent",
        "the initial 'no same-length record' mark -2 or 0 for -1: serials start at 1, so neither matches "
        "one",
    ),
    ("impl/journaled_buffer.py", 167, "ReplaceOrWithAnd"): (
        "miss",
        "TypeError only if both offset and delete_length are not ints: splice(True, 0, b'x') inserts at "
        "offset 1 (SPEC §2 and model.contract.check_integer: True is not an offset), a float offset fails "
        "later with TypeError anyway; no machine draws a non-int offset (bad_splice varies only the "
        "range)",
    ),
    ("impl/journaled_buffer.py", 177, "ReplaceComparisonOperator_LtE_Gt"): (
        "equivalent",
        "the same branch: which of two ValueError messages, never whether one is raised",
    ),
    ("impl/journaled_buffer.py", 193, "ReplaceComparisonOperator_IsNot_Is"): (
        "miss",
        "if found is None: the same as line 193 AddNot (a same-length splice across a chunk boundary "
        "raises TypeError)",
    ),
    ("impl/journaled_buffer.py", 205, "ReplaceBinaryOperator_Add_Sub"): (
        "equivalent",
        "a same-length splice moves the storage version by -1: still a move, set as the expected version "
        "in the same statement (see line 205 NumberReplacer; an out-of-log write adds 1 to whatever it "
        "is, so it is still told apart)",
    ),
    ("impl/journaled_buffer.py", 230, "NumberReplacer"): (
        "miss",
        "rollback()'s default step count 2 or 0: b.rollback() undoes two records or none; every machine "
        "passes the step count (RollbackFamily.perform: sut.rollback(operation.steps))",
    ),
    ("impl/journaled_buffer.py", 260, "ReplaceBinaryOperator_Add_Sub"): (
        "equivalent",
        "the one-step undo of a same-length splice moves the storage version by -1: see line 205 Add_Sub",
    ),
    ("impl/journaled_buffer.py", 299, "ReplaceBinaryOperator_Add_Sub"): (
        "miss",
        "adopt_current's base on a durable journal: next serial horizon - 1 (recovery refuses it: "
        "open_durable_buffer, splice, adopt_current, close, reopen raises RecoveryError) or base position "
        "base - depth (struct.error from the rewrite when the depth is above the base: "
        "open_durable_buffer(disk, b'hello'), two splices, adopt_current()); the R5 machine takes no "
        "adoption",
    ),
    ("impl/journaled_buffer.py", 301, "ReplaceUnaryOperator_USub_UAdd"): (
        "equivalent",
        "adopt_current resets the 'no same-length record' mark to 1: after adoption every serial is above "
        "the new horizon's (>= 1), so 1 never matches",
    ),
    ("impl/journaled_buffer.py", 301, "ReplaceUnaryOperator_Delete_USub"): (
        "equivalent",
        "adopt_current resets the 'no same-length record' mark to 1: after adoption every serial is above "
        "the new horizon's (>= 1), so 1 never matches",
    ),
    ("impl/journaled_buffer.py", 301, "NumberReplacer"): (
        "equivalent",
        "adopt_current resets the 'no same-length record' mark to -2 or 0: no serial is either",
    ),
    ("impl/journaled_buffer.py", 305, "NumberReplacer"): (
        "equivalent",
        "adopt_current resets the 'no barrier' mark to -2 or 0: see line 112 (it reads as a depth of at "
        "most 0, where no check fires)",
    ),
    ("impl/journaled_buffer.py", 395, "NumberReplacer"): (
        "equivalent",
        "_rollback_locked resets the 'no same-length record' mark to -2 or 0: no serial is either",
    ),
    ("impl/chunked_text.py", 93, "NumberReplacer"): (
        "miss",
        "_regroup(-1, 0, ...) in __init__ (occurrence 23): the loop that fixes the starts of the groups "
        "after the new ones runs over the last group and sets its start to the buffer's end, so a buffer "
        "built with two groups or more (24 chunks, 768 KiB) puts every edit of its last group in the "
        "wrong place: JournaledBuffer(40 x 32 KiB + 101 bytes).splice(len, 0, b'Z') inserts at 1 MiB "
        "instead of the end (a one-group buffer ignores the start). Only the 40-chunk starts (one example "
        "in 32, and Hypothesis reuses start words) have two groups, and read() joins the chunks without "
        "the starts: it takes one of them editing past 1 MiB. (_regroup(1, ...) and (0, -1, ...) are "
        "other mutants of this line; (0, 1, ...) is equivalent, occurrence 24 above)",
    ),
    ("impl/chunked_text.py", 280, "ReplaceUnaryOperator_Delete_USub"): (
        "miss",
        "groups[k][1] for groups[k][-1]: the start of the groups after a regrouped run comes from a "
        "group's second chunk, wrong from the second of them on once it differs from the group's last: as "
        "line 280 NumberReplacer with the length change in group 1's second chunk (splice(17 x 32768 + 5, "
        "0, b'abc'), splice(32767, 2, b''), splice(len, 0, b'Z') on the 40-chunk start leaves the wrong "
        "bytes)",
    ),
    ("impl/chunked_text.py", 280, "ReplaceUnaryOperator_USub_UAdd", 6): (
        "miss",
        "groups[k][+1] for groups[k][-1]: the same as Delete_USub on this line (a group's second chunk's length "
        "for its last one's). With chunks of 1-4 bytes asked for (issue 42, session 4) three groups come at 40 "
        "bytes, but the chunks of a group stay of one length until an edit inside one of them changes it "
        "without a regroup, and then it takes a regroup before that group and an edit after it: the quick run "
        "at seed 0 met the [-2] mutant of this line (killed) and not this one",
    ),
    ("impl/chunked_text.py", 140, "ReplaceBinaryOperator_Sub_Add"): (
        "miss",
        "locate() takes offset + gstarts[g] for the offset inside group g: in group 0 (start 0) the same; past "
        "it the place lands past the group's end for groups of like lengths, locate says None and the splice "
        "takes the general path (right). It is wrong only when group g holds more than twice the bytes before "
        "it (group 0 of 8 one-byte chunks, group 1 of 23 two-byte chunks, after regroups) and a same-length "
        "splice lands in group g: that splice then writes into the wrong chunk. No quick run built such "
        "uneven groups",
    ),
    ("impl/journaled_buffer.py", 76, "NumberReplacer"): (
        "miss",
        "start_revision's default 1 (occurrence 2): JournaledBuffer(b'x').revision is 1, not 0. Every "
        "machine builds the buffer through BundledAdapter, which passes BufferConfig.start_revision "
        "explicitly, recovery (_restore) overwrites the revision, and the diff layer wraps that buffer: "
        "no run builds one with the default. (The other mutant, -1, makes the default refuse itself: "
        "detected)",
    ),
    ("impl/chunked_text.py", 148, "ReplaceComparisonOperator_LtE_Gt"): (
        "miss",
        "locate returns the chunk exactly when the range does not fit it, else None: a same-length splice "
        "across a chunk boundary writes into the first chunk's tail, growing it, and the buffer's length "
        "and bytes go wrong (JournaledBuffer(76,800 bytes).splice(32767, 2, b'XY') leaves 76,801 bytes "
        "behind a length of 76,800); one that fits takes the general path, right. It needs delete_length "
        "== len(insert) > 0 across a boundary of a buffer past 32 KiB, which the generators almost never "
        "draw (see journaled_buffer.py line 187 AddNot)",
    ),
    ("impl/chunked_text.py", 250, "ReplaceOrWithAnd"): (
        "equivalent",
        "a regrouped run borrows its neighbouring group only when it has no chunks left (at every group "
        "size the bundled storage has, 16 and its doublings, an empty run is below half a group): short "
        "groups stay short, layout only (at group size 1, which only unit tests use, the emptied buffer "
        "would lose its last group)",
    ),
    ("impl/journaled_buffer.py", 47, "ReplaceTrueWithFalse"): (
        "miss",
        "Checkpoint no longer frozen: hash(b.checkpoint()) raises TypeError (an eq dataclass that is not "
        "frozen has no hash) and a token's fields can be reassigned to name another state (token.serial = "
        "...) where the original raises FrozenInstanceError; no machine hashes or edits a token (they "
        "keep them in a list)",
    ),
    ("impl/journaled_buffer.py", 119, "ReplaceUnaryOperator_USub_UAdd"): (
        "miss",
        "the initial 'no same-length record' mark +1, the first record's serial: a buffer recovered from "
        "a durable journal (_restore builds it with cls(b'')) undoes its record of serial 1 through the "
        "empty initial _undo_at, so the bytes stay: open_durable_buffer(disk, b'hello'), splice(0, 1, "
        "b'J'), journal.close(), open_durable_buffer(disk), rollback(1) leaves b'Jello'. It needs a "
        "reopen and then a one-step rollback of the journal's very first record",
    ),
    ("impl/journaled_buffer.py", 322, "NumberReplacer"): (
        "miss",
        "-1 <= keep (occurrence 69): compact(-1) passes the check and fails later with IndexError (the "
        "serial at depth + 1), a different error kind than ValueError (nothing changes); the compact rule "
        "draws keep in 0..depth. (The other mutant, 1 <= keep, refuses compact(0), which the rule draws)",
    ),
    ("impl/chunked_text.py", 201, "NumberReplacer"): (
        "miss",
        "g + 2 < len(gstarts) (occurrence 76): a length change in the second-to-last group no longer "
        "shifts the last group's start, so edits there go to the wrong place: on the 40-chunk start "
        "(groups of 16, 16, 9), splice(16 x 32768 + 5, 0, b'abc') then splice(len, 0, b'Z') raises "
        "IndexError in _replace_across. It needs two groups (one example in 32) and an edit in the last "
        "group after a length change in the one before; read() does not see the stale start. (g + 0, "
        "occurrence 77, is equivalent: above)",
    ),
    ("impl/journaled_buffer.py", 328, "AddNot"): (
        "equivalent",
        "if not keep and ...: with keep 0 the range dropped < barrier <= depth is empty (dropped is the "
        "depth), with keep > 0 the test is false, so compaction never refuses above an out-of-log write: "
        "the allowed success, as line 328 LtE_Gt",
    ),
}


# -- the test command ---------------------------------------------------------------------------


def as_test(argv: list[str]) -> int:
    """The test cosmic-ray runs per mutant: ``rollcert certify ARGV``, with its exit
    status and verdict lines printed on stdout (which cosmic-ray keeps)."""
    started = time.perf_counter()
    deadline = os.environ.get(DEADLINE_VARIABLE)
    if deadline is not None and time.time() > float(deadline):
        print(f"{EXIT_MARK} {OUT_OF_BUDGET} after 0 s: the budget ran out", flush=True)
        return USAGE_ERROR
    for source in sorted((Path.cwd() / "rollcert" / "impl").glob("*.py")):
        try:
            compile(source.read_bytes(), str(source), "exec")
        except SyntaxError as error:  # cosmic-ray turns the ``*`` of a signature into ``+``
            print(f"{EXIT_MARK} {DOES_NOT_COMPILE} after 0 s: {error}", flush=True)
            return USAGE_ERROR
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from rollcert.command.cli import main; sys.exit(main())", "certify", *argv],
        capture_output=True, text=True, check=False,
    )
    lines = [line for line in done.stdout.splitlines() if re.match(r"^[RS]\d\s+(violated|error|unknown)", line)]
    print("\n".join(line[:300] for line in lines))
    if done.returncode not in OUTCOMES:
        print(done.stderr[-2000:])
    print(f"{EXIT_MARK} {done.returncode} after {time.perf_counter() - started:.1f} s", flush=True)
    return done.returncode


# -- the run ------------------------------------------------------------------------------------


def make_tree(destination: Path, source: Path = ROOT) -> Path:
    """Copy the sources of the checkout at ``source`` into ``destination/rollcert/...``
    (the namespace layout the editable install maps them to) and return ``destination``."""
    package = destination / "rollcert"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in SOURCE_FOLDERS:
        shutil.copytree(source / folder, package / folder, ignore=ignore)
    shutil.copytree(ROOT / "benchmarks", destination / "benchmarks", ignore=ignore)
    return destination


def _cosmic_ray(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COSMIC_RAY, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )


def run_module(
    module: str, tree: Path, *, certify_args: list[str], timeout: float, limit: int | None, sample_seed: int,
    operators: str, list_only: bool, budget: float | None = None, picked: tuple[str, ...] = (), log: Any = print,
    skip_equivalent: bool = False,
) -> list[Mutant]:
    """Every mutant of ``module`` (a path like ``impl/chunked_text.py``) in the copy at ``tree``.

    ``skip_equivalent``: a mutant :data:`CLASSIFIED` calls equivalent is not run
    but reported ``equivalent-not-run``. Scoring excludes an equivalent survivor
    anyway, so this never raises a score; it lowers one where a generator change
    made an "equivalent" mutant killable (that kill is not counted) and saves a
    whole certification per such mutant (about a minute each: 45 of chunked_text.py's)."""
    from cosmic_ray.work_db import WorkDB
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome
    from cosmic_ray.work_item import WorkResult

    target = tree / "rollcert" / module
    env = dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if budget is not None:  # the mutants cosmic-ray reaches after it are reported not run
        env[DEADLINE_VARIABLE] = repr(time.time() + budget)
    test_command = " ".join([sys.executable, "-m", "benchmarks.mutation", "--as-test", "--", *certify_args])
    name = Path(module).stem
    config = tree / f"{name}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(target))}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command)}\n\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n"
    )
    session = tree / f"{name}.sqlite"
    _cosmic_ray("init", str(config), str(session), cwd=tree, env=env)
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=lambda item: _position(item.mutations[0]))
        chosen = [
            item for item in items if operators == "all" or REDUCED_OPERATORS.match(item.mutations[0].operator_name)
        ]
        if picked:
            chosen = [item for item in items if _picked(item.mutations[0], picked)]
        in_set = len(chosen)
        if limit is not None and limit < len(chosen):
            chosen = random.Random(f"{sample_seed}:{module}").sample(chosen, limit)
        not_run: list[Mutant] = []
        if skip_equivalent:
            not_run = [
                Mutant(
                    job_id=result_job_id(spec, module), module=module, operator=spec.operator_name.removeprefix("core/"),
                    occurrence=spec.occurrence, line=spec.start_pos[0], column=spec.start_pos[1],
                    function=spec.definition_name, outcome=EQUIVALENT_NOT_RUN, seconds=None, verdicts="", diff="",
                )
                for spec in (item.mutations[0] for item in chosen)
            ]
            not_run = [mutant for mutant in not_run if classification(mutant)[0] == "equivalent"]
            skipped = {mutant.job_id for mutant in not_run}
            chosen = [item for item in chosen if result_job_id(item.mutations[0], module) not in skipped]
        keep = {item.job_id for item in chosen}
        db.set_multiple_results(
            [item.job_id for item in items if item.job_id not in keep], WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
        )
    log(
        f"{module}: {len(items)} mutants, {in_set} with the {operators} operators, {len(keep)} chosen"
        + (f" ({len(not_run)} classified equivalent, not run)" if skip_equivalent else "")
    )
    if list_only:
        return []
    started = time.perf_counter()
    subprocess.run([*COSMIC_RAY, "exec", str(config), str(session)], cwd=tree, env=env, check=True)
    log(f"{module}: exec took {time.perf_counter() - started:.0f} s")
    mutants = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            spec = item.mutations[0]
            mutants.append(_scored(module, spec, result))
    mutants += not_run
    return sorted(mutants, key=lambda m: (m.line, m.column, m.operator, m.occurrence))


def _picked(spec: Any, picked: tuple[str, ...]) -> bool:
    """Whether ``--mutant LINE:OPERATOR[:OCCURRENCE]`` names this mutant."""
    operator = spec.operator_name.removeprefix("core/")
    return any(
        text == f"{spec.start_pos[0]}:{operator}" or text == f"{spec.start_pos[0]}:{operator}:{spec.occurrence}"
        for text in picked
    )


def _position(spec: Any) -> tuple[int, int, str, int]:
    """A mutant's place in the module: its order does not depend on cosmic-ray's random job ids."""
    return (spec.start_pos[0], spec.start_pos[1], spec.operator_name, spec.occurrence)


def _scored(module: str, spec: Any, result: Any) -> Mutant:
    output = result.output or ""
    if result.worker_outcome.value == "skipped":
        outcome, seconds = "skipped", None
    elif output.strip() == "timeout":
        outcome, seconds = "timeout", None
    elif match := re.search(rf"{re.escape(EXIT_MARK)} (-?\d+) after ([\d.]+) s", output):
        outcome, seconds = OUTCOMES.get(int(match[1]), "broken"), float(match[2])
    else:  # cosmic-ray could not run the test at all (incompetent) or the worker failed
        outcome, seconds = "broken", None
    verdicts = "; ".join(line.split("  ")[0] + " " + line.split()[1] for line in output.splitlines()
                         if re.match(r"^[RS]\d\s", line))
    return Mutant(
        job_id=result_job_id(spec, module), module=module, operator=spec.operator_name.removeprefix("core/"),
        occurrence=spec.occurrence, line=spec.start_pos[0], column=spec.start_pos[1], function=spec.definition_name,
        outcome=outcome, seconds=seconds, verdicts=verdicts, diff=_diff_lines(result.diff or ""),
    )


def result_job_id(spec: Any, module: str) -> str:
    return f"{module}:{spec.start_pos[0]}:{spec.start_pos[1]}:{spec.operator_name.removeprefix('core/')}:{spec.occurrence}"


def _diff_lines(diff: str) -> str:
    """The removed and added lines of a unified diff, without the headers."""
    return "\n".join(
        line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def score(mutants: list[Mutant]) -> dict[str, Any]:
    """Counts per outcome, and the score over the behaviour-changing mutants."""
    ran = [m for m in mutants if m.outcome not in ("skipped", "incompetent", "not-run", EQUIVALENT_NOT_RUN)]
    counts = {outcome: sum(m.outcome == outcome for m in ran) for outcome in
              ("killed", "error", "timeout", "broken", "survived")}
    survivors = [m for m in ran if m.outcome == "survived"]
    equivalent = sum(classification(m)[0] == "equivalent" for m in survivors)
    changing = len(ran) - equivalent
    detected = counts["killed"] + counts["error"] + counts["timeout"] + counts["broken"]
    return {
        "mutants": len(ran), "incompetent": sum(m.outcome == "incompetent" for m in mutants),
        "not_run": sum(m.outcome == "not-run" for m in mutants),
        "equivalent_not_run": sum(m.outcome == EQUIVALENT_NOT_RUN for m in mutants), **counts, "equivalent": equivalent,
        "misses": sum(classification(m)[0] == "miss" for m in survivors),
        "unclassified": sum(classification(m)[0] == "unclassified" for m in survivors),
        "behaviour_changing": changing,
        "score": round(detected / changing, 4) if changing else None,
        "strict_score": round(counts["killed"] / changing, 4) if changing else None,
        "seconds": round(sum(m.seconds or 0 for m in ran), 1),
    }


def classification(mutant: Mutant) -> tuple[str, str]:
    """The hand classification of a survivor: its occurrence's entry, else its line's and operator's."""
    exact = CLASSIFIED.get((mutant.module, mutant.line, mutant.operator, mutant.occurrence))
    return exact or CLASSIFIED.get((mutant.module, mutant.line, mutant.operator), ("unclassified", ""))


def rescore(path: Path) -> dict[str, Any]:
    """The results at ``path`` with the survivors classified and scored again by
    :data:`CLASSIFIED` as it stands (a run scores with the entries it started with)."""
    results: dict[str, Any] = json.loads(path.read_text())
    for module, found in results["modules"].items():
        mutants = [Mutant(**{k: v for k, v in m.items() if k != "classification"}) for m in found["mutants"]]
        found["score"] = score(mutants)
        found["mutants"] = [dict(asdict(m), classification=classification(m)) for m in mutants]
        print(format_summary(module, found["score"], mutants))
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--as-test"]:
        rest = argv[1:]
        return as_test(rest[1:] if rest[:1] == ["--"] else rest)
    if argv[:1] == ["--rescore"] and len(argv) == 2:
        path = Path(argv[1])
        path.write_text(json.dumps(rescore(path), indent=1) + "\n")
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help=f"an impl module to mutate (repeatable; default {DEFAULT_MODULES})")
    parser.add_argument("--limit", type=int, help="run a fixed random sample of N mutants per module")
    parser.add_argument(
        "--budget", type=float, metavar="MINUTES",
        help="per module: start no mutant after this many minutes; cosmic-ray runs them in random order, so "
        "what ran is a random sample, and the rest is reported not run",
    )
    parser.add_argument(
        "--mutant", action="append", default=[], metavar="LINE:OPERATOR",
        help="run only this mutant (repeatable), e.g. 294:ReplaceUnaryOperator_Delete_USub; overrides --operators",
    )
    parser.add_argument("--sample-seed", type=int, default=0, help="the sample's seed (default: %(default)s)")
    parser.add_argument("--operators", choices=("reduced", "all"), default="reduced")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant (default: %(default)s)")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--only", help="certify only these properties (default: all)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument(
        "--source", type=Path, default=ROOT,
        help="the checkout whose sources are copied and mutated (default: this one); another one's, to compare "
        "generators: only its copy is mutated",
    )
    parser.add_argument(
        "--skip-equivalent", action="store_true",
        help="do not run the mutants CLASSIFIED calls equivalent (reported as such; never raises the score)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the throwaway tree and print where it is")
    parser.add_argument("--list", action="store_true", help="count the mutants and stop")
    args = parser.parse_args(argv)
    modules = args.module or list(DEFAULT_MODULES)
    certify_args = ["bundled", "--fail-fast", "--in-process", "-q", "--profile", args.profile, "--seed", str(args.seed)]
    if args.only:
        certify_args += ["--only", args.only]
    tree = make_tree(Path(tempfile.mkdtemp(prefix="rollcert-mutation-")), args.source.resolve())
    started = time.perf_counter()
    try:
        results: dict[str, Any] = {"meta": {
            "tool": "cosmic-ray", "certify": certify_args, "operators": args.operators, "limit": args.limit,
            "sample_seed": args.sample_seed, "source": str(args.source), "timeout_s": args.timeout, "budget_min": args.budget,
            "skip_equivalent": args.skip_equivalent, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }, "modules": {}}
        for module in modules:
            mutants = run_module(
                module, tree, certify_args=certify_args, timeout=args.timeout, limit=args.limit,
                sample_seed=args.sample_seed, operators=args.operators, list_only=args.list,
                budget=None if args.budget is None else args.budget * 60, picked=tuple(args.mutant),
                skip_equivalent=args.skip_equivalent,
            )
            if args.list:
                continue
            summary = score(mutants)
            results["modules"][module] = {
                "score": summary,
                "mutants": [dict(asdict(m), classification=classification(m)) for m in mutants if m.outcome != "skipped"],
            }
            print(format_summary(module, summary, mutants), flush=True)
        results["meta"]["elapsed_s"] = round(time.perf_counter() - started, 1)
    finally:
        if args.keep:
            print(f"the mutated copy is kept at {tree}")
        else:
            shutil.rmtree(tree, ignore_errors=True)
    if not args.list:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        print(f"{results['meta']['elapsed_s']} s; results written to {args.json}")
    return 0


def format_summary(module: str, summary: dict[str, Any], mutants: list[Mutant]) -> str:
    lines = [
        f"{module}: {summary['mutants']} mutants run: {summary['killed']} killed, {summary['error']} error, "
        f"{summary['timeout']} timeout, {summary['broken']} broken, {summary['survived']} survived, "
        f"{summary['not_run']} not run (budget), {summary.get('equivalent_not_run', 0)} classified equivalent and "
        f"not run, {summary['incompetent']} not Python "
        f"({summary['equivalent']} equivalent, {summary['misses']} misses, {summary['unclassified']} unclassified); "
        f"score {summary['score']}, strict {summary['strict_score']}; {summary['seconds']} s of certify"
    ]
    for m in mutants:
        if m.outcome == "survived":
            kind, why = classification(m)
            lines.append(f"  survived {m.module}:{m.line}:{m.column} {m.operator} in {m.function}: {kind} {why}")
            lines.extend(f"      {line}" for line in m.diff.splitlines())
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
