"""``rollcert docs`` regenerates ``docs/tour.md`` identically, with one chapter per property."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rollcert.model.properties import PROPERTIES
from rollcert.specimens.tour import POINTERS
from rollcert.specimens.tour import resolve

TOUR = Path(__file__).resolve().parent.parent / "docs" / "tour.md"


@pytest.mark.slow
def test_committed_tour_is_what_the_command_writes(tmp_path: Path) -> None:
    written = tmp_path / "tour.md"
    done = subprocess.run(
        [sys.executable, "-m", "rollcert.command.cli", "docs", "--output", str(written)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert written.read_text(encoding="utf-8") == TOUR.read_text(encoding="utf-8"), (
        "docs/tour.md is out of date: run `rollcert docs` and commit the result"
    )


def test_every_property_has_a_chapter() -> None:
    text = TOUR.read_text(encoding="utf-8")
    for property_id, prop in PROPERTIES.items():
        assert f"## {property_id} — {prop.title}" in text
    assert text.count("### The minimal counterexample") == len(PROPERTIES)


def test_every_pointer_names_a_function_that_exists() -> None:
    for pointer in POINTERS.values():
        resolve(pointer)  # LookupError when a function was renamed


def test_every_property_has_a_pointer_into_impl_and_the_tour_no_todo() -> None:
    """A property without a pointer fails the generation (it used to print a
    developer's note into the tour instead)."""
    assert set(POINTERS) == set(PROPERTIES)
    text = TOUR.read_text(encoding="utf-8")
    assert "TODO" not in text and "add one to `POINTERS`" not in text
    assert "`JournaledBuffer.rollback`" in text.split("## R7")[1]
