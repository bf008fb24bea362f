"""rollcert's reference model: the oracle every implementation is compared with.

Start with :mod:`rollcert.model.reference` (the step function) and
:mod:`rollcert.model.properties` (the invariants R0–R6 in prose).
"""

from rollcert.model.errors import (
    DivergenceError,
    JournalError,
    RecoveryError,
    RollbackIntegrityError,
    StaleBaseError,
    UnreachableRollbackError,
)
from rollcert.model.operations import Operation
from rollcert.model.reference import ModelState, Outcome, initial_state, splice_bytes, step

__all__ = [
    "DivergenceError",
    "JournalError",
    "ModelState",
    "Operation",
    "Outcome",
    "RecoveryError",
    "RollbackIntegrityError",
    "StaleBaseError",
    "UnreachableRollbackError",
    "initial_state",
    "splice_bytes",
    "step",
]
