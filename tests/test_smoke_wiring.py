"""``rollcert smoke`` checks the wiring, never the behaviour (issue 43).

A correct adapter of a buggy tool (every specimen) must get an all-ok smoke with
no findings set aside: judging the tool is ``certify``'s. A miswired adapter
must fail with one line naming the wiring check it broke.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollcert.command.smoke import EXIT_OK
from rollcert.command.smoke import EXIT_VIOLATED
from rollcert.command.smoke import WIRING_ONLY
from rollcert.command.smoke import smoke
from rollcert.specimens import load_all
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import UnsupportedOperations
from rollcert.targets.adapters.bundled import TARGET as BUNDLED


def smoke_lines(target: Target) -> tuple[int, list[str]]:
    lines: list[str] = []
    return smoke(target, lines.append), lines


@pytest.mark.parametrize("name", sorted(load_all()))
def test_a_correct_adapter_of_a_buggy_tool_is_all_ok(name: str) -> None:
    target = load_all()[name].target
    assert target is not None and not target.set_aside
    status, lines = smoke_lines(target)
    assert status == EXIT_OK, lines
    assert not any(line.startswith(("FAIL", "ERROR")) or "set aside" in line for line in lines), lines


def test_the_bundled_target_is_all_ok_and_smoke_says_it_checks_wiring_only() -> None:
    status, lines = smoke_lines(BUNDLED)
    assert status == EXIT_OK, lines
    assert lines[1] == WIRING_ONLY and "run `rollcert certify` to judge" in lines[1]
    assert lines[-1].endswith("0 failed, 0 errors, 0 skipped"), lines
    # a refusal is reported as what it was, not judged
    refusals = next(line for line in lines if line.startswith("ok    refusals"))
    assert "rollback(1) [refused: UnreachableRollbackError]" in refusals, refusals


class _Core:
    """The bundled buffer's core methods, and nothing else."""

    def __init__(self, config: BufferConfig) -> None:
        self.inner = BUNDLED.factory(config)

    def read(self) -> bytes:
        return self.inner.read()

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        self.inner.splice(offset, delete_length, insert)

    def rollback(self, steps: int) -> None:
        self.inner.rollback(steps)

    def close(self) -> None:
        self.inner.close()


class _UndoRaisesKeyError(_Core):
    """An adapter that lets its tool's own exception escape: undo on an empty history."""

    def rollback(self, steps: int) -> None:
        if steps > self.inner.depth():
            raise KeyError("pop from an empty history")
        super().rollback(steps)


class _ReadsTheWrongBuffer(_Core):
    """An adapter that reads another buffer than the one it set up (a stale handle)."""

    def read(self) -> bytes:
        return super().read() + b"\n"


class _ReadsAreNotRepeatable(_Core):
    """An adapter whose read consumes something: the second read differs."""

    reads = 0

    def read(self) -> bytes:
        self.reads += 1
        return super().read()[: -1 if self.reads % 2 == 0 else None]


class _DeclaresCheckpointsWithoutThem(UnsupportedOperations, _Core):
    """Declares checkpoints; the mixin's checkpoint() raises CapabilityMissing."""


def _target(factory: type, *extra: Capability) -> Target:
    def build(config: BufferConfig) -> SystemUnderTest:
        return factory(config)  # type: ignore[no-any-return]

    return replace(BUNDLED, name="miswired", capabilities=frozenset({Capability.CORE, *extra}), factory=build)


@pytest.mark.parametrize(
    ("factory", "extra", "failing"),
    [
        (_UndoRaisesKeyError, (), "FAIL  refusals           typed errors: rollback(1) raised KeyError: 'pop from an empty history'"),
        (_ReadsTheWrongBuffer, (), "FAIL  new+read           read-back: the buffer was set up as b'abcabc' but read() returned b'abcabc\\n'"),
        (_ReadsAreNotRepeatable, (), "FAIL  new+read           read-back: two reads in a row returned different bytes: b'abcabc', then b'abcab'"),
        (_Core, (Capability.DEPTH,), "FAIL  new+read           declared operations: no depth method, yet it declares depth"),
        (
            _DeclaresCheckpointsWithoutThem,
            (Capability.CHECKPOINTS,),
            "FAIL  checkpoints        declared operations: checkpoint(): the adapter raised CapabilityMissing(checkpoints)",
        ),
    ],
)
def test_a_miswired_adapter_fails_naming_the_check(factory: type, extra: tuple[Capability, ...], failing: str) -> None:
    status, lines = smoke_lines(_target(factory, *extra))
    assert status == EXIT_VIOLATED, lines
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith(failing), lines
