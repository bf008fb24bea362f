"""A correct log whose every splice changes the process around it: the working
directory (to /), ``sys.stdout`` and ``sys.stderr`` (to /dev/null), the
recursion limit (down to 200), ``random``'s global seed and the loaded
Hypothesis settings profile (one example of one step).

``rollcert certify`` used to print its certificate into /dev/null and write a
relative ``--json`` path under / (or fail to, as a user without rights there).
Each property now runs in a worker process of its own, so none of it reaches
the process that writes the certificate; the verdict is ``passed``.
"""

from __future__ import annotations

import os
import random
import sys

from _honest import HonestAdapter
from _honest import target
from hypothesis import settings

settings.register_profile("hostile-one-example", max_examples=1, stateful_step_count=1)


class ChangesEverything(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        os.chdir("/")
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - left open on purpose
        sys.setrecursionlimit(200)
        random.seed(0)
        settings.load_profile("hostile-one-example")
        super().splice(offset, delete_length, insert)


TARGET = target("changes-everything", ChangesEverything)
