"""A test that takes a second or more is marked ``slow``: read pytest's
``--durations`` report from a test run's output and fail on any unmarked test
over the limit.

    python .ci/check_durations.py PYTEST_OUTPUT_FILE [--limit SECONDS]

The README's test command prints every phase of a second or more
(``--durations=0 --durations-min=1``); this script takes the ``call`` lines,
asks pytest which tests carry the ``slow`` marker (``--collect-only -m slow``),
and lists the others that ran past ``--limit``. The limit is the rule (one
second) with room for a loaded two-core CI machine running two workers: a test
measured at 1.2 s there may be 0.6 s alone. Exit 1 when any test is over it, 2
when the output holds no durations report at all (the check could not judge, so
it does not pass).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

#: "12.34s call     tests/test_x.py::test_y[param]"
DURATION = re.compile(r"^(?P<seconds>\d+(?:\.\d+)?)s (?P<phase>call|setup|teardown)\s+(?P<nodeid>\S.*?)\s*$")
REPORT_HEADER = re.compile(r"^=+ slowest (\d+ )?durations", re.MULTILINE)


def slow_tests(pytest: str) -> set[str]:
    done = subprocess.run(
        [pytest, "--collect-only", "-q", "-m", "slow", "-p", "no:randomly"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode not in (0, 5):
        sys.exit(f"check_durations: could not collect the slow tests:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {line.strip() for line in done.stdout.splitlines() if "::" in line}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("output", type=Path, help="the test run's output")
    parser.add_argument("--limit", type=float, default=2.0, help="seconds (default %(default)s)")
    parser.add_argument("--pytest", default=".venv/bin/pytest")
    args = parser.parse_args()
    text = args.output.read_text(encoding="utf-8", errors="replace")
    if not REPORT_HEADER.search(text):
        print(f"check_durations: {args.output} holds no durations report (run pytest with --durations=0)")
        return 2
    calls: dict[str, float] = {}
    for line in text.splitlines():
        match = DURATION.match(line)
        if match and match["phase"] == "call":
            calls[match["nodeid"]] = float(match["seconds"])
    marked = slow_tests(args.pytest)
    over = sorted(((seconds, nodeid) for nodeid, seconds in calls.items() if seconds > args.limit and nodeid not in marked),
                  reverse=True)
    if over:
        print(f"check_durations: {len(over)} test(s) took over {args.limit} s and are not marked slow "
              "(add @pytest.mark.slow, or make them faster):")
        for seconds, nodeid in over:
            print(f"  {seconds:8.2f}s  {nodeid}")
        return 1
    slowest = max(((s, n) for n, s in calls.items() if n not in marked), default=None)
    print(f"check_durations: every test over {args.limit} s is marked slow "
          f"({len(calls)} reported at 1 s or more; {len(marked)} marked slow"
          + (f"; slowest unmarked {slowest[0]:.2f}s {slowest[1]}" if slowest else "") + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
