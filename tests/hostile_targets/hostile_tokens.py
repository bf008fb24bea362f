"""Correct checkpoints whose tokens are hostile: ``==`` says True to anything
and ``hash()`` raises. rollcert must only hand tokens back, never compare or
hash them, so this target is judged exactly as the same log with plain tokens."""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import target

from rollcert.model.errors import UnreachableRollbackError
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest

CHECKPOINTED = frozenset({Capability.CORE, Capability.DEPTH, Capability.REVISIONS, Capability.CHECKPOINTS})


class PlainToken:
    def __init__(self, owner: object, serial: int) -> None:
        self.owner = owner
        self.serial = serial


class HostileToken(PlainToken):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        raise TypeError("this token is not hashable")


class CheckpointedLog(HonestAdapter):
    """Each state has a serial, never reused; a token names a live state by it."""

    token_class: type[PlainToken] = PlainToken

    def __init__(self, config: BufferConfig) -> None:
        super().__init__(config)
        self.serials = [0]
        self.next_serial = 1

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        super().splice(offset, delete_length, insert)
        self.serials.append(self.next_serial)
        self.next_serial += 1

    def rollback(self, steps: int) -> None:
        super().rollback(steps)
        del self.serials[len(self.log.states) :]

    def checkpoint(self) -> object:
        return self.token_class(self, self.serials[-1])

    def rollback_to(self, token: object) -> None:
        if not isinstance(token, PlainToken) or token.owner is not self:
            raise UnreachableRollbackError("a checkpoint of another buffer")
        live = [index for index, serial in enumerate(self.serials) if serial == token.serial]
        if not live:
            raise UnreachableRollbackError("a dead checkpoint")
        self.rollback(len(self.serials) - 1 - live[0])


class HostileTokens(CheckpointedLog):
    token_class = HostileToken


def plain(config: BufferConfig) -> SystemUnderTest:
    return CheckpointedLog(config)


def hostile(config: BufferConfig) -> SystemUnderTest:
    return HostileTokens(config)


PLAIN_TOKENS = target("plain-tokens", plain, CHECKPOINTED)
TARGET = target("hostile-tokens", hostile, CHECKPOINTED)
