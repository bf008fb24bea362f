"""The ``rollcert`` command.

    rollcert certify [TARGET] [--profile quick|ci|thorough] [--seed N] [--json PATH]
                     [--markdown PATH] [--junit PATH] [--only R2,R3]
    rollcert specimens [--profile P] [--seed N]   # certify every specimen: the kill matrix
    rollcert replay TARGET --trace JSON            # re-run a counterexample's steps
    rollcert smoke TARGET                          # a handful of checks: is the adapter wired up?
    rollcert explore [TARGET] --depth K            # bounded exhaustive search
    rollcert prove [...]                           # the symbolic proofs (see proofs/)
    rollcert explain TARGET|CERT.json [--property ID] [--all]   # a counterexample, step by step
    rollcert html CERT.json PATH                   # a JSON certificate drawn as one HTML page
    rollcert docs [--output docs/tour.md]          # the tour: one chapter per property

Exit status (SPEC §6): 0 nothing violated and nothing unknown; 1 a violation;
2 unknown or error without a violation; 3 a usage or target error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rollcert.model.properties import ALL_PROPERTY_IDS
from rollcert.stateful_tests.profiles import PROFILES

USAGE_ERROR = 3


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rollcert", description="Certify rollback logs against the rollcert model.")
    commands = parser.add_subparsers(dest="command", required=True)

    certify = commands.add_parser("certify", help="certify an implementation and print its certificate")
    certify.add_argument(
        "target", nargs="?", default="bundled",
        help="bundled (default), specimen:NAME, module:attr or 'subprocess:COMMAND ARGS...'",
    )
    _common(certify)
    certify.add_argument("--json", type=Path, help="write the certificate as JSON")
    certify.add_argument("--markdown", type=Path, help="write the certificate as Markdown")
    certify.add_argument("--junit", type=Path, help="write the certificate as JUnit XML")
    certify.add_argument("--html", type=Path, help="write the certificate as one self-contained HTML page")
    certify.add_argument("--only", help="comma-separated property IDs, e.g. R2,R3")
    certify.add_argument(
        "--exhaustive-depth", type=int, metavar="K", help="also run the bounded exhaustive search to depth K"
    )

    specimens = commands.add_parser("specimens", help="certify every specimen and print the kill matrix")
    _common(specimens)
    specimens.add_argument("--json", type=Path, help="write the kill matrix as JSON")
    specimens.add_argument("--markdown", type=Path, help="write the specimens page (stories and counterexamples)")

    replay = commands.add_parser("replay", help="replay a trace (a counterexample's steps) against a target")
    replay.add_argument("target", help="bundled, specimen:NAME or module:attr")
    source = replay.add_mutually_exclusive_group(required=True)
    source.add_argument("--trace", help="the trace as JSON text (as printed after 'Replay:')")
    source.add_argument("--certificate", type=Path, help="a certificate JSON; replays the counterexample of --property")
    replay.add_argument("--property", help="with --certificate: which property's counterexample")

    smoke = commands.add_parser("smoke", help="a handful of operations, one line per check: is the adapter wired up?")
    smoke.add_argument("target", help="bundled, specimen:NAME, module:attr or 'subprocess:COMMAND ARGS...'")

    explain = commands.add_parser("explain", help="walk through a counterexample, one step per Enter")
    explain.add_argument("source", help="a target to certify now (e.g. specimen:NAME) or a certificate JSON file")
    explain.add_argument("--property", help="which property's counterexample (default: the first violated)")
    explain.add_argument("--all", action="store_true", help="show every step at once")
    _common(explain)

    html_page = commands.add_parser("html", help="draw a JSON certificate as one self-contained HTML page")
    html_page.add_argument("certificate", type=Path, help="a certificate JSON (its counterexamples are replayed)")
    html_page.add_argument("output", type=Path, help="the HTML file to write")

    docs = commands.add_parser("docs", help="write the tour of the properties (docs/tour.md)")
    docs.add_argument("--output", type=Path, default=Path("docs/tour.md"), help="where to write it")

    commands.add_parser("prove", help="run the symbolic proofs (z3); see 'rollcert prove --help'", add_help=False)
    commands.add_parser(
        "explore", help="bounded exhaustive search; see 'rollcert explore --help'", add_help=False
    )
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    parser.add_argument("--seed", type=int, default=0)


def _write(path: Path | None, text: str) -> None:
    if path is not None:
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {path}: {error.strerror}") from None


def _only(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    chosen = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    unknown = [p for p in chosen if p not in ALL_PROPERTY_IDS]
    if unknown or not chosen:
        raise UsageError(f"--only takes property IDs from {', '.join(ALL_PROPERTY_IDS)}; got {text!r}")
    return chosen


def _certify(args: argparse.Namespace) -> int:
    from rollcert.stateful_tests.certificate import render_junit, render_markdown, render_text, to_json
    from rollcert.stateful_tests.certify import certify
    from rollcert.stateful_tests.targets import resolve_target

    only = _only(args.only)
    target = resolve_target(args.target)
    if args.exhaustive_depth is not None and not 1 <= args.exhaustive_depth <= 6:
        raise UsageError(f"--exhaustive-depth takes 1 to 6, got {args.exhaustive_depth}")
    certificate = certify(target, profile=args.profile, seed=args.seed, only=only)
    if args.exhaustive_depth is not None:
        from rollcert.stateful_tests.exhaustive import explore

        certificate.exhaustive = explore(target, depth=args.exhaustive_depth)
    print(render_text(certificate))
    _write(args.json, json.dumps(to_json(certificate), indent=2) + "\n")
    _write(args.markdown, render_markdown(certificate))
    _write(args.junit, render_junit(certificate))
    if args.html is not None:
        from rollcert.stateful_tests.html_certificate import from_certificate_data, render_html

        _write(args.html, render_html(from_certificate_data(certificate)))
    return certificate.exit_status


def _specimens(args: argparse.Namespace) -> int:
    from rollcert.stateful_tests.kill_matrix import (
        kill_matrix,
        render_kill_matrix,
        render_kill_matrix_markdown,
    )

    matrix = kill_matrix(profile=args.profile, seed=args.seed)
    print(render_kill_matrix(matrix))
    _write(args.json, json.dumps(matrix.to_json(), indent=2) + "\n")
    if args.markdown is not None:
        _write(args.markdown, render_kill_matrix_markdown(matrix, profile=args.profile, seed=args.seed))
    return 0 if matrix.all_as_expected else 1


def _replay(args: argparse.Namespace) -> int:
    from rollcert.stateful_tests.adapter import HarnessError
    from rollcert.stateful_tests.certificate import format_steps
    from rollcert.stateful_tests.family import NotGenerable
    from rollcert.stateful_tests.judge import Violation, replay
    from rollcert.stateful_tests.targets import resolve_target
    from rollcert.stateful_tests.traces import parse_trace

    if args.trace is not None:
        trace_text = args.trace
    else:
        try:
            certificate = json.loads(args.certificate.read_text(encoding="utf-8"))
            trace_text = json.dumps(certificate["properties"][args.property]["counterexample"]["trace"])
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
            raise UsageError(
                f"cannot read a counterexample for {args.property!r} from {args.certificate}: {error!r}"
            ) from None
    try:
        family, config, operations = parse_trace(trace_text)
    except (ValueError, TypeError) as error:
        raise UsageError(f"bad trace: {error}") from None
    target = resolve_target(args.target)
    try:
        steps = replay(family, target, config, operations)
    except Violation as violation:
        print("\n".join(format_steps(violation.steps)))
        print(f"Why: {violation.explanation}")
        print(f"VIOLATED at step {len(violation.steps)} of {len(operations)}")
        return 1
    except NotGenerable as error:
        raise UsageError(f"bad trace: {error}") from None
    except HarnessError as error:
        print(f"ERROR: the adapter or the SUT broke: {error}")
        return 2
    print("\n".join(format_steps(steps)))
    print(f"all {len(steps)} steps agree with the model")
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["prove"]:
        from rollcert.proofs.cli import main as prove_main

        return prove_main(arguments[1:])
    if arguments[:1] == ["explore"]:
        from rollcert.stateful_tests.exhaustive import main as explore_main

        return explore_main(arguments[1:])
    try:
        args = _parser().parse_args(arguments)
    except SystemExit as exit_request:
        return USAGE_ERROR if exit_request.code not in (0, None) else 0
    from rollcert.stateful_tests.targets import TargetError

    try:
        if args.command == "certify":
            return _certify(args)
        if args.command == "explain":
            from rollcert.stateful_tests.explain import explain_main

            return explain_main(args.source, args.property, args.all, profile=args.profile, seed=args.seed)
        if args.command == "html":
            from rollcert.stateful_tests.html_certificate import html_main

            return html_main(args.certificate, args.output)
        if args.command == "docs":
            from rollcert.stateful_tests.tour import write_tour

            _write(args.output, write_tour())
            print(f"wrote {args.output}")
            return 0
        if args.command == "specimens":
            return _specimens(args)
        if args.command == "smoke":
            from rollcert.stateful_tests.smoke import smoke
            from rollcert.stateful_tests.targets import resolve_target

            return smoke(resolve_target(args.target))
        return _replay(args)
    except (UsageError, TargetError) as error:
        print(f"rollcert: {error}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
