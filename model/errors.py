"""Every documented error of rollcert, in one module (SPEC §3).

The model, the bundled implementation, the specimens and the adapters all raise
these and only these (plus ``ValueError`` / ``TypeError`` for bad arguments), so a
certificate can compare *kinds* of failure across implementations written by
different people, in different languages.

The rule every operation obeys: it either succeeds with the state the model
predicts, or raises one of these errors and leaves the state unchanged.
"""

from __future__ import annotations


class RollbackIntegrityError(RuntimeError):
    """Base class: the system refused an operation to avoid silent corruption."""


class JournalError(RollbackIntegrityError):
    """The inverse record could not be committed, so the mutation did not happen.

    Raised when an append is refused, the journal's I/O fails, or a bounded
    journal is full and its policy is ``reject``. (R1, R6)
    """


class JournalPoisonedError(JournalError):
    """A durable journal refused the operation without trying it: an earlier
    write, sync or cut-back failed, and after a failed fsync the kernel may
    have dropped the pages it could not write, so nothing built on the file can
    be vouched for until the journal is reopened and read back. Nothing was
    recorded; ``first_failure`` says what failed first. (R1, R5)"""

    def __init__(self, message: str, *, first_failure: str) -> None:
        super().__init__(message)
        self.first_failure = first_failure


class OutcomeUnknownError(JournalError):
    """A durable journal met an I/O failure it could not clean up after (the
    cut-back of a failed record failed too, or a rename was not made durable):
    the file may or may not hold the operation. The buffer still shows the
    state before it and refuses everything until the journal is reopened; the
    reopen decides which of the two states it was. (R1, R5)"""


class JournalInUseError(JournalError):
    """Another writer holds the durable journal's exclusive lock, so this one
    may not open it: two writers would interleave records into a history
    neither had, and one's compaction would erase the other's records. (R5)

    ``holder_pid`` is the process that holds the lock, where the lock file
    says so (``None`` otherwise)."""

    def __init__(self, message: str, *, holder_pid: int | None = None) -> None:
        super().__init__(message)
        self.holder_pid = holder_pid


class DivergenceError(RollbackIntegrityError):
    """The buffer no longer matches what the log says: an out-of-log write.

    Undoing a record across such a write would manufacture a state that never
    existed, so the step is refused. (R4)
    """


class UnreachableRollbackError(RollbackIntegrityError):
    """The rollback target is past the horizon, names a dead checkpoint, or
    belongs to another buffer. (R3, R6, S2)"""


class StaleBaseError(RollbackIntegrityError):
    """A self-authored diff was rejected because its base went stale. (S1)

    Carries the revision the diff was authored against, the live revision, and
    the first conflicting region, so the caller can re-author against the live
    base: ``conflict`` in the snapshot's coordinates, ``live_conflict`` where
    that region's stretch now lies in the live base (``None`` when the diff is
    positional or the history needed to place it was discarded).
    """

    def __init__(
        self,
        message: str,
        *,
        base_revision: int | None = None,
        live_revision: int | None = None,
        conflict: tuple[int, int] | None = None,
        live_conflict: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message)
        self.base_revision = base_revision
        self.live_revision = live_revision
        self.conflict = conflict
        self.live_conflict = live_conflict


class RecoveryError(RollbackIntegrityError):
    """A journal file is corrupt somewhere other than a torn final record. (R5)"""


#: The error kinds a certified implementation may report, by their wire names
#: (the subprocess protocol and certificates use these strings).
ERROR_KINDS: dict[str, type[Exception]] = {
    "JournalError": JournalError,
    "DivergenceError": DivergenceError,
    "UnreachableRollbackError": UnreachableRollbackError,
    "StaleBaseError": StaleBaseError,
    "RecoveryError": RecoveryError,
    "ValueError": ValueError,
    "TypeError": TypeError,
}


def error_kind(error: BaseException | type[BaseException]) -> str:
    """The wire name of a documented error (or error class), ``undocumented:<Class>`` otherwise.

    Subclasses map to their documented ancestor, so an implementation may raise
    a more specific error of its own without being judged wrong.
    """
    cls = error if isinstance(error, type) else type(error)
    for name, kind in ERROR_KINDS.items():
        if issubclass(cls, kind):
            return name
    return f"undocumented:{cls.__name__}"
