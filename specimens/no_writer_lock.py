"""R5 specimen: a journal that any number of processes may open for writing."""

from __future__ import annotations

from rollcert.impl.storage import SimulatedDisk
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("no_writer_lock", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class NoWriterLock(SimulatedDisk):
    """A storage without the writer lock. A second process (an editor opened
    twice, a stale agent that never exited) opens the journal while the first
    still has it; each recovers the same state and appends its own records to
    the one file. The records are all intact and chained, so recovery accepts
    them, and the buffer comes back with an edit its owner never made on top
    of the ones it did — and had one of the two compacted, the other's
    acknowledged edits would be gone."""

    def lock(self, name: str) -> None:
        return None  # anyone may write

    def unlock(self, name: str) -> None:
        return None
