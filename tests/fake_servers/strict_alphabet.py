"""A version 2 server honest only on the bytes it declares (``x``, ``y``, ``z``
and a line break): any other byte in an initial buffer, an insert or a hunk
makes it answer an undocumented error kind, as a package that cannot hold the
byte would. ``rollcert smoke`` must ask it in its own letters."""

import sys

from rollcert.targets.protocol import Limits
from rollcert.targets.protocol_server import JournaledBufferServer
from rollcert.targets.protocol_server import main

ALPHABET = b"xyz\n"


class AlphabetError(Exception):
    pass


def _check(data: bytes) -> None:
    outside = sorted(set(data) - set(ALPHABET))
    if outside:
        raise AlphabetError(f"bytes outside the declared alphabet: {bytes(outside)!r}")


class StrictAlphabet(JournaledBufferServer):
    name = "strict-alphabet"
    limits = Limits(alphabet=ALPHABET)

    def do_new(self, initial: bytes, *args: object, **kwargs: object) -> str:  # type: ignore[override]
        _check(initial)
        return super().do_new(initial, *args, **kwargs)  # type: ignore[arg-type]

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        _check(insert)
        super().do_splice(buffer, offset, delete_length, insert)

    def do_apply_diff(self, buffer: str, snapshot: str, mode: str, hunks: list, reads: list) -> str:  # type: ignore[override,type-arg]
        for _, _, replacement in hunks:
            _check(replacement)
        return super().do_apply_diff(buffer, snapshot, mode, hunks, reads)


sys.exit(main(StrictAlphabet()))
