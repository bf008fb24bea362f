"""The smaller teaching fixes: every allowed outcome shown, the kill matrix's
not-assessed cells, the R4 hint where the model expects success, strips that
wrap together at a phone's width, and the fail-fast gate documented."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from rollcert.model.operations import CrashDuring
from rollcert.model.operations import OutOfLogWrite
from rollcert.model.operations import RollbackTo
from rollcert.model.operations import Splice
from rollcert.model.operations import TakeCheckpoint
from rollcert.model.properties import PROPERTIES
from rollcert.reports.certificate import format_steps
from rollcert.reports.explain import render_text
from rollcert.reports.explain import walkthrough
from rollcert.reports.html_certificate import HtmlCertificate
from rollcert.reports.html_certificate import render_html
from rollcert.specimens import load_all
from rollcert.specimens.kill_matrix import KillMatrix
from rollcert.specimens.kill_matrix import SpecimenRow
from rollcert.specimens.kill_matrix import render_kill_matrix
from rollcert.stateful_tests.family import Observed
from rollcert.stateful_tests.family import StepRecord
from rollcert.stateful_tests.verdicts import CertificateData
from rollcert.stateful_tests.verdicts import Counterexample
from rollcert.stateful_tests.verdicts import PropertyResult

ROOT = Path(__file__).resolve().parent.parent

AFTER = Observed(None, b"a", 1, 1)
BEFORE = Observed(None, b"", 0, 0)
#: A crash while a splice's record was written, recovered half-applied: the model
#: allows the state after the splice or the one before it, and the target shows neither.
TORN = Counterexample(
    "R5", "specimen:torn_tail_applied", b"", None, "reject",
    (StepRecord(1, CrashDuring(Splice(0, 0, b"a"), 0, 1), b"", AFTER, Observed(None, b"", 1, 1), False,
                allowed=(AFTER, BEFORE)),),
    "", durable=True,
)


def test_r5_shows_both_acceptable_outcomes_as_expected() -> None:
    text = render_text(walkthrough(TORN, "R5"))
    assert "expected  '⟦a⟧'   (succeeded, depth 1, revision 1)" in text
    assert "or  ''   (succeeded, depth 0, revision 0)" in text
    assert any("or  ''" in line and "depth 0, revision 0" in line for line in format_steps(TORN.steps))
    page = render_html(HtmlCertificate("t", "1", "quick", 0, 1, (), (walkthrough(TORN, "R5"),)))
    expected_side = re.search(r'<div class="side expected">(.*?)<div class="side actual">', page, re.S)
    assert expected_side is not None
    assert '<span class="label">or</span>' in expected_side.group(1)
    assert "succeeded, depth 0, revision 0" in expected_side.group(1)


def test_a_step_with_one_outcome_shows_no_alternative() -> None:
    single = Counterexample(
        "R5", "t", b"", None, "reject",
        (StepRecord(1, CrashDuring(Splice(0, 0, b"a"), 0, 1), b"", AFTER, BEFORE, False),), "", durable=True,
    )
    assert "        or  " not in render_text(walkthrough(single, "R5"))


def test_the_kill_matrix_shows_not_assessed_unknown_and_error_cells_for_what_they_are() -> None:
    specimen = load_all()["fifo_replay"]
    assert specimen.target is not None
    verdicts = dict.fromkeys(PROPERTIES, "passed") | {
        "R0": "violated", "R3": "violated", "R5": "not_assessed", "R7": "unknown", "S1": "error",
    }
    results = {pid: PropertyResult(pid, verdict) for pid, verdict in verdicts.items()}
    matrix = KillMatrix([SpecimenRow(specimen, CertificateData(specimen.target, "quick", 0, results))])
    lines = render_kill_matrix(matrix).splitlines()
    header = next(line for line in lines if line.startswith("specimen"))
    row = next(line for line in lines if line.startswith("fifo_replay"))
    columns = header.split()[1 : 1 + len(PROPERTIES)]
    cells = dict(zip(columns, row.split()[1 : 1 + len(PROPERTIES)], strict=True))
    assert cells["R0"] == cells["R3"] == "X"
    assert (cells["R5"], cells["R7"], cells["S1"], cells["R2"]) == ("n", "?", "e", ".")
    assert "n = not assessed" in lines[0]


def test_the_r4_hint_does_not_ask_for_divergence_error_where_the_model_expects_success() -> None:
    """snapshot_jump: a rollback_to at the depth of the write crosses no record;
    the model succeeds and keeps the write's bytes, the jump erased them."""
    steps = (
        StepRecord(1, TakeCheckpoint(), b"", BEFORE, BEFORE, True),
        StepRecord(2, OutOfLogWrite(0, 0, b"a"), b"", Observed(None, b"a", 0, 0), Observed(None, b"a", 0, 0), True),
        StepRecord(3, RollbackTo(0), b"a", Observed(None, b"a", 0, 0), BEFORE, False),
    )
    look = walkthrough(Counterexample("R4", "specimen:snapshot_jump", b"", None, "reject", steps, "")).look_here
    assert "does not cross it" in look and "keeps the write's bytes" in look
    assert "DivergenceError" not in look
    crossing = (
        StepRecord(1, Splice(0, 0, b"x"), b"", Observed(None, b"x", 1, 1), Observed(None, b"x", 1, 1), True),
        StepRecord(2, OutOfLogWrite(0, 0, b"a"), b"x", Observed(None, b"ax", 1, 1), Observed(None, b"ax", 1, 1), True),
        StepRecord(3, RollbackTo(0), b"ax", Observed("DivergenceError", b"ax", 1, 1), Observed(None, b"", 0, 2), False),
    )
    steps_before = (StepRecord(0, TakeCheckpoint(), b"", BEFORE, BEFORE, True), *crossing)
    look = walkthrough(Counterexample("R4", "t", b"", None, "reject", steps_before, "")).look_here
    assert "raised DivergenceError" in look and "Before undoing record 1" in look


def test_readme_documents_the_fail_fast_gate() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pytest -x -m 'not slow'" in readme and "fail-fast" in readme


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

_WRAP = """<script>
window.addEventListener('load', function () {
  function wrapAt(strip) {
    var cells = strip.querySelectorAll('.c'), top = cells.length ? cells[0].getBoundingClientRect().top : 0;
    for (var i = 0; i < cells.length; i++) if (cells[i].getBoundingClientRect().top > top + 2) return i;
    return -1;
  }
  var sides = document.querySelectorAll('.pair .strip');
  document.body.setAttribute('data-wraps', wrapAt(sides[0]) + ',' + wrapAt(sides[1]));
});
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_expected_and_actual_strips_wrap_at_the_same_byte_at_a_phone_width(tmp_path: Path) -> None:
    """Bytes drawn as escapes (0x80) are no wider than letters, and an empty mark
    takes no width, so two buffers of the same length wrap at the same byte."""
    expected = b"ab" * 30
    actual = b"\x80\x81" * 3 + expected[6:]
    steps = (StepRecord(1, Splice(0, 0, b""), expected, Observed(None, expected, 1, 1), Observed(None, actual, 1, 1), False),)
    walk = walkthrough(Counterexample("R0", "t", expected, None, "reject", steps, ""))
    page = tmp_path / "page.html"
    page.write_text(render_html(HtmlCertificate("t", "1", "quick", 0, 1, (), (walk,))).replace("</body>", _WRAP + "</body>"),
                    encoding="utf-8")
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
             "--window-size=390,1200", "--dump-dom", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout
    found = re.search(r'data-wraps="(-?\d+),(-?\d+)"', dom)
    assert found is not None, dom[-2000:]
    first, second = int(found.group(1)), int(found.group(2))
    assert first > 0, "60 bytes must wrap at 390 px"
    assert first == second


def test_the_text_certificate_labels_r0s_block_r0_even_when_another_machine_found_it() -> None:
    from rollcert.reports.certificate import render_text as certificate_text

    specimen = load_all()["best_effort_log"]
    assert specimen.target is not None
    found_by_r1 = Counterexample("R1", specimen.target.name, b"", None, "reject", (
        StepRecord(1, Splice(0, 0, b""), b"", Observed("JournalError", b"", 0, 0), Observed(None, b"", 1, 1), False),
    ), "")
    result = PropertyResult("R0", "violated", "No silent corruption", counterexample=found_by_r1, reason="x")
    text = certificate_text(CertificateData(specimen.target, "quick", 0, {"R0": result}))
    assert "Counterexample for R0 " in text and "Counterexample for R1" not in text
