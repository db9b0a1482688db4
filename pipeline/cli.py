"""The command line: parse arguments, call the library, map errors to exit codes. Thin by design."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Sequence
from contextlib import contextmanager

from .errors import ExitCode, IrpipeError, IrpipeWarning

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
    """Entry point of the `irpipe` command; returns the exit code.

    The one error boundary: a user error prints `Error: ...` and exits with its class's code; any
    other exception is a bug (exit 1). `--debug` adds the traceback but keeps the exit code, so a
    scheduler reads the same codes either way.
    """
    args = _trec_eval_args(list(sys.argv[1:] if argv is None else argv))
    args = args or _parser().parse_args(argv)
    with warnings.catch_warnings(), _terminate_cleanly():
        warnings.simplefilter("always", IrpipeWarning)
        warnings.showwarning = _show_warning
        try:
            return _dispatch(args)
        except IrpipeError as exc:
            return _fail(args, str(exc), exc.exit_code)
        except KeyboardInterrupt:
            return ExitCode.INTERRUPTED
        except _Terminated:
            message = "terminated (SIGTERM); temporary files were removed"
            return _fail(args, message, ExitCode.TERMINATED)
        except BrokenPipeError:
            # `irpipe run spec | head`: the reader left after the outputs were written.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return ExitCode.OK
        except Exception as exc:
            return _fail(args, _internal(exc, args.debug), ExitCode.INTERNAL)


def _trec_eval_args(argv: list[str]) -> argparse.Namespace | None:
    """`irpipe [--debug] trec-eval ...`: trec_eval's own flags (getopt: -l2, -M100, ...) go to its
    module untouched, so argparse never sees them."""
    debug = argv[:1] == ["--debug"]
    if argv[int(debug) : int(debug) + 1] != ["trec-eval"]:
        return None
    rest = argv[int(debug) + 1 :]
    return argparse.Namespace(command="trec_eval", debug=debug, version=False, arguments=rest)


class _Terminated(BaseException):
    """SIGTERM, raised where the program is, so that `finally` blocks remove temporary files."""


@contextmanager
def _terminate_cleanly():
    # A scheduler stops a job with SIGTERM, which by default ends Python without unwinding.
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum, frame) -> None:
    raise _Terminated


def _internal(exc: Exception, debug: bool) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    hint = "please report it" if debug else "rerun with --debug to see the traceback and report it"
    return f"internal error (a bug in irpipe or a plugin): {type(exc).__name__}: {first}\n{hint}"


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    from .console import print_error

    if args.debug:
        traceback.print_exc()
    print_error(message)
    return code


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from .console import print_warning

    print_warning(str(message))


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
