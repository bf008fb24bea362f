"""The bounded exhaustive search over the bundled implementation at depth 4 (over 100 000 states, about 2 minutes): a search, kept beside the others (see conftest.py). The tests search at depth 2-3 (tests/test_exhaustive.py) and rollcert prove's refinement check covers the bundled implementation at its stated bounds."""

from __future__ import annotations

import pytest

from rollcert.stateful_tests.exhaustive import explore
from rollcert.targets.adapters.bundled import TARGET


@pytest.mark.slow
def test_bundled_passes_depth_4() -> None:
    result = explore(TARGET, depth=4)
    print(f"\nbundled: {result.summary()}")
    assert result.verdict == "passed", result.reason
    assert result.depth == 4
    assert result.states > 100_000

