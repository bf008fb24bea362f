"""A live view of a certification on a terminal: one line per property.

A default run takes a minute, ``ci`` several and ``thorough`` about 25; without
a sign of life a person cannot tell a slow target from a hung one. So while
``rollcert certify`` runs on a terminal, stderr shows per property the examples
and steps done of the profile's budget, the elapsed time, and the first
violation as soon as Hypothesis hits it (before the minimiser starts, which can
take a while on a slow target); at the end each line is the property's verdict.

Three parts, kept apart so each can be tested alone:

- :class:`~rollcert.stateful_tests.progress_events.ProgressSink`, what the runner
  calls (``started``, ``advanced``, ``violation``, ``finished``), and its
  :class:`~rollcert.stateful_tests.progress_events.Sampler`, live in the engine
  (:mod:`rollcert.stateful_tests.progress_events`);
- :func:`render`, a pure function from the rows' state to text lines;
- :class:`TerminalDisplay`, a sink that keeps the rows and redraws them in
  place on a terminal, at most ten times a second.

Nothing is shown when stderr is not a terminal (CI logs stay clean) or with
``--quiet``: :func:`display_for` returns ``None`` and the run takes no sink.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TextIO

from rollcert.stateful_tests.progress_events import INTERVAL
from rollcert.stateful_tests.progress_events import Budget
from rollcert.targets.adapter import visible


@dataclass(frozen=True)
class Row:
    """One property's line: ``state`` is waiting, running or done."""

    property_id: str
    state: str = "waiting"
    budget: Budget | None = None
    examples: int = 0
    steps: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    violation: str = ""
    verdict: str = ""
    detail: str = ""


def _elapsed(row: Row, now: float) -> str:
    if row.started_at is None:
        return ""
    end = row.finished_at if row.finished_at is not None else now
    return f"{end - row.started_at:.1f} s"


def _of(done: int, budget: int | None) -> str:
    return f"{done:,}/{budget:,}" if budget is not None else f"{done:,}"


def render(rows: Sequence[Row], now: float, width: int = 100) -> list[str]:
    """The display's lines for ``rows`` at time ``now`` (``time.monotonic``), each
    cut to ``width`` columns so that a line never wraps (redrawing in place counts lines)."""
    lines: list[str] = []
    for row in rows:
        budget = row.budget
        counts = (
            f"examples {_of(row.examples, budget.examples if budget else None)}, "
            f"steps {_of(row.steps, budget.steps if budget else None)}, {_elapsed(row, now)}"
        )
        if row.state == "waiting":
            text = f"{row.property_id:<4} waiting"
        elif row.state == "running":
            # A run without counters (R7's) shows its elapsed time alone, not zeros.
            shown = counts if budget is not None or row.examples or row.steps else _elapsed(row, now)
            text = f"{row.property_id:<4} {'running':<13}{shown}"
            if row.violation:
                text += f" — violation found, minimising: {_one_line(row.violation)}"
        else:
            shown = counts if row.examples or row.steps else _elapsed(row, now)  # nothing ran: not assessed, say
            text = f"{row.property_id:<4} {row.verdict:<13}{shown}"
            if row.detail:
                text += f" — {_one_line(row.detail)}"
        lines.append(text if len(text) <= width else text[: max(width - 1, 0)] + "…")
    return lines


def _one_line(text: str) -> str:
    """A violation's explanation or a reason may hold newlines; a display line may not."""
    return " ".join(text.split())


class TerminalDisplay:
    """A :class:`ProgressSink` that redraws every property's line in place on
    ``stream`` (a terminal), at most once per :data:`INTERVAL`; :meth:`close`
    draws the final lines, one verdict per property, and leaves them."""

    def __init__(
        self,
        stream: TextIO,
        property_ids: Sequence[str],
        clock: Callable[[], float] = time.monotonic,
        columns: Callable[[], int] | None = None,
    ) -> None:
        self._stream, self._clock = stream, clock
        self._columns = columns if columns is not None else (lambda: _terminal_columns(stream))
        self._rows = {pid: Row(pid) for pid in property_ids}
        self._lock = threading.RLock()
        self._drawn = 0  # lines currently on screen
        self._last_draw = float("-inf")
        self._closed = False

    # -- the sink ----------------------------------------------------------------------------------

    def started(self, property_id: str, budget: Budget | None) -> None:
        self._update(property_id, state="running", budget=budget, started_at=self._clock())

    def advanced(self, property_id: str, examples: int, steps: int) -> None:
        self._update(property_id, examples=examples, steps=steps)

    def violation(self, property_id: str, text: str) -> None:
        with self._lock:
            if not self._rows[property_id].violation:
                self._update(property_id, violation=visible(text), force=True)

    def finished(self, property_id: str, verdict: str, detail: str) -> None:
        self._update(
            property_id, state="done", verdict=verdict, detail=visible(detail), finished_at=self._clock(), force=True
        )

    def tick(self) -> None:
        """Redraw if due: the elapsed times move even when no counter does."""
        with self._lock:
            self._draw(force=False)

    def close(self) -> None:
        """The final drawing; nothing is drawn after it."""
        with self._lock:
            if not self._closed:
                self._draw(force=True)
                self._closed = True

    # -- drawing ------------------------------------------------------------------------------------

    def _update(self, property_id: str, *, force: bool = False, **changes: object) -> None:
        with self._lock:
            if property_id not in self._rows:
                self._rows[property_id] = Row(property_id)
            self._rows[property_id] = replace(self._rows[property_id], **changes)  # type: ignore[arg-type]
            self._draw(force=force)

    def _draw(self, *, force: bool) -> None:
        now = self._clock()
        if self._closed or (not force and now - self._last_draw < INTERVAL):
            return
        self._last_draw = now
        width = max(self._columns() - 1, 20)
        lines = render(list(self._rows.values()), now, width)
        up = f"\x1b[{self._drawn}F" if self._drawn else ""  # to the first column of our first line
        body = "".join(f"{line}\x1b[K\n" for line in lines)  # each line, clearing what it leaves
        self._stream.write(up + body + "\x1b[J")  # and anything below from a longer drawing
        self._stream.flush()
        self._drawn = len(lines)


def _terminal_columns(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to ($COLUMNS first, as the
    shell sets it); 100 when it cannot be told or says 0 (a bare pseudo-terminal)."""
    override = os.environ.get("COLUMNS", "")
    if override.isdigit() and int(override) > 0:
        return int(override)
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 100
    return columns if columns > 0 else 100


def display_for(property_ids: Sequence[str], *, quiet: bool, stream: TextIO | None = None) -> TerminalDisplay | None:
    """A live display on ``stream`` (stderr) if it is a terminal and not ``quiet``; else ``None``."""
    stream = sys.stderr if stream is None else stream
    if quiet:
        return None
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        interactive = False
    return TerminalDisplay(stream, property_ids) if interactive else None
