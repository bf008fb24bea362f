"""A target whose process is killed under it: ``splice`` of an insert of two
bytes or more sends SIGKILL to its own process (what the kernel's OOM killer
or a native crash does to a real one). ``rollcert certify`` runs each property
in a worker process, which dies alone (``error``, naming SIGKILL); ``smoke``,
``replay`` and ``explore`` used to die with it (no output, killed by SIGKILL)
and now run the target in a supervised worker too: one line naming the
signal, exit status 2.
"""

from __future__ import annotations

import os
import signal

from _honest import HonestAdapter
from _honest import target


class Killed(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            os.kill(os.getpid(), signal.SIGKILL)
        super().splice(offset, delete_length, insert)


TARGET = target("killed", Killed)
