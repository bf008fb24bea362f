"""Certification: drive any implementation against the model and write a certificate.

- :mod:`rollcert.stateful_tests.adapter` — the protocol a system under test speaks;
- :mod:`rollcert.stateful_tests.judge` — executes one operation on model and SUT and compares;
- :mod:`rollcert.stateful_tests.strategies` — the generators aimed at the bug classes;
- :mod:`rollcert.stateful_tests.machines` — one Hypothesis state machine per property;
- :mod:`rollcert.stateful_tests.certificate` — verdicts, counterexamples, JSON/Markdown/JUnit;
- :mod:`rollcert.stateful_tests.cli` — the ``rollcert`` command.
"""

SUITE_VERSION = "0.1.0"
