"""A target that breaks on the traces of a corpus: ``splice`` of the insert
``crash`` calls ``os._exit(0)``, of ``kill`` sends it SIGKILL, of ``hang``
spins forever, of ``slow`` takes 0.1 s, and of ``bad`` writes ``BAD`` (silent
corruption: R0 violated). Every other splice is honest. ``rollcert certify --corpus`` used to replay a corpus in
one worker: a crash or a hang on one entry, or a corpus longer than
``--deadline``, dropped the whole corpus and certified R0 ``passed`` (exit 0),
"1 skipped" the only sign. Now the entry that crashed or hung is its property's
``error`` naming the file, the entries after it are replayed in a fresh worker,
and each entry has a deadline of its own.
"""

from __future__ import annotations

import os
import signal
import time

from _honest import HonestAdapter
from _honest import target


class CorpusBreaker(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if insert == b"crash":
            os._exit(0)
        if insert == b"kill":
            os.kill(os.getpid(), signal.SIGKILL)
        while insert == b"hang":
            pass
        if insert == b"slow":
            time.sleep(0.1)
        super().splice(offset, delete_length, b"BAD" if insert == b"bad" else insert)


TARGET = target("corpus-breaker", CorpusBreaker)
