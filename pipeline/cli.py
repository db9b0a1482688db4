"""The command line: parse arguments, call the library, map errors to exit codes. Thin by design."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import ExitCode, IrpipeError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irpipe", description="Declarative, exact and fast IR evaluation."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in (
        ("run", "evaluate a spec and write its outputs"),
        ("validate", "check a spec without reading any data"),
        ("compile", "print the SQL a spec compiles to (reads no data)"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("spec", help="path of the YAML spec")
        if name == "run":
            sub.add_argument("--quiet", action="store_true", help="do not print the results table")
    commands.add_parser("metrics", help="list every metric, its aliases and parameters")
    commands.add_parser("plugins", help="list the loaded plugins and the hooks they implement")
    commands.add_parser(
        "trec-eval", help="trec_eval 10.0's command line: irpipe trec-eval [flags] QRELS RUN"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `irpipe` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = argv[:1] == ["--debug"]
    try:
        if argv[int(debug) : int(debug) + 1] == ["trec-eval"]:
            # trec_eval's own flags (getopt: -l2, -M100, ...) are parsed by its module, untouched.
            from .trec_eval.command import main as trec_eval_main

            return trec_eval_main(argv[int(debug) + 1 :])
        return _dispatch(_parser().parse_args(argv))
    except IrpipeError as exc:
        if debug:
            raise
        from .console import print_error

        print_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    from . import __version__, commands

    if args.version:
        print(f"irpipe {__version__}")
        return ExitCode.OK
    if args.command is None:
        _parser().print_help(sys.stderr)
        return ExitCode.SPEC
    return getattr(commands, args.command)(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
