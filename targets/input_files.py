"""Reading a file a user names as input: certificates, findings files, traces.

These files come from elsewhere — a CI artefact, a colleague, a hand edit — so
they are untrusted (SPEC §8). Before a byte is parsed: only a regular file is
read (a FIFO as the path used to hang ``rollcert html`` for ever, a device
could stream without end), and only up to a size limit, so that what a reader
holds is in proportion to what the file could legitimately be. Opening with
``O_NONBLOCK`` means that even the ``open`` of a FIFO with no writer returns at
once, to be refused by the ``fstat`` that follows.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rollcert.targets.adapter import UsageError

#: The largest input file rollcert reads: far above any certificate, trace or
#: findings file a run writes (a certificate of every property with its
#: counterexamples is a few hundred kilobytes).
MAX_INPUT_BYTES = 64 << 20


class InputFileError(UsageError):
    """An input file that cannot be read as one: missing, not a regular file, too
    large, not UTF-8. One line, exit status 3."""


def read_input_bytes(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (``what`` names it in errors)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputFileError(f"cannot read {what} {path}: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise InputFileError(f"cannot read {what} {path}: it is not a regular file")
        if status.st_size > limit:
            raise InputFileError(f"cannot read {what} {path}: {status.st_size} bytes, more than the {limit} allowed")
        chunks, total = [], 0
        while True:  # the size may change under us; never read past the limit
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputFileError(f"cannot read {what} {path}: more than the {limit} bytes allowed")
        return b"".join(chunks)
    except OSError as error:
        raise InputFileError(f"cannot read {what} {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def read_input_text(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the regular file at ``path``."""
    data = read_input_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(f"cannot read {what} {path}: not UTF-8 text (byte {error.start})") from None
