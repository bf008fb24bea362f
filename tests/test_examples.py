"""Each script in ``examples/`` runs (a real subprocess) and prints what it claims."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_seed_corruption_is_reproduced_then_prevented() -> None:
    out = run("seed_corruption.py")
    seed, bundled = out.split("The bundled JournaledBuffer:")
    assert "step 2 went through" in seed and "a state that existed before: False" in seed
    assert "step 2 refused: JournalError" in bundled and "equals the original: True" in bundled


def test_stale_diff_is_rejected_with_the_region_named() -> None:
    out = run("stale_diff.py")
    assert "rejected: StaleBaseError" in out
    assert "conflicting region in B0: [0, 12) = b'timeout = 30'" in out
    assert "unchanged: b'timeout = 2\\nretries = 3\\nname = demo\\n'" in out
    assert "a diff whose reads are intact applies: b'timeout = 2\\nretries = 3\\nname = prod\\n'" in out


@pytest.mark.slow
def test_certify_your_own_passes_what_it_can_be_driven_on() -> None:
    out = run("certify_your_own.py")
    assert "R0  passed" in out and "R2  passed" in out
    assert "R1  not_assessed" in out
    assert "exit status 0" in out
