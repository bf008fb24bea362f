"""R5 specimen: recovery skips a corrupt record in the middle and carries on."""

from __future__ import annotations

from rollcert.impl.file_journal import JournalReader
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("skip_bad_record", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class SkipBadRecord(JournalReader):
    """Recovery that skips a record whose checksum fails and replays the rest.
    A bad sector flips one bit in a committed splice record. Rather than refuse
    to start, the reader logs a warning, skips the record and replays the
    records after it — onto a buffer that lacks the skipped edit, so they land
    at offsets that no longer mean what they meant. The buffer comes back
    "recovered", silently missing one edit and with later ones misplaced."""

    def corrupt_record(self, position: int, expected: int, found: int) -> bool:
        return True  # skip it and carry on
