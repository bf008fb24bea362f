"""rollcert's symbolic proofs (z3): what is proved, what is only tested, what is not covered.

Run them with ``rollcert prove``; ``--show-counterexamples``
prints the refutations' decoded counterexamples, ``--json PATH`` writes
schema ``rollcert-proofs/1``.

PROVED — the model's algebra, for all sizes
    Statements about the splice of SPEC §2 (``B[:o] + s + B[o+d:]``, encoded
    pointwise in :mod:`rollcert.proofs.encoding`) and inverse records (offset, removed
    bytes, inserted length), for buffers, offsets and contents of *every* size
    (z3 ``unsat`` on the negation, quantifier-free; no bound):

    - splice-then-inverse: the recorded inverse restores the buffer (R1, R2);
    - two-step LIFO: two splices anywhere, undone newest first at their recorded
      absolute offsets, restore the original (R2, R3);
    - inverse rebase: a record made at o, after a later edit entirely before it
      with length change δ, holds its inserted bytes at o + δ and undoing there
      keeps the later edit (R2);
    - a diff hunk commutes with a write outside its read region widened by one
      byte each side (S1);
    - S1 on the code's own check: when impl/diffs.py's read-region trace
      (encoded; compared with the real function by tests/test_proofs_vacuity.py)
      accepts a region across an edit, the bytes where it moves the region are
      the snapshot's (``read-check-accepts-only-unchanged-regions``);
    - LIFO rollback of a whole log restores the original, and
      ``rollback_to(checkpoint)`` = count(edits since) single LIFO steps lands
      on the checkpoint's buffer *and* the log below it, for logs of every
      length: induction over a list datatype, base and step as separate queries
      (:mod:`rollcert.proofs.induction`), using the one-step lemma above and a small
      lemma that a log's length is not negative (R3). Buffers are abstract in
      these two; the only fact about bytes they use is the one-step lemma, which
      is proved pointwise. A bounded cross-check with real bytes unrolls 5 steps.

    Each theorem's hypotheses are checked satisfiable, so none is proved
    vacuously. z3 ``unknown`` is never a pass.

REFUTED — the buggy rules get counterexamples
    FIFO replay (R3), a dropped inverse record (R1), an undo at a stale offset
    (R2), a rollback_to that skips an entry (R3), a write-set-only staleness
    check (S1) and a positional diff applied on an advanced base (S1). Each z3
    model is decoded into buffer bytes and splices (:mod:`rollcert.proofs.decode`) and
    replayed concretely with ``rollcert.model.reference.splice_bytes``; the
    counterexample only counts if that replay really shows the bug. These show
    the encoding can tell each bug from the rule (the proofs have teeth).

THE ENCODING IS THE MODEL'S
    ``tests/test_proofs_encoding_differential.py`` evaluates the encoding of
    splice, rollback(n) for every n and rollback_to on concrete values and
    compares with ``model/reference.py`` (buffers up to 64 bytes, logs up to
    10 records); ``tests/test_proofs_vacuity.py`` proves each theorem again
    with each hypothesis left out, which must then fail.

CHECKED SYMBOLICALLY — the production code against the model, by CrossHair
    :mod:`rollcert.proofs.symbolic_refinement`: CrossHair runs the real
    ``impl.JournaledBuffer`` and the model's ``step`` on symbolic operation
    sequences and must explore every path within stated (small) bounds:
    CONFIRMED, or FOUND with the sequence, or UNKNOWN with its path count.

CHECKED EXHAUSTIVELY WITHIN STATED BOUNDS — that the production code matches the model
    ``rollcert prove`` also runs ``stateful_tests/refinement.py``: the real
    ``impl.JournaledBuffer`` (and ``impl/diffs.py``) against the model on every
    operation sequence up to a stated length, comparing bytes, depth, revision
    and errors after each step, and :mod:`rollcert.proofs.read_set_check`:
    impl/diffs.py's read check against identity-tagged bytes on every case of
    stated bounds. Small-scope, not a proof beyond its bounds.

WHERE EACH RULE STANDS
    :mod:`rollcert.command.proof_reach` holds the one table: per rule, proved
    (unbounded) / checked symbolically / checked exhaustively / tested only.

NOT COVERED by these proofs
    Unbounded proofs of checkpoint lifetimes (S3), divergence barriers (R4),
    eviction (R6) and S2 (these are checked within bounds only), durability and
    crash recovery (R5), anchor search over repeated text (R2's second half),
    S1 with several hunks or several read regions at once, the tracing of a
    read region through an arbitrary history (the read-set theorem assumes the
    traced position), S2's rollback of an applied diff, thread safety, the
    text (UTF-8) façade and performance. Those are covered, where they are, by
    the state machines, the specimens and the bounded exhaustive search.
"""
