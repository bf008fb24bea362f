"""With every apply on a moved base set aside, the MCP filesystem server's S1 search finds nothing and full precision (see conftest.py)."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from rollcert.stateful_tests.certify import certify
from rollcert.targets.findings import parse_findings
from rollcert.targets.resolve import resolve_target


def _require_node() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to install and run the MCP filesystem server")


@pytest.mark.slow
def test_on_an_unmoved_base_every_diff_applies_as_meant() -> None:
    """With every apply on a moved base set aside, nothing is violated and every diff the
    rule accepts is accepted (precision 1): the findings are all about staleness."""
    _require_node()
    unmoved = parse_findings(
        '[[finding]]\nname = "stale_apply"\nproperty = "S1"\noperation = "apply_diff"\n'
        'when = "base_moved"\nreason = "every apply on a moved base"\n',
        "unmoved",
    )
    target = replace(resolve_target("mcp-filesystem-edit"), set_aside=unmoved)
    result = certify(target, profile="quick", seed=0, only=("S1",)).results["S1"]
    assert result.verdict == "unknown" and result.counterexample is None, result.reason
    assert result.figures["rule_accepts"] > 50 and result.figures["precision"] == 1.0

