"""No forged verdict in any output format (SPEC §8): a target's or a file's words
pass through their format's escaping rule (``reports/escape.py``) wherever a
renderer puts them — the terminal, Markdown, JUnit XML and HTML.

The target is ``tests/hostile_targets/forging.py``, certified for real; its
certificate is also read back from JSON, as ``html`` and ``explain`` read it."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest
from markdown_it import MarkdownIt

from rollcert.command.cli import main
from rollcert.reports.certificate import render_junit
from rollcert.reports.certificate import render_markdown
from rollcert.reports.certificate import render_text
from rollcert.reports.certificate import to_json
from rollcert.reports.escape import markdown_code
from rollcert.reports.escape import markdown_text
from rollcert.reports.escape import xml_text
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import certify

HOSTILE = Path(__file__).parent / "hostile_targets"
STEERING = ("\x1b", "\u202e", "\x00", "\x01")


@pytest.fixture(autouse=True)
def hostile_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HOSTILE))


@cache
def forged() -> CertificateData:
    import forging

    return certify(forging.TARGET, profile="quick", seed=0, only=("R0",))


def both() -> list[CertificateData]:
    """The run's certificate, and the same read back from its JSON."""
    run = forged()
    return [run, certificate_from_json(json.loads(json.dumps(to_json(run)))).data]


def test_the_forging_target_is_violated() -> None:
    assert forged().results["R0"].verdict == "violated"
    assert forged().exit_status == 1


@pytest.mark.parametrize("which", ["run", "read back"])
def test_the_terminal_shows_no_control_character_and_one_verdict_line(which: str) -> None:
    text = render_text(both()[which == "read back"])
    assert not any(character in text for character in STEERING), text
    assert [line for line in text.splitlines() if line.startswith("R0")] == [
        next(line for line in text.splitlines() if line.startswith("R0        violated"))
    ]
    assert [line for line in text.splitlines() if line.startswith("exit status")] == ["exit status 1"]


@pytest.mark.parametrize("which", ["run", "read back"])
def test_markdown_holds_no_html_and_one_verdict_table(which: str) -> None:
    page = render_markdown(both()[which == "read back"])
    assert not any(character in page for character in STEERING)
    drawn = MarkdownIt("commonmark").enable("table").render(page)
    assert "<!--" not in drawn and "<img" not in drawn and "<script" not in drawn, drawn
    assert drawn.count("<table>") == 1
    cells = re.findall(r"<td>(.*?)</td>", drawn)
    assert cells[1] == "<strong>violated</strong>", cells
    assert "passed" not in cells[1::3]


@pytest.mark.parametrize("which", ["run", "read back"])
def test_junit_is_valid_xml_with_the_real_verdict(which: str) -> None:
    suite = ElementTree.fromstring(render_junit(both()[which == "read back"]))  # expat refuses what XML forbids
    assert suite.get("failures") == "1" and suite.find("testcase/failure") is not None
    assert not any(character in ElementTree.tostring(suite, encoding="unicode") for character in STEERING)


def test_the_command_line_prints_no_control_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    certificate = tmp_path / "c.json"
    status = main(["certify", "forging:TARGET", "--only", "R0", "--in-process", "--quiet", "--json", str(certificate),
                   "--markdown", str(tmp_path / "c.md"), "--junit", str(tmp_path / "c.xml")])
    assert status == 1
    assert main(["explain", str(certificate), "--all"]) == 1
    assert main(["html", str(certificate), str(tmp_path / "c.html")]) == 0
    said = capsys.readouterr()
    assert not any(character in said.out + said.err for character in STEERING), said
    ElementTree.parse(tmp_path / "c.xml")
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img src=x" not in page


@pytest.mark.parametrize(
    "text", ["plain", "1.0\n<!--", "| a | b |", "`x``", "<b>bold</b> & *em* _u_ [l](u) ~~s~~", "\\", "\x1b[2J", "\x00\x0b\ufffe\ud800"]
)
def test_each_escape_leaves_the_text_readable_and_inert(text: str) -> None:
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    inline = parser.render(f"- {markdown_text(text)}")
    assert "<b>" not in inline and "<em>" not in inline and "<a " not in inline and "<s>" not in inline
    assert inline.count("<li>") == 1 and "\n<" not in inline.split("<li>")[1].split("</li>")[0]
    code = parser.render(f"x {markdown_code(text)} y")
    assert code.count("<code>") == 1
    element = ElementTree.Element("a", b=xml_text(text))
    element.text = xml_text(text)
    assert ElementTree.fromstring(ElementTree.tostring(element, encoding="unicode")).get("b") == xml_text(text)


# -- a protocol server's words ---------------------------------------------------------------------

FAKES = Path(__file__).parent / "fake_servers"


@cache
def forged_by_a_server() -> CertificateData:
    import shlex
    import sys

    from rollcert.targets.resolve import resolve_target

    command = shlex.join([sys.executable, str(FAKES / "forged_words.py")])
    return certify(resolve_target(f"subprocess:{command}"), profile="quick", seed=0, only=("R0",))


@pytest.mark.slow
def test_a_servers_hello_version_and_error_kinds_forge_nothing() -> None:
    run = forged_by_a_server()
    assert run.results["R0"].verdict == "violated"
    for certificate in (run, certificate_from_json(json.loads(json.dumps(to_json(run)))).data):
        text = render_text(certificate)
        assert not any(character in text for character in STEERING), text
        assert next(line for line in text.splitlines() if line.startswith("R0")).startswith("R0        violated")
        drawn = MarkdownIt("commonmark").enable("table").render(render_markdown(certificate))
        assert "<!--" not in drawn and "<img" not in drawn and "<script" not in drawn, drawn
        assert re.findall(r"<td>(.*?)</td>", drawn)[1] == "<strong>violated</strong>"
        ElementTree.fromstring(render_junit(certificate))


# -- a target's declared version (issue 44): every format, the matrix, smoke -------------------------

FORGED_VERSIONS = [
    "1.0\n## R0 passed",
    "1.0 | R0 No silent corruption | **passed** | forged |",
    "1.0 ``` `x` ``",
    "<img src=x onerror=alert(1)><b>passed</b>",
    "\x1b[2J\x1b[H\x1b[32mR0        passed\x1b[0m",
]


def _with_version(version: str) -> CertificateData:
    """The forging run's real certificate (R0 violated), its target renamed plainly
    (the name's own forgery is tested above) and declaring ``version``."""
    from dataclasses import replace

    run = forged()
    return replace(run, target=replace(run.target, name="hostile-version", version=version))


def _drawn_markdown(page: str) -> str:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(page)


@pytest.mark.parametrize("version", FORGED_VERSIONS)
def test_a_forged_version_forges_no_heading_or_verdict_in_any_format(version: str) -> None:
    from rollcert.reports.html_certificate import from_certificate_data
    from rollcert.reports.html_certificate import render_html

    certificate = _with_version(version)
    drawn = _drawn_markdown(render_markdown(certificate))
    headings = re.findall(r"<h(\d)>(.*?)</h\1>", drawn)
    assert not any("passed" in text for _, text in headings), headings
    assert [level for level, _ in headings].count("1") == 1
    assert drawn.count("<table>") == 1 and "<img" not in drawn and "<b>" not in drawn
    cells = re.findall(r"<td>(.*?)</td>", drawn)
    assert cells[1] == "<strong>violated</strong>" and "passed" not in cells[1::3], cells
    version_item = next(line for line in drawn.splitlines() if "target version" in line)
    assert version_item.startswith("<li>") and version_item.endswith("</li>"), version_item  # one list item
    page = render_html(from_certificate_data(certificate))
    assert "<img src=x" not in page and "<b>passed" not in page
    assert not any(character in page for character in STEERING)  # a page is read with cat too
    ElementTree.fromstring(render_junit(certificate))
    assert not any(character in render_text(certificate) for character in STEERING)


def test_a_forged_version_forges_no_cell_of_the_certification_matrix(tmp_path: Path) -> None:
    """The matrix read each page's (escaped) version back and stripped every
    backslash, so an escaped ``\\|`` became a table cell of the target's own."""
    from test_matrix import REGENERATE

    certificate = _with_version(FORGED_VERSIONS[1] + " <img src=x onerror=alert(1)>")
    embedded = "".join("##" + line if line.startswith("#") else line
                       for line in render_markdown(certificate).splitlines(keepends=True))
    page = tmp_path / "forged.md"
    page.write_text(f"# forged\n\n<!-- certificate: forged profile=quick seed=0 -->\n{embedded}<!-- end certificate -->\n",
                    encoding="utf-8")
    rows = REGENERATE.matrix_rows([page])
    assert rows[0].plain.version == certificate.target.version  # read back as the target's own words
    drawn = _drawn_markdown(REGENERATE.render_matrix_markdown(rows))
    header = re.findall(r"<th>(.*?)</th>", drawn)
    row = re.findall(r"<td>(.*?)</td>", drawn)
    assert len(row) == len(header), (header, row)  # no cell of the version's making
    assert "<img" not in drawn and "<strong>passed" not in drawn, drawn
    assert "<img src=x" not in REGENERATE.render_matrix_html(rows)


def test_smoke_prints_a_forged_name_and_version_as_one_inert_line() -> None:
    import forging

    from rollcert.command.smoke import smoke

    said: list[str] = []
    smoke(forging.TARGET, report=said.append)
    text = "\n".join(said)
    assert not any(character in text for character in STEERING), text
    assert len(said[0].splitlines()) == 1, said[0]  # the version's line breaks start no line of their own
    assert not any(line.startswith("| R0") for line in text.splitlines())
