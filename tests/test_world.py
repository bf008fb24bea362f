"""The world a run explores (SPEC §6a): the coverage dimensions counted on what was
sent and seen, the generators that reach them, a target's declared world, and how
every certificate format states it."""

from __future__ import annotations

import html
import json
import random
import re
from dataclasses import replace
from xml.etree import ElementTree

import pytest
from markdown_it import MarkdownIt

from rollcert.model.reference import initial_state
from rollcert.model.reference import splice_bytes
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.stateful_tests import strategies
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.certify import certify_property
from rollcert.stateful_tests.profiles import PROFILES
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.world import DIMENSIONS
from rollcert.stateful_tests.world import World
from rollcert.stateful_tests.world import WorldTally
from rollcert.stateful_tests.world import inside_character
from rollcert.stateful_tests.world import reproducible_world
from rollcert.stateful_tests.world import world_of
from rollcert.stateful_tests.world import world_report
from rollcert.targets.adapter import SizeLimits
from rollcert.targets.adapters.bundled import TARGET as BUNDLED


def _reached(before: bytes, offset: int, delete_length: int, insert: bytes) -> set[str]:
    tally = WorldTally()
    tally.edit(before, offset, delete_length, insert)
    return {name for name, count in tally.reached.items() if count}


def test_the_dimensions_are_counted_on_the_inserted_and_the_removed_bytes() -> None:
    assert _reached(b"ab", 1, 0, b"x\r\ny") == {"line_break", "crlf"}
    assert _reached(b"a\nb", 0, 2, b"") == {"line_break"}  # removed, not inserted
    assert _reached(b"", 0, 0, b"\x00") == {"nul"}
    assert _reached(b"", 0, 0, b"\xff") == {"high_byte", "invalid_utf8"}
    assert _reached(b"", 0, 0, "é".encode()) == {"high_byte", "multibyte_utf8"}
    assert _reached(b"abc", 1, 1, b"") == set()


def test_an_edit_inside_a_character_splits_it_and_one_beside_it_does_not() -> None:
    text = "a€b".encode()  # € is three bytes: 1..4
    assert [inside_character(text, i) for i in range(len(text) + 1)] == [False, False, True, True, False, False]
    assert "splits_character" in _reached(text, 2, 0, b"x")
    assert "character_boundary" in _reached(text, 1, 0, b"x")
    assert not {"splits_character", "character_boundary"} & _reached(text, 5, 0, b"x")
    # A lone continuation byte is no character, so nothing is split.
    assert "splits_character" not in _reached(b"a\x80b", 1, 0, b"x")


def test_lengths_count_every_threshold_they_pass_and_no_other() -> None:
    tally = WorldTally(chunk=100)
    tally.edit(b"a" * 200, 0, 129, b"b" * 17)
    tally.observed(101, 65)
    reached = {name for name, count in tally.reached.items() if count}
    assert {"removed_past_8", "removed_past_64", "removed_past_128"} <= reached
    assert "removed_past_256" not in reached
    assert {"inserted_past_8", "inserted_past_16"} <= reached and "inserted_past_64" not in reached
    assert {"buffer_past_64", "buffer_past_chunk", "depth_past_16", "depth_past_64"} <= reached
    assert "buffer_past_128" not in reached
    assert (tally.largest_delete, tally.largest_insert, tally.largest_buffer, tally.deepest) == (129, 17, 101, 65)


def test_a_bad_argument_edit_counts_nothing() -> None:
    assert _reached(b"ab", 3, 0, b"\n") == set()


def test_the_default_world_requires_every_dimension_but_the_text_ones() -> None:
    required = {d.name for d in World(chunk=32768).required()}
    assert required == {d.name for d in DIMENSIONS} - {"character_boundary"}
    assert not World().narrowed


def test_a_declared_world_names_what_it_leaves_out() -> None:
    ascii_world = World(wide=bytes(range(128)), max_insert=100)
    out = ascii_world.out_of_world()
    assert {"high_byte", "invalid_utf8", "multibyte_utf8", "splits_character"} <= set(out)
    assert {"inserted_past_128", "inserted_past_256", "inserted_past_4096"} <= set(out)
    assert "inserted_past_64" not in out and "line_break" not in out
    assert ascii_world.narrowed
    text = World(text=True).out_of_world()
    assert set(text) == {"invalid_utf8", "splits_character"}
    assert "character_boundary" in {d.name for d in World(text=True).required()}


def test_a_target_declares_its_world() -> None:
    narrowed = replace(BUNDLED, alphabet=b"abc\n", limits=SizeLimits(max_buffer_bytes=200), text=False)
    world = world_of(narrowed)
    assert world.letters == b"abc\n" and world.wide == b"abc\n" and world.max_buffer == 200
    assert world_of(BUNDLED).chunk == 32 * 1024
    with pytest.raises(ValueError, match="chunk_bytes"):
        replace(BUNDLED, chunk_bytes=0)


def test_a_text_world_edits_only_at_code_point_boundaries() -> None:
    world = World(text=True)
    rng = random.Random(7)
    state = initial_state("aé€😀b\r\n".encode() * 3)
    for _ in range(3000):
        offset, delete_length, insert = strategies.edit_from(state, rng.randbytes(8), world)
        buffer = state.current
        assert not inside_character(buffer, offset) and not inside_character(buffer, offset + delete_length)
        splice_bytes(buffer, offset, delete_length, insert).decode("utf-8")  # still valid text


def test_the_wide_draws_reach_what_the_small_ones_never_send() -> None:
    rng = random.Random(3)
    tally = WorldTally()
    state = initial_state("ab€".encode() * 5)
    for _ in range(4000):
        tally.edit(state.current, *strategies.edit_from(state, rng.randbytes(8)))
    reached = {name for name, count in tally.reached.items() if count}
    assert {"line_break", "crlf", "nul", "high_byte", "invalid_utf8", "multibyte_utf8", "splits_character"} <= reached
    assert "inserted_past_4096" in reached
    # ... and most edits are still the small, aliased ones.
    small = sum(len(strategies.edit_from(state, rng.randbytes(8))[2]) <= 4 for _ in range(1000))
    assert small > 600


def test_a_declared_alphabet_bounds_every_draw() -> None:
    world = World(letters=b"ab", wide=b"ab\n")
    rng = random.Random(5)
    state = initial_state(b"abab")
    for _ in range(2000):
        _, _, insert = strategies.edit_from(state, rng.randbytes(8), world)
        assert set(insert) <= set(b"ab\n")
        assert set(strategies.initial_buffer(rng.randbytes(8), world)) <= set(b"abc\n") | set(b"ab\n")


def test_a_word_of_zeros_is_a_small_draw_and_no_long_history() -> None:
    assert strategies.history_length(bytes(8)) == 1
    assert len(strategies.edit_from(initial_state(b"ab"), bytes(8))[2]) <= 4


def _shown(markdown: str) -> str:
    """What a reader of the rendered Markdown sees (escapes resolved, tags gone)."""
    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").enable("table").render(markdown)))


def _certificate(world: World, verdict: str = "passed") -> CertificateData:
    tally = WorldTally(chunk=world.chunk)
    tally.edit(b"ab", 0, 1, b"\n")
    tally.observed(2, 1)
    required = world.required()
    result = PropertyResult("R2", verdict, "Offset stability", examples=3, steps=9)
    result.world = world_report(world, tally, required, chunk_matters=True)
    target = replace(BUNDLED, alphabet=None if world.wide == bytes(range(256)) else world.wide)
    return CertificateData(target, "quick", 0, {"R2": result})


def test_every_format_states_the_world_reached() -> None:
    certificate = _certificate(World(chunk=32768))
    text = render_text(certificate)
    assert "World reached: bytes any byte 0x00-0xFF; largest buffer 2, insert 1, delete 1 bytes; depth 1" in text
    assert "line_break 1" in text and "within" not in text
    markdown = render_markdown(certificate)
    assert "## World reached" in markdown and "R2: buffer 2, insert 1, delete 1, depth 1" in _shown(markdown)
    assert "line_break 1" in _shown(markdown)
    assert MarkdownIt("commonmark").enable("table").render(markdown).count("<table>") == 1  # the verdicts only
    record = to_json(certificate)
    assert record["properties"]["R2"]["world"]["dimensions"]["line_break"] == 1
    assert record["world"]["largest_buffer"] == 2
    json.dumps(record)
    suite = ElementTree.fromstring(render_junit(certificate))
    assert suite.find("properties/property[@name='world.line_break']").get("value") == "1"  # type: ignore[union-attr]
    assert "world: bytes any byte" in (suite.find("testcase/system-out").text or "")  # type: ignore[union-attr]
    page = render_html(from_certificate_data(certificate))
    assert "World reached" in page and "line_break 1" in page


def test_a_narrowed_world_reads_passed_within_in_every_format() -> None:
    certificate = _certificate(World(letters=b"abc\n", wide=b"abc\n", max_insert=64))
    within = "passed within alphabet b'\\nabc', inserts up to 64 bytes; not exercised: crlf"
    assert within in render_text(certificate)
    assert within in _shown(render_markdown(certificate))
    record = to_json(certificate)["properties"]["R2"]["world"]
    assert record["narrowed"] and "high_byte" in record["not_exercised"] and "crlf" in record["not_exercised"]
    assert within in render_junit(certificate).replace("&#10;", "\n").replace("&quot;", '"').replace("&apos;", "'")
    assert "passed within alphabet" in render_html(from_certificate_data(certificate))


@pytest.mark.slow
def test_a_run_that_never_reached_a_dimension_is_unknown_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strategies, "WIDE_EXAMPLES", 10**9)  # the small-scope draws only, as before
    monkeypatch.setattr(strategies, "CHUNK_START_SHARE", 10**9)  # and no start past the chunk (wide text)
    monkeypatch.setattr(strategies, "PAST_64_KIB_SHARE", 10**9)  # nor past 64 KiB
    monkeypatch.setattr(strategies, "UNDO_AT_ONCE_SHARE", 10**9)  # and no wide paste undone at once (R2)
    monkeypatch.setattr(strategies, "SMALL_CHUNKS_SHARE", 10**9)  # nor a start in small chunks (a filler of every byte)
    result = certify_property(BUNDLED, "R2", PROFILES["quick"], 0)
    assert result.verdict == "unknown"
    assert "(nul)" in result.reason and "(inserted_past_4096)" in result.reason and "(crlf)" in result.reason


@pytest.mark.slow
def test_the_bundled_target_passes_its_whole_world() -> None:
    certificate = certify(BUNDLED, profile="quick", seed=0, only=("R2", "S1"))
    for result in certificate.results.values():
        assert result.verdict == "passed", result.reason
        assert all(result.world["dimensions"].values()), result.world
        assert not result.world["narrowed"]
    assert certificate.results["R2"].world["largest_buffer"] > 32 * 1024


@pytest.mark.slow
def test_a_narrowed_target_passes_within_its_world() -> None:
    narrowed = replace(BUNDLED, alphabet=b"abc\n", limits=SizeLimits(max_buffer_bytes=300))
    result = certify(narrowed, profile="quick", seed=0, only=("R2",)).results["R2"]
    assert result.verdict == "passed", result.reason
    assert result.world["largest_buffer"] <= 300 and result.world["narrowed"]
    assert {"high_byte", "buffer_past_4096", "buffer_past_chunk", "crlf"} <= set(result.world["not_exercised"])
    assert "passed within alphabet" in render_text(CertificateData(narrowed, "quick", 0, {"R2": result}))


def test_distinct_bytes_of_several_runs_count_the_union_of_what_each_sent() -> None:
    """A certificate's world merges its properties': b'ab' sent by one and b'bc' by
    another is three distinct bytes, not the larger count (two)."""
    from rollcert.stateful_tests.world import byte_set_of
    from rollcert.stateful_tests.world import byte_set_text
    from rollcert.stateful_tests.world import merge_worlds

    def record(sent: bytes) -> dict[str, object]:
        byte_set = sum(1 << b for b in set(sent))
        return {"distinct_bytes_sent": len(set(sent)), "bytes_sent": byte_set_text(byte_set), "dimensions": {}}

    merged = merge_worlds([record(b"ab"), record(b"bc")])
    assert merged["distinct_bytes_sent"] == 3
    assert byte_set_of(merged["bytes_sent"]) == sum(1 << b for b in b"abc")
    older = {"distinct_bytes_sent": 2, "dimensions": {}}  # a record written before byte sets were kept
    assert merge_worlds([record(b"a"), older])["distinct_bytes_sent"] == 2
    assert "bytes_sent" not in merge_worlds([record(b"a"), older])
    assert byte_set_of("zz" * 32) is None and byte_set_of(7) is None


def test_a_set_aside_dimension_reached_anyway_is_stated_reached() -> None:
    """A finding set aside may put a dimension out of reach (textual's 50-batch
    history cap: depth past 64); a property whose run got there all the same
    states it reached, and only one that did not lists it as not exercised."""
    from rollcert.stateful_tests.world import World
    from rollcert.stateful_tests.world import WorldTally
    from rollcert.stateful_tests.world import world_report

    world = World(set_aside=(("depth_past_64", "the finding CAPPED is set aside"),))
    required = world.required()
    assert "depth_past_64" not in {d.name for d in required}
    tally = WorldTally()
    stayed = world_report(world, tally, required, True)
    assert stayed["not_exercised"] == {"depth_past_64": "the finding CAPPED is set aside"}
    assert "depth_past_64" not in stayed["dimensions"]
    tally.reached["depth_past_64"] = 3
    went = world_report(world, tally, required, True)
    assert went["dimensions"]["depth_past_64"] == 3 and "depth_past_64" not in went["not_exercised"]
    # A declared narrowing stays out whatever was counted.
    narrow = World(wide=b"ab", letters=b"ab")
    tally.reached["high_byte"] = 1
    assert "high_byte" in world_report(narrow, tally, narrow.required(), True)["not_exercised"]


def test_a_scheduling_dependent_world_is_made_the_same_for_two_runs() -> None:
    """R7 counts its world on the order the checker found: two runs of one seed
    differ in counts and in the largest buffer, and --reproducible keeps what
    they share (reached or not, the power of two reached), the bytes sent as drawn."""
    first = {"largest_buffer": 36895, "largest_insert": 4113, "deepest": 8, "bytes_sent": "ff" * 32,
             "dimensions": {"crlf": 11, "nul": 0, "high_byte": 120}}
    second = {**first, "largest_buffer": 36902, "dimensions": {"crlf": 12, "nul": 0, "high_byte": 122}}
    assert reproducible_world(first) == reproducible_world(second)
    made = reproducible_world(first)
    assert made["largest_buffer"] == 32768 and made["largest_insert"] == 4096 and made["deepest"] == 8
    assert made["dimensions"] == {"crlf": 1, "nul": 0, "high_byte": 1} and made["bytes_sent"] == "ff" * 32
    result = PropertyResult("R7", "passed", world=first, scheduling_dependent=True)
    result.make_reproducible()
    assert result.world == made
    kept = PropertyResult("R0", "passed", world=first)
    kept.make_reproducible()
    assert kept.world == first


def test_every_format_says_how_many_examples_ended_at_a_step_not_judged() -> None:
    # A pass is over the examples the judge could decide; the others are counted
    # where the verdict is read, not only in the JSON's figures.
    certificate = _certificate(World(chunk=32768))
    certificate.results["R2"].figures["steps_not_judged"] = 3.0
    phrase = "3 examples ended at a step not judged"
    assert phrase in render_text(certificate)
    assert phrase in _shown(render_markdown(certificate))
    assert phrase in render_html(from_certificate_data(certificate))
    assert to_json(certificate)["properties"]["R2"]["figures"]["steps_not_judged"] == 3.0
