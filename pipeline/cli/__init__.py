"""The command line: parse arguments, call the library, map errors to exit codes. Thin by design.

Imports: anything below it; nothing imports it (`irpipe` and `python -m pipeline.cli`).
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Sequence

from pipeline import interrupts
from pipeline.cli.parser import parser
from pipeline.errors import ExitCode, IrpipeError, IrpipeWarning, PluginWarning

__all__ = ["irpipe", "main"]


def irpipe() -> None:
    """The `irpipe` command: `main` on this process's own arguments, then exit with its code. A
    signal that comes after `main` has reported is ignored (see `interrupts.handling`)."""
    code = main(exiting=True)
    try:  # what is still buffered goes now, while a closed pipe can still be told apart
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    sys.exit(code)


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Entry point of the `irpipe` command; returns the exit code.

    The one error boundary: a user error prints `Error: ...` and exits with its class's code; any
    other exception is a bug (exit 1). SIGINT and SIGTERM exit 130 and 143 whatever exception the
    interruption became on its way up (see `pipeline.interrupts`). `--debug` adds the traceback but
    keeps the exit code, so a scheduler reads the same codes either way. `exiting`: the process
    exits when `main` returns (`irpipe`).
    """
    args = _trec_eval_args(list(sys.argv[1:] if argv is None else argv))
    args = args or parser().parse_args(argv)
    with warnings.catch_warnings(), interrupts.handling(exiting):
        warnings.simplefilter("always", IrpipeWarning)
        warnings.showwarning = functools.partial(_show_warning, debug=args.debug)
        code, exc = _attempt(args)
        signum = _signal_of(exc)
        if exc is not None and signum is None:
            code = _failed(args, exc)
            signum = interrupts.received()  # it came while the error was reported
        return code if signum is None else _interrupted(args, exc, signum)


def _attempt(args: argparse.Namespace) -> tuple[int, BaseException | None]:
    """The command's exit code, or the exception it raised (returned: nothing escapes here)."""
    try:
        with interrupts.armed():
            return _dispatch(args), None
    except BaseException as exc:  # noqa: BLE001 -- the boundary; SystemExit is re-raised later
        return ExitCode.INTERNAL, exc


def _signal_of(exc: BaseException | None) -> int | None:
    if interrupts.received() is not None:
        return interrupts.received()
    # Without irpipe's handler (a thread, an embedding program), Ctrl-C is Python's own.
    return signal.SIGINT if isinstance(exc, KeyboardInterrupt) else None


def _failed(args: argparse.Namespace, exc: BaseException) -> int:
    if _closed_pipe(exc):
        # `irpipe run spec | head`: the reader left after the outputs were written.
        _quiet_stdout()
        return ExitCode.OK
    if isinstance(exc, SystemExit):
        raise exc
    if isinstance(exc, IrpipeError):
        return _fail(args, str(exc), exc.exit_code, exc)
    return _fail(args, _internal(exc, args.debug), ExitCode.INTERNAL, exc)


def _closed_pipe(exc: BaseException) -> bool:
    """Whether `exc` is stdout's reader having left: a BrokenPipeError, or the SystemExit(1)
    rich raises in its place (`Console.on_broken_pipe`), which would end irpipe with 1."""
    if isinstance(exc, SystemExit) and exc.code == 1:
        return isinstance(exc.__context__, BrokenPipeError)
    return isinstance(exc, BrokenPipeError)


def _quiet_stdout() -> None:
    """stdout to /dev/null: what is left unwritten, and Python's flush at exit, go nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


_SIGNAL_CODES = {signal.SIGINT: ExitCode.INTERRUPTED, signal.SIGTERM: ExitCode.TERMINATED}


def _interrupted(args: argparse.Namespace, exc: BaseException | None, signum: int) -> int:
    name = signal.Signals(signum).name
    if interrupts.written():
        message = (
            f"interrupted by {name} during or after the final renames, which completed: "
            "every output is new and whole"
        )
    else:
        message = (
            f"interrupted by {name}: nothing was written "
            "(earlier outputs are as they were, temporary files were removed)"
        )
    return _fail(args, message, _SIGNAL_CODES[signum], exc)


def _trec_eval_args(argv: list[str]) -> argparse.Namespace | None:
    """`irpipe [--debug] trec-eval ...`: trec_eval's own flags (getopt: -l2, -M100, ...) go to its
    module untouched, so argparse never sees them."""
    debug = argv[:1] == ["--debug"]
    if argv[int(debug) : int(debug) + 1] != ["trec-eval"]:
        return None
    rest = argv[int(debug) + 1 :]
    return argparse.Namespace(command="trec_eval", debug=debug, version=False, arguments=rest)


def _internal(exc: Exception, debug: bool) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    hint = "please report it" if debug else "rerun with --debug to see the traceback and report it"
    return f"internal error (a bug in irpipe or a plugin): {type(exc).__name__}: {first}\n{hint}"


def _fail(
    args: argparse.Namespace, message: str, code: int, exc: BaseException | None = None
) -> int:
    from pipeline.console.draw import print_error

    if args.debug and exc is not None:
        traceback.print_exception(exc)
    print_error(message)
    return code


def _show_warning(message, category, filename, lineno, file=None, line=None, debug=False) -> None:
    from pipeline.console.draw import print_plugin_warning, print_warning

    if not isinstance(message, PluginWarning):
        print_warning(str(message))
        return
    if debug and message.exception is not None:  # the plugin's own traceback, for its authors
        traceback.print_exception(message.exception)
    print_plugin_warning(str(message))


def _dispatch(args: argparse.Namespace) -> int:
    from pipeline._version import __version__
    from pipeline.cli import commands

    if args.version:
        print(f"irpipe {__version__}")
        return ExitCode.OK
    if args.command is None:
        parser().print_help(sys.stderr)
        return ExitCode.SPEC
    return getattr(commands, args.command)(args)
