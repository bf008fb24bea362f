"""The ways in: the ``rollcert`` command line (:mod:`~rollcert.command.cli`),
``smoke`` (:mod:`~rollcert.command.smoke`), the worker processes every property and
supervised subcommand runs in (:mod:`~rollcert.command.parallel`), and the pytest
plugin (:mod:`~rollcert.command.pytest_plugin`).

The top room: it imports the reports, the engine and the targets, and nothing
imports it (but the specimens' plugin, which adds subcommands the way a third
party's would). Kept empty here so that pytest loading the plugin imports nothing
heavy.
"""
