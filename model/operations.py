"""The operations a test can perform, as plain data.

Operations are values, not method calls, so that one list of them is at the
same time a test's trace, a counterexample in a certificate, and a script that
``rollcert replay`` runs again. Checkpoints are named by the order in which they
were taken in the run ("the 0th checkpoint"), never by an implementation's
token, so a trace means the same thing for every implementation.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, ClassVar


def _text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {type(text).__name__}")
    return base64.b64decode(text.encode("ascii"), validate=True)


@dataclass(frozen=True)
class Splice:
    """Replace ``delete_length`` bytes at ``offset`` with ``insert``, journaled."""

    offset: int
    delete_length: int
    insert: bytes
    kind: ClassVar[str] = "splice"

    def describe(self) -> str:
        return f"splice(offset={self.offset}, delete_length={self.delete_length}, insert={self.insert!r})"


@dataclass(frozen=True)
class Rollback:
    """Undo the newest ``steps`` records, newest first."""

    steps: int
    kind: ClassVar[str] = "rollback"

    def describe(self) -> str:
        return f"rollback({self.steps})"


@dataclass(frozen=True)
class TakeCheckpoint:
    """Name the current state; the token is remembered by its index in the run."""

    kind: ClassVar[str] = "checkpoint"

    def describe(self) -> str:
        return "checkpoint()"


@dataclass(frozen=True)
class RollbackTo:
    """Roll back to the ``checkpoint``-th checkpoint taken in this run."""

    checkpoint: int
    kind: ClassVar[str] = "rollback_to"

    def describe(self) -> str:
        return f"rollback_to(checkpoint #{self.checkpoint})"


@dataclass(frozen=True)
class RollbackToForeign:
    """Roll back to a checkpoint taken on a *different* buffer (must be refused)."""

    kind: ClassVar[str] = "rollback_to_foreign"

    def describe(self) -> str:
        return "rollback_to(checkpoint of another buffer)"


@dataclass(frozen=True)
class OutOfLogWrite:
    """Change the buffer behind the journal's back (a bug, another process)."""

    offset: int
    delete_length: int
    insert: bytes
    kind: ClassVar[str] = "out_of_log_write"

    def describe(self) -> str:
        return (
            f"out_of_log_write(offset={self.offset}, delete_length={self.delete_length}, "
            f"insert={self.insert!r})"
        )


@dataclass(frozen=True)
class ArmJournalFault:
    """Make the next append of an inverse record fail (full disk, I/O error)."""

    kind: ClassVar[str] = "arm_journal_fault"

    def describe(self) -> str:
        return "arm_journal_fault()"


@dataclass(frozen=True)
class AdoptCurrent:
    """Accept the current buffer as the new horizon, discarding the log on purpose."""

    kind: ClassVar[str] = "adopt_current"

    def describe(self) -> str:
        return "adopt_current()"


# -- durability (R5): only for systems with the ``durability`` capability ---------


@dataclass(frozen=True)
class Compact:
    """Rewrite the durable journal keeping only the newest ``keep`` records.

    The older records are folded into a new base snapshot: the horizon moves up
    to depth ``depth - keep`` and checkpoints below it die, but the buffer and
    the revision are unchanged.
    """

    keep: int
    kind: ClassVar[str] = "compact"

    def describe(self) -> str:
        return f"compact(keep={self.keep})"


#: The operations a crash can interrupt: each writes to the durable journal.
Interruptible = Splice | Rollback | RollbackTo | Compact


@dataclass(frozen=True)
class CrashDuring:
    """Run ``operation`` and crash the machine at its ``io_event``-th I/O call
    (0 = the first write or fsync it makes), losing the last ``lost`` bytes of
    the data written but not yet synced (0 = all of it reached the disk; a few
    bytes tear the end off the record being written; a large number loses it
    all). Then recover from what is on disk. If the operation makes fewer I/O
    calls, it completes and the crash comes after it."""

    operation: Interruptible
    io_event: int
    lost: int
    kind: ClassVar[str] = "crash_during"

    def describe(self) -> str:
        return (
            f"crash during {self.operation.describe()} at I/O call #{self.io_event}, "
            f"losing the last {self.lost} unsynced bytes, then recover"
        )


@dataclass(frozen=True)
class Restart:
    """Crash while idle (unsynced data lost) and recover: every operation that
    returned must still be there."""

    kind: ClassVar[str] = "restart"

    def describe(self) -> str:
        return "crash while idle, then recover"


@dataclass(frozen=True)
class CorruptRecord:
    """Flip one bit of a committed journal record that is not the last one, then
    recover: recovery must refuse (``RecoveryError``) rather than skip or guess.
    The harness then repairs the bit, so the run goes on from the same state."""

    kind: ClassVar[str] = "corrupt_record"

    def describe(self) -> str:
        return "flip a bit in a committed record (not the last), then recover"


Operation = (
    Splice
    | Rollback
    | TakeCheckpoint
    | RollbackTo
    | RollbackToForeign
    | OutOfLogWrite
    | ArmJournalFault
    | AdoptCurrent
    | Compact
    | CrashDuring
    | Restart
    | CorruptRecord
)


def operation_to_json(operation: Operation) -> dict[str, Any]:
    """A JSON-ready dict; bytes are base64 so that any byte survives the trip."""
    if isinstance(operation, (Splice, OutOfLogWrite)):
        return {
            "op": operation.kind,
            "offset": operation.offset,
            "delete_length": operation.delete_length,
            "insert": _text(operation.insert),
        }
    if isinstance(operation, Rollback):
        return {"op": operation.kind, "steps": operation.steps}
    if isinstance(operation, RollbackTo):
        return {"op": operation.kind, "checkpoint": operation.checkpoint}
    if isinstance(operation, Compact):
        return {"op": operation.kind, "keep": operation.keep}
    if isinstance(operation, CrashDuring):
        return {
            "op": operation.kind,
            "operation": operation_to_json(operation.operation),
            "io_event": operation.io_event,
            "lost": operation.lost,
        }
    return {"op": operation.kind}


def _integer(record: dict[str, Any], field: str) -> int:
    value = record.get(field)
    if type(value) is not int:
        raise TypeError(f"operation field {field!r} must be an integer, got {value!r}")
    return value


def operation_from_json(record: object) -> Operation:
    """Parse one operation; raise ``ValueError``/``TypeError`` naming what is wrong."""
    if not isinstance(record, dict):
        raise TypeError(f"an operation must be a JSON object, got {type(record).__name__}")
    kind = record.get("op")
    if kind in ("splice", "out_of_log_write"):
        fields = (
            _integer(record, "offset"),
            _integer(record, "delete_length"),
            _bytes(record.get("insert")),
        )
        return Splice(*fields) if kind == "splice" else OutOfLogWrite(*fields)
    if kind == "rollback":
        return Rollback(_integer(record, "steps"))
    if kind == "rollback_to":
        return RollbackTo(_integer(record, "checkpoint"))
    if kind == "compact":
        return Compact(_integer(record, "keep"))
    if kind == "crash_during":
        inner = operation_from_json(record.get("operation"))
        if not isinstance(inner, (Splice, Rollback, RollbackTo, Compact)):
            raise ValueError(f"a crash cannot interrupt {inner.kind!r}: it writes nothing durable")
        return CrashDuring(inner, _integer(record, "io_event"), _integer(record, "lost"))
    simple: dict[str, Operation] = {
        "checkpoint": TakeCheckpoint(),
        "rollback_to_foreign": RollbackToForeign(),
        "arm_journal_fault": ArmJournalFault(),
        "adopt_current": AdoptCurrent(),
        "restart": Restart(),
        "corrupt_record": CorruptRecord(),
    }
    if kind in simple:
        return simple[kind]
    raise ValueError(f"unknown operation {kind!r}")
