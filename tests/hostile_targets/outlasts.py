"""Targets that outlast the call timeout (a SIGALRM inside the worker) by what
they do to it; only a deadline enforced from outside the process ends them
(``tests/test_deadlines.py``). Each hangs on a ``splice`` of two bytes or more.

``BLOCKS_SIGALRM``: blocks SIGALRM with ``pthread_sigmask`` and loops: the
timer fires into a blocked signal.

``DISARMS``: ignores SIGALRM, cancels the interval timer, and loops.

``WAITS_IN_C``: one C call that runs for days (``sum`` over a huge ``range``):
the SIGALRM handler only runs when it returns.

``SPINS_IN_THREADS``: starts busy threads, then waits in the same C call.

``IGNORES_TERM``: blocks SIGALRM, ignores SIGTERM and SIGINT, and loops: only
SIGKILL ends it.

``SERVER``: a protocol server (``tests/fake_servers/hangs_on_splice.py``) whose
splice of two bytes never answers, behind a request timeout set far out: the
worker waits in ``select``; its server's process group must die with it.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from pathlib import Path

from _honest import HonestAdapter
from _honest import target


def _spin() -> None:
    while True:
        pass


class BlocksSigalrm(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            _spin()
        super().splice(offset, delete_length, insert)


class Disarms(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            signal.setitimer(signal.ITIMER_REAL, 0)
            _spin()
        super().splice(offset, delete_length, insert)


def _in_c() -> int:
    """One call of C code that runs for days and never returns to the interpreter
    (``sum`` over a ``range`` checks no signal): no handler runs until it does."""
    return sum(range(10**15))


class WaitsInC(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            _in_c()
        super().splice(offset, delete_length, insert)


class SpinsInThreads(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            for _ in range(4):
                threading.Thread(target=_spin, daemon=True).start()
            _in_c()
        super().splice(offset, delete_length, insert)


class IgnoresTerm(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _spin()
        super().splice(offset, delete_length, insert)


BLOCKS_SIGALRM = target("blocks-sigalrm", BlocksSigalrm)
DISARMS = target("disarms", Disarms)
WAITS_IN_C = target("waits-in-c", WaitsInC)
SPINS_IN_THREADS = target("spins-in-threads", SpinsInThreads)
IGNORES_TERM = target("ignores-term", IgnoresTerm)


def server() -> object:
    """The hanging protocol server, with a request timeout it never meets."""
    from rollcert.targets.adapters.subprocess_client import subprocess_target

    script = Path(__file__).parent.parent / "fake_servers" / "hangs_on_splice.py"
    return subprocess_target(shlex.join([sys.executable, str(script)]), timeout=3600)


SERVER = server
