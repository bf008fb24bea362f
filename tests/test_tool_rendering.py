"""How a rollcert diff becomes what an agent sends an edit tool (no tool needed).

The aider tool server renders each diff (snapshot B0, hunks) as SEARCH/REPLACE
blocks quoting whole lines, or as a unified diff of B0 -> B1; the gptme server as
ORIGINAL/UPDATED blocks (the same lines, the markers' line break left out). These renderings
decide what the certificate is *about*, so they are pinned here on small cases:
the blocks must say exactly the hunks (applying every block to B0 by plain
replacement gives B1), quote whole lines, and share a block only where hunks
share a line.
"""

from __future__ import annotations

import itertools

import pytest

from rollcert.targets.adapters import aider_tools
from rollcert.targets.adapters import codex_apply_patch
from rollcert.targets.adapters import gptme_patch
from rollcert.targets.adapters import openhands_editor
from rollcert.targets.adapters import serena_replace
from rollcert.targets.tool_servers import aider_server
from rollcert.targets.tool_servers import codex_server
from rollcert.targets.tool_servers import gptme_server
from rollcert.targets.tool_servers import openhands_server
from rollcert.targets.tool_servers import serena_server
from rollcert.targets.tool_servers._blocks import covered_lines
from rollcert.targets.tool_servers._blocks import edit_blocks
from rollcert.targets.tool_servers._blocks import edit_spans
from rollcert.targets.tool_servers._wire import apply_hunks
from rollcert.targets.tool_servers.aider_server import search_replace_reply
from rollcert.targets.tool_servers.aider_server import unified_diff
from rollcert.targets.tool_servers.gptme_server import patch_blocks
from rollcert.targets.tool_servers.gptme_server import patch_codeblock


def _apply_blocks(base: str, blocks: list[tuple[str, str]]) -> str:
    """B0 with each block's SEARCH replaced by its REPLACE, found at or after the previous one."""
    result, position = base, 0
    for search, replace in blocks:
        found = result.index(search, position)
        result = result[:found] + replace + result[found + len(search) :]
        position = found + len(replace)
    return result


@pytest.mark.parametrize(
    ("text", "start", "end", "span"),
    [
        ("ab\ncd\nef\n", 4, 5, (3, 6)),  # inside one line
        ("ab\ncd\nef\n", 1, 4, (0, 6)),  # across a line break: both lines
        ("ab\ncd\nef\n", 3, 3, (3, 6)),  # insertion at a line start: the line that starts there
        ("ab\ncd\nef\n", 5, 5, (3, 6)),  # insertion before a line break: its line
        ("ab\ncd\nef\n", 9, 9, (6, 9)),  # insertion after the final line break: the last line
        ("ab\ncd", 5, 5, (3, 5)),  # insertion at the end of an unterminated last line
        ("ab\ncd\n", 2, 3, (0, 3)),  # a hunk that is only a line break: its line
        ("\n\n", 1, 1, (1, 2)),
        ("", 0, 0, (0, 0)),  # the empty text: nothing to quote
    ],
)
def test_a_hunk_covers_the_whole_lines_it_touches(
    text: str, start: int, end: int, span: tuple[int, int]
) -> None:
    assert covered_lines(text, start, end) == span


def test_blocks_quote_whole_lines_and_say_exactly_the_hunks() -> None:
    base = "ab\ncd\nef\ngh\n"
    hunks = [(1, 2, "X"), (7, 7, "Y\n")]
    blocks = edit_blocks(base, hunks)
    assert blocks == [("ab\n", "aX\n"), ("ef\n", "eY\nf\n")]
    assert (
        _apply_blocks(base, blocks)
        == apply_hunks(base.encode(), [(s, e, r.encode()) for s, e, r in hunks]).decode()
    )


def test_hunks_that_share_a_line_share_one_block() -> None:
    base = "abcd\nef\n"
    assert edit_blocks(base, [(0, 1, "X"), (2, 3, ""), (6, 6, "Y")]) == [
        ("abcd\n", "Xbd\n"),
        ("ef\n", "eYf\n"),
    ]
    # a deletion of a line break joins two lines: a later hunk on the second is in the same block
    assert edit_blocks(base, [(4, 5, ""), (5, 6, "Z")]) == [("abcd\nef\n", "abcdZf\n")]


def test_an_insertion_at_the_end_quotes_the_last_line() -> None:
    assert edit_blocks("ab\ncd\n", [(6, 6, "X\n")]) == [("cd\n", "cd\nX\n")]
    assert edit_blocks("", [(0, 0, "X\n")]) == [("", "X\n")]


def test_the_search_replace_reply_is_what_aider_parses() -> None:
    reply = search_replace_reply([("ab\n", "aX\n"), ("cd", "")])
    assert reply == (
        "buffer.txt\n```\n<<<<<<< SEARCH\nab\n=======\naX\n>>>>>>> REPLACE\n```\n"
        "\nbuffer.txt\n```\n<<<<<<< SEARCH\ncd\n=======\n>>>>>>> REPLACE\n```\n"
    )


def test_the_unified_diff_has_context_and_no_line_numbers() -> None:
    diff = unified_diff("a\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\n")
    assert diff == "```diff\n--- buffer.txt\n+++ buffer.txt\n@@ ... @@\n a\n b\n-c\n+X\n d\n e\n```\n"
    # an unterminated last line is sent with a line break: the format cannot say otherwise
    assert unified_diff("a\nb", "a\nc").endswith(" a\n-b\n+c\n```\n")


def test_adapter_and_server_declare_the_same_alphabet() -> None:
    assert aider_tools.ALPHABET == aider_server.ALPHABET
    assert gptme_patch.ALPHABET == gptme_server.ALPHABET
    assert openhands_editor.ALPHABET == openhands_server.ALPHABET
    assert codex_apply_patch.ALPHABET == codex_server.ALPHABET
    assert serena_replace.ALPHABET == serena_server.ALPHABET
    assert openhands_editor.MODES == openhands_server.MODES


def test_a_codex_patch_is_one_update_with_a_chunk_per_hunk() -> None:
    patch = codex_server.codex_patch("a\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\n")
    assert patch == "*** Begin Patch\n*** Update File: buffer.txt\n@@\n a\n b\n-c\n+X\n d\n e\n*** End Patch\n"
    far = codex_server.codex_patch("".join(f"{n}\n" for n in range(20)), "0\n" + "".join(f"{n}\n" for n in range(2, 19)))
    assert far.count("\n@@\n") == 2  # two hunks far apart: two chunks


@pytest.mark.parametrize(
    ("text", "offset", "delete_length", "window"),
    [
        ("", 0, 0, (0, 0)),  # an empty file: the empty quote, which occurs once there
        ("abc", 1, 1, (1, 2)),  # 'b' occurs once
        ("aaaa", 4, 0, (0, 4)),  # 'aaa' occurs twice, overlapping: only the whole text is unique
        ("abab", 2, 0, (1, 3)),  # 'ba' is the shortest unique quote touching offset 2
        ("xyx", 0, 3, (0, 3)),
    ],
)
def test_the_openhands_quote_is_the_shortest_unique_text_around_a_splice(
    text: str, offset: int, delete_length: int, window: tuple[int, int]
) -> None:
    start, end = openhands_server.unique_window(text, offset, delete_length)
    assert (start, end) == window
    assert start <= offset and offset + delete_length <= end
    assert openhands_server.occurrences(text, text[start:end]) == 1


def _shortest_unique_window_by_definition(text: str, offset: int, delete_length: int) -> tuple[int, int]:
    """The quote as the server's docstring defines it, searched width by width then start
    by start with the overlapping count (the server's first implementation, minutes on a
    kilobyte of repeated text)."""
    if not text:
        return 0, 0
    for width in range(max(1, delete_length), len(text) + 1):
        for start in range(max(0, offset + delete_length - width), min(offset, len(text) - width) + 1):
            if openhands_server.occurrences(text, text[start : start + width]) == 1:
                return start, start + width
    raise AssertionError("the whole text occurs once")


def test_the_openhands_quote_is_the_one_its_definition_gives() -> None:
    """Every text of up to 7 letters over ``ab`` and up to 4 over ``a``, line break and
    space, every splice of it: the fast search gives the definition's window."""
    texts = [""] + [
        "".join(letters)
        for alphabet, longest in (("ab", 7), ("a\n ", 4))
        for length in range(1, longest + 1)
        for letters in itertools.product(alphabet, repeat=length)
    ]
    for text in texts:
        for offset in range(len(text) + 1):
            for delete_length in range(len(text) - offset + 1):
                assert openhands_server.unique_window(text, offset, delete_length) == (
                    _shortest_unique_window_by_definition(text, offset, delete_length)
                ), (text, offset, delete_length)


@pytest.mark.parametrize(
    ("text", "offset", "delete_length", "window"),
    [
        ("ab" * 2048, 2048, 0, (1, 4095)),  # periodic: a copy two bytes off fits unless the quote is this long
        ("a" * 4096, 4096, 0, (0, 4096)),  # a run: only the whole of it is unique
        ("b" + "a" * 4096 + "b", 2049, 2, (2049, 4098)),  # the nearer end of the run makes it unique
        ("ab12XY\n " * 512 + "X", 4096, 1, (4095, 4097)),  # ' X' occurs once
    ],
)
def test_a_kilobyte_of_repeated_text_is_quoted(text: str, offset: int, delete_length: int, window: tuple[int, int]) -> None:
    """The wide draws tile a short unit over kilobytes: the search by width then start took
    minutes there and ran into the tool server's request timeout (an error, not a verdict)."""
    start, end = openhands_server.unique_window(text, offset, delete_length)
    assert (start, end) == window
    assert text.count(text[start:end]) == 1 and text.find(text[start:end], start + 1) < 0


def test_overlapping_copies_count_twice() -> None:
    """str_replace's own count (re.finditer) sees 'aaa' once in 'aaaa'; the server's sees it twice."""
    assert openhands_server.occurrences("aaaa", "aaa") == 2
    assert openhands_server.occurrences("abab", "ab") == 2 and openhands_server.occurrences("abab", "ba") == 1


def test_gptme_blocks_leave_the_markers_line_break_out() -> None:
    """Both sides ending in a line break: sent without it (the marker's); otherwise whole."""
    assert patch_blocks("ab\ncd\n", [(1, 2, "X")]) == [("ab", "aX")]
    assert patch_blocks("ab\ncd\n", [(0, 3, "")]) == [("ab\n", "")]  # a deleted line: quoted whole
    assert patch_blocks("ab\ncd", [(4, 5, "")]) == [("cd", "c")]  # the last line has no break
    assert patch_codeblock([("ab", "aX"), ("cd\n", "")]) == (
        "<<<<<<< ORIGINAL\nab\n=======\naX\n>>>>>>> UPDATED\n<<<<<<< ORIGINAL\ncd\n\n=======\n\n>>>>>>> UPDATED"
    )


@pytest.mark.parametrize(
    ("base", "hunks"),
    [
        ("a\nb\nc\nd\n", [(0, 1, ""), (6, 6, "X\n")]),
        ("ab\n\n\nab\nb", [(3, 4, " "), (9, 10, "")]),
        ("  a\n  a\n b", [(2, 3, "Y"), (8, 8, "1")]),
        ("\n\n\n", [(1, 1, "a")]),
        ("abab", [(1, 3, "")]),
        ("ab\ncd\n", [(2, 3, "")]),
    ],
)
def test_blocks_replaced_in_place_give_the_diffs_result(base: str, hunks: list[tuple[int, int, str]]) -> None:
    """On an unchanged text, each block's SEARCH sits at whole lines, in order, and the
    SEARCHes replaced by their REPLACEs give B1: the blocks mean exactly the diff."""
    result, position = "", 0
    for start, end, replace in edit_spans(base, hunks):
        assert start >= position and (start == 0 or base[start - 1] == "\n")
        assert end == len(base) or base[end - 1] == "\n"
        assert replace.endswith("\n") or end == len(base) or not replace
        result += base[position:start] + replace
        position = end
    expected = apply_hunks(base.encode(), [(s, e, r.encode()) for s, e, r in hunks]).decode()
    assert result + base[position:] == expected
