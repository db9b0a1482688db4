"""SIGINT and SIGTERM at any moment: one clean stop, whatever is running.

The CLI runs its command inside `handling()` and `armed()`. The first signal is recorded (it decides
the exit code: 130 or 143), every DuckDB connection given to `watch` is interrupted, and
KeyboardInterrupt is raised where Python is, so that `finally` blocks remove temporary files. Both
halves matter during a query: DuckDB checks Python's signals while it works, but stops its query at
once only for `con.interrupt()` or a KeyboardInterrupt of exactly that class; any other exception
lets the query run to its end (seconds) before it turns into `RuntimeError: Query interrupted`.
Whatever the interruption becomes on its way up (RuntimeError, duckdb.InterruptException, an
OutputError around it), the CLI asks `received()` and exits with the signal's code.

A signal that comes while Python is importing a module (irpipe imports DuckDB and the writers
only when it needs them), or while pydantic runs one of the spec's discriminators (`deferring`),
is recorded but not raised there: importlib, and pydantic-core at times, would print the
exception as "ignored" and go on. The next `checkpoint()` raises it instead: before every statement the executor
runs, and before any output is written.

Short critical sections (the outputs' final renames, removing temporary files) run under `held()`:
a signal waits until the section is over; `committed()` records that every output was renamed.
"""

from __future__ import annotations

import signal
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = [
    "armed",
    "checkpoint",
    "committed",
    "deferring",
    "defers",
    "handling",
    "held",
    "received",
    "watch",
    "written",
]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    """What one CLI invocation has seen: the first signal, whether outputs were renamed."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.armed = False  # a signal raises KeyboardInterrupt only inside the command itself
        self.committed = False
        #: each watched connection, and the errors its interrupt() raises once it is closed
        self.connections: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()


_state = _State()


def watch(con: Any, closed: tuple[type[BaseException], ...] = ()) -> Any:
    """Interrupt `con`'s running query (`con.interrupt()`) when a signal comes; returns `con`.
    `closed`: the errors its interrupt raises once it is closed (then nothing runs on it)."""
    _state.connections[con] = closed
    return con


def received() -> int | None:
    """The first SIGINT or SIGTERM received inside `handling()`, or None."""
    return _state.signum


def written() -> bool:
    """Whether every output was renamed into place (then an interruption changed nothing)."""
    return _state.committed


def committed() -> None:
    """Record that the outputs' final renames completed."""
    _state.committed = True


@contextmanager
def handling(exiting: bool = False) -> Iterator[None]:
    """Catch SIGINT and SIGTERM while the block runs; close the watched connections at its end
    (DuckDB removes its spill files only when a connection closes).

    `exiting`: the process exits once the block ends (the `irpipe` command), having done its work
    and reported it. A signal after that is ignored rather than given back to Python's handlers:
    Python's finalization resets them to the system's default, and a late Ctrl-C would turn a
    completed evaluation into "killed by SIGINT" without a word. Ignored handlers are the one kind
    the finalization keeps.
    """
    global _state
    _state = _State()
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; an embedding program handles its signals
        return
    previous = {s: signal.signal(s, _stop) for s in SIGNALS}
    try:
        yield
    finally:
        for con in list(_state.connections):
            con.close()
        _restore({s: signal.SIG_IGN for s in SIGNALS} if exiting else previous)


@contextmanager
def armed() -> Iterator[None]:
    """Inside the block, the first signal raises KeyboardInterrupt; outside it (reporting an error,
    cleaning up) it is only recorded, so nothing escapes the CLI's boundary."""
    _state.armed = True
    try:
        yield
    finally:
        _state.armed = False


def _stop(signum: int, frame: object) -> None:
    if _state.signum is not None:
        return  # already stopping: let the cleanup finish (it takes milliseconds)
    _state.signum = signum
    for con, closed in list(_state.connections.items()):
        with suppress(*closed):
            con.interrupt()
    if _state.armed and not _deferred(frame):
        raise KeyboardInterrupt  # exactly this class: DuckDB stops its query for no other


def checkpoint() -> None:
    """Raise KeyboardInterrupt if a signal was recorded but not raised (it came during an import)."""
    if _state.armed and _state.signum is not None:
        raise KeyboardInterrupt


#: the code of the functions `deferring` marks
_DEFERRING: set[Any] = set()


def deferring(function: Any) -> Any:
    """`function`, marked as one that native code calls where an exception may be printed as
    "ignored" instead of raised (pydantic-core's call of a discriminator): a signal that comes
    while it runs is recorded and raised at the next `checkpoint()`, as during an import."""
    _DEFERRING.add(function.__code__)
    return function


def defers(function: Any) -> bool:
    """Whether a signal that comes while `function` runs waits for a checkpoint (`deferring`)."""
    return getattr(function, "__code__", None) in _DEFERRING


def _deferred(frame: Any) -> bool:
    """Whether `frame` runs inside Python's import machinery, or a function `deferring` marks."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib") or code in _DEFERRING:
            return True
        frame = frame.f_back
    return False


@contextmanager
def held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for a critical section of microseconds (renames, removing temporary
    files), so that it completes; a signal that came meanwhile is delivered afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _: caught.append(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        _restore(previous)
        for s in caught:
            signal.raise_signal(s)


def _restore(previous: dict[int, Any]) -> None:
    for s, handler in previous.items():
        signal.signal(s, signal.SIG_DFL if handler is None else handler)
