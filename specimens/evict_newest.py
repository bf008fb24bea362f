"""A bounded journal that, when full, throws away the record it was handed."""

from __future__ import annotations

from rollcert.specimens import register
from rollcert.specimens._base import InverseRecord
from rollcert.specimens._base import NaiveJournaledBuffer


@register("evict_newest", breaks={"R6"})
class EvictNewestBuffer(NaiveJournaledBuffer):
    """With policy evict_oldest and a full journal, it makes room by dropping
    the newest record, the one it is being asked to append, and then performs
    the splice anyway. Depth, revision and bytes all look right afterwards, so
    the loss is invisible until a rollback: it undoes the previous record
    instead of the last edit, against a buffer that record no longer describes,
    and the horizon never moves, so a checkpoint that should have died still
    works. A ring buffer whose write index is off by one, or a cache that evicts
    "the entry it just inserted", behaves exactly like this."""

    def _append_to_full_journal(self, record: InverseRecord) -> None:
        return None  # the bug: the new record is the one that is dropped
