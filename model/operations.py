"""The operations a test can perform, as plain data.

Operations are values, not method calls, so that one list of them is at the
same time a test's trace, a counterexample in a certificate, and a script that
``rollcert replay`` runs again. Checkpoints are named by the order in which they
were taken in the run ("the 0th checkpoint"), never by an implementation's
token, so a trace means the same thing for every implementation.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import ClassVar

from rollcert.model.contract import ANCHOR_MODES
from rollcert.model.contract import AnchorMode
from rollcert.model.contract import Hunk
from rollcert.model.contract import Region


def _text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {type(text).__name__}")
    return base64.b64decode(text.encode("ascii"), validate=True)


def shown(argument: object) -> str:
    """An argument as a reader can type it back: its repr (``'1'`` is no ``1``,
    ``True`` no ``1``), and a memoryview as the call that makes it (its repr
    is an address)."""
    if isinstance(argument, memoryview):
        return f"memoryview({bytes(argument)!r})"
    return repr(argument)


class _ExactArguments:
    """Equality and hashing by each argument's type as well as its value, for
    the operations R0's ``bad_arguments`` sends arguments of any type: to Python
    ``True == 1`` and ``bytearray(b"J") == b"J"``, but SPEC §2 refuses
    ``splice(True, 0, b"x")`` and a trace must not take one operation for the
    other; and a bytearray or list argument must not make the operation
    unhashable (counterexamples are keyed by their operations)."""

    def _identity(self) -> tuple[object, ...]:
        return (type(self), *((type(value), _hashable(value)) for value in vars(self).values()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ExactArguments) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __reduce__(self) -> tuple[object, ...]:
        # Pickled as its trace record: a memoryview does not pickle, and a
        # counterexample crosses from a worker process pickled.
        return (operation_from_json, (operation_to_json(self),))  # type: ignore[arg-type]


def _hashable(value: object) -> object:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True, eq=False)
class Splice(_ExactArguments):
    """Replace ``delete_length`` bytes at ``offset`` with ``insert``, journaled."""

    offset: int
    delete_length: int
    insert: bytes
    kind: ClassVar[str] = "splice"

    def describe(self) -> str:
        return (
            f"splice(offset={shown(self.offset)}, delete_length={shown(self.delete_length)}, "
            f"insert={shown(self.insert)})"
        )


@dataclass(frozen=True, eq=False)
class Rollback(_ExactArguments):
    """Undo the newest ``steps`` records, newest first."""

    steps: int
    kind: ClassVar[str] = "rollback"

    def describe(self) -> str:
        return f"rollback({shown(self.steps)})"


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
    """Make the next append of an inverse record fail (full disk, I/O error).
    The append is refused cleanly: nothing of the record is left behind (a
    durable journal may then stay poisoned or take the retry)."""

    kind: ClassVar[str] = "arm_journal_fault"

    def describe(self) -> str:
        return "arm_journal_fault()"


#: The I/O failures a durable journal's disk can be made to have (R1, R5): the
#: next record's write or sync fails and the journal cuts the record back; or
#: the cut-back (an ftruncate) fails too, two faults in a row, so that the file
#: may still hold the record.
DISK_FAULTS: tuple[str, ...] = ("sync", "write", "sync_then_cut_back", "write_then_cut_back")
#: The disk faults after which the file may hold the refused record.
UNCLEANED_FAULTS: frozenset[str] = frozenset({"write_then_cut_back", "sync_then_cut_back"})
#: The disk faults whose refusal provably wrote nothing: the record's write
#: failed and its cut-back succeeded (or nothing was written), and no sync
#: failed. After one of these the journal may stay usable and take a retry
#: (``rollcert.model.reference``, "clean refusals"). A failed sync is not one:
#: after it the kernel may have dropped pages nobody will hear about again.
CLEAN_REFUSAL_FAULTS: frozenset[str] = frozenset({"write"})


@dataclass(frozen=True)
class DiskFault:
    """Make the durable journal's disk fail at the next splice's record
    (``fault``, one of :data:`DISK_FAULTS`): its write or its sync fails, in
    either durability mode (in batched mode the record is synced at once, as
    the sync every N records does), and with a ``..._then_cut_back`` fault the
    truncation that should remove it fails too. Afterwards the journal is
    poisoned: it refuses every operation until it is reopened; after a failed
    write that was cut back (:data:`CLEAN_REFUSAL_FAULTS`) it may instead stay
    usable and take the retry."""

    fault: str = "sync"
    kind: ClassVar[str] = "disk_fault"

    def describe(self) -> str:
        return f"disk_fault({self.fault.replace('_', ' ')} fails at the next record)"


@dataclass(frozen=True)
class AdoptCurrent:
    """Accept the current buffer as the new horizon, discarding the log on purpose."""

    kind: ClassVar[str] = "adopt_current"

    def describe(self) -> str:
        return "adopt_current()"


# -- durability (R5): only for systems with the ``durability`` capability ---------


@dataclass(frozen=True, eq=False)
class Compact(_ExactArguments):
    """Rewrite the durable journal keeping only the newest ``keep`` records.

    The older records are folded into a new base snapshot: the horizon moves up
    to depth ``depth - keep`` and checkpoints below it die, but the buffer and
    the revision are unchanged.
    """

    keep: int
    kind: ClassVar[str] = "compact"

    def describe(self) -> str:
        return f"compact(keep={shown(self.keep)})"


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
class Flush:
    """Make every operation so far durable (``buffer.journal.flush()``). In
    batched mode this is the point a later crash may not go back beyond; in
    per-operation mode every operation is durable when it returns, so it
    changes nothing."""

    kind: ClassVar[str] = "flush"

    def describe(self) -> str:
        return "flush()"


@dataclass(frozen=True)
class Reopen:
    """The process ends and a new one opens the journal, without a crash: what
    was written is still in the file (the page cache survives), synced or not.
    The way out of a poisoned journal, and the step its error recommends."""

    kind: ClassVar[str] = "reopen"

    def describe(self) -> str:
        return "close the process (no crash), then reopen the journal"


#: The damage a corruption does to a committed journal (SPEC R5): a flipped bit,
#: and whole records out of place — duplicated, dropped, two swapped, one copied
#: in from another journal — or a second writer appending to a journal in use.
DAMAGES: tuple[str, ...] = ("bit_flip", "duplicate", "drop", "swap", "transplant", "second_writer")


@dataclass(frozen=True)
class CorruptRecord:
    """Damage the committed journal (``damage``, one of :data:`DAMAGES`, at the
    newest record that is not the last), then recover: recovery must refuse
    (``RecoveryError``) rather than skip, guess or replay a record out of place.
    The harness then repairs it, so the run goes on from the same state (in
    batched mode, from a state of the window: the repair is a recovery after a
    crash). The damage is part of the trace, so a counterexample says which."""

    damage: str = "bit_flip"
    kind: ClassVar[str] = "corrupt_record"

    def describe(self) -> str:
        return f"corrupt the journal ({self.damage.replace('_', ' ')}), then recover"


# -- self-authored diffs (S1-S3) -------------------------------------------------------


@dataclass(frozen=True)
class ToolWrite:
    """Another writer (a tool) splices the same buffer, through the same journaled API."""

    offset: int
    delete_length: int
    insert: bytes
    kind: ClassVar[str] = "tool_write"

    def describe(self) -> str:
        return f"tool writes: splice(offset={self.offset}, delete_length={self.delete_length}, insert={self.insert!r})"


@dataclass(frozen=True)
class TakeSnapshot:
    """The author snapshots the buffer; the snapshot is named by its order in the run."""

    kind: ClassVar[str] = "snapshot"

    def describe(self) -> str:
        return "snapshot()"


@dataclass(frozen=True)
class ApplyDiff:
    """Author a diff against the ``snapshot``-th snapshot and apply it to the live base."""

    snapshot: int
    mode: AnchorMode
    hunks: tuple[Hunk, ...]
    reads: tuple[Region, ...] = ()
    kind: ClassVar[str] = "apply_diff"

    def describe(self) -> str:
        hunks = ", ".join(h.describe() for h in self.hunks)
        reads = ", ".join(r.describe() for r in self.reads) or "none"
        return f"apply_diff(snapshot #{self.snapshot}, {self.mode}, hunks {hunks}; reads {reads})"


@dataclass(frozen=True)
class RollbackDiff:
    """Roll back the ``applied``-th apply_diff of the run (and everything after it)."""

    applied: int
    kind: ClassVar[str] = "rollback_diff"

    def describe(self) -> str:
        return f"rollback_diff(apply #{self.applied})"


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
    | Flush
    | DiskFault
    | Reopen
)

#: The operations of the diff machines: edits by the author and by a tool,
#: rollbacks, snapshots, applies and rollbacks of applied diffs.
DiffOperation = Splice | ToolWrite | Rollback | TakeSnapshot | ApplyDiff | RollbackDiff

#: Any operation a trace may hold.
AnyOperation = Operation | ToolWrite | TakeSnapshot | ApplyDiff | RollbackDiff


# -- one encoder and one decoder for every operation kind ----------------------------


def operation_to_json(operation: AnyOperation) -> dict[str, Any]:
    """A JSON-ready dict keyed by ``op`` (the kind); bytes are base64 so that any byte survives."""
    record: dict[str, Any] = {"op": operation.kind}
    if isinstance(operation, Splice):
        record.update(
            offset=_argument_to_json(operation.offset),
            delete_length=_argument_to_json(operation.delete_length),
            insert=_text(operation.insert) if type(operation.insert) is bytes else _tag(operation.insert),
        )
    elif isinstance(operation, (OutOfLogWrite, ToolWrite)):
        record.update(offset=operation.offset, delete_length=operation.delete_length, insert=_text(operation.insert))
    elif isinstance(operation, Rollback):
        record["steps"] = _argument_to_json(operation.steps)
    elif isinstance(operation, RollbackTo):
        record["checkpoint"] = operation.checkpoint
    elif isinstance(operation, Compact):
        record["keep"] = _argument_to_json(operation.keep)
    elif isinstance(operation, CrashDuring):
        record.update(operation=operation_to_json(operation.operation), io_event=operation.io_event, lost=operation.lost)
    elif isinstance(operation, ApplyDiff):
        record.update(
            snapshot=operation.snapshot,
            mode=operation.mode,
            hunks=[[h.start, h.end, _text(h.replacement)] for h in operation.hunks],
            reads=[[r.start, r.end] for r in operation.reads],
        )
    elif isinstance(operation, RollbackDiff):
        record["applied"] = operation.applied
    elif isinstance(operation, CorruptRecord):
        record["damage"] = operation.damage
    elif isinstance(operation, DiskFault):
        record["fault"] = operation.fault
    return record


def _integer(record: dict[str, Any], field: str) -> int:
    value = record.get(field)
    if type(value) is not int:
        raise TypeError(f"operation field {field!r} must be an integer, got {value!r}")
    return value


# -- arguments of the wrong type, carried on purpose (SPEC §2) ------------------------
# R0's bad_arguments sends a splice, a rollback or a compaction arguments of the
# wrong type, and a bytearray or memoryview insert that must be taken as bytes
# are. A trace carries each as itself, tagged ``{"type": <Python type>, "value":
# ...}``: JSON has no bytearray or memoryview (their bytes are base64, as an
# insert's), a float that is a whole number may come back an int from another
# writer, and an untagged non-integer where an integer belongs is a damaged
# trace, refused as before. Only these three operations take tags: no other is
# ever sent a bad argument.


def _float(value: object) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):  # type: ignore[arg-type]
        raise TypeError(f"a tagged float must be a finite number, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def _exactly(kind: type) -> Callable[[object], object]:
    def read(value: object) -> object:
        if type(value) is not kind:
            raise TypeError(f"a tagged {kind.__name__} must be a JSON {kind.__name__}, got {value!r}")
        return value

    return read


def _nothing(value: object) -> None:
    if value is not None:
        raise TypeError(f"a tagged NoneType must be null, got {value!r}")


def _byte_values(value: object) -> list[int]:
    if not isinstance(value, list) or not all(type(item) is int for item in value):
        raise TypeError(f"a tagged list must be a list of integers, got {value!r}")
    return value


#: Tag -> how to read its value back: the kinds of argument a trace may carry.
_ARGUMENT_DECODERS: dict[str, Callable[[object], object]] = {
    "bool": _exactly(bool),
    "int": _exactly(int),
    "float": _float,
    "str": _exactly(str),
    "NoneType": _nothing,
    "list": _byte_values,
    "bytearray": lambda value: bytearray(_bytes(value)),
    "memoryview": lambda value: memoryview(_bytes(value)),
}


#: The tags a trace may carry (the certificate's and a partial's schemas list them too).
ARGUMENT_TYPES: frozenset[str] = frozenset(_ARGUMENT_DECODERS)


def _argument_to_json(argument: object) -> object:
    """An integer argument as itself; anything else tagged with its type (see above)."""
    return argument if type(argument) is int else _tag(argument)


def _tag(argument: object) -> dict[str, object]:
    kind = type(argument).__name__
    if kind not in _ARGUMENT_DECODERS:
        raise TypeError(f"no trace carries an argument of type {kind}")
    if isinstance(argument, (bytearray, memoryview)):
        return {"type": kind, "value": _text(bytes(argument))}
    if isinstance(argument, float) and not math.isfinite(argument):
        raise ValueError(f"no trace carries the float {argument!r}")
    return {"type": kind, "value": argument}


def _tagged(record: dict[str, Any], field: str) -> object:
    value = record[field]
    kind = value.get("type")
    decoder = _ARGUMENT_DECODERS.get(kind) if isinstance(kind, str) else None
    if decoder is None or set(value) != {"type", "value"}:
        raise ValueError(
            f"operation field {field!r}: a tagged argument is "
            f"{{'type': one of {', '.join(_ARGUMENT_DECODERS)}, 'value': ...}}, got {value!r}"
        )
    return decoder(value["value"])


def _argument(record: dict[str, Any], field: str) -> object:
    """An integer field of an operation that may be sent a bad argument: an integer, or a tagged argument."""
    return _tagged(record, field) if isinstance(record.get(field), dict) else _integer(record, field)


def _insert_argument(record: dict[str, Any]) -> object:
    """A splice's insert: base64 text (bytes), or a tagged argument."""
    insert = record.get("insert")
    return _tagged(record, "insert") if isinstance(insert, dict) else _bytes(insert)


def _edit_fields(record: dict[str, Any]) -> tuple[int, int, bytes]:
    return _integer(record, "offset"), _integer(record, "delete_length"), _bytes(record.get("insert"))


def _crash_during(record: dict[str, Any]) -> CrashDuring:
    inner = operation_from_json(record.get("operation"))
    if not isinstance(inner, (Splice, Rollback, RollbackTo, Compact)):
        raise ValueError(f"a crash cannot interrupt {inner.kind!r}: it writes nothing durable")
    return CrashDuring(inner, _integer(record, "io_event"), _integer(record, "lost"))


def _lists(record: dict[str, Any], field: str, length: int, shape: str) -> list[list[Any]]:
    value = record.get(field)
    if not isinstance(value, list) or not all(
        isinstance(item, list) and len(item) == length and type(item[0]) is int and type(item[1]) is int
        for item in value
    ):
        raise TypeError(f"operation field {field!r} must be a list of {shape}, got {value!r}")
    return value


def _apply_diff(record: dict[str, Any]) -> ApplyDiff:
    mode = record.get("mode")
    if mode not in ANCHOR_MODES:
        raise ValueError(f"anchor mode must be one of {ANCHOR_MODES}, got {mode!r}")
    hunks = tuple(Hunk(start, end, _bytes(text)) for start, end, text in _lists(record, "hunks", 3, "[start, end, base64]"))
    reads = tuple(Region(start, end) for start, end in _lists(record, "reads", 2, "[start, end]"))
    return ApplyDiff(_integer(record, "snapshot"), mode, hunks, reads)


def _corrupt_record(record: dict[str, Any]) -> CorruptRecord:
    damage = record.get("damage", "bit_flip")
    if damage not in DAMAGES:
        raise ValueError(f"operation field 'damage' must be one of {', '.join(DAMAGES)}, got {damage!r}")
    return CorruptRecord(damage)


def _disk_fault(record: dict[str, Any]) -> DiskFault:
    fault = record.get("fault")
    if fault not in DISK_FAULTS:
        raise ValueError(f"operation field 'fault' must be one of {', '.join(DISK_FAULTS)}, got {fault!r}")
    return DiskFault(fault)


#: kind -> how to read the rest of the record. One table for every family's operations.
_DECODERS: dict[str, Callable[[dict[str, Any]], AnyOperation]] = {
    Splice.kind: lambda record: Splice(
        _argument(record, "offset"),  # type: ignore[arg-type]  # a bad argument stays itself
        _argument(record, "delete_length"),  # type: ignore[arg-type]
        _insert_argument(record),  # type: ignore[arg-type]
    ),
    OutOfLogWrite.kind: lambda record: OutOfLogWrite(*_edit_fields(record)),
    ToolWrite.kind: lambda record: ToolWrite(*_edit_fields(record)),
    Rollback.kind: lambda record: Rollback(_argument(record, "steps")),  # type: ignore[arg-type]
    RollbackTo.kind: lambda record: RollbackTo(_integer(record, "checkpoint")),
    Compact.kind: lambda record: Compact(_argument(record, "keep")),  # type: ignore[arg-type]
    CrashDuring.kind: _crash_during,
    ApplyDiff.kind: _apply_diff,
    RollbackDiff.kind: lambda record: RollbackDiff(_integer(record, "applied")),
    TakeCheckpoint.kind: lambda record: TakeCheckpoint(),
    RollbackToForeign.kind: lambda record: RollbackToForeign(),
    ArmJournalFault.kind: lambda record: ArmJournalFault(),
    AdoptCurrent.kind: lambda record: AdoptCurrent(),
    Restart.kind: lambda record: Restart(),
    CorruptRecord.kind: lambda record: _corrupt_record(record),
    Flush.kind: lambda record: Flush(),
    DiskFault.kind: _disk_fault,
    Reopen.kind: lambda record: Reopen(),
    TakeSnapshot.kind: lambda record: TakeSnapshot(),
}


def operation_from_json(record: object) -> AnyOperation:
    """Parse one operation of any kind; ``ValueError``/``TypeError`` naming what is wrong."""
    if not isinstance(record, dict):
        raise TypeError(f"an operation must be a JSON object, got {type(record).__name__}")
    kind = record.get("op")
    decoder = _DECODERS.get(kind) if isinstance(kind, str) else None
    if decoder is None:
        raise ValueError(f"unknown operation {kind!r}; known: {', '.join(sorted(_DECODERS))}")
    return decoder(record)
