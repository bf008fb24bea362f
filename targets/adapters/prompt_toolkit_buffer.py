"""The adapter for prompt_toolkit's ``Buffer`` undo stack (``rollcert certify prompt_toolkit``).

prompt_toolkit keeps undo as a stack of full snapshots ``(text, cursor)``. Its
key processor calls ``Buffer.save_to_undo_stack()`` before a key binding runs,
and the binding then edits through the cursor API; the adapter does the same
for a splice: save, move the cursor to the offset, ``delete(d)``,
``insert_text(s)``. ``rollback(n)`` is ``n`` calls of ``Buffer.undo``.

The package has no splice and its cursor API clamps out-of-range positions
(a user-interface convenience, not a log property), so the adapter checks the
splice arguments itself and raises ``ValueError``/``TypeError`` as the rules
say; everything about *undo* is left to the package.

What maps to what:

- out-of-log write: assigning a new ``Buffer.document`` without saving to the
  undo stack (what any code that sets ``buffer.text`` directly does);
- adopt: ``Buffer.reset(document)``, which starts empty undo and redo stacks;
- depth is not declared: the stack is private (``_undo_stack``), and undo
  skips snapshots equal to the current text, so its length is not a depth.

Text is ASCII (offsets are characters; one byte is one character there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import ASCII
from rollcert.targets.adapters import require_package
from rollcert.targets.adapters.text_package import TextPackageAdapter

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

PACKAGE = "prompt_toolkit"


class BufferAdapter(TextPackageAdapter):
    """One ``prompt_toolkit.buffer.Buffer`` holding the buffer as text."""

    package = PACKAGE

    def __init__(self, config: BufferConfig) -> None:
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.document import Document

        self.buffer: Buffer = Buffer(document=Document(self.as_text(config.initial)))

    def read(self) -> bytes:
        return self.buffer.text.encode("utf-8")

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        offset, delete_length, text = self.checked_splice(offset, delete_length, insert)
        self.buffer.save_to_undo_stack()
        self.buffer.cursor_position = offset
        self.buffer.delete(delete_length)
        self.buffer.insert_text(text)

    def undo(self) -> None:
        self.buffer.undo()

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        from prompt_toolkit.document import Document

        offset, delete_length, text = self.checked_splice(offset, delete_length, insert)
        current = self.buffer.text
        changed = current[:offset] + text + current[offset + delete_length :]
        self.buffer.document = Document(changed, min(self.buffer.cursor_position, len(changed)))

    def adopt_current(self) -> None:
        self.buffer.reset(self.buffer.document)


def build_target() -> Target:
    """The registered ``prompt_toolkit`` target; needs ``pip install 'rollcert[thirdparty]'``."""
    return Target(
        name="prompt_toolkit",
        alphabet=ASCII,
        version=f"prompt_toolkit {require_package('prompt_toolkit', 'prompt_toolkit.buffer')}",
        capabilities=frozenset({Capability.CORE, Capability.OUT_OF_LOG_WRITES, Capability.ADOPT}),
        factory=BufferAdapter,
        description="prompt_toolkit.buffer.Buffer: full-snapshot undo stack, saved before every splice",
        notes={"depth": "not declared: the undo stack is private and skips snapshots equal to the text"},
    )

