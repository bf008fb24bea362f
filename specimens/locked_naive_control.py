"""The R7 control: the naive buffer under one lock. Not a specimen: it must pass.

``rollcert certify rollcert.specimens.locked_naive_control:TARGET --only R7``
"""

from __future__ import annotations

from rollcert.specimens._concurrent import CONCURRENT_CAPABILITIES
from rollcert.specimens._concurrent import LockedNaiveBuffer
from rollcert.specimens._concurrent import concurrent_adapter
from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target


def _factory(config: BufferConfig) -> SystemUnderTest:
    return concurrent_adapter(LockedNaiveBuffer, config)


TARGET = Target(
    name="control:locked_naive",
    version="control",
    capabilities=CONCURRENT_CAPABILITIES,
    factory=_factory,
    description="the naive buffer with every method, observations included, under one lock",
)
