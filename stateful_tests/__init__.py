"""Certification: drive any implementation against the model and write a certificate.

- :mod:`stateful_tests.adapter` — the protocol a system under test speaks;
- :mod:`stateful_tests.judge` — executes one operation on model and SUT and compares;
- :mod:`stateful_tests.strategies` — the generators aimed at the bug classes;
- :mod:`stateful_tests.machines` — one Hypothesis state machine per property;
- :mod:`stateful_tests.certificate` — verdicts, counterexamples, JSON/Markdown/JUnit;
- :mod:`stateful_tests.cli` — the ``rollcert`` command.
"""

SUITE_VERSION = "0.1.0"
