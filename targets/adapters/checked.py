"""A base class for adapters that checks every argument exactly as the model does.

Why it exists: the machines deliberately send invalid calls (an offset past the
end, a negative delete length, ``rollback(-1)``, a bool where an int belongs),
and the model answers them with ``ValueError``/``TypeError`` *before anything
changes*. An adapter that forwards such a call to an editor gets whatever the
editor does with it (an ``IndexError``, a clamp, a silent no-op) and rollcert
reports an undocumented outcome: a false finding about the adapter, not the
editor. :class:`CheckedAdapter` runs the model's own rules
(:func:`~rollcert.model.contract.check_splice_arguments`,
:func:`check_steps`) first, so the editor only ever sees valid calls.

What it deliberately does *not* check: whether a rollback goes past the start
of the history. That is a question about the implementation's behaviour, not
about the call: an editor whose undo silently does nothing on an empty history
violates R0 (the model raises ``UnreachableRollbackError``), and an adapter
that pre-checked the depth would hide exactly that finding. Map the editor's
*own* report of "nothing to undo" to ``UnreachableRollbackError`` instead.
"""

from __future__ import annotations

from rollcert.model.contract import check_integer
from rollcert.model.contract import check_splice_arguments
from rollcert.targets.adapter import CapabilityMissing
from rollcert.targets.adapter import UnsupportedOperations


def check_steps(steps: object) -> int:
    """The model's rule for ``rollback(steps)``: a non-negative int (not a bool)."""
    count = check_integer("steps", steps)
    if count < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    return count


class CheckedAdapter(UnsupportedOperations):
    """Checks, then forwards: subclasses write ``read``, ``edit`` and ``undo``
    (or ``undo_steps``), plus any optional method of :class:`UnsupportedOperations`.

    ``splice`` and ``rollback`` (and ``write_out_of_log``, which forwards to
    ``edit_out_of_log``) raise the model's ``ValueError``/``TypeError`` for an
    invalid call and change nothing; a valid one reaches the hook with plain
    ``int``/``bytes`` arguments.
    """

    def read(self) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} must implement read()")

    def edit(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Forward a valid splice to the implementation."""
        raise NotImplementedError(f"{type(self).__name__} must implement edit()")

    def undo(self) -> None:
        """Forward one step of undo (used by the default :meth:`undo_steps`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement undo() or undo_steps()")

    def undo_steps(self, steps: int) -> None:
        """Forward a valid ``rollback(steps)``; by default ``steps`` calls of :meth:`undo`.

        Override it when the implementation undoes several steps at once: a
        rollback past the start must change nothing, and one step at a time
        cannot promise that if the last step fails.
        """
        for _ in range(steps):
            self.undo()

    def edit_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        """Forward a valid write that bypasses the history (capability ``out_of_log_writes``)."""
        raise CapabilityMissing("out_of_log_writes")

    def current_length(self) -> int:
        """The buffer's length, to check offsets against; override if reading is costly."""
        return len(self.read())

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        checked = check_splice_arguments(self.current_length(), offset, delete_length, insert)
        self.edit(*checked)

    def rollback(self, steps: int) -> None:
        self.undo_steps(check_steps(steps))

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        if type(self).edit_out_of_log is CheckedAdapter.edit_out_of_log:
            raise CapabilityMissing("out_of_log_writes")
        checked = check_splice_arguments(self.current_length(), offset, delete_length, insert)
        self.edit_out_of_log(*checked)
