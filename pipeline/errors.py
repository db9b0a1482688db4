"""The error hierarchy. The CLI maps each class to an exit code and prints one line."""

from __future__ import annotations

__all__ = [
    "ExitCode",
    "IrpipeError",
    "SpecError",
    "PluginError",
    "InputDataError",
    "OutputError",
    "HistoryError",
    "DuplicateError",
    "IrpipeWarning",
    "PluginWarning",
]


class ExitCode:
    """Process exit codes, documented in the README so schedulers can tell failures apart."""

    OK = 0
    INTERNAL = 1
    SPEC = 2
    INPUT_DATA = 3
    OUTPUT = 4
    HISTORY = 6  # the history database cannot be used now: locked, not a history, too new
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
    TERMINATED = 143  # SIGTERM (128 + 15), how schedulers stop a job


class IrpipeError(Exception):
    """Base class of every error caused by the user's spec, data or environment."""

    exit_code = ExitCode.INTERNAL


class SpecError(IrpipeError):
    """The spec (YAML, a metric string, a CLI argument) is invalid."""

    exit_code = ExitCode.SPEC


class PluginError(SpecError):
    """A plugin breaks the contract: duplicate metric names, bad hook results."""


class InputDataError(IrpipeError):
    """A qrels or run file cannot be read or breaks the input rules."""

    exit_code = ExitCode.INPUT_DATA


class DuplicateError(InputDataError):
    """A document listed twice for one query, in a run or in qrels (trec_eval stops too)."""


class OutputError(IrpipeError):
    """An output cannot be written."""

    exit_code = ExitCode.OUTPUT


class HistoryError(IrpipeError):
    """The history database cannot be read or written: another process holds it past the
    timeout, or the file is not an irpipe history (or one this irpipe cannot read)."""

    exit_code = ExitCode.HISTORY


class IrpipeWarning(UserWarning):
    """Something worth saying that does not stop an evaluation (the CLI prints `Warning: ...`)."""


class PluginWarning(IrpipeWarning):
    """A plugin was not loaded and is not used; the other plugins and the built-ins work.

    The message names the plugin's distribution and version, what is wrong and how to fix it; the
    CLI prints it as `irpipe: plugin ...`, and with `--debug` the traceback of `exception`.
    """

    def __init__(self, message: str, exception: BaseException | None = None) -> None:
        super().__init__(message)
        self.exception = exception
