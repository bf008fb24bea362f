"""The certification matrix (docs/certifications/matrix.md and .html) is the pages' own.

``regenerate.py`` builds it from the certificates the pages embed; these tests
fail when the shipped matrix drifts from the pages (someone edited a page or the
matrix by hand), when a certified target has no row, or when a cell links to an
anchor its page does not have.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from _helpers import documented_certificates

PAGES = Path(__file__).resolve().parent.parent / "docs" / "certifications"


def regenerate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate", PAGES / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("regenerate", module)
    spec.loader.exec_module(module)
    return module


REGENERATE = regenerate_module()


def test_the_shipped_matrix_is_what_the_pages_make() -> None:
    rows = REGENERATE.matrix_rows(REGENERATE.certified_pages())
    assert (PAGES / "matrix.md").read_text(encoding="utf-8") == REGENERATE.render_matrix_markdown(rows), (
        "run python docs/certifications/regenerate.py --matrix"
    )
    assert (PAGES / "matrix.html").read_text(encoding="utf-8") == REGENERATE.render_matrix_html(rows)


def test_every_certified_plain_target_has_a_row_with_its_page_verdicts() -> None:
    rows = {row.plain.target: row for row in REGENERATE.matrix_rows(REGENERATE.certified_pages())}
    documented = documented_certificates(lambda target: True)
    plain = {d.target for d in documented if not d.target.endswith("-focused")}
    assert set(rows) == plain
    for certificate in documented:
        name = certificate.target.removesuffix("-focused")
        row = rows[name]
        shown = row.plain if certificate.target == name else row.focused
        assert shown is not None, f"{certificate.target}: its focused certificate is not in the matrix"
        assert {pid: cell.verdict for pid, cell in shown.cells.items()} == certificate.verdicts


def test_every_link_of_the_matrix_names_an_anchor_of_its_page() -> None:
    text = (PAGES / "matrix.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([\w.]+\.md)#([\w-]+)\)", text)
    assert links
    for page, anchor in set(links):
        names = {name for _, _, name in REGENERATE.anchors((PAGES / page).read_text(encoding="utf-8"))}
        assert anchor in names, f"matrix.md links to {page}#{anchor}, which {page} has no heading for"


def test_a_violation_links_to_the_counterexample_that_names_its_property() -> None:
    page = (
        "## Certificates\n\n<!-- certificate: t profile=quick seed=0 -->\n### rollcert certificate: `t`\n\n"
        "- target version: t 1\n\n| property | verdict | details |\n| --- | --- | --- |\n"
        "| R0 No silent corruption | **violated** | counterexample of 1 step (below) |\n"
        "| S1 Read-set staleness rule | **violated** | counterexample of 1 step (below) |\n"
        "| S2 Rollback-conflict asymmetry | **not_assessed** | the target lacks the capability: core |\n\n"
        "#### R0 and S1 counterexample\n\n<!-- end certificate -->\n"
    )
    folder = Path(__file__).resolve().parent
    import tempfile

    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        path = Path(scratch) / "t.md"
        path.write_text(page, encoding="utf-8")
        (certified,) = REGENERATE.certificates(path)
    assert certified.version == "t 1"
    assert certified.cells["R0"].link == certified.cells["S1"].link == "t.md#r0-and-s1-counterexample"
    assert certified.cells["S2"].link == "t.md#rollcert-certificate-t"
