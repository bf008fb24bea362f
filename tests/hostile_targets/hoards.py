"""A log whose every splice of an insert of two bytes or more keeps another
64 MiB for ever: memory without bound. Under ``rollcert certify
--memory-limit`` the worker's address space is capped, the allocation fails
with ``MemoryError`` inside the splice, and that undocumented outcome is judged:
``violated``. (Without a limit it runs until the machine refuses.)"""

from __future__ import annotations

from _honest import HonestAdapter
from _honest import target

HOARD: list[bytearray] = []


class Hoards(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            HOARD.append(bytearray(64 << 20))
        super().splice(offset, delete_length, insert)


TARGET = target("hoards", Hoards)
