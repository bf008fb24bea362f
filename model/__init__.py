"""rollcert's reference model: the oracle every implementation is compared with.

Start with :mod:`rollcert.model.reference` (the step function) and
:mod:`rollcert.model.properties` (the invariants R0–R6 in prose).
"""

from rollcert.model.errors import DivergenceError
from rollcert.model.errors import JournalError
from rollcert.model.errors import RecoveryError
from rollcert.model.errors import RollbackIntegrityError
from rollcert.model.errors import StaleBaseError
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.operations import Operation
from rollcert.model.reference import ModelState
from rollcert.model.reference import Outcome
from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.model.reference import step

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
