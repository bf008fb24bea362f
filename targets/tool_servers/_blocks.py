"""Whole-line edit blocks: how an agent quotes the text a diff changes (standard library only).

Agent edit tools take text to search for and text to put instead (aider's
SEARCH/REPLACE blocks, gptme's ORIGINAL/UPDATED patches, an ``old_str``/``new_str``
pair). An agent quotes whole lines, so a rollcert diff (hunks in the snapshot's
byte offsets) becomes one block per run of touched lines: :func:`edit_blocks`.
Shared by the tool servers beside this file; tested without any tool in
``tests/test_tool_rendering.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["covered_lines", "edit_blocks", "edit_spans"]


def covered_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the whole lines of ``text`` that the hunk ``[start, end)`` touches.

    A non-empty hunk covers the lines from the one holding ``start`` to the one
    holding ``end - 1``. An insertion covers the line holding ``start`` (the line
    that starts there when it is at a line start); at the very end of a text
    that ends in a line break there is no such line, so it covers the last line.
    Only an empty text gives an empty span.
    """
    line_start = text.rfind("\n", 0, start) + 1
    last = end - 1 if end > start else start
    newline = text.find("\n", last)
    line_end = len(text) if newline < 0 else newline + 1
    if line_start == line_end and line_start > 0:  # an insertion after the final line break
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return line_start, line_end


def edit_blocks(base: str, hunks: Sequence[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """The (SEARCH, REPLACE) pairs an agent sends for ``hunks`` on ``base``: see :func:`edit_spans`."""
    return [(base[start:end], replaced) for start, end, replaced in edit_spans(base, hunks)]


def edit_spans(base: str, hunks: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The whole-line spans ``[start, end)`` of ``base`` an agent quotes for ``hunks``, each
    with its replacement, in text order.

    A span covers the lines its hunks touch (:func:`covered_lines`); hunks whose lines
    overlap share a span. A span whose replaced lines would not end in a line break (a
    hunk deleted the last one) takes in the next line too: a block is whole lines on both
    sides, or the formats would add the line break back.
    """
    pending = sorted(hunks)
    blocks = []
    while pending:
        first = pending.pop(0)
        line_start, line_end = covered_lines(base, first[0], first[1])
        members = [first]
        while True:
            while pending and covered_lines(base, pending[0][0], pending[0][1])[0] < line_end:
                start, end, replacement = pending.pop(0)
                members.append((start, end, replacement))
                line_end = max(line_end, covered_lines(base, start, end)[1])
            replaced = _replaced(base, line_start, line_end, members)
            if not replaced or replaced.endswith("\n") or line_end == len(base):
                break
            line_end = covered_lines(base, line_end, line_end)[1]
        blocks.append((line_start, line_end, replaced))
    return blocks


def _replaced(base: str, line_start: int, line_end: int, members: Sequence[tuple[int, int, str]]) -> str:
    """``base[line_start:line_end]`` with the ``members`` hunks applied."""
    parts, position = [], line_start
    for start, end, replacement in members:
        parts += [base[position:start], replacement]
        position = end
    parts.append(base[position:line_end])
    return "".join(parts)
