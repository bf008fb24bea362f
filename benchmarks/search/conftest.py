"""Search power, held to what the docs say (issue 41: tests replay, benchmarks search).

These pytest files search again for what the docs document — each third-party
page's verdicts at the page's profile and seed, the findings a search must still
reach by itself — so they take an hour of CPU and more, and are not part of the
README's test command (``testpaths`` is ``tests``). Run them with

    .venv/bin/pytest benchmarks/search -n 2

The test suite replays every documented finding from its stored trace instead
(tests/test_documented_findings.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
for _folder in (str(_ROOT),):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)
