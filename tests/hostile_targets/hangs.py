"""Targets that never return.

``LOOPS``: ``splice`` of an insert of two bytes or more loops forever in
Python. There was no limit on an in-process call: ``rollcert certify`` hung
with no verdict. The call timeout (``--call-timeout``, default 60 s) raises
into the loop; the property is ``error`` naming the call.

``SWALLOWS``: the same loop inside ``try: ... except Exception: pass``: the
timeout is a ``BaseException``, so it still gets out.

``EXITS``: ``splice`` calls ``os._exit(0)``. ``rollcert certify`` used to end
with exit status 0 (nothing violated!) and no certificate; each property now
runs in a worker process, which dies alone: ``error``, exit status 2.

``LEAVES_A_THREAD``: the first buffer starts a non-daemon thread that sleeps
forever. ``rollcert certify`` printed its certificate and then never exited.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

from _honest import HonestAdapter
from _honest import target

from rollcert.targets.adapter import BufferConfig


class Loops(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        while len(insert) >= 2:
            pass
        super().splice(offset, delete_length, insert)


class Swallows(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        while len(insert) >= 2:
            with contextlib.suppress(Exception):  # swallowing is the attack
                time.sleep(0.01)
        super().splice(offset, delete_length, insert)


class Exits(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            os._exit(0)
        super().splice(offset, delete_length, insert)


class LeavesAThread(HonestAdapter):
    started = False

    def __init__(self, config: BufferConfig) -> None:
        super().__init__(config)
        if not LeavesAThread.started:
            LeavesAThread.started = True
            threading.Thread(target=time.sleep, args=(10**6,), name="never-ends").start()


LOOPS = target("loops", Loops)
SWALLOWS = target("swallows", Swallows)
EXITS = target("exits", Exits)
LEAVES_A_THREAD = target("leaves-a-thread", LeavesAThread)
