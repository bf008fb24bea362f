"""A real crash: SIGKILL a process in the middle of its durable edits (R5).

A child interpreter opens a durable buffer on real files and runs a
deterministic stream of random splices, rollbacks and compactions, printing a
line after each operation *returns*. The parent kills it with SIGKILL at a
random moment, then recovers the journal in-process. If the child reported k
operations, the k-th had returned (so it must survive) and the (k+1)-th may
have been committed without being reported: the recovered bytes, depth and
revision must equal the model's after k or after k+1 operations — never
anything else, and recovery must not fail.

SIGKILL ends the process, not the machine: what the child wrote stays in the
page cache, so this shows crash atomicity of the code path (a kill between the
write and the fsync, during a compaction's rename, between committing a record
and applying it); power loss and torn sectors are the simulated disk's job.
"""

from __future__ import annotations

import collections
import inspect
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.operations import Compact
from rollcert.model.operations import Operation
from rollcert.model.operations import Rollback
from rollcert.model.operations import Splice
from rollcert.model.reference import initial_state
from rollcert.model.reference import step

ROOT = Path(__file__).resolve().parent.parent
INITIAL = b"rollcert-sigkill"
#: Operations in each child's stream; the parent kills well before the end.
STREAM_LENGTH = 48
#: The parent waits for between 0 and this many reported operations before the kill.
MOST_LINES_BEFORE_KILL = 36
KILLS = 200


def operation_stream(seed: int, count: int) -> list[Operation]:
    """The deterministic operations of one child: mostly small splices on a
    small buffer over a tiny alphabet (so equal bytes recur), some rollbacks of
    1-3 records and a few compactions. Each is valid in the model's state, so
    none is refused. The child runs this same source (see CHILD_CODE)."""
    rng = random.Random(seed)
    state = initial_state(INITIAL)
    operations: list[Operation] = []
    for _ in range(count):
        length, depth = len(state.current), state.depth
        roll = rng.random()
        operation: Operation
        if depth and roll < 0.15:
            operation = Rollback(rng.randint(1, min(depth, 3)))
        elif depth and roll < 0.2:
            operation = Compact(rng.randint(0, depth))
        else:
            offset = rng.randint(0, length)
            delete_length = rng.randint(0, min(length - offset, 6 if length < 48 else 24))
            insert = bytes(rng.choice(b"ab\x00\xff\n") for _ in range(rng.randint(0, 6)))
            operation = Splice(offset, delete_length, insert)
        outcome = step(state, operation)
        assert outcome.error is None, operation
        state = outcome.state
        operations.append(operation)
    return operations


CHILD_CODE = (
    "import random, sys\n"
    f"INITIAL = {INITIAL!r}\n"
    "from rollcert.impl.file_journal import open_durable_buffer\n"
    "from rollcert.impl.storage import RealDirectory\n"
    "from rollcert.model.operations import Compact, Operation, Rollback, Splice\n"
    "from rollcert.model.reference import initial_state, step\n"
    + textwrap.dedent(inspect.getsource(operation_stream))
    + textwrap.dedent(
        """
        directory, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        buffer = open_durable_buffer(RealDirectory(directory), INITIAL)
        out = sys.stdout
        out.write("ready\\n")
        out.flush()
        for index, operation in enumerate(operation_stream(seed, count), 1):
            if isinstance(operation, Splice):
                buffer.splice(operation.offset, operation.delete_length, operation.insert)
            elif isinstance(operation, Rollback):
                buffer.rollback(operation.steps)
            else:
                buffer.compact(operation.keep)
            out.write(f"{index}\\n")
            out.flush()
        out.write("done\\n")
        out.flush()
        sys.stdin.read()  # wait to be killed, so that every run ends the same way
        """
    )
)


def model_snapshots(operations: list[Operation]) -> list[tuple[bytes, int, int]]:
    """(bytes, depth, revision) after 0, 1, ... len(operations) operations."""
    state = initial_state(INITIAL)
    snapshots = [(state.current, state.depth, state.revision)]
    for operation in operations:
        state = step(state, operation).state
        snapshots.append((state.current, state.depth, state.revision))
    return snapshots


def kill_one(directory: Path, seed: int, rng: random.Random, log: Path) -> tuple[int, bool]:
    """Start a child on stream ``seed``, SIGKILL it at a random point, return
    (operations it reported, whether it had printed "done")."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with log.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD_CODE, str(directory), str(seed), str(STREAM_LENGTH)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    assert child.stdin is not None and child.stdout is not None
    try:
        lines = [child.stdout.readline()]
        assert lines[0] == b"ready\n", (lines, log.read_text())
        for _ in range(rng.randint(0, MOST_LINES_BEFORE_KILL)):
            lines.append(child.stdout.readline())
        # Let the child run on for a moment (or not at all), so that the kill
        # falls anywhere in an operation, not just after a flush.
        if rng.random() < 0.7:
            time.sleep(rng.uniform(0, 0.002))
        child.send_signal(signal.SIGKILL)
        lines.extend(child.stdout.read().splitlines(keepends=True))
        returncode = child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdin.close()
        child.stdout.close()
    assert returncode == -signal.SIGKILL, (returncode, log.read_text())
    reported = [line for line in lines[1:] if line != b"done\n"]
    assert reported == [f"{index}\n".encode() for index in range(1, len(reported) + 1)], lines
    return len(reported), lines[-1] == b"done\n"


def recover_and_resume(directory: Path) -> tuple[tuple[bytes, int, int], bool]:
    """Recover the killed child's journal as the next process would; then
    commit one more splice on it and check that a further recovery sees it
    (a cut-off torn tail must leave the file ready for appends)."""
    storage = RealDirectory(directory)
    try:
        buffer = open_durable_buffer(storage, b"initial is ignored: the journal exists")
        recovered = (buffer.read(), buffer.depth, buffer.revision)
        buffer.splice(0, 0, b"after the kill")
        resumed = (buffer.read(), buffer.depth, buffer.revision)
    finally:
        storage.close()
    storage = RealDirectory(directory)
    try:
        again = open_durable_buffer(storage, b"")
        return recovered, (again.read(), again.depth, again.revision) == resumed
    finally:
        storage.close()


@pytest.mark.slow
def test_sigkill_at_random_points_recovers_the_state_before_or_after(tmp_path: Path) -> None:
    """200 real SIGKILLs, each of a fresh child on its own random stream: every
    recovery succeeds and gives the model state after the k reported
    operations or after k+1, and the recovered journal takes further records.
    The distribution of k and of the two outcomes is
    printed (``-s``) so a run can show where the kills fell."""
    rng = random.Random(20261130)
    reported_counts: collections.Counter[int] = collections.Counter()
    outcomes: collections.Counter[str] = collections.Counter()
    interrupted: collections.Counter[str] = collections.Counter()
    bad: list[str] = []
    started = time.monotonic()
    for run in range(KILLS):
        seed = 7_000 + run
        directory = tmp_path / f"run{run:03}"
        k, finished = kill_one(directory, seed, rng, tmp_path / "stderr.txt")
        operations = operation_stream(seed, STREAM_LENGTH)
        snapshots = model_snapshots(operations)
        assert (directory / "journal").exists(), "the child reported ready without a journal"
        reported_counts[k] += 1
        interrupted[type(operations[k]).__name__ if k < STREAM_LENGTH else "nothing (idle)"] += 1
        if finished:
            outcomes["idle (all operations done)"] += 1
        try:
            recovered, resumed = recover_and_resume(directory)
        except Exception as error:
            bad.append(f"seed {seed}, k={k}: recovery raised {error!r}")
            continue
        if recovered == snapshots[k]:
            outcomes["state after k"] += 1
        elif k < STREAM_LENGTH and recovered == snapshots[k + 1]:
            outcomes["state after k+1 (committed, not reported)"] += 1
        else:
            bad.append(f"seed {seed}, k={k}: recovered {recovered!r}, expected {snapshots[k]!r} or the next")
        if not resumed:
            bad.append(f"seed {seed}, k={k}: a splice after the recovery was not recovered by the next open")
    elapsed = time.monotonic() - started
    print(
        f"\n{KILLS} SIGKILLs in {elapsed:.1f} s; outcomes {dict(outcomes)}; "
        f"first unreported operation {dict(interrupted)}; "
        f"k distribution {dict(sorted(reported_counts.items()))}"
    )
    assert not bad, "\n".join(bad)
    assert sum(reported_counts.values()) == KILLS
    # The kills must be spread over the stream, not all at its start or end.
    assert len(reported_counts) >= 10
