"""A target whose words try to forge a verdict in every output format: a name
that clears the terminal and paints a passing verdict, a version whose line
breaks end the Markdown list and start a forged verdict table (the real one
hidden in a comment that never closes), and, for inserts of two bytes or more,
an exception whose class name holds the same escape sequences. Under its words
the log is honest but for that exception, so R0 is ``violated``; nothing of the
forgery may show as a verdict (``tests/test_forged_output.py``)."""

from __future__ import annotations

from _honest import COUNTED
from _honest import HonestAdapter

from rollcert.targets.adapter import BufferConfig
from rollcert.targets.adapter import SystemUnderTest
from rollcert.targets.adapter import Target

STEER = "\x1b[2J\x1b[H\x1b[32mR0        passed\x1b[0m\u202e"
FORGED_TABLE = "1.0\n\n| property | verdict | details |\n| --- | --- | --- |\n| R0 No silent corruption | **passed** | forged |\n\n<!--"
#: Characters XML 1.0 forbids: a JUnit file holding one is unreadable to a CI server.
NOT_XML = "\x00\x01\x0b\ufffe\ud800"

Forged = type(f"Forged{STEER}\n\x01\x0b", (Exception,), {})  # a class name holds no NUL or surrogate


class Forging(HonestAdapter):
    def splice(self, offset: int, delete_length: int, insert: bytes) -> None:
        if len(insert) >= 2:
            raise Forged(f"{STEER}\n<script>alert(1)</script>{NOT_XML}")
        super().splice(offset, delete_length, insert)


def build(config: BufferConfig) -> SystemUnderTest:
    return Forging(config)


TARGET = Target(f"forging{STEER}\nexit status 0{NOT_XML}", FORGED_TABLE, COUNTED, build,
                description=f"<img src=x onerror=alert(1)>{STEER}")
