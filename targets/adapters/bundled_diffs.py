"""The bundled adapter with capability DIFFS: ``rollcert.impl.diffs.DiffableBuffer``.

Why a subclass and a separate factory rather than more methods on
``BundledAdapter``: the diff layer only sees every mutation if every mutation
goes through it, so this adapter routes the journaled operations (splice,
rollback, rollback_to, adopt_current, compact) through a
:class:`~rollcert.impl.diffs.DiffableBuffer` that wraps the very buffer the base
adapter built. Everything else — fault injection, out-of-log writes, the
durability hooks — is inherited unchanged, and ``BundledAdapter`` stays a
plain adapter of ``JournaledBuffer``. If the base adapter swaps its buffer
(recovery after a crash builds a new one), the diff layer starts a fresh
revision map on the new buffer: older snapshots become unprovable, which is
sound.

The specimens of the diff family are ``DiffableBuffer`` subclasses with one
planted bug; :func:`specimen_adapter` drives them through the same adapter.
"""

from __future__ import annotations

from typing import Any

from rollcert.impl.diffs import AppliedDiff
from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.diffs import DiffSnapshot
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapters.diff_applier import DiffApplier
from rollcert.targets.adapters.diff_applier import DiffRequest
from rollcert.targets.adapters.journaled_adapter import BundledAdapter


class BundledDiffAdapter(BundledAdapter, DiffApplier):
    """``BundledAdapter`` plus snapshot / apply_diff / rollback_diff."""

    snapshot_type = DiffSnapshot
    snapshot_owner = "implementation"

    #: The class of the diff layer (a specimen substitutes its broken variant).
    diff_layer: type[DiffableBuffer] = DiffableBuffer

    def __init__(self, config: BufferConfig) -> None:
        super().__init__(config)
        self._diffs = self.diff_layer(self.buffer)

    @property
    def diffs(self) -> DiffableBuffer:
        """The diff layer over the current buffer (rebuilt if the buffer was replaced)."""
        if self._diffs.journaled is not self.buffer:
            self._diffs = self.diff_layer(self.buffer)
        return self._diffs

    # -- journaled operations, routed through the revision map ------------------------

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.diffs.splice(offset, delete_length, insert)

    def rollback(self, steps: int) -> None:
        self.diffs.rollback(steps)

    def rollback_to(self, token: object) -> None:
        self.diffs.rollback_to(token)  # type: ignore[arg-type]  # a wrong type must raise TypeError

    def adopt_current(self) -> None:
        self.diffs.adopt_current()

    def compact(self, keep: int) -> None:
        self.diffs.compact(keep)

    def revision(self) -> int:
        return self.diffs.revision

    # -- capability DIFFS -----------------------------------------------------------------

    def snapshot(self) -> object:
        return self.diffs.snapshot()

    def check(self, request: DiffRequest) -> None:
        """Nothing: ``author_diff`` checks the diff itself, and that is part of what is certified."""

    def apply(self, request: DiffRequest) -> object:
        diff = self.diffs.author_diff(
            request.snapshot,
            request.mode,  # type: ignore[arg-type]  # a bad mode must raise ValueError
            request.hunks,
            request.reads,
        )
        return self.diffs.apply_diff(diff)

    def rollback_diff(self, applied: object) -> None:
        if not isinstance(applied, AppliedDiff):
            raise TypeError(f"not an applied diff of this implementation: {type(applied).__name__}")
        self.diffs.rollback_diff(applied)


#: What a diff specimen can be driven on: the core, depth, revisions and diffs.
DIFF_SPECIMEN_CAPABILITIES = frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS, Capability.DIFFS})


def specimen_adapter(cls: type[Any], config: BufferConfig) -> SystemUnderTest:
    """The ``adapter=`` of a diff specimen: ``cls`` is its broken ``DiffableBuffer``."""
    if not (isinstance(cls, type) and issubclass(cls, DiffableBuffer)):
        raise TypeError(f"a diff specimen must subclass DiffableBuffer, got {cls!r}")
    adapter_class = type(f"{cls.__name__}Adapter", (BundledDiffAdapter,), {"diff_layer": cls})
    adapter: SystemUnderTest = adapter_class(config)
    return adapter

