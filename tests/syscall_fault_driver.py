"""The program ``tests/test_journal_syscall_faults.py`` runs under ``strace``
with one or two real system calls made to fail (``-e inject=...``).

    python syscall_fault_driver.py DIRECTORY MODE

It opens the durable buffer in DIRECTORY (the journal is already there: the
test wrote it), then splices, rolls back, flushes, compacts and adopts, in
the durability MODE (``per_operation`` or ``batched``), going on after every
refusal (after which it reopens the journal, as the error says to). For each
step it prints one JSON line on stdout (which strace is
told to leave alone): the operation, how it ended (``ok``, ``refused`` for a
plain JournalError, ``poisoned`` for a poisoned journal's refusal,
``unknown`` for an OutcomeUnknownError, or the name of any other exception)
and the buffer as it then shows (bytes in hex, depth, revision); an open says
whether the journal came out of it poisoned (its serial floor could not be
written). The test replays the steps on the
model and checks a clean reopen of the journal against what was acknowledged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from rollcert.impl.file_journal import Durability
from rollcert.impl.file_journal import FileJournal
from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalPoisonedError
from rollcert.model.errors import OutcomeUnknownError

#: Sync every 3 records, no timer: the run crosses automatic syncs, and the
#: same I/O happens in every run (the call counts the test enumerates hold).
BATCHED = Durability.batched(every_records=3, every_ms=None)

#: The steps, as (name, JSON-ready arguments). Each is also a model operation.
STEPS: list[tuple[str, list[object]]] = [
    ("splice", [0, 0, "one "]),
    ("splice", [0, 4, "ONE "]),
    ("splice", [4, 0, "two "]),
    ("rollback", [1]),
    ("splice", [0, 0, "three "]),
    ("flush", []),
    ("splice", [0, 1, ""]),
    ("compact", [1]),
    ("splice", [0, 0, "four "]),
    ("rollback", [2]),
    ("splice", [0, 0, "five "]),
    ("adopt_current", []),
    ("splice", [0, 0, "six "]),
    ("flush", []),
]


def report(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def shown(buffer: JournaledBuffer) -> list[object]:
    return [buffer.read().hex(), buffer.depth, buffer.revision]


def ending(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    if isinstance(error, OutcomeUnknownError):
        return "unknown"
    if isinstance(error, JournalPoisonedError):
        return "poisoned"
    if isinstance(error, JournalError):
        return "refused"
    return type(error).__name__


def action(buffer: JournaledBuffer, name: str, arguments: list[object]) -> Callable[[], None]:
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    if name == "splice":
        offset, delete_length, insert = arguments
        assert isinstance(offset, int) and isinstance(delete_length, int) and isinstance(insert, str)
        return lambda: buffer.splice(offset, delete_length, insert.encode())
    if name == "rollback":
        (steps,) = arguments
        assert isinstance(steps, int)
        return lambda: buffer.rollback(steps)
    if name == "compact":
        (keep,) = arguments
        assert isinstance(keep, int)
        return lambda: buffer.compact(keep)
    if name == "adopt_current":
        return buffer.adopt_current
    if name == "flush":
        return journal.flush
    raise ValueError(f"no step {name!r}")


def opened(storage: RealDirectory, durability: Durability, what: str) -> JournaledBuffer | None:
    """Open the journal, reporting ``what`` ("open" or "reopen") and the state
    it recovered; None if the open itself failed (nothing is then acknowledged)."""
    try:
        buffer = open_durable_buffer(storage, durability=durability)
    except Exception as error:  # the open met the fault
        report(op=what, ending=ending(error), message=str(error))
        return None
    journal = buffer.journal
    assert isinstance(journal, FileJournal)
    report(op=what, ending="ok", message="", state=shown(buffer), poisoned=journal.poisoned)
    return buffer


def main(directory: str, mode: str) -> int:
    """Run the steps; after every refusal, reopen the journal as the error
    recommends (a new storage: the handles and the lock of the old one are
    dropped, as a new process would have none) and go on."""
    durability = BATCHED if mode == "batched" else Durability.per_operation()
    storage = RealDirectory(directory)
    buffer = opened(storage, durability, "open")
    for name, arguments in STEPS:
        if buffer is None:
            break
        error: Exception | None = None
        try:
            action(buffer, name, arguments)()
        except Exception as caught:  # judged by the test: every ending is reported
            error = caught
        report(op=name, arguments=arguments, ending=ending(error), message=str(error or ""), state=shown(buffer))
        if isinstance(error, JournalError):
            storage.close()
            storage = RealDirectory(directory)
            buffer = opened(storage, durability, "reopen")
    storage.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
