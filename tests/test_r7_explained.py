"""R7 explained like the other properties: the concurrent program, the observed
history as lanes, and the linearisation attempt that failed, from the certificate alone."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rollcert.reports.certificate import format_counterexample
from rollcert.reports.certificate import to_json
from rollcert.reports.explain import explain_main
from rollcert.reports.explain import render_text
from rollcert.reports.explain import stored_walkthrough
from rollcert.reports.html_certificate import from_json_file
from rollcert.reports.html_certificate import render_html
from rollcert.reports.stored_certificate import CertificateFileError
from rollcert.reports.stored_certificate import certificate_from_json
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify
from rollcert.stateful_tests.concurrency import lanes
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import ConcurrentHistory
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import HistoryCall
from rollcert.stateful_tests.verdicts import OrderedCall
from rollcert.stateful_tests.verdicts import PropertyResult
from rollcert.stateful_tests.verdicts import StuckCall

R7_SPECIMENS = sorted(name for name, specimen in load_all().items() if "R7" in specimen.breaks)

#: A history of the issue's kind, written by hand: T1 rolls back from 9 bytes to 3
#: while T2 reads the length and sees 5 — neither before nor after.
HISTORY = ConcurrentHistory(
    program=("initial b'abc'", "prefix:  splice(offset=3, delete_length=0, insert=b'123456')", "T1:      rollback(1)",
             "T2:      length()"),
    calls=(
        HistoryCall(0, "prefix", 0.0, 5.0, "splice(offset=3, delete_length=0, insert=b'123456')", "ok"),
        HistoryCall(1, "T1", 20.0, 80.0, "rollback(1)", "ok"),
        HistoryCall(2, "T2", 30.0, 40.0, "length()", "-> 5"),
    ),
    order=(OrderedCall(0, b"abc123456", 1, 1), OrderedCall(1, b"abc", 0, 2)),
    stuck=(StuckCall(2, "return 3", ("before T1 #1 rollback(1): return 9",)),),
    failed=2,
    runs=8,
)


def _certificate(history: ConcurrentHistory = HISTORY) -> CertificateData:
    from rollcert.specimens import load_all

    target = load_all()["unlocked_observations"].target
    assert target is not None
    counterexample = Counterexample("R7", target.name, b"abc", None, "reject", (), "", history=history)
    result = PropertyResult("R7", "violated", "Linearizability", counterexample=counterexample, reason="x")
    return CertificateData(target, "quick", 0, {"R7": result})


def test_lanes_draw_one_row_per_thread_with_each_call_inside_its_interval() -> None:
    rows = lanes(HISTORY.calls)
    assert [row.split("|")[0].strip() for row in rows] == ["prefix", "T1", "T2"]
    t1, t2 = rows[1].split("|")[1], rows[2].split("|")[1]
    # T2's read (30-40 µs) lies inside T1's rollback (20-80 µs): its bar starts after T1's.
    assert t1.index("[#1") < t2.index("[#2") < t1.index("]")
    assert len({len(row) for row in rows}) == 1


def test_a_json_certificate_carries_the_history_and_explain_draws_it_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = to_json(_certificate())
    assert document["properties"]["R7"]["counterexample"]["history"]["stuck"][0]["allowed"] == "return 3"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    stored = certificate_from_json(json.loads(path.read_text(encoding="utf-8")))
    counterexample = stored.data.results["R7"].counterexample
    assert counterexample is not None and counterexample.history == HISTORY
    assert explain_main(str(path), "R7", True) == 1
    out = capsys.readouterr().out
    assert "Timeline, one lane per thread" in out and "T2     |" in out
    assert "Longest sequential order found (2 of 3 calls" in out
    assert "T2 #2 length() -> 5, but here the model would return 3" in out
    assert "placed before T1 #1 rollback(1), the model would return 9" in out
    assert "Broken:   R7 Linearizability" in out and "Run again: rollcert certify" in out
    assert "Replay:" not in out  # replaying the longest order's steps would pass


def test_a_history_with_a_wide_program_reads_back() -> None:
    """R7's wide programs insert kilobytes, and the 49 KB buffers past a chunk are
    recorded whole: what the writer writes the reader takes (a quick run of
    checkpoint_reads_depth_unlocked wrote a program line of 6,344 characters,
    which the reader refused as longer than a name)."""
    wide = bytes(range(256)) * 20
    call = f"splice(offset=0, delete_length=0, insert={wide!r})"
    history = ConcurrentHistory(
        program=("initial b''", f"T1:      {call}", "T2:      length()"),
        calls=(HistoryCall(0, "T1", 0.0, 5.0, call, "ok"), HistoryCall(1, "T2", 1.0, 2.0, "length()", "-> 0")),
        order=(OrderedCall(0, wide * 10, 1, 1),),
        stuck=(StuckCall(1, f"return {len(wide)}", ()),),
        failed=1,
        runs=1,
    )
    document = json.loads(json.dumps(to_json(_certificate(history))))
    assert len(document["properties"]["R7"]["counterexample"]["history"]["program"][1]) > 4096
    stored = certificate_from_json(document)
    counterexample = stored.data.results["R7"].counterexample
    assert counterexample is not None and counterexample.history == history


def test_the_text_certificate_shows_the_history_not_a_replay_that_passes() -> None:
    counterexample = _certificate().results["R7"].counterexample
    assert counterexample is not None
    text = format_counterexample(counterexample)
    assert "a history of 3 calls" in text and "Could not be placed next" in text and "Why:" in text
    assert "rollcert replay" not in text


def test_a_certificate_whose_history_names_a_call_it_lacks_is_refused() -> None:
    document = to_json(_certificate())
    document["properties"]["R7"]["counterexample"]["history"]["stuck"][0]["call"] = 7
    with pytest.raises(CertificateFileError, match="names a call"):
        certificate_from_json(document)
    document = to_json(_certificate())
    document["properties"]["R7"]["counterexample"]["history"]["calls"][0]["called"] = float("nan")
    with pytest.raises(CertificateFileError):
        certificate_from_json(document)
    document = to_json(_certificate())
    del document["properties"]["R7"]["counterexample"]["history"]
    with pytest.raises(CertificateFileError, match="no steps"):
        certificate_from_json(document)


@pytest.mark.slow
@pytest.mark.parametrize("name", R7_SPECIMENS)
def test_explain_shows_the_failing_history_of_every_r7_specimen(name: str, tmp_path: Path) -> None:
    """``rollcert explain CERT.json --property R7``: the history, exit status 1."""
    target = load_all()[name].target
    assert target is not None
    path = tmp_path / "c.json"
    path.write_text(json.dumps(to_json(certify(target, profile="quick", seed=0, only=("R7",)))), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "explain", str(path), "--property", "R7", "--all"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeline, one lane per thread" in done.stdout and "Could not be placed next" in done.stdout
    assert re.search(r"^\s+T1\s+\|", done.stdout, re.M), done.stdout
    stored = certificate_from_json(json.loads(path.read_text(encoding="utf-8")))
    assert "does not reproduce" not in render_text(stored_walkthrough(stored, "R7"))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Run in the page: does every bar of every lane lie inside the window?
_FITS = """<script>
window.addEventListener('load', function () {
  var width = document.documentElement.clientWidth, bad = [];
  document.querySelectorAll('.lanes .call, .lanes .axis span').forEach(function (bar) {
    var box = bar.getBoundingClientRect();
    if (box.left < 0 || box.right > width + 0.5 || box.width < 8) bad.push(bar.textContent);
  });
  var lanes = document.querySelector('.lanes');
  if (lanes.scrollWidth > lanes.clientWidth + 1) bad.push('lanes overflow');
  document.body.setAttribute('data-fits', bad.length ? 'no: ' + bad.join(',') : 'yes');
});
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
@pytest.mark.parametrize("width", [390, 1280])
def test_the_html_timeline_fits_a_phone_and_a_laptop(width: int, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(to_json(_certificate())), encoding="utf-8")
    page = tmp_path / "c.html"
    page.write_text(render_html(from_json_file(path)).replace("</body>", _FITS + "</body>"), encoding="utf-8")
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={profile}", f"--window-size={width},1200", "--dump-dom", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout
    assert 'data-fits="yes"' in dom, re.search(r'data-fits="[^"]*"', dom)
    assert dom.count('class="call ') == len(HISTORY.calls)
    assert 'class="lane-name">T2<' in dom and "could not be placed next" in dom
