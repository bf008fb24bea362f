"""Failures that happen once and not on replay.

``corrupts_once(n)``: the n-th splice of this target appends a ``!`` to the buffer
(a one-off corruption: a race, a stray write). Hypothesis's replay of the
failing example ran without it, and for many n its draws then went another way
(``FlakyStrategyDefinition``): rollcert started the round afresh, dropping the
violation it had seen, and the certificate said ``passed`` (n = 35, 50, 55, 65,
70 at seed 0, among others).

``factory_fails_once(n)``: the n-th buffer the factory is asked for raises;
same path, same ``passed`` (n = 25 to 70 at seed 0, among others).
"""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import target

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target


def corrupts_once(call: int) -> Target:
    calls = [0]

    class CorruptsOnce(HonestAdapter):
        def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
            super().splice(offset, delete_length, insert)
            calls[0] += 1
            if calls[0] == call:
                self.log.states[-1] += b"!"

    return target(f"corrupts-once-{call}", CorruptsOnce)


def factory_fails_once(call: int) -> Target:
    calls = [0]

    def build(config: BufferConfig) -> SystemUnderTest:
        calls[0] += 1
        if calls[0] == call:
            raise RuntimeError(f"build number {call} failed")
        return HonestAdapter(config)

    return target(f"factory-fails-once-{call}", build)
