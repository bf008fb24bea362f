"""Helpers shared by the suite's own tests (``from _helpers import ...``).

- :func:`seen` / :func:`model_seen`: what a buffer and the model show (bytes,
  depth, revision), to compare after each step;
- :func:`perform`: one rollback-family operation on a buffer with rollcert's
  Python buffer API (``JournaledBuffer``, the naive specimens), the way the
  model's ``step`` reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rollcert.model import operations as ops
from rollcert.model.reference import ModelState

#: (bytes, depth, revision)
Seen = tuple[bytes, int, int]


def seen(buffer: Any) -> Seen:
    return buffer.read(), buffer.depth, buffer.revision


def model_seen(state: ModelState) -> Seen:
    return state.current, state.depth, state.revision


def perform(
    buffer: Any, operation: ops.Operation, tokens: list[Any], foreign: Callable[[], object] | None = None
) -> None:
    """Do ``operation`` on ``buffer``; a checkpoint taken is appended to ``tokens``
    (``RollbackTo(i)`` rolls back to ``tokens[i]``), and ``foreign()`` makes the
    checkpoint of another buffer a ``RollbackToForeign`` uses."""
    if isinstance(operation, ops.Splice):
        buffer.splice(operation.offset, operation.delete_length, operation.insert)
    elif isinstance(operation, ops.Rollback):
        buffer.rollback(operation.steps)
    elif isinstance(operation, ops.Compact):
        buffer.compact(operation.keep)
    elif isinstance(operation, ops.TakeCheckpoint):
        tokens.append(buffer.checkpoint())
    elif isinstance(operation, ops.RollbackTo):
        buffer.rollback_to(tokens[operation.checkpoint])
    elif isinstance(operation, ops.RollbackToForeign) and foreign is not None:
        buffer.rollback_to(foreign())
    elif isinstance(operation, ops.OutOfLogWrite):
        buffer.write_out_of_log(operation.offset, operation.delete_length, operation.insert)
    elif isinstance(operation, ops.ArmJournalFault):
        buffer.fail_next_append()
    elif isinstance(operation, ops.AdoptCurrent):
        buffer.adopt_current()
    else:  # pragma: no cover - the traces of the tests have no other kinds
        raise AssertionError(f"unknown operation {operation!r}")
