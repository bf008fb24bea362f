"""The adapter protocol: how rollcert drives a system under test (SUT).

This is the one place that says what an implementation must offer to be
certified. Only ``read``, ``splice`` and ``rollback`` are mandatory (capability
``core``): an editor widget's undo stack or a CRDT's undo manager can be
certified on what it has. Every other method belongs to a capability; a
property whose capability is missing is reported *not assessed*, never
*passed*, and the machines never call a method the SUT did not declare.

A SUT reports failure by raising the documented errors of
:mod:`model.errors` (or ``ValueError``/``TypeError`` for bad arguments). Any
other exception is an undocumented outcome and is judged like a wrong answer.
A :class:`HarnessError` is different: the adapter itself broke (a protocol
violation, a dead subprocess, a missing method) and the certificate says
``error``, not ``violated``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from model.reference import Policy


class Capability(StrEnum):
    """What a SUT can be driven on. The value is the wire name."""

    CORE = "core"  # read, splice, rollback
    DEPTH = "depth"  # depth(): number of live records
    REVISIONS = "revisions"  # revision(): grows by one per mutation, never reused
    CHECKPOINTS = "checkpoints"  # checkpoint(), rollback_to(token)
    JOURNAL_FAULTS = "journal_faults"  # arm_journal_fault(): the next append fails
    OUT_OF_LOG_WRITES = "out_of_log_writes"  # write_out_of_log(): bypass the journal
    ADOPT = "adopt"  # adopt_current(): the new horizon after a divergence
    BOUNDED = "bounded"  # honours BufferConfig.capacity and .policy
    DIFFS = "diffs"  # snapshot / diff / apply (S1-S3)
    DURABILITY = "durability"  # crash and recover (R5)


class HarnessError(Exception):
    """The adapter or the SUT's process broke; not a verdict on the rules."""


class CapabilityMissing(HarnessError):
    """A method of a capability the SUT did not declare was called."""


@dataclass(frozen=True)
class BufferConfig:
    """How to build a fresh buffer for one test case."""

    initial: bytes = b""
    capacity: int | None = None
    policy: Policy = "reject"


@runtime_checkable
class SystemUnderTest(Protocol):
    """One live buffer of the implementation, as the machines see it."""

    def read(self) -> bytes: ...
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None: ...
    def rollback(self, steps: int) -> None: ...
    def depth(self) -> int: ...
    def revision(self) -> int: ...
    def checkpoint(self) -> object: ...
    def rollback_to(self, token: object) -> None: ...
    def arm_journal_fault(self) -> None: ...
    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None: ...
    def adopt_current(self) -> None: ...
    def close(self) -> None: ...


class UnsupportedOperations:
    """Mixin for adapters: every optional method raises :class:`CapabilityMissing`.

    An adapter inherits from it and overrides what its capabilities cover.
    """

    def depth(self) -> int:
        raise CapabilityMissing("depth")

    def revision(self) -> int:
        raise CapabilityMissing("revisions")

    def checkpoint(self) -> object:
        raise CapabilityMissing("checkpoints")

    def rollback_to(self, token: object) -> None:
        raise CapabilityMissing("checkpoints")

    def arm_journal_fault(self) -> None:
        raise CapabilityMissing("journal_faults")

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        raise CapabilityMissing("out_of_log_writes")

    def adopt_current(self) -> None:
        raise CapabilityMissing("adopt")

    def close(self) -> None:
        return None


SutFactory = Callable[[BufferConfig], SystemUnderTest]


@dataclass(frozen=True)
class Target:
    """A certifiable implementation: a name, what it can do, and a factory.

    ``rollcert certify module:attr`` resolves ``attr`` to a ``Target`` (or to a
    zero-argument callable returning one).
    """

    name: str
    version: str
    capabilities: frozenset[Capability]
    factory: SutFactory
    description: str = ""
    notes: dict[str, str] = field(default_factory=dict)

    def supports(self, *needed: Capability) -> bool:
        return all(c in self.capabilities for c in needed)
