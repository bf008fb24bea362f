"""A splice whose insert is a ``memoryview`` of wide items (issue 12).

``len(memoryview(array('H', ...)))`` counts items, not bytes. ``DiffableBuffer``
used to note ``len(insert)`` in its revision map while the buffer inserted
``nbytes`` bytes, so a content diff authored before the splice was rebased to
the wrong place, silently. The map must record the bytes really inserted.
"""

from __future__ import annotations

from array import array

import pytest

from rollcert.impl.diffs import DiffableBuffer
from rollcert.impl.journaled_buffer import JournaledBuffer
from rollcert.model.contract import Hunk

#: array type codes whose items are 1, 2, 4 and 8 bytes wide.
TYPECODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


@pytest.mark.parametrize("item_size", [1, 2, 4, 8])
def test_a_memoryview_insert_of_wide_items_shifts_later_diffs_by_its_bytes(item_size: int) -> None:
    typecode = TYPECODES[item_size]
    assert array(typecode).itemsize == item_size
    view = memoryview(array(typecode, [0x41] * 3))  # 3 items, 3 * item_size bytes
    inserted = bytes(view)
    assert len(view) == 3 and len(inserted) == 3 * item_size

    buffer = DiffableBuffer(JournaledBuffer(b"head|tail"))
    snapshot = buffer.snapshot()
    buffer.splice(0, 0, view)  # before the region the diff will touch
    assert buffer.read() == inserted + b"head|tail"

    # Replace "tail" (bytes 5..9 of the snapshot) by content: it must land on
    # "tail" in the live base, shifted by the bytes inserted, not by the items.
    diff = buffer.author_diff(snapshot, "content", [Hunk(5, 9, b"TAIL")])
    buffer.apply_diff(diff)
    assert buffer.read() == inserted + b"head|TAIL"
