"""What a certification run tells an onlooker while it goes, and how its counters are sampled.

The engine reports through :class:`ProgressSink` (``started``, ``advanced``,
``violation``, ``finished``) and never draws anything: the terminal display that
turns these events into lines is :mod:`rollcert.reports.progress`, a room above.
:class:`Sampler` reads a run's counters in a thread at most ten times a second, so
the machines' hot path pays nothing beyond the two counters it already keeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

#: Seconds between two redraws (and two samples of a run's counters): at most ten a second.
INTERVAL = 0.1


@dataclass(frozen=True)
class Budget:
    """What a property's run may spend: the profile's examples and steps over all
    its rounds (a run stops early once every situation was reached)."""

    examples: int
    steps: int


class ProgressSink(Protocol):
    """What a certification run reports while it goes. Called from the run's
    thread and from a :class:`Sampler`'s thread: implementations lock."""

    def started(self, property_id: str, budget: Budget | None) -> None: ...
    def advanced(self, property_id: str, examples: int, steps: int) -> None: ...
    def violation(self, property_id: str, text: str) -> None: ...
    def finished(self, property_id: str, verdict: str, detail: str) -> None: ...


class Sampler:
    """Reads ``counts()`` every :data:`INTERVAL` seconds in a daemon thread and
    reports a change to ``sink``; a context manager, reporting once more on exit.

    Polling instead of a callback per step keeps the machines unchanged and
    costs one wake-up a tenth of a second, whatever the target's speed."""

    def __init__(self, sink: ProgressSink, property_id: str, counts: Callable[[], tuple[int, int]]) -> None:
        self._sink, self._property_id, self._counts = sink, property_id, counts
        self._stop = threading.Event()
        self._last: tuple[int, int] | None = None
        self._thread = threading.Thread(target=self._loop, name=f"rollcert-progress-{property_id}", daemon=True)

    def _report(self) -> None:
        now = self._counts()
        if now != self._last:
            self._last = now
            self._sink.advanced(self._property_id, *now)

    def _loop(self) -> None:
        while not self._stop.wait(INTERVAL):
            self._report()

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._report()
