"""Regenerate the certificates embedded in the pages of docs/certifications/.

Each page marks where a certificate goes:

    <!-- certificate: TARGET profile=ci seed=0 -->
    ... (replaced by the output of `rollcert certify TARGET --profile ci --seed 0 --markdown`)
    <!-- end certificate -->

Run from the repository root, with the third-party packages installed
(pip install -e '.[thirdparty]') and, for the diff appliers' pages, GNU diff,
patch and git on PATH:

    python docs/certifications/regenerate.py            # every page
    python docs/certifications/regenerate.py textual.md # one page
    python docs/certifications/regenerate.py gnu_patch.md git_apply.md diff_match_patch.md

The human summaries around the markers are not touched: after a regeneration
that changes a verdict, re-read them. tests/test_thirdparty.py (buffer packages)
and tests/test_thirdparty_diffs.py (diff appliers) re-run every embedded
certificate and fail when a verdict no longer matches its page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rollcert.reports.certificate import render_markdown
from rollcert.stateful_tests.certify import certify
from rollcert.targets.resolve import resolve_target

PAGES = Path(__file__).resolve().parent
MARKED = re.compile(
    r"(?P<open><!-- certificate: (?P<target>\S+) profile=(?P<profile>\w+) seed=(?P<seed>\d+) -->\n)"
    r".*?(?P<close><!-- end certificate -->)",
    re.DOTALL,
)


def embedded(target: str, profile: str, seed: int) -> str:
    """The certificate's Markdown, its headings moved two levels down to sit inside a page."""
    markdown = render_markdown(certify(resolve_target(target), profile=profile, seed=seed))
    return "".join("##" + line if line.startswith("#") else line for line in markdown.splitlines(keepends=True))


def regenerate(page: Path) -> None:
    def fill(match: re.Match[str]) -> str:
        print(f"{page.name}: certifying {match['target']} (profile {match['profile']}, seed {match['seed']})")
        body = embedded(match["target"], match["profile"], int(match["seed"]))
        return f"{match['open']}{body}{match['close']}"

    page.write_text(MARKED.sub(fill, page.read_text(encoding="utf-8")), encoding="utf-8")


def main(names: list[str]) -> None:
    pages = [PAGES / name for name in names] if names else sorted(PAGES.glob("*.md"))
    for page in pages:
        regenerate(page)


if __name__ == "__main__":
    main(sys.argv[1:])
