"""Hypothesis profiles for the suite's own tests.

``default`` is fast (the README's test command); ``ci`` and ``thorough`` search
harder. Choose with ``HYPOTHESIS_PROFILE=ci``. Every profile is derandomized so
a test run is reproducible; failures print the reproduction blob.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from hypothesis import HealthCheck
from hypothesis import settings

# ``benchmarks`` is a folder of the repository, not an installed package; the
# tests import what the benchmarks and the tests share (the documented
# certificates' parser) from it.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

_common = dict(deadline=None, derandomize=True, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("default", max_examples=60, **_common)  # type: ignore[arg-type]
settings.register_profile("ci", max_examples=300, **_common)  # type: ignore[arg-type]
settings.register_profile("thorough", max_examples=3000, **_common)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# A runner that starts the suite as a background job (``pytest … &`` in a script)
# hands it SIGINT ignored, and every process it starts inherits that: the tests
# of Ctrl-C (their children must stop on SIGINT) would then time out, and a
# target's own KeyboardInterrupt could not be told from the user's. The suite
# tests Ctrl-C as a terminal delivers it, so it takes SIGINT back (its children
# get the default action at exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
