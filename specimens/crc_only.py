"""R5 specimen: recovery checks each frame's own checksum, not the chain."""

from __future__ import annotations

from rollcert.impl.file_journal import JournalReader
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("crc_only", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class CrcOnly(JournalReader):
    """Recovery that trusts any intact record. Every frame's own checksum is
    verified, so a flipped bit is caught — but the sequence number and the
    chained checksum are not, so a whole record out of place passes: one
    copied in from another journal (a backup restored over the wrong file, a
    sync tool merging two directories), repeated, or dropped. Each is intact,
    each is replayed, and the buffer comes back holding another buffer's text,
    or missing an edit: a state that never existed, with no error."""

    def misplaced_record(self, position: int, explanation: str) -> None:
        return None  # intact, so replay it
