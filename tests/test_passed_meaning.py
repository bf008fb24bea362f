"""Every format's first lines say what ``passed`` means here (issue 43): random
testing over the stated world, every listed situation reached — not a proof."""

from __future__ import annotations

from rollcert.reports.certificate import PASSED_MEANING
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.targets.adapters.bundled import TARGET


def _certificate() -> CertificateData:
    passed = PropertyResult("R2", "passed", "Offset stability", 10, 100, coverage={"shifted": 3})
    return CertificateData(TARGET, "quick", 0, {"R2": passed})


def test_the_meaning_says_random_testing_over_the_stated_world_not_a_proof() -> None:
    assert "random testing over the world stated below" in PASSED_MEANING
    assert "every listed situation reached" in PASSED_MEANING and "not a proof" in PASSED_MEANING


def test_the_text_certificate_says_it_on_its_second_line() -> None:
    lines = render_text(_certificate()).splitlines()
    assert lines[0].startswith("rollcert ") and lines[1] == f"passed here means: {PASSED_MEANING}"


def test_the_markdown_certificate_says_it_before_the_verdicts() -> None:
    text = render_markdown(_certificate())
    said = text.index(f"- `passed` here means: {PASSED_MEANING}")
    assert said < text.index("| property | verdict | details |")


def test_the_html_certificate_says_it_before_the_verdicts() -> None:
    page = render_html(from_certificate_data(_certificate()))
    said = page.index('id="passed-means"')
    assert said < page.index('<table class="verdicts">') and "not a proof" in page[said : said + 400]
