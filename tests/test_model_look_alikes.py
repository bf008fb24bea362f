"""The look-alike places of R2's and R3's breach predicates are found with
``bytes.find`` (a slice per position spent minutes on 64 KiB buffers): here they
are checked against the definition itself, a slice compared at every position."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from rollcert.model.operations import Splice
from rollcert.model.properties import AMBIGUITY_WIDTH
from rollcert.model.properties import _look_alikes


def _by_definition(buffer: bytes, edit: Splice) -> list[int]:
    """Every place whose bytes are the inserted ones, or whose surroundings
    (AMBIGUITY_WIDTH bytes each side, clipped at the ends) are the recorded place's."""
    length, width, home = len(edit.insert), AMBIGUITY_WIDTH, edit.offset

    def around(at: int) -> tuple[bytes, bytes]:
        return buffer[max(0, at - width) : at], buffer[at + length : at + length + width]

    return [home] + [
        at
        for at in range(len(buffer) - length + 1)
        if at != home and ((length and buffer[at : at + length] == edit.insert) or around(at) == around(home))
    ]


@st.composite
def _buffer_and_edit(draw: st.DrawFn) -> tuple[bytes, Splice]:
    buffer = draw(st.binary(max_size=40).map(lambda b: bytes(0x61 + x % 2 for x in b)) | st.binary(max_size=40))
    insert = buffer[:0] + draw(st.sampled_from([b"", b"a", b"ab", b"ba", b"aa", b"xyz"]))
    if len(insert) > len(buffer):
        insert = b""
    offset = draw(st.integers(0, len(buffer) - len(insert)))
    return buffer, Splice(offset, draw(st.integers(0, 3)), insert)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_buffer_and_edit())
def test_the_look_alikes_found_with_find_are_the_definitions(case: tuple[bytes, Splice]) -> None:
    buffer, edit = case
    assert _look_alikes(buffer, edit) == _by_definition(buffer, edit)
