"""rollcert's production implementation: ``JournaledBuffer``.

It obeys every property the model states (see :mod:`model.properties`) and is
built for speed; the certification suite compares it with the model.
"""

from impl.chunked_text import ChunkedText
from impl.journal import FaultInjectingJournal, InMemoryJournal, InverseRecord, Journal
from impl.journaled_buffer import Checkpoint, JournaledBuffer
from model.errors import (
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
