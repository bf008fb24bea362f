"""The engine: drive any implementation against the model and decide verdicts.

- :mod:`~rollcert.stateful_tests.family` — the interface between the generic harness and
  one property family's model; :mod:`~rollcert.stateful_tests.families` — the one table
  of families (rollback R0–R6, diffs S1–S3, concurrent programs R7);
- :mod:`~rollcert.stateful_tests.judge` — executes one operation on model and target and
  compares, keeping every reading the target cannot tell apart;
- :mod:`~rollcert.stateful_tests.strategies` — the generators aimed at the bug classes;
- :mod:`~rollcert.stateful_tests.machines`, :mod:`~rollcert.stateful_tests.diff_machine`,
  :mod:`~rollcert.stateful_tests.concurrency` — the families;
- :mod:`~rollcert.stateful_tests.shrink`, :mod:`~rollcert.stateful_tests.exhaustive`,
  :mod:`~rollcert.stateful_tests.traces`, :mod:`~rollcert.stateful_tests.certify` —
  minimising, bounded exhaustive search, replayable traces, verdicts.

The engine reaches a target only through :mod:`rollcert.targets`; what people read is
rendered by :mod:`rollcert.reports`, and the command line lives in
:mod:`rollcert.command`. The modules that lived here before those rooms existed
(``rollcert.stateful_tests.adapter``, ``.adapters.checked``, ``.cli``, ...) still import,
for one release, with a ``DeprecationWarning`` naming the new place
(:mod:`~rollcert.stateful_tests._moved`).
"""

from rollcert.stateful_tests._moved import install_old_paths
from rollcert.targets.version import SUITE_VERSION

install_old_paths()

__all__ = ["SUITE_VERSION"]
