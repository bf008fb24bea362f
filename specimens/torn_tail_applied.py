"""R5 specimen: recovery applies a partly written final record."""

from __future__ import annotations

from rollcert.impl.file_journal import SPLICE
from rollcert.impl.file_journal import SPLICE_FIELDS
from rollcert.impl.file_journal import JournalReader
from rollcert.impl.file_journal import Recovered
from rollcert.specimens import register
from rollcert.targets.adapters.durable import DURABLE_CAPABILITIES
from rollcert.targets.adapters.durable import durable_specimen


@register("torn_tail_applied", breaks={"R5"}, capabilities=DURABLE_CAPABILITIES, adapter=durable_specimen)
class TornTailApplied(JournalReader):
    """Recovery that applies a torn final record. The power failed while a
    splice's record was being written; its fields arrived but only part of the
    inserted text did. Reasoning that "the writer clearly meant this edit", the
    reader applies whatever bytes it finds. The recovered buffer holds half an
    insertion: neither the state before the splice nor the state after it, and
    the splice never returned, so nobody was told it happened."""

    def torn_tail(self, state: Recovered | None, position: int, partial_payload: bytes) -> Recovered | None:
        if state is None or len(partial_payload) < SPLICE_FIELDS.size or partial_payload[0] != SPLICE:
            return state
        removed_length = SPLICE_FIELDS.unpack_from(partial_payload)[3]
        if len(partial_payload) < SPLICE_FIELDS.size + removed_length:
            return state  # not even the removed bytes arrived: nothing to go on
        return self.apply(state, partial_payload, position, state.buffer_id)
