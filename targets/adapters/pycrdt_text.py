"""The adapter for pycrdt's ``Text`` with an ``UndoManager`` (``rollcert certify pycrdt``).

A splice is one transaction on a shared ``Text`` (a delete, then an insert), and
the ``UndoManager`` captures it as one undo item; ``rollback(n)`` is ``n`` calls
of ``UndoManager.undo``. ``capture_timeout_millis=0`` keeps the manager from
merging quick successive transactions into one item, so time does not decide.

A CRDT's undo is *selective*: it reverts the items one transaction inserted and
deleted, by identity, and leaves everybody else's edits in place. The natural
out-of-log write is therefore a **remote edit**: a second document (a
collaborator, already synced) edits the text and its update is applied here.
How the update arrives decides whether the undo manager sees it:

- ``pycrdt``: applied in a transaction with an origin tag (``"remote"``), as a
  sync provider does; the manager tracks only untagged local transactions, so
  the remote edit is *not* an undo item;
- ``pycrdt-untagged``: applied with no origin (plain ``Doc.apply_update``); the
  manager cannot tell it from a local edit and captures it as an undo item.

Also: ``depth`` is ``len(UndoManager.undo_stack)`` (public); adopt is
``UndoManager.clear()``. Both documents get fixed client ids, so concurrent
ordering never depends on a random id. Offsets are characters; the adapter
takes ASCII only, where characters and UTF-8 bytes coincide (multi-byte text
was not exercised).
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
    from pycrdt import Doc
    from pycrdt import Text

PACKAGE = "pycrdt"
LOCAL_CLIENT, REMOTE_CLIENT = 1, 2
#: The origin tag a sync provider puts on the transactions that apply remote updates.
REMOTE_ORIGIN = "remote"


class CollaborativeTextAdapter(TextPackageAdapter):
    """A local ``Doc`` whose ``Text`` is undone by an ``UndoManager``, and a
    collaborator's ``Doc`` that makes the out-of-log (remote) edits."""

    package = PACKAGE

    def __init__(self, config: BufferConfig, remote_origin: str | None) -> None:
        from pycrdt import Doc
        from pycrdt import Text
        from pycrdt import UndoManager

        self.remote_origin = remote_origin
        self.doc: Doc[Text] = Doc(client_id=LOCAL_CLIENT)
        self.text: Text = self.doc.get("text", type=Text)
        self.text += self.as_text(config.initial)  # before the manager: the horizon
        self.undo_manager = UndoManager(scopes=[self.text], capture_timeout_millis=0)
        self.collaborator: Doc[Text] = Doc(client_id=REMOTE_CLIENT)
        self.collaborator_text: Text = self.collaborator.get("text", type=Text)

    def read(self) -> bytes:
        return str(self.text).encode("utf-8")

    @staticmethod
    def _edit(text: Text, offset: int, delete_length: int, insert: str) -> None:
        if delete_length:
            del text[offset : offset + delete_length]
        if insert:
            text.insert(offset, insert)

    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        offset, delete_length, text = self.checked_splice(offset, delete_length, insert)
        with self.doc.transaction():
            self._edit(self.text, offset, delete_length, text)

    def undo(self) -> None:
        self.undo_manager.undo()

    def depth(self) -> int:
        return len(self.undo_manager.undo_stack)

    def write_out_of_log(self, offset: int, delete_length: int, insert: bytes) -> None:
        offset, delete_length, text = self.checked_splice(offset, delete_length, insert)
        self.collaborator.apply_update(self.doc.get_update(self.collaborator.get_state()))
        with self.collaborator.transaction():
            self._edit(self.collaborator_text, offset, delete_length, text)
        update = self.collaborator.get_update(self.doc.get_state())
        if self.remote_origin is None:
            self.doc.apply_update(update)
        else:
            with self.doc.transaction(origin=self.remote_origin):
                self.doc.apply_update(update)

    def adopt_current(self) -> None:
        self.undo_manager.clear()


CAPABILITIES = frozenset({Capability.CORE, Capability.DEPTH, Capability.OUT_OF_LOG_WRITES, Capability.ADOPT})


def _build(name: str, remote_origin: str | None, arrival: str) -> Target:
    return Target(
        name=name,
        version=f"pycrdt {require_package(PACKAGE, PACKAGE)}",
        capabilities=CAPABILITIES,
        factory=lambda config: CollaborativeTextAdapter(config, remote_origin),
        description=f"pycrdt Text + UndoManager (selective undo); out-of-log write = remote edit {arrival}",
        alphabet=ASCII,
    )


def build_tagged_target() -> Target:
    """``pycrdt``: remote edits arrive tagged with an origin the undo manager does not track."""
    return _build("pycrdt", REMOTE_ORIGIN, f"tagged '{REMOTE_ORIGIN}'")


def build_untagged_target() -> Target:
    """``pycrdt-untagged``: remote edits arrive with no origin, like local ones."""
    return _build("pycrdt-untagged", None, "with no origin")
