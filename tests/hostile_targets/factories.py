"""Factories that misbehave.

``SHARED``: hands out the same buffer every time, its current state reset to the
example's initial bytes but its history kept: state leaks between examples. It
used to be judged ``violated`` on a counterexample that does not replay (the
depth of earlier examples' edits); it is the adapter's fault: ``error``.

``RETURNS_NONE``: the factory returns ``None``: ``error``, saying what broke.

``NEW_CLASS_EACH_TIME``: a fresh class per buffer, all correct: ``passed``.

``SLOW_TO_BUILD``: the third buffer takes 30 s to build. Under the call timeout
(``--call-timeout``) the property is ``error``, naming the build.
"""

from __future__ import annotations

import time

from _honest import HonestAdapter
from _honest import target

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest

_shared: list[HonestAdapter] = []


def shared(config: BufferConfig) -> SystemUnderTest:
    if not _shared:
        _shared.append(HonestAdapter(config))
    buffer = _shared[0]
    buffer.log.states.append(config.initial)  # looks fresh; its history is not
    return buffer


def returns_none(config: BufferConfig) -> SystemUnderTest:
    return None  # type: ignore[return-value]


def new_class(config: BufferConfig) -> SystemUnderTest:
    fresh = type("FreshAdapter", (HonestAdapter,), {})
    adapter: SystemUnderTest = fresh(config)
    return adapter


_builds = [0]


def slow_third(config: BufferConfig) -> SystemUnderTest:
    _builds[0] += 1
    if _builds[0] == 3:
        time.sleep(30)
    return HonestAdapter(config)


SHARED = target("shared", shared)
RETURNS_NONE = target("returns-none", returns_none)
NEW_CLASS_EACH_TIME = target("new-class-each-time", new_class)
SLOW_TO_BUILD = target("slow-to-build", slow_third)
