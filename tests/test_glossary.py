"""The glossary defines, once, every term the tour, the README and the HTML certificate use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rollcert.model.properties import PROPERTIES
from rollcert.reports.glossary import TERMS
from rollcert.reports.glossary import all_terms
from rollcert.reports.glossary import glossary_markdown
from rollcert.reports.glossary import lookup
from rollcert.reports.glossary import mentioned

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.md"
TOUR = ROOT / "docs" / "tour.md"
README = ROOT / "README.md"

#: Words a learner met in the tour and on the HTML page without a definition
#: (the issue that asked for the glossary named most of them), and the rest of
#: rollcert's own vocabulary. Each one the tour uses must be defined.
JARGON: tuple[str, ...] = (
    "horizon", "barrier", "adopt", "serial", "depth", "revision", "checkpoint", "epoch",
    "out-of-log write", "read-set", "effective read-set", "write-set", "rebasing", "rebased",
    "positional diff", "content diff", "content-anchored", "linearizable", "linearisation", "history",
    "reading", "readings", "harm", "anchors", "LIFO", "ABA", "torn record", "batched", "eviction",
    "journal", "inverse record", "snapshot", "live base", "B0", "hunk", "hunks", "precision", "situation",
    "situations", "specimen", "counterexample", "replay", "trace", "capability", "not_assessed", "unknown",
    "program", "prefix", "timeline", "lane", "longest order", "unknown outcome", "tool write", "stale",
    "dead checkpoint", "multi-step rollback", "compaction", "capacity", "policy", "strict", "local",
    "corruption", "durable journal", "forward conflict", "backward conflict", "Wing–Gong search",
    "kill matrix", "coverage", "world",
)


def _headings(markdown: str) -> set[str]:
    anchors = set()
    for line in markdown.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add("".join(ch for ch in title if ch.isalnum() or ch in " -_").replace(" ", "-"))
    return anchors


def test_committed_glossary_is_what_the_command_writes() -> None:
    assert GLOSSARY.read_text(encoding="utf-8") == glossary_markdown(), (
        "docs/glossary.md is out of date: run `rollcert docs` and commit the result"
    )


def test_each_term_is_defined_once_with_a_two_line_example() -> None:
    seen: dict[str, str] = {}
    for term in all_terms():
        for name in term.names():
            assert name.lower() not in seen, f"{name!r} is defined twice ({seen[name.lower()]} and {term.name})"
            seen[name.lower()] = term.name
        assert term.definition.strip(), term.name
        assert len(term.example) == 2 and all(line.strip() for line in term.example), term.name


def test_every_coverage_chip_is_defined() -> None:
    """The chips of the HTML page are the situations' names."""
    for prop in PROPERTIES.values():
        for situation in prop.situations:
            term = lookup(situation.name)
            assert term is not None, f"coverage chip {situation.name} ({prop.id}) is not in the glossary"
            assert prop.id in term.definition, f"{situation.name}: the glossary does not say it is {prop.id}'s"


def test_every_world_dimension_chip_is_defined() -> None:
    from rollcert.stateful_tests.world import DIMENSIONS

    for dimension in DIMENSIONS:
        term = lookup(dimension.name)
        assert term is not None, f"world dimension {dimension.name} is not in the glossary"
        assert dimension.description in term.definition and all(term.example), dimension.name


@pytest.mark.slow
def test_every_jargon_word_the_tour_and_readme_use_is_defined() -> None:
    for document in (TOUR, README):
        text = document.read_text(encoding="utf-8")
        used = mentioned(text, JARGON)
        assert used, f"{document.name} uses none of the jargon: the check would prove nothing"
        missing = sorted(word for word in used if lookup(word) is None)
        assert not missing, f"{document.name} uses {missing}, which docs/glossary.md does not define"


def test_every_situation_the_tour_lists_is_defined() -> None:
    listed = re.findall(r"\[`(\w+)`\]\(glossary\.md#\w+\)", TOUR.read_text(encoding="utf-8"))
    assert len(listed) >= sum(len(p.situations) for p in PROPERTIES.values())
    assert all(lookup(name) is not None for name in listed)


def test_links_into_the_glossary_resolve() -> None:
    anchors = _headings(GLOSSARY.read_text(encoding="utf-8"))
    for document, prefix in ((TOUR, "glossary.md"), (README, "docs/glossary.md")):
        text = document.read_text(encoding="utf-8")
        assert f"]({prefix}" in text, f"{document.name} does not link to the glossary"
        for anchor in re.findall(rf"\]\({re.escape(prefix)}#([^)]+)\)", text):
            assert anchor in anchors, f"{document.name} links to glossary.md#{anchor}, which is no heading"


def test_the_tour_and_readme_tell_the_incident_themselves() -> None:
    """The seed documents are not in the repository: nothing may send a reader to them."""
    for document in (TOUR, README):
        text = document.read_text(encoding="utf-8")
        assert not re.search(r"\bthe seed\b|\bseed's\b", text, flags=re.IGNORECASE), document.name
    assert "## The incident" in TOUR.read_text(encoding="utf-8")


def test_the_issue_terms_are_all_here() -> None:
    for word in ("horizon", "barrier", "adopt", "serial", "depth", "revision", "checkpoint", "epoch",
                 "out-of-log write", "read-set", "effective read-set", "rebasing", "positional diff",
                 "content-anchored diff", "linearizable", "history", "reading", "harm"):
        assert lookup(word) is not None, word
    assert len(TERMS) >= 60


@pytest.mark.slow
def test_the_html_page_defines_every_term_it_shows() -> None:
    """Every chip links to its definition on the page itself (a mailed page has no
    repository beside it), and the page's own words are defined there too."""
    from rollcert.reports.html_certificate import PAGE_TERMS
    from rollcert.reports.html_certificate import HtmlCertificate
    from rollcert.reports.html_certificate import VerdictRow
    from rollcert.reports.html_certificate import render_html
    from rollcert.stateful_tests.world import DIMENSIONS

    rows = tuple(
        VerdictRow(pid, prop.title, "passed", tuple((s.name, 1) for s in prop.situations), "",
                   (("world", "any byte 0x00-0xFF"),), tuple((d.name, 0) for d in DIMENSIONS))
        for pid, prop in PROPERTIES.items()
    )
    page = render_html(HtmlCertificate("bundled", "1", "quick", 0, 0, rows, ()))
    defined = set(re.findall(r'<dt id="term-([^"]+)">', page))
    for row in rows:
        for name, _ in row.coverage + row.dimensions:
            term = lookup(name)
            assert term is not None and term.anchor in defined, name
            assert f'href="#term-{term.anchor}"' in page
    for word in PAGE_TERMS:
        term = lookup(word)
        assert term is not None and term.anchor in defined, word
    assert 'href="#terms"' in page
