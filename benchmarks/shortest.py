"""The shortest counterexample of each specimen: what a minimiser should reach.

Read by the suite benchmark and by the plain-machine baseline (kept apart so that
neither imports the other).
"""

#: Shortest counterexample lengths from `rollcert explore` (BFS), per specimen; for
#: first_match_scan, from the exhaustive test's longer starting buffer.
SHORTEST = {
    "best_effort_log": 2,
    "depth_checkpoints": 5,  # with the R3 machine's operations (3 with adopt_current)
    "evict_newest": 3,
    # A checkpoint, the two edits on a capacity-1 journal whose second evicts the
    # record under it, and the rollback_to (BFS from b'' over the R6 machine's operations).
    "eviction_keeps_checkpoint_positions": 4,
    "fifo_replay": 3,
    "first_match_scan": 2,
    "no_divergence_check": 3,
    # R5, by argument rather than search: a torn record needs only the crash of one
    # splice, and so does a lost fsync (a crash that comes after the splice
    # returned). A damaged record that is not the last needs one edit and the
    # damage: every open appends a serial floor, so the edit's record is not the
    # last (a bit flip, a record out of place, a second writer's append).
    # A flush that does not sync needs an edit, the flush and a crash.
    # Checked by search as far as the minimiser's small scope goes
    # (stateful_tests/small_scope.py): from b'' and b'a', in both durability
    # modes, no trace of 1 step fails skip_bad_record, crc_only or
    # no_writer_lock (26 each), and none of 1-2 steps fails flush_without_sync
    # (750 per-operation, 734 batched). A corruption needs a record to damage,
    # so no R5 damage story is shorter than 2.
    "torn_tail_applied": 1,
    "mutate_before_fsync": 1,
    "skip_bad_record": 2,
    "crc_only": 2,
    "no_writer_lock": 2,
    "flush_without_sync": 3,
    # A flush that skips its sync only after a rollback needs a record to roll
    # back, the rollback, the flush and a crash: 4. Checked as above: from b'' and
    # b'a', in both modes, no trace of 1-3 steps fails it (26,648 per-operation,
    # 25,600 batched, the machines' own preconditions kept).
    "sync_skipped_after_rollback": 4,
    # The world specimens (issue 23), by argument: each does the edit itself right
    # (its bug is in the record or in the undo), so one step never fails, and the
    # story's edit of a starting buffer that holds the trigger, undone, is 2 steps
    # (tests/test_specimens_unit.py: SPECIMEN_SCENARIOS).
    "record_cut_at_128": 2,
    "text_decoded_log": 2,
    "crlf_normalising_undo": 2,
    "character_column": 2,
    # Issue 42's specimens, by argument: a failing trace has a step, and one is
    # enough — the splice that stores its NFC form, the removal across the 64 KiB
    # seam, the first mutation past revision 255 (from a start at revision 255).
    "nfc_normalised_inserts": 1,
    "chunk_boundary_64k": 1,
    "revision_mod_256": 1,
}
