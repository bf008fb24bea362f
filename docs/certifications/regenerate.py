"""Regenerate the certificates embedded in the pages of docs/certifications/, and the matrix.

Each page marks where a certificate goes:

    <!-- certificate: TARGET profile=ci seed=0 -->
    ... (replaced by the output of `rollcert certify TARGET --profile ci --seed 0 --markdown`)
    <!-- end certificate -->

Run from the repository root, with the third-party packages installed
(pip install -e '.[thirdparty]') and, for the diff appliers' pages, GNU diff,
patch and git on PATH (the agent tools make their own environments on first use:
targets/tool_envs.py):

    python docs/certifications/regenerate.py            # every page, then the matrix
    python docs/certifications/regenerate.py textual.md # one page, then the matrix
    python docs/certifications/regenerate.py --matrix   # the matrix alone, from the pages as they are

The matrix (``matrix.md`` and ``matrix.html``) is built from the certificates the
pages embed, never from a run of its own: a row per certified package or tool,
a column per property, each cell the verdict of the plain target (and of its
``-focused`` target when that differs), linked to the counterexample or the
certificate on the page. So it always says what the pages say.

The human summaries around the markers are not touched: after a regeneration
that changes a verdict, re-read them. ``python -m benchmarks.documented_verdicts``
(and ``pytest benchmarks/search``) re-run every embedded certificate and fail when a
verdict no longer matches its page; tests/test_documented_findings.py replays every
counterexample a page shows; tests/test_matrix.py fails when the matrix is not the pages'.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PAGES = Path(__file__).resolve().parent
MARKED = re.compile(
    r"(?P<open><!-- certificate: (?P<target>\S+) profile=(?P<profile>\w+) seed=(?P<seed>\d+) -->\n)"
    r"(?P<body>.*?)(?P<close><!-- end certificate -->)",
    re.DOTALL,
)
#: A verdict row of an embedded certificate; the verdict may be Markdown-escaped (``not\_assessed``).
VERDICT_ROW = re.compile(r"^\| (?P<pid>[RS]\d) [^|]* \| \*\*(?P<verdict>[\w\\]+)\*\* \|", re.MULTILINE)
VERSION_LINE = re.compile(r"^- target version: (?P<version>.+)$", re.MULTILINE)
HEADING = re.compile(r"^(?P<level>#{1,6}) (?P<text>.+?)\s*$", re.MULTILINE)
COUNTEREXAMPLE_HEADING = re.compile(r"^(?P<properties>[RS]\d(?:(?:, | and )[RS]\d)*) counterexample$")
MATRIX_MD = PAGES / "matrix.md"
MATRIX_HTML = PAGES / "matrix.html"
FOCUSED = "-focused"


def embedded(target: str, profile: str, seed: int) -> str:
    """The certificate's Markdown, its headings moved two levels down to sit inside a page."""
    from rollcert.reports.certificate import render_markdown
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.resolve import resolve_target

    markdown = render_markdown(certify(resolve_target(target), profile=profile, seed=seed))
    return "".join("##" + line if line.startswith("#") else line for line in markdown.splitlines(keepends=True))


def regenerate(page: Path) -> None:
    def fill(match: re.Match[str]) -> str:
        print(f"{page.name}: certifying {match['target']} (profile {match['profile']}, seed {match['seed']})")
        body = embedded(match["target"], match["profile"], int(match["seed"]))
        return f"{match['open']}{body}{match['close']}"

    page.write_text(MARKED.sub(fill, page.read_text(encoding="utf-8")), encoding="utf-8")


# -- the matrix ---------------------------------------------------------------------------------


def slug(text: str) -> str:
    """The anchor a Markdown renderer (GitHub's) makes of a heading's text."""
    text = re.sub(r"[`*\[\]()]", "", text.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page_text: str) -> list[tuple[int, str, str]]:
    """Every heading of a page as (position, text, anchor); repeated anchors get ``-1``, ``-2``... as GitHub does."""
    seen: dict[str, int] = {}
    found = []
    for match in HEADING.finditer(page_text):
        base = slug(match["text"])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.append((match.start(), match["text"], base if count == 0 else f"{base}-{count}"))
    return found


@dataclass(frozen=True)
class Cell:
    verdict: str
    link: str


@dataclass(frozen=True)
class Certified:
    """One certificate a page embeds: its target, the package version it names, and
    per property the verdict with the place on the page that shows it."""

    page: str
    target: str
    version: str
    cells: dict[str, Cell]


def certificates(page: Path) -> list[Certified]:
    """The certificates ``page`` embeds, each cell linked to its counterexample (for a
    violation: the heading naming the property) or else to the certificate."""
    from rollcert.reports.escape import markdown_unescape

    text = page.read_text(encoding="utf-8")
    headings = anchors(text)
    found = []
    for match in MARKED.finditer(text):
        inside = [(text_, anchor) for position, text_, anchor in headings if match.start() < position < match.end()]
        if not inside:  # an empty marker: not generated yet
            continue
        certificate_anchor = inside[0][1]
        shown: dict[str, str] = {}
        for heading, anchor in inside[1:]:
            named = COUNTEREXAMPLE_HEADING.match(heading)
            if named:
                for property_id in re.split(r", | and ", named["properties"]):
                    shown.setdefault(property_id, anchor)
        version = VERSION_LINE.search(match["body"])
        cells = {
            row["pid"]: Cell(row["verdict"].replace("\\", ""), f"{page.name}#{shown.get(row['pid'], certificate_anchor)}")
            for row in VERDICT_ROW.finditer(match["body"])
        }
        # The page holds the version Markdown-escaped; read it back as the target's
        # own (untrusted) text, to be escaped again for each format of the matrix.
        found.append(Certified(page.name, match["target"], markdown_unescape(version["version"]) if version else "?", cells))
    return found


@dataclass(frozen=True)
class Row:
    """A plain target and, if the page has one, its focused target."""

    plain: Certified
    focused: Certified | None


def matrix_rows(pages: Sequence[Path]) -> list[Row]:
    every = [certified for page in pages for certified in certificates(page)]
    by_target = {certified.target: certified for certified in every}
    return [
        Row(certified, by_target.get(certified.target + FOCUSED))
        for certified in every
        if not certified.target.endswith(FOCUSED)
    ]


def _columns(rows: Sequence[Row]) -> list[str]:
    from rollcert.model.properties import ALL_PROPERTY_IDS

    present = {pid for row in rows for pid in row.plain.cells}
    return [pid for pid in ALL_PROPERTY_IDS if pid in present]


INTRO = """\
# The certification matrix

Every package and agent edit tool certified in this folder, side by side: a row per
certified target, a column per property, each cell the verdict of the target's
certificate, linked to its counterexample (or its certificate) on the tool's page. Where
a `-focused` target (known findings set aside, so the run reaches what lies behind them)
got another verdict, it follows after a slash. *not assessed* means the tool lacks the
capability (no undo log, no checkpoints...): never a pass. The pages say what each
finding is, reproduce it without rollcert, and judge it bug or design.

Generated by `python docs/certifications/regenerate.py` from the certificates the pages
embed (it never certifies anything itself); do not edit by hand. The same table as one
page: [matrix.html](matrix.html).
"""

SHORT = {"not_assessed": "n/a", "violated": "violated", "passed": "passed", "unknown": "unknown", "error": "error"}


def _md_cell(row: Row, pid: str) -> str:
    plain = row.plain.cells.get(pid)
    if plain is None:
        return ""
    text = _md_link(plain)
    if plain.verdict == "passed":
        text = f"**{text}**"
    focused = row.focused.cells.get(pid) if row.focused is not None else None
    if focused is not None and focused.verdict != plain.verdict:
        text += f" / {_md_link(focused)} (focused)"
    return text


def _md_link(cell: Cell) -> str:
    """The verdict linked to where the page shows it; *not assessed* is plain text (nothing to show)."""
    word = SHORT.get(cell.verdict, cell.verdict)
    return word if cell.verdict == "not_assessed" else f"[{word}]({cell.link})"


def _html_link(cell: Cell) -> str:
    word = html.escape(SHORT.get(cell.verdict, cell.verdict))
    return word if cell.verdict == "not_assessed" else f'<a href="{html.escape(cell.link)}">{word}</a>'


def render_matrix_markdown(rows: Sequence[Row]) -> str:
    from rollcert.reports.escape import markdown_code
    from rollcert.reports.escape import markdown_text

    columns = _columns(rows)
    lines = [INTRO, "| target | version | page | " + " | ".join(columns) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        page = f"[{row.plain.page}]({row.plain.page})"
        cells = " | ".join(_md_cell(row, pid) for pid in columns)
        lines.append(f"| {markdown_code(row.plain.target)} | {markdown_text(row.plain.version)} | {page} | {cells} |")
    lines += ["", f"{len(rows)} targets; `n/a` = not assessed (the capability is missing)."]
    return "\n".join(lines) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.violated { background: #fbe3e3; } td.passed { background: #e1f3e1; } td.unknown { background: #fff4d6; }
td.not_assessed { color: #888; } td.error { background: #f0d0f0; }
a { color: inherit; } .focused { display: block; font-size: 0.85em; }
"""


def render_matrix_html(rows: Sequence[Row]) -> str:
    from rollcert.reports.escape import html_text

    columns = _columns(rows)
    head = "".join(f"<th>{html.escape(pid)}</th>" for pid in columns)
    body = []
    for row in rows:
        cells = []
        for pid in columns:
            plain = row.plain.cells.get(pid)
            if plain is None:
                cells.append("<td></td>")
                continue
            inner = _html_link(plain)
            focused = row.focused.cells.get(pid) if row.focused is not None else None
            if focused is not None and focused.verdict != plain.verdict:
                inner += f'<span class="focused">focused: {_html_link(focused)}</span>'
            cells.append(f'<td class="{html.escape(plain.verdict)}">{inner}</td>')
        body.append(
            f"<tr><th><code>{html_text(row.plain.target)}</code></th><td>{html_text(row.plain.version)}</td>"
            f'<td><a href="{html.escape(row.plain.page)}">{html.escape(row.plain.page)}</a></td>{"".join(cells)}</tr>'
        )
    intro = "".join(
        f"<p>{html.escape(paragraph)}</p>"
        for paragraph in INTRO.split("\n\n")[1:]
        if paragraph.strip()
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>rollcert: the certification matrix</title><style>{_STYLE}</style></head><body>"
        f"<h1>The certification matrix</h1>{intro}"
        f"<table><thead><tr><th>target</th><th>version</th><th>page</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        f"<p>{len(rows)} targets; n/a = not assessed (the capability is missing).</p></body></html>\n"
    )


def certified_pages() -> list[Path]:
    """The pages that embed certificates, in name order."""
    return [page for page in sorted(PAGES.glob("*.md")) if MARKED.search(page.read_text(encoding="utf-8"))]


def write_matrix() -> None:
    rows = matrix_rows(certified_pages())
    MATRIX_MD.write_text(render_matrix_markdown(rows), encoding="utf-8")
    MATRIX_HTML.write_text(render_matrix_html(rows), encoding="utf-8")
    print(f"matrix.md, matrix.html: {len(rows)} targets")


def main(names: list[str]) -> None:
    if names != ["--matrix"]:
        pages = [PAGES / name for name in names] if names else certified_pages()
        for page in pages:
            regenerate(page)
    write_matrix()


if __name__ == "__main__":
    main(sys.argv[1:])
