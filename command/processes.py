"""Every process a ``rollcert`` command starts ends with it.

A run starts processes in layers: the forkserver, a worker per property (each
leading its own process group, see :mod:`rollcert.command.parallel`), and the
protocol servers the workers start (each in a session of its own, with whatever
it forks). ``kill -TERM`` of ``rollcert certify`` used to leave a forkserver, a
worker and a protocol server running: SIGTERM ended the parent without a word
to anything below it.

Two things close that gap, for the command line only (a test calling
``cli.main([...])`` in its own process is left alone):

- SIGTERM is turned into :class:`Terminated`, a ``KeyboardInterrupt``, so that
  it unwinds exactly as Ctrl-C does: every worker stopped, its process group and
  its servers' killed (exit status 143, as a shell reports SIGTERM; ``certify``
  and ``campaign`` write the certificate of what finished instead, marked
  interrupted, and exit 1 or 2);
- on Linux this process becomes a *child subreaper*: a process whose parent
  dies (a server whose worker was killed) is re-parented to rollcert rather
  than to init, so that :func:`end_descendants` can find it. That runs when the
  command returns, whatever ended it, and kills every descendant still there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

#: Linux's ``prctl`` option that makes orphaned descendants this process's children.
_PR_SET_CHILD_SUBREAPER = 36
#: Linux's ``prctl`` option that sends this process a signal when its parent dies.
_PR_SET_PDEATHSIG = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM reached ``rollcert``: unwind as Ctrl-C does (exit status 143)."""


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def signal_name(interruption: KeyboardInterrupt) -> str:
    """The signal behind ``interruption``, as an interrupted certificate names it."""
    return "SIGTERM" if isinstance(interruption, Terminated) else "SIGINT"


def guard_the_run() -> None:
    """Turn SIGTERM into :class:`Terminated`, and adopt orphaned descendants (Linux)."""
    signal.signal(signal.SIGTERM, _terminated)
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux; elsewhere nothing).

    For rollcert's workers. ``kill -KILL`` of ``rollcert`` runs no handler and no
    ``finally``: :func:`end_descendants` never runs, and a worker (child of the
    forkserver, or of rollcert itself for a supervised one) ran on for the rest of
    its property, holding the forkserver and the resource tracker alive. With
    this, the worker goes with its parent, and the forkserver goes with rollcert
    once no worker holds its "alive" pipe (see ``parallel._die_with_the_run``)."""
    if sys.platform != "linux":
        return
    import ctypes

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl: no signal will come now
        os.kill(os.getpid(), signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(child) for child in listing.read().split()]
    return found


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), parents first."""
    seen: list[int] = []
    waiting = _children(os.getpid() if pid is None else pid)
    while waiting:
        child = waiting.pop(0)
        if child not in seen:
            seen.append(child)
            waiting += _children(child)
    return seen


def end_descendants(rounds: int = 5) -> None:
    """SIGKILL every descendant still alive, and reap what were children; a few
    rounds, for a process that forked while the first went by."""
    if not os.path.isdir("/proc/self/task"):
        return
    for _ in range(rounds):
        left = descendants()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()


def _reap() -> None:
    import time

    give_up = time.monotonic() + 1.0
    while time.monotonic() < give_up:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not descendants():
                return
            time.sleep(0.01)
