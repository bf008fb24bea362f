"""Depths and revisions that are not plain ints.

- ``HUGE_REVISION``: once the buffer has three edits, ``revision()`` jumps by
  10**5000. That is a wrong revision (a real bug), but explaining it needed
  ``str()`` of a 5001-digit int, which Python refuses: the verdict used to be
  ``error`` saying "the adapter raised ValueError: Exceeds the limit (4300
  digits)". Now it is refused as the wire protocol refuses it: ``error``
  naming an integer of about 5001 digits.
- ``DEPTH_AS_BOOL`` / ``DEPTH_AS_FLOAT``: ``depth()`` returns ``True`` or ``1.0``:
  ``error`` saying which type (not an int, whatever ``==`` says).
- ``LYING_INT``: a plain Python object certified through ``PythonBufferAdapter``
  whose ``depth`` is an object with ``__int__`` (returning, once there are two
  edits, one more than the truth, as an int subclass equal to everything). ``int()`` makes a plain int of
  the lie, which is judged like any wrong depth: ``violated``.
"""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import SnapshotLog
from _honest import target

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapters.python_object import PythonBufferAdapter


class HugeRevision(HonestAdapter):
    def revision(self) -> int:
        return super().revision() + (10**5000 if self.log.edits >= 3 else 0)


class DepthAsBool(HonestAdapter):
    def depth(self) -> int:
        return bool(super().depth())  # type: ignore[return-value]


class DepthAsFloat(HonestAdapter):
    def depth(self) -> int:
        return float(super().depth())  # type: ignore[return-value]


class EqualToEverything(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class OffByOne:
    def __init__(self, truth: int) -> None:
        self.truth = truth

    def __int__(self) -> int:
        return EqualToEverything(self.truth)


class OffByOneLog(SnapshotLog):
    def read(self) -> bytes:
        return self.states[-1]

    @property
    def depth(self) -> OffByOne:
        return OffByOne(len(self.states) - 1 if len(self.states) < 3 else len(self.states))

    @property
    def revision(self) -> int:
        return self.edits


def off_by_one(config: BufferConfig) -> SystemUnderTest:
    return PythonBufferAdapter(OffByOneLog(config.initial))


HUGE_REVISION = target("huge-revision", HugeRevision)
DEPTH_AS_BOOL = target("depth-as-bool", DepthAsBool)
DEPTH_AS_FLOAT = target("depth-as-float", DepthAsFloat)
LYING_INT = target("lying-int", off_by_one)
