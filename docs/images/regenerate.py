"""Regenerate the README's screenshot of the HTML certificate (``html-certificate.png``).

The picture went stale once (it showed a page from before the glossary, the
coverage chips' links and the aligned strips): a screenshot is only as current
as the last time someone remembered to take it, so taking it is one command.
Run from the repository root with Chromium on PATH (``.ci/run`` installs it):

    python docs/images/regenerate.py

It certifies ``specimen:first_match_scan`` on R2 (profile quick, seed 0), draws
the page and has headless Chromium photograph it at 900 x 1500.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rollcert.reports.html_certificate import from_certificate_data
from rollcert.reports.html_certificate import render_html
from rollcert.specimens import load_all
from rollcert.stateful_tests.certify import certify

HERE = Path(__file__).resolve().parent
WINDOW = "900,1500"


def main() -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("regenerate.py: chromium is not on PATH (apt-get install chromium)", file=sys.stderr)
        return 3
    target = load_all()["first_match_scan"].target
    assert target is not None
    page_html = render_html(from_certificate_data(certify(target, profile="quick", seed=0, only=("R2",))))
    with tempfile.TemporaryDirectory() as work:
        page = Path(work) / "certificate.html"
        page.write_text(page_html, encoding="utf-8")
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={work}/profile", f"--window-size={WINDOW}",
             f"--screenshot={HERE / 'html-certificate.png'}", page.as_uri()],
            check=True, capture_output=True, timeout=120,
        )
    print(f"wrote {HERE / 'html-certificate.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
