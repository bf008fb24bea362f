"""The third-party verdicts, searched again: every certificate the pages of
docs/certifications/ embed, re-run at its page's profile and seed, verdict by
verdict beside what the page says.

    python -m benchmarks.documented_verdicts                 # every page
    python -m benchmarks.documented_verdicts textual.md ...  # some pages
    python -m benchmarks.documented_verdicts --json out.json

This is a search (a whole certification per embedded certificate, some at the
``ci`` profile: about an hour of CPU for every page), so it is a benchmark, run
by hand or by a scheduled job, not a test: the test suite replays each finding
the pages document from its stored trace (tests/test_documented_findings.py) in
milliseconds. Exit status 1 when a verdict is not the page's (a new release of a
package behaves differently, or a change to rollcert moved a verdict): read the
new counterexamples, update the page's summary, then run
``python docs/certifications/regenerate.py PAGE``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "docs" / "certifications"
REGENERATE = "python docs/certifications/regenerate.py"
#: The longest counterexample a documented finding may have.
MAX_COUNTEREXAMPLE_STEPS = 8

MARKER = re.compile(
    r"<!-- certificate: (?P<target>\S+) profile=(?P<profile>\w+) seed=(?P<seed>\d+) -->\n(?P<body>.*?)<!-- end certificate -->",
    re.DOTALL,
)
#: A verdict row of an embedded certificate; the verdict may be Markdown-escaped (``not\_assessed``).
VERDICT_ROW = re.compile(r"^\| (?P<pid>[RS]\d) [^|]* \| \*\*(?P<verdict>[\w\\]+)\*\* \|", re.MULTILINE)


@dataclass(frozen=True)
class Documented:
    """One certificate embedded in a page: what was run and the verdicts it gave."""

    page: str
    target: str
    profile: str
    seed: int
    verdicts: dict[str, str]


def documented_certificates(wanted: Callable[[str], bool] = lambda target: True) -> list[Documented]:
    """The certificates of the targets ``wanted`` accepts, in page order."""
    found = []
    for page in sorted(PAGES.glob("*.md")):
        for match in MARKER.finditer(page.read_text(encoding="utf-8")):
            if wanted(match["target"]):
                verdicts = {row["pid"]: row["verdict"].replace("\\", "") for row in VERDICT_ROW.finditer(match["body"])}
                found.append(Documented(page.name, match["target"], match["profile"], int(match["seed"]), verdicts))
    return found


@dataclass(frozen=True)
class Recheck:
    documented: Documented
    verdicts: dict[str, str]
    seconds: float

    @property
    def changed(self) -> dict[str, str]:
        return {
            pid: f"{self.documented.verdicts.get(pid)} -> {verdict}"
            for pid, verdict in self.verdicts.items()
            if verdict != self.documented.verdicts.get(pid)
        }


def recheck(documented: Documented) -> Recheck:
    """Certify ``documented``'s target as its page was."""
    from rollcert.stateful_tests.certify import certify
    from rollcert.targets.resolve import resolve_target

    started = time.perf_counter()
    certificate = certify(resolve_target(documented.target), profile=documented.profile, seed=documented.seed)
    verdicts = {pid: result.verdict for pid, result in certificate.results.items()}
    return Recheck(documented, verdicts, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("pages", nargs="*", help="page file names (default: every page)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    pages = set(args.pages)
    chosen = [d for d in documented_certificates() if not pages or d.page in pages]
    if not chosen:
        parser.error(f"no embedded certificate on {', '.join(sorted(pages))}")
    rows, moved = [], 0
    for documented in chosen:
        done = recheck(documented)
        changed = done.changed
        moved += bool(changed)
        status = "as documented" if not changed else f"MOVED {changed}"
        print(
            f"{documented.page:<22}{documented.target:<36}{documented.profile:<7}{documented.seed:<4}"
            f"{done.seconds:>8.1f} s  {status}",
            flush=True,
        )
        rows.append({"page": documented.page, "target": documented.target, "profile": documented.profile,
                     "seed": documented.seed, "seconds": round(done.seconds, 1), "changed": changed})
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(f"{len(chosen) - moved} of {len(chosen)} certificates as documented")
    if moved:
        print(f"Read the new counterexamples, update the pages' summaries, then run {REGENERATE} PAGE.", file=sys.stderr)
    return 1 if moved else 0


if __name__ == "__main__":
    raise SystemExit(main())
