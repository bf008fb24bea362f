"""One writer, and no links or special files (issue 12, R5), on real files.

Two real processes: the first opens a journal and keeps it; the second is
refused with ``JournalInUseError`` naming the first's pid, and every splice the
first was told had happened is recovered after it exits. Symlinks planted at
the journal, its temporary file or its lock, a FIFO at the journal path and a
link to a device are refused with a clear error — nothing hangs, nothing
outside the directory is written.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rollcert.impl.file_journal import open_durable_buffer
from rollcert.impl.storage import RealDirectory
from rollcert.model.errors import JournalError
from rollcert.model.errors import JournalInUseError
from rollcert.model.errors import RecoveryError

JOURNAL = "journal"

HOLDER = textwrap.dedent(
    """
    import sys
    from rollcert.impl.file_journal import open_durable_buffer
    from rollcert.impl.storage import RealDirectory

    buffer = open_durable_buffer(RealDirectory(sys.argv[1]), b"first writer:")
    for number in range(20):
        buffer.splice(len(buffer), 0, b" %d" % number)
    print("ready", flush=True)   # every splice above has returned: it is durable
    sys.stdin.readline()          # hold the journal until told to go
    buffer.splice(len(buffer), 0, b" last")
    print("done", flush=True)
    """
)

SECOND = textwrap.dedent(
    """
    import sys
    from rollcert.impl.file_journal import open_durable_buffer
    from rollcert.impl.storage import RealDirectory
    from rollcert.model.errors import JournalInUseError

    try:
        buffer = open_durable_buffer(RealDirectory(sys.argv[1]), b"second writer")
    except JournalInUseError as error:
        print(f"refused pid={error.holder_pid}: {error}")
    else:
        buffer.splice(0, 0, b"SECOND ")
        print("opened")
    """
)


@pytest.mark.slow
def test_a_second_process_is_refused_while_the_first_holds_the_journal(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        second = subprocess.run(
            [sys.executable, "-c", SECOND, str(directory)], capture_output=True, text=True, timeout=60, check=True
        )
        assert second.stdout.startswith(f"refused pid={holder.pid}: "), second.stdout + second.stderr
        assert "in use by process" in second.stdout
        # And in this process too: the lock is the OS's, not a convention of one process.
        with pytest.raises(JournalInUseError) as refused:
            open_durable_buffer(RealDirectory(directory), b"third")
        assert refused.value.holder_pid == holder.pid
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "done"
    finally:
        holder.stdin.close() if holder.stdin else None
        holder.wait(timeout=60)
    # The first writer is gone (its lock with it): nothing it was told had happened is lost.
    storage = RealDirectory(directory)
    recovered = open_durable_buffer(storage, b"ignored")
    expected = b"first writer:" + b"".join(b" %d" % n for n in range(20)) + b" last"
    assert (recovered.read(), recovered.depth, recovered.revision) == (expected, 21, 21)
    storage.close()


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    """The lock is the kernel's: a writer killed with SIGKILL cannot leave the journal locked."""
    directory = tmp_path / "store"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "ready"
    holder.kill()
    holder.wait(timeout=60)
    storage = RealDirectory(directory)
    recovered = open_durable_buffer(storage, b"ignored")
    assert recovered.depth == 20
    storage.close()


def test_the_lock_is_released_by_close_and_taken_again(tmp_path: Path) -> None:
    storage = RealDirectory(tmp_path)
    buffer = open_durable_buffer(storage, b"abc")
    with pytest.raises(JournalInUseError):
        open_durable_buffer(RealDirectory(tmp_path), b"")
    buffer.journal.close()  # type: ignore[attr-defined]  # a FileJournal
    again = RealDirectory(tmp_path)
    assert open_durable_buffer(again, b"").read() == b"abc"
    again.close()
    storage.close()


# -- links and special files -----------------------------------------------------------------


def test_a_symlink_planted_at_the_temporary_file_is_not_followed(tmp_path: Path) -> None:
    """The issue's case: a link at journal.new used to get its target
    overwritten with the journal. Now the link is removed and the temporary
    file created exclusively in the directory; the target is untouched."""
    directory, victim = tmp_path / "store", tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    storage = RealDirectory(directory)
    buffer = open_durable_buffer(storage, b"secret contents")
    buffer.splice(0, 0, b"more ")
    (directory / (JOURNAL + ".new")).symlink_to(victim)
    buffer.compact(0)
    assert victim.read_bytes() == b"precious"
    assert not (directory / (JOURNAL + ".new")).exists()
    assert not (directory / JOURNAL).is_symlink()
    storage.close()
    storage = RealDirectory(directory)
    assert open_durable_buffer(storage, b"").read() == b"more secret contents"
    storage.close()


def test_a_symlink_at_the_journal_is_refused(tmp_path: Path) -> None:
    directory, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    directory.mkdir()
    elsewhere.write_bytes(b"not yours")
    (directory / JOURNAL).symlink_to(elsewhere)
    storage = RealDirectory(directory)
    with pytest.raises(RecoveryError, match="symbolic link"):
        open_durable_buffer(storage, b"")
    storage.close()
    assert elsewhere.read_bytes() == b"not yours"


def test_a_symlink_to_a_device_is_refused_at_once(tmp_path: Path) -> None:
    """A link to /dev/zero used to be read until memory ran out."""
    directory = tmp_path / "store"
    directory.mkdir()
    (directory / JOURNAL).symlink_to("/dev/zero")
    storage = RealDirectory(directory)
    with pytest.raises(RecoveryError, match="symbolic link"):
        open_durable_buffer(storage, b"")
    storage.close()


@pytest.mark.slow
def test_a_fifo_at_the_journal_is_refused_without_hanging(tmp_path: Path) -> None:
    """A FIFO used to block recovery forever (open waits for a writer). It is
    opened without blocking and refused as not a regular file. Run in a child
    with a timeout, so a regression fails instead of hanging the suite."""
    directory = tmp_path / "store"
    directory.mkdir()
    os.mkfifo(directory / JOURNAL)
    code = textwrap.dedent(
        """
        import sys
        from rollcert.impl.file_journal import open_durable_buffer
        from rollcert.impl.storage import RealDirectory
        from rollcert.model.errors import RecoveryError
        try:
            open_durable_buffer(RealDirectory(sys.argv[1]), b"")
        except RecoveryError as error:
            print(error)
        """
    )
    child = subprocess.run([sys.executable, "-c", code, str(directory)], capture_output=True, text=True, timeout=60)
    assert "is a FIFO; a journal file must be a regular file" in child.stdout, child.stdout + child.stderr


def test_a_directory_at_the_journal_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    (directory / JOURNAL).mkdir(parents=True)
    storage = RealDirectory(directory)
    with pytest.raises(RecoveryError, match="directory"):
        open_durable_buffer(storage, b"")
    storage.close()


def test_a_symlink_at_the_lock_file_is_refused(tmp_path: Path) -> None:
    directory, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    directory.mkdir()
    elsewhere.write_bytes(b"untouched")
    (directory / (JOURNAL + ".lock")).symlink_to(elsewhere)
    storage = RealDirectory(directory)
    with pytest.raises(JournalError, match="symbolic link"):
        open_durable_buffer(storage, b"")
    storage.close()
    assert elsewhere.read_bytes() == b"untouched"
    assert not (directory / JOURNAL).exists()
