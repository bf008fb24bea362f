"""The reference ``rollcert-protocol/1`` server: rollcert's own ``JournaledBuffer``
served over stdin/stdout.

    python -m rollcert.stateful_tests.protocol_server
    rollcert certify 'subprocess:python -m rollcert.stateful_tests.protocol_server'

It exists for two reasons. It certifies the subprocess path end to end (its
certificate must match the in-process ``bundled`` target's), and it is the
example an author ports to Rust, Go or JavaScript: it knows only the wire
format (:mod:`rollcert.stateful_tests.protocol`) and the implementation it hosts, not
rollcert's adapters. The hooks it uses for fault injection and out-of-log writes
are the same as ``stateful_tests/adapters/bundled.py``'s.

The loop: read a line, answer it with exactly one line, flush; exit when stdin
closes. One process hosts many buffers, named by ids the server chooses;
checkpoint tokens are opaque strings the server chooses too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from itertools import count
from typing import IO

from rollcert.impl import Checkpoint
from rollcert.impl import FaultInjectingJournal
from rollcert.impl import InMemoryJournal
from rollcert.impl import JournaledBuffer
from rollcert.model.contract import check_splice_arguments
from rollcert.model.errors import UnreachableRollbackError
from rollcert.model.errors import error_kind
from rollcert.model.reference import POLICIES
from rollcert.stateful_tests import SUITE_VERSION
from rollcert.stateful_tests.protocol import PROTOCOL_ERROR_KIND
from rollcert.stateful_tests.protocol import PROTOCOL_VERSION
from rollcert.stateful_tests.protocol import WIRE_CAPABILITIES
from rollcert.stateful_tests.protocol import Hello
from rollcert.stateful_tests.protocol import ProtocolError
from rollcert.stateful_tests.protocol import Request
from rollcert.stateful_tests.protocol import decode_line
from rollcert.stateful_tests.protocol import decode_request
from rollcert.stateful_tests.protocol import error_line
from rollcert.stateful_tests.protocol import success_line


@dataclass
class HostedBuffer:
    """One buffer and the fault-injecting journal under it."""

    journal: FaultInjectingJournal
    buffer: JournaledBuffer
    tokens: list[str] = field(default_factory=list)


class JournaledBufferServer:
    """Answers requests for any number of ``JournaledBuffer``s.

    Subclasses (the fake misbehaving servers of ``tests/fake_servers``) override
    :meth:`reply` to misbehave on one operation.
    """

    name = "rollcert-journaled-buffer"
    version = SUITE_VERSION

    def __init__(self) -> None:
        self.buffers: dict[str, HostedBuffer] = {}
        self.checkpoints: dict[str, Checkpoint] = {}
        self._buffer_numbers = count(1)
        self._token_numbers = count(1)

    # -- the loop -------------------------------------------------------------------

    def serve(self, requests: Iterable[bytes], replies: IO[bytes]) -> None:
        for line in requests:
            answer = self.answer(line)
            replies.write(answer)
            replies.flush()

    def answer(self, line: bytes) -> bytes:
        """The one reply line to one request line, whatever the line holds."""
        try:
            message = decode_line(line)
        except ProtocolError as error:
            return error_line(None, PROTOCOL_ERROR_KIND, str(error))
        try:
            request = decode_request(message)
        except ProtocolError as error:
            raw_id = message.get("id")
            return error_line(raw_id if type(raw_id) is int else None, PROTOCOL_ERROR_KIND, str(error))
        return self.reply(request)

    def reply(self, request: Request) -> bytes:
        try:
            result = getattr(self, f"do_{request.op}")(**request.arguments)
        except ProtocolError as error:
            return error_line(request.id, PROTOCOL_ERROR_KIND, str(error))
        except Exception as error:  # the implementation's refusal, reported by kind
            kind = error_kind(error).removeprefix("undocumented:")
            return error_line(request.id, kind, str(error))
        return success_line(request.id, result)

    # -- the operations (one method per op of rollcert.stateful_tests.protocol.OPERATIONS) ---------

    def do_hello(self, protocol: str) -> Hello:
        if protocol != PROTOCOL_VERSION:
            raise ProtocolError(f"this server speaks {PROTOCOL_VERSION!r}, not {protocol!r}")
        return Hello(PROTOCOL_VERSION, self.name, self.version, WIRE_CAPABILITIES)

    def do_new(self, initial: bytes, capacity: int | None, policy: str) -> str:
        if policy not in POLICIES:
            raise ProtocolError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        journal = FaultInjectingJournal(InMemoryJournal())
        buffer = JournaledBuffer(initial, capacity=capacity, policy=policy, journal=journal)
        buffer_id = f"b{next(self._buffer_numbers)}"
        self.buffers[buffer_id] = HostedBuffer(journal, buffer)
        return buffer_id

    def do_close(self, buffer: str) -> None:
        hosted = self._hosted(buffer)
        for token in hosted.tokens:
            self.checkpoints.pop(token, None)
        del self.buffers[buffer]

    def do_read(self, buffer: str) -> bytes:
        return self._hosted(buffer).buffer.read()

    def do_splice(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        self._hosted(buffer).buffer.splice(offset, delete_length, insert)

    def do_rollback(self, buffer: str, steps: int) -> None:
        self._hosted(buffer).buffer.rollback(steps)

    def do_depth(self, buffer: str) -> int:
        return self._hosted(buffer).buffer.depth

    def do_revision(self, buffer: str) -> int:
        return self._hosted(buffer).buffer.revision

    def do_checkpoint(self, buffer: str) -> str:
        hosted = self._hosted(buffer)
        token = f"{buffer}.c{next(self._token_numbers)}"
        self.checkpoints[token] = hosted.buffer.checkpoint()
        hosted.tokens.append(token)
        return token

    def do_rollback_to(self, buffer: str, token: str) -> None:
        hosted = self._hosted(buffer)
        checkpoint = self.checkpoints.get(token)
        if checkpoint is None:
            raise UnreachableRollbackError(f"{token!r} names no checkpoint of a live buffer of this server")
        hosted.buffer.rollback_to(checkpoint)  # another buffer's checkpoint: the buffer refuses it

    def do_arm_journal_fault(self, buffer: str) -> None:
        self._hosted(buffer).journal.fail_next_append()

    def do_write_out_of_log(self, buffer: str, offset: int, delete_length: int, insert: bytes) -> None:
        target = self._hosted(buffer).buffer
        offset, delete_length, insert = check_splice_arguments(len(target.storage), offset, delete_length, insert)
        target.storage.replace(offset, delete_length, insert)  # bypasses the journal, as a stray writer would

    def do_adopt_current(self, buffer: str) -> None:
        self._hosted(buffer).buffer.adopt_current()

    def _hosted(self, buffer_id: str) -> HostedBuffer:
        hosted = self.buffers.get(buffer_id)
        if hosted is None:
            raise ProtocolError(f"no open buffer {buffer_id!r}")
        return hosted


def main(server: JournaledBufferServer | None = None) -> int:
    """Serve stdin to stdout until stdin closes. Anything else that prints goes to
    stderr: stdout belongs to the protocol."""
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr
    (server or JournaledBufferServer()).serve(sys.stdin.buffer, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
