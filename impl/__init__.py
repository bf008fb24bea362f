"""rollcert's production implementation: ``JournaledBuffer``.

It obeys every property the model states (see :mod:`rollcert.model.properties`) and is
built for speed; the certification suite compares it with the model.
"""

from rollcert.impl.chunked_text import ChunkedText
from rollcert.impl.journal import FaultInjectingJournal
from rollcert.impl.journal import InMemoryJournal
from rollcert.impl.journal import InverseRecord
from rollcert.impl.journal import Journal
from rollcert.impl.journaled_buffer import Checkpoint
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import RecoveryError
from rollcert.model.errors import RollbackIntegrityError
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError

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
