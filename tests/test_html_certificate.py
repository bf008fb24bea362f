"""The HTML certificate in a real browser: Debian's chromium, headless.

For every specimen, the certificate (certified on the properties its story
breaks) is rendered; the screenshot must not be blank and the DOM chromium
builds must hold exactly one drawn row per counterexample step. CI installs
chromium (``.ci/run``); without it these tests skip, saying why.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest
from _helpers import documented_findings

from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import CertificateData
from rollcert.stateful_tests.certify import certify

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it)"
)
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


def chromium(page: Path, *action: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *action, page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        )


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what chromium writes) into rows of raw pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, width = 8, b"", 0
    height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                guess = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))[2]
                line[i] = (line[i] + guess) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def distinct_colours(png: bytes) -> int:
    width, _, rows = png_pixels(png)
    channels = len(rows[0]) // width
    return len({row[x : x + 3] for row in rows[::4] for x in range(0, len(row), channels * 4)})


SPECIMENS = sorted(load_all())
#: The pages also drawn to a screenshot: steps of a trace, and an R7 history's lanes.
SCREENSHOT = ("first_match_scan", "unlocked_buffer")


def _known_findings_certificate(name: str) -> CertificateData:
    """A certificate holding ``name``'s documented findings (docs/specimens.md),
    replayed, not searched: tests replay known findings (issue 41). R7's findings
    are histories of threads, not traces: those specimens are certified on R7."""
    from rollcert.model.properties import PROPERTIES
    from rollcert.stateful_tests.certify import _counterexample
    from rollcert.stateful_tests.judge import Violation
    from rollcert.stateful_tests.judge import replay
    from rollcert.stateful_tests.traces import parse_trace
    from rollcert.stateful_tests.verdicts import PropertyResult

    specimen = load_all()[name]
    assert specimen.target is not None
    if specimen.breaks == {"R7"}:
        return certify(specimen.target, only=("R7",))
    results: dict[str, PropertyResult] = {}
    for finding in documented_findings():
        if finding.document != "docs/specimens.md" or finding.target != f"specimen:{name}":
            continue
        family, config, operations = parse_trace(finding.trace)
        with pytest.raises(Violation) as raised:
            replay(family, specimen.target, config, operations)
        rule = min(finding.broken)
        result = PropertyResult(rule, "violated", PROPERTIES[rule].title, reason=raised.value.explanation)
        result.counterexample = _counterexample(rule, specimen.target, raised.value, family.name)
        results[rule] = result
    return CertificateData(specimen.target, "quick", 0, results)


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("name", SPECIMENS)
def test_every_specimen_certificate_renders_one_row_per_step(name: str, tmp_path: Path) -> None:
    specimen = load_all()[name]
    assert specimen.target is not None
    certificate = _known_findings_certificate(name)
    # One section per finding (issue 43): the counterexample's has the property's id, a further one PID-finding-N.
    expected_steps = {
        pid if number == 1 else f"{pid}-finding-{number}": len(found.steps)
        for pid, r in certificate.results.items()
        for number, found in enumerate(r.findings or ([r.counterexample] if r.counterexample else []), 1)
    }
    assert expected_steps, f"{name}: no counterexample to draw"
    page = tmp_path / "certificate.html"
    page.write_text(render_html(from_certificate_data(certificate)), encoding="utf-8")

    dom = chromium(page, "--dump-dom").stdout
    sections = re.findall(r'<section class="violation"[^>]*id="([\w-]+)"[^>]*data-property="\w+"[^>]*>(.*?)</section>', dom, re.S)
    assert {pid for pid, _ in sections} == set(expected_steps)
    for pid, body in sections:
        if '<div class="timeline">' in body:  # R7: a history drawn as lanes, not steps; no step fails alone
            assert "R7" in specimen.breaks and "Could not be placed" in body, pid
            assert not re.findall(r'<li class="step', body), pid
            assert re.findall(r'<span class="call stuck', body), pid
            continue
        assert len(re.findall(r'<li class="step[ "]', body)) == expected_steps[pid], pid
        assert len(re.findall(r'<li class="step failing"', body)) == 1, pid

    if name in SCREENSHOT:  # a second chromium per page: a step drawing and a lanes drawing suffice
        shot = tmp_path / "shot.png"
        chromium(page, "--window-size=900,1200", f"--screenshot={shot}")
        assert distinct_colours(shot.read_bytes()) > 8  # text, strips and colours: not a blank page


def test_the_page_is_self_contained() -> None:
    page = _certificate_with_a_finding_and_coverage()
    assert not re.search(r"(src|href)=\"(?!#)", page)  # nothing fetched; only in-page links
    assert "http://" not in page and "https://" not in page
    assert "@media print" in page and "@media (max-width" in page
    assert 'class="copy"' in page and "rollcert replay specimen:first_match_scan" in page


@needs_chromium
@pytest.mark.slow
def test_html_command_draws_a_json_certificate(tmp_path: Path) -> None:
    certificate, page = tmp_path / "c.json", tmp_path / "c.html"
    made = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "certify", "specimen:write_set_only",
         "--only", "S1", "--json", str(certificate)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert made.returncode == 1, made.stderr
    drawn = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "html", str(certificate), str(page)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    dom = chromium(page, "--dump-dom").stdout
    assert 'data-property="S1" data-steps="3"' in dom
    assert len(re.findall(r'<li class="step[ "]', dom)) == 3
    assert re.search(r"Conflicting region \[\d+, \d+\) of the snapshot B0", dom)


def _certificate_with_a_finding_and_coverage() -> str:
    """A page with a counterexample (first_match_scan's known R2 finding, replayed)
    and a property with coverage chips: made without a search."""
    from rollcert.model.operations import Rollback
    from rollcert.model.operations import Splice
    from rollcert.stateful_tests.certify import _counterexample
    from rollcert.stateful_tests.judge import Violation
    from rollcert.stateful_tests.judge import replay
    from rollcert.stateful_tests.machines import ROLLBACK
    from rollcert.stateful_tests.verdicts import CertificateData
    from rollcert.stateful_tests.verdicts import PropertyResult
    from rollcert.targets.adapter import BufferConfig

    target = load_all()["first_match_scan"].target
    assert target is not None
    with pytest.raises(Violation) as raised:
        replay(ROLLBACK, target, BufferConfig(b"ababaaaaaaabababab"), [Splice(14, 0, b"aaaaaa"), Rollback(1)])
    violated = PropertyResult("R2", "violated", "Offset stability", reason=raised.value.explanation)
    violated.counterexample = _counterexample("R2", target, raised.value, "rollback")
    covered = PropertyResult("R4", "passed", "Divergence detection", 10, 100)
    covered.coverage = {"divergence_met": 356, "rollback_to_meets_write": 212, "undo_above_write": 22, "adopt": 328}
    certificate = CertificateData(target, "quick", 0, {"R4": covered, "R2": violated})
    return render_html(from_certificate_data(certificate))


def test_the_counterexamples_come_before_the_coverage() -> None:
    """Issue 43: the first counterexample started below 2400 px, under the coverage chips."""
    page = _certificate_with_a_finding_and_coverage()
    table, counterexamples, coverage = (page.index(mark) for mark in (
        '<table class="verdicts">', '<section id="counterexamples">', '<section id="coverage">'
    ))
    assert table < counterexamples < page.index('<section class="violation"') < coverage
    assert 'class="chip' not in page[:coverage]  # no chip above the findings


@needs_chromium
@pytest.mark.slow
def test_in_the_browser_the_first_counterexample_is_before_the_coverage_chips(tmp_path: Path) -> None:
    page = tmp_path / "certificate.html"
    page.write_text(_certificate_with_a_finding_and_coverage(), encoding="utf-8")
    dom = chromium(page, "--dump-dom").stdout
    finding = dom.index('<section class="violation"')
    assert finding < dom.index('<section id="coverage">') < dom.index('class="chip')
