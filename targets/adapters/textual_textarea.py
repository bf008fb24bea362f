"""The adapter for textual's ``TextArea`` and its edit history (``rollcert certify textual``).

A splice is one ``TextArea.replace`` between two (row, column) locations, which
the widget records in its ``EditHistory``; ``rollback(n)`` is ``n`` calls of
``TextArea.undo``. The widget is driven without a running app: it does not need
one to edit, undo or keep history.

Why a checkpoint before every edit: the history groups edits into batches by
time (2 s), by character count and by kind (insert vs replace), and undo pops
a whole batch. Forcing ``history.checkpoint()`` makes every splice its own
batch, so a run never depends on the clock; the grouping rules themselves are
a user-interface choice the rules say nothing about.

What maps to what:

- ``depth``: ``len(history.undo_stack)`` (public);
- out-of-log write: ``document.replace_range`` (the document's own edit, which
  the widget's history never sees), then the view re-wrapped; this is what
  another component editing the document directly does;
- adopt: ``history.clear()``, the package's way to discard the history.

Not byte-transparent: the document splits lines on every separator
``str.splitlines`` knows and joins them with one newline style, so ``\\r``,
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e`` would come back rewritten; the adapter
refuses them (ValueError) and the generated alphabet is ``abc`` plus ``\\n``.
Bounded: the history keeps at most ``max_checkpoints`` batches (default 50)
in a ``deque(maxlen=max_checkpoints)``, so a full history evicts the oldest.
The target declares that bound (``HistoryBound("evict_oldest")``): a bounded
buffer is a ``TextArea(max_checkpoints=capacity)``, the package's own
constructor argument, and R6 is assessed on it. An unbounded buffer keeps the
default 50. The long histories every run now reaches go past it: there, the
51st edit silently drops the oldest batch (a finding, ``DEFAULT_HISTORY_CAPPED``,
which a focused target may set aside).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import Capability
from rollcert.targets.adapter import HistoryBound
from rollcert.targets.adapter import Target
from rollcert.targets.adapters import history_capped
from rollcert.targets.adapters import require_package
from rollcert.targets.adapters.text_package import TextPackageAdapter

if TYPE_CHECKING:
    from textual.widgets import TextArea
    from textual.widgets.text_area import Location

PACKAGE = "textual"
#: ``TextArea``'s ``max_checkpoints`` when none is given.
DEFAULT_MAX_CHECKPOINTS = 50


#: What an unbounded buffer of this target does past the widget's default history.
DEFAULT_HISTORY_CAPPED = history_capped(
    DEFAULT_MAX_CHECKPOINTS,
    f"an unbounded TextArea keeps the newest {DEFAULT_MAX_CHECKPOINTS} undo batches: "
    "a deeper history silently drops the oldest",
    unreachable=("depth_past_64",),
)

#: Line separators other than ``\n``: the document would rewrite them.
REWRITTEN = bytes(c for c in range(128) if c != ord("\n") and len(f"a{chr(c)}a".splitlines()) > 1)


class TextAreaAdapter(TextPackageAdapter):
    """One ``TextArea`` holding the buffer as text."""

    package = PACKAGE
    refused = REWRITTEN

    def __init__(self, config: BufferConfig) -> None:
        from textual.widgets import TextArea

        bound = {} if config.capacity is None else {"max_checkpoints": config.capacity}
        self.text_area: TextArea = TextArea(self.as_text(config.initial), **bound)

    def read(self) -> bytes:
        return self.text_area.text.encode("utf-8")

    def _range(self, offset: object, delete_length: object, insert: object) -> tuple[Location, Location, str]:
        """Byte offsets to the (row, column) locations textual edits by."""
        from textual.widgets.text_area import Document

        offset, delete_length, text = self.checked_splice(offset, delete_length, insert)
        document = self.text_area.document
        assert isinstance(document, Document)  # a plain TextArea's; DocumentBase has no index mapping
        return (
            document.get_location_from_index(offset),
            document.get_location_from_index(offset + delete_length),
            text,
        )

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        start, end, text = self._range(offset, delete_length, insert)
        self.text_area.history.checkpoint()
        self.text_area.replace(text, start, end)

    def undo(self) -> None:
        self.text_area.undo()

    def depth(self) -> int:
        return len(self.text_area.history.undo_stack)

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        start, end, text = self._range(offset, delete_length, insert)
        self.text_area.document.replace_range(start, end, text)
        self.text_area.wrapped_document.wrap(self.text_area.wrap_width, self.text_area.indent_width)

    def adopt_current(self) -> None:
        self.text_area.history.clear()


def build_target() -> Target:
    """The registered ``textual`` target; needs ``pip install 'rollcert[thirdparty]'``."""
    return Target(
        name="textual",
        version=f"textual {require_package(PACKAGE, 'textual.widgets')}",
        capabilities=frozenset(
            {Capability.CORE, Capability.DEPTH, Capability.OUT_OF_LOG_WRITES, Capability.ADOPT, Capability.BOUNDED}
        ),
        factory=TextAreaAdapter,
        description="textual.widgets.TextArea: edit history, one batch per splice (checkpoint forced), undo",
        notes={
            "alphabet": "abc and newline; other line separators are rewritten by textual and refused",
            "bounded": "TextArea(max_checkpoints=capacity): a deque that evicts the oldest batch (default 50)",
        },
        alphabet=b"abc\n",
        history_bound=HistoryBound("evict_oldest", "TextArea(max_checkpoints=N): deque(maxlen=N) of undo batches"),
    )
