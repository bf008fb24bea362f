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
    - equal read-sets mean applying the diff equals re-authoring it on the live
      base, for every author modelled as an arbitrary function of the bytes it
      read (S1);
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

CHECKED WITHIN STATED BOUNDS — that the production code matches the model
    ``rollcert prove`` also runs ``stateful_tests/refinement.py``: the real
    ``impl.JournaledBuffer`` (and ``impl/diffs.py``) against the model on every
    operation sequence up to a stated length (default 3, and 4 from the
    smallest buffer), from small buffers,
    bounded journals of both policies included, comparing bytes, depth,
    revision and errors after each step. A disagreement is a counterexample
    (exit 1); a search over its budget is UNKNOWN (exit 2). Small-scope
    exhaustive, not a proof beyond its bounds.

TESTED, NOT PROVED — that the Python code matches the model beyond those bounds
    The proofs are about the z3 encoding. ``tests/test_proofs.py`` (the
    bridge) checks with Hypothesis, on random data, that the encoding of splice
    and of the inverse equals ``rollcert.model.reference.splice_bytes``, the reference
    model's ``step`` and the production ``impl.JournaledBuffer`` (LIFO
    sequences). The state machines in ``stateful_tests`` compare the
    implementation with the model step by step. Both are tests: they sample,
    they do not prove.

NOT COVERED by these proofs
    Checkpoint lifetimes and dead tokens (ABA, S3), revisions, divergence
    detection and barriers (R4), durability and crash recovery (R5), bounded
    logs and eviction (R6), anchor search over repeated text (R2's second half),
    S1 with several hunks or several read regions at once, the tracing of a
    read region through an arbitrary history (the read-set theorem assumes the
    traced position), S2's rollback of an applied diff, thread safety, the
    text (UTF-8) façade and performance. Those are covered, where they are, by
    the state machines, the specimens and the bounded exhaustive search.
"""
