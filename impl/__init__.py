"""rollcert's production implementation: ``JournaledBuffer``.

It obeys every property the model states (see :mod:`rollcert.model.properties`) and is
built for speed; the certification suite compares it with the model.
"""

from rollcert.impl.chunked_text import ChunkedText
from rollcert.impl.journal import FaultInjectingJournal, InMemoryJournal, InverseRecord, Journal
from rollcert.impl.journaled_buffer import Checkpoint, JournaledBuffer
from rollcert.model.errors import (
    DivergenceError,
    JournalError,
    RecoveryError,
    RollbackIntegrityError,
    StaleBaseError,
    UnreachableRollbackError,
)

__all__ = [
    "Checkpoint",
    "ChunkedText",
    "DivergenceError",
    "FaultInjectingJournal",
    "InMemoryJournal",
    "InverseRecord",
    "Journal",
    "JournalError",
    "JournaledBuffer",
    "RecoveryError",
    "RollbackIntegrityError",
    "StaleBaseError",
    "UnreachableRollbackError",
]
