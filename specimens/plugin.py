"""What the specimens add to the ``rollcert`` command, as a plugin
(:mod:`rollcert.targets.plugins`): the ``specimen:NAME`` targets,
``rollcert specimens`` (the kill matrix), ``rollcert properties`` (the table of
where each property is stated, checked, broken and proved) and ``rollcert docs``
(the tour).

Registered through the entry point ``rollcert.plugins: specimens`` in
``pyproject.toml``, so the harness below never imports this package.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rollcert.command.cli import add_run_options
from rollcert.command.cli import check_writable
from rollcert.command.cli import write_output
from rollcert.targets.adapter import Target
from rollcert.targets.adapter import TargetError
from rollcert.targets.plugins import Command
from rollcert.targets.plugins import register_command
from rollcert.targets.plugins import register_scheme


def specimen_target(name: str) -> Target:
    from rollcert.specimens import load_all

    registry = load_all()
    specimen = registry.get(name)
    if specimen is None or specimen.target is None:
        raise TargetError(f"no specimen named {name!r}; choose one of: {', '.join(sorted(registry))}")
    return specimen.target


def _configure_specimens(parser: argparse.ArgumentParser) -> None:
    add_run_options(parser)
    parser.add_argument("--json", type=Path, help="write the kill matrix as JSON")
    parser.add_argument("--markdown", type=Path, help="write the specimens page (stories and counterexamples)")


def _run_specimens(args: argparse.Namespace) -> int:
    from rollcert.specimens.kill_matrix import kill_matrix
    from rollcert.specimens.kill_matrix import render_kill_matrix
    from rollcert.specimens.kill_matrix import render_kill_matrix_markdown

    check_writable(args.json, args.markdown)
    matrix = kill_matrix(profile=args.profile, seed=args.seed)
    print(render_kill_matrix(matrix))
    write_output(args.json, json.dumps(matrix.to_json(), indent=2) + "\n")
    if args.markdown is not None:
        write_output(args.markdown, render_kill_matrix_markdown(matrix, profile=args.profile, seed=args.seed))
    return 0 if matrix.all_as_expected else 1


def _configure_docs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, default=Path("docs/tour.md"), help="where to write it (default: %(default)s)")
    parser.add_argument(
        "--glossary", type=Path, default=Path("docs/glossary.md"),
        help="where to write the glossary the tour links to (default: %(default)s)",
    )


def _run_docs(args: argparse.Namespace) -> int:
    from rollcert.reports.glossary import glossary_markdown
    from rollcert.specimens.tour import write_tour

    check_writable(args.output)
    check_writable(args.glossary)
    write_output(args.glossary, glossary_markdown())
    print(f"wrote {args.glossary}")
    write_output(args.output, write_tour())
    print(f"wrote {args.output}")
    return 0


def _configure_properties(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")


def _run_properties(args: argparse.Namespace) -> int:
    from rollcert.specimens.property_table import property_table
    from rollcert.specimens.property_table import render_markdown
    from rollcert.specimens.property_table import render_text

    rows = property_table()
    print(render_markdown(rows) if args.markdown else render_text(rows))
    return 0


def register() -> None:
    register_scheme("specimen", specimen_target)
    register_command(
        Command("specimens", "certify every specimen and print the kill matrix", _configure_specimens, _run_specimens)
    )
    register_command(
        Command(
            "properties",
            "where each property is stated, which machine checks it, which specimens break it, what proves it",
            _configure_properties,
            _run_properties,
        )
    )
    register_command(Command("docs", "write the tour of the properties and the glossary (docs/tour.md, docs/glossary.md)", _configure_docs, _run_docs))
