"""Logs of any length: induction over a list datatype, done by the harness.

z3 does not do induction by itself, and unrolling a rollback k steps stopped
scaling at k = 7 here. So each "for all n" theorem is split into two ordinary
queries that the harness runs separately — the base case (empty log) and the
step (if it holds for a log ``rest``, it holds for ``edit :: rest``) — which
together are the induction proof.

Buffers, edits and records are *uninterpreted sorts* here, and splice, record
and undo uninterpreted functions: the induction is about the order in which
records are replayed, not about bytes. The only fact about bytes the step needs
is the one-step lemma "undo(splice(C, e), record(C, e)) = C for a valid e", which
the pointwise obligation ``splice-then-inverse`` proves for every buffer and
splice. The step query receives it as a concrete *instance* (for the ``C`` and
``e`` of the step), not as a quantified axiom: supplied as an axiom, z3 never
used it. Because the step only assumes what that lemma proves, the theorem
holds for the real splice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import z3


@dataclass(frozen=True)
class InductionVocabulary:
    """The sorts, abstract operations and recursive definitions of the log proofs."""

    buffer: z3.SortRef
    edit: z3.SortRef
    record: z3.SortRef
    edits: z3.DatatypeSortRef
    records: z3.DatatypeSortRef
    state: z3.DatatypeSortRef
    apply_edit: z3.FuncDeclRef
    record_of: z3.FuncDeclRef
    undo: z3.FuncDeclRef
    edit_is_valid: z3.FuncDeclRef
    current: z3.FuncDeclRef
    all_valid: z3.FuncDeclRef
    journal_onto: z3.FuncDeclRef
    rollback_all: z3.FuncDeclRef
    rollback_steps: z3.FuncDeclRef
    count: z3.FuncDeclRef

    def one_step_lemma(self, buffer: z3.ExprRef, edit: z3.ExprRef) -> z3.BoolRef:
        """The instance of ``splice-then-inverse`` for this buffer and edit."""
        return z3.Implies(
            self.edit_is_valid(buffer, edit),
            self.undo(self.apply_edit(buffer, edit), self.record_of(buffer, edit)) == buffer,
        )


@cache
def vocabulary() -> InductionVocabulary:
    """Declare everything once per process (z3 declarations are global)."""
    buffer = z3.DeclareSort("Buffer")
    edit = z3.DeclareSort("Edit")
    record = z3.DeclareSort("Record")

    edits_declaration = z3.Datatype("Edits")
    edits_declaration.declare("no_edits")
    edits_declaration.declare("newest_edit", ("edit_head", edit), ("edit_rest", edits_declaration))
    edits = edits_declaration.create()

    records_declaration = z3.Datatype("Records")
    records_declaration.declare("empty_log")
    records_declaration.declare("newest_record", ("record_head", record), ("record_rest", records_declaration))
    records = records_declaration.create()

    state_declaration = z3.Datatype("State")
    state_declaration.declare("state", ("state_buffer", buffer), ("state_log", records))
    state = state_declaration.create()

    apply_edit = z3.Function("apply_edit", buffer, edit, buffer)
    record_of = z3.Function("record_of", buffer, edit, record)
    undo = z3.Function("undo", buffer, record, buffer)
    edit_is_valid = z3.Function("edit_is_valid", buffer, edit, z3.BoolSort())

    current = z3.RecFunction("current", buffer, edits, buffer)
    all_valid = z3.RecFunction("all_valid", buffer, edits, z3.BoolSort())
    journal_onto = z3.RecFunction("journal_onto", buffer, edits, records, records)
    rollback_all = z3.RecFunction("rollback_all", buffer, records, buffer)
    rollback_steps = z3.RecFunction("rollback_steps", state, z3.IntSort(), state)
    count = z3.RecFunction("count", edits, z3.IntSort())

    origin = z3.Const("origin", buffer)
    history = z3.Const("history", edits)
    below = z3.Const("below", records)
    live = z3.Const("live", buffer)
    log = z3.Const("log", records)
    reached = z3.Const("reached", state)
    steps = z3.Int("steps")

    older = edits.edit_rest(history)
    newest = edits.edit_head(history)
    # current(B0, h): the buffer after the edits of h (newest first) applied to B0.
    z3.RecAddDefinition(
        current,
        [origin, history],
        z3.If(edits.is_no_edits(history), origin, apply_edit(current(origin, older), newest)),
    )
    z3.RecAddDefinition(
        all_valid,
        [origin, history],
        z3.If(
            edits.is_no_edits(history),
            z3.BoolVal(True),
            z3.And(all_valid(origin, older), edit_is_valid(current(origin, older), newest)),
        ),
    )
    # The journal a write-ahead log holds after h, on top of the records ``below``:
    # one record per edit, each taken from the buffer the edit was applied to.
    z3.RecAddDefinition(
        journal_onto,
        [origin, history, below],
        z3.If(
            edits.is_no_edits(history),
            below,
            records.newest_record(record_of(current(origin, older), newest), journal_onto(origin, older, below)),
        ),
    )
    # LIFO replay of a whole log: newest record first, each at its recorded offset.
    z3.RecAddDefinition(
        rollback_all,
        [live, log],
        z3.If(
            records.is_empty_log(log),
            live,
            rollback_all(undo(live, records.record_head(log)), records.record_rest(log)),
        ),
    )
    # rollback(n): n single LIFO steps, popping one record each; what rollback_to
    # a checkpoint must equal (R3), with n = depth now - depth of the checkpoint.
    reached_log = state.state_log(reached)
    z3.RecAddDefinition(
        rollback_steps,
        [reached, steps],
        z3.If(
            z3.Or(steps <= 0, records.is_empty_log(reached_log)),
            reached,
            rollback_steps(
                state.state(
                    undo(state.state_buffer(reached), records.record_head(reached_log)),
                    records.record_rest(reached_log),
                ),
                steps - 1,
            ),
        ),
    )
    z3.RecAddDefinition(count, [history], z3.If(edits.is_no_edits(history), 0, 1 + count(older)))

    return InductionVocabulary(
        buffer=buffer,
        edit=edit,
        record=record,
        edits=edits,
        records=records,
        state=state,
        apply_edit=apply_edit,
        record_of=record_of,
        undo=undo,
        edit_is_valid=edit_is_valid,
        current=current,
        all_valid=all_valid,
        journal_onto=journal_onto,
        rollback_all=rollback_all,
        rollback_steps=rollback_steps,
        count=count,
    )


def lifo_rollback_restores(v: InductionVocabulary, origin: z3.ExprRef, history: z3.ExprRef) -> z3.BoolRef:
    """P(h): if every edit of h was valid, replaying its whole journal LIFO gives back B0."""
    return z3.Implies(
        v.all_valid(origin, history),
        v.rollback_all(v.current(origin, history), v.journal_onto(origin, history, v.records.empty_log))
        == origin,
    )


def rollback_to_reaches_checkpoint(
    v: InductionVocabulary, checkpoint: z3.ExprRef, above: z3.ExprRef, below: z3.ExprRef
) -> z3.BoolRef:
    """Q(h): count(h) LIFO steps from the top give back the checkpoint's buffer *and* its log."""
    start = v.state.state(v.current(checkpoint, above), v.journal_onto(checkpoint, above, below))
    return z3.Implies(
        v.all_valid(checkpoint, above),
        v.rollback_steps(start, v.count(above)) == v.state.state(checkpoint, below),
    )
