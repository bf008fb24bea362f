"""Rollback that never asks whether somebody else wrote to the buffer."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import NaiveJournaledBuffer


@register("no_divergence_check", breaks={"R4"})
class NoDivergenceCheckBuffer(NaiveJournaledBuffer):
    """Never compares the buffer with what its log expects, so an out-of-log
    write (another process editing the file, a code path that forgot the
    journal) goes unnoticed. A rollback across such a write restores the
    recorded bytes at the recorded offset regardless, splicing the log's old
    picture into a buffer that has changed under it: the result mixes the
    foreign edit with half-undone history and is a state that never existed.
    Every undo stack that trusts its own records blindly has this bug; the fix is
    to detect the write (a digest or a write counter) and refuse with
    DivergenceError until the caller adopts the current buffer."""

    def _notice_out_of_log_writes(self) -> None:
        return None  # the bug: out-of-log writes are never looked for
