"""What the adapters of text packages (textual, prompt_toolkit, pycrdt) share.

Those packages edit Unicode text at character offsets and undo one step at a
time. :class:`TextPackageAdapter` checks a splice once, with the protocol's
rule (``check_splice_arguments`` against the current text) and the ASCII rule
of :func:`~rollcert.targets.adapters.ascii_text`, and turns
``rollback(steps)`` into ``steps`` calls of the package's undo.
"""

from __future__ import annotations

from typing import ClassVar

from rollcert.model.contract import check_integer
from rollcert.model.contract import check_splice_arguments
from rollcert.targets.adapter import UnsupportedOperations
from rollcert.targets.adapters import ascii_text


class TextPackageAdapter(UnsupportedOperations):
    """Base class: a subclass sets ``package`` (and ``refused``), and writes ``read`` and ``undo``."""

    #: The package's name, in the messages of refused text.
    package: ClassVar[str] = ""
    #: ASCII bytes the package rewrites, refused by :meth:`as_text`.
    refused: ClassVar[bytes] = b""

    def read(self) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} must implement read()")

    def undo(self) -> None:
        """One step of the package's undo."""
        raise NotImplementedError(f"{type(self).__name__} must implement undo()")

    def as_text(self, data: bytes) -> str:
        """``data`` as the package's text, or ``ValueError`` (see ``ascii_text``)."""
        return ascii_text(data, self.package, self.refused)

    def checked_splice(self, offset: object, delete_length: object, insert: object) -> tuple[int, int, str]:
        """A splice of the current text, checked: ``(offset, delete_length, text to insert)``."""
        offset, delete_length, data = check_splice_arguments(len(self.read()), offset, delete_length, insert)
        return offset, delete_length, self.as_text(data)

    def rollback(self, steps: int) -> None:
        count = check_integer("steps", steps)
        if count < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        for _ in range(count):
            self.undo()
