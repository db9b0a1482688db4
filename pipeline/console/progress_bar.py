"""The progress bar of `irpipe run` on a terminal: a `pipeline.progress.Progress` drawn with rich.

It appears only where stderr is a terminal (not a file, a pipe or a dumb terminal), without
`--quiet`, and only once the evaluation has run for `DELAY` seconds: a short evaluation prints
nothing extra. The environment variable IRPIPE_PROGRESS_DELAY sets the delay in seconds (0 shows
the bar at once; the tests use it). The bar is transient: it is erased when the evaluation ends,
fails or is interrupted, before the summary or an error is printed; a warning written meanwhile
is printed above it.

A daemon thread waits out the delay and then draws the bar ten times a second, polling how far
DuckDB's running statement has got, so that a single long statement (loading a 7M-line run)
still moves. The thread never handles a signal (only the main thread does) and never keeps the
process alive; `finished` stops it and waits for the bar to be erased.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, SpinnerColumn, TaskProgressColumn, TextColumn
from rich.progress import Progress as RichProgress
from rich.table import Column

from pipeline.progress import Progress, Step, Tally

__all__ = ["DELAY", "ProgressBar", "progress_bar"]

#: Seconds an evaluation runs before its progress bar appears.
DELAY = 1.0
#: Seconds between two drawings of the bar.
REFRESH = 0.1
#: Seconds `finished` waits for the thread to erase the bar (it takes milliseconds).
_JOIN = 5.0


def progress_bar(quiet: bool = False) -> Progress:
    """A `ProgressBar` on stderr where stderr is a terminal and not `quiet`; otherwise a
    `Progress` that shows nothing."""
    console = Console(stderr=True, highlight=False)
    if quiet or not _terminal(console):
        return Progress()
    return ProgressBar(console, _delay())


def _terminal(console: Console) -> bool:
    # isatty as well as rich's view: FORCE_COLOR makes rich treat a pipe as a terminal, and a
    # log must never fill with redrawn bars.
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) and console.is_terminal and not console.is_dumb_terminal


def _delay() -> float:
    try:
        return max(0.0, float(os.environ["IRPIPE_PROGRESS_DELAY"]))
    except (KeyError, ValueError):
        return DELAY


class ProgressBar(Progress):
    """What is being done, a bar of the work done (bytes of input, see `pipeline.progress`), the
    percentage and the time elapsed, on `console`, from `delay` seconds after `started`."""

    polls = True

    def __init__(self, console: Console, delay: float = DELAY) -> None:
        self._console = console
        self._delay = delay
        self._tally = Tally()
        self._lock = threading.Lock()  # the tally, between the executor and the thread
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._fraction: Callable[[], float] = lambda: -1.0
        self._start = time.monotonic()

    def started(self, total: int, fraction: Callable[[], float]) -> None:
        """Start the thread that draws the bar once the delay is over."""
        self._tally.total, self._fraction = max(total, 1), fraction
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._show, name="irpipe-progress", daemon=True)
        self._thread.start()

    def step(self, step: Step) -> None:
        """Count the step before `step` as done and name `step` on the bar."""
        with self._lock:
            self._tally.step(step)

    def finished(self) -> None:
        """Stop the thread, which erases the bar; nothing is drawn after this returns. May be
        called again (the CLI does so on its way out, in case a signal cut the first call)."""
        self._done.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(_JOIN)

    def _show(self) -> None:
        if self._done.wait(self._delay):
            return  # over before the delay: nothing was drawn
        try:
            self._draw()
        except Exception:  # noqa: BLE001 -- a broken bar must not disturb the evaluation
            return

    def _draw(self) -> None:
        bar = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False, table_column=self._description()),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[elapsed]}"),
            console=self._console,
            transient=True,  # erased when it stops
            auto_refresh=False,  # drawn by this thread alone
            redirect_stdout=False,  # stdout may be a pipe: what goes there stays there
        )
        task = bar.add_task(total=self._tally.total, **self._now())
        with bar:  # stderr written meanwhile (a warning) is printed above the bar
            while not self._done.wait(REFRESH):
                bar.update(task, **self._now())
                bar.refresh()
            bar.update(task, **self._now())  # the last frame, drawn as the bar is erased

    def _description(self) -> Column:
        """What is being done, on one line, cut with an ellipsis where a run's long name would
        leave the bar no room (it needs about 30 columns for itself and the figures)."""
        width = max(20, self._console.width - 30)
        return Column(no_wrap=True, overflow="ellipsis", min_width=20, max_width=width)

    def _now(self) -> dict:
        """The bar's figures at this moment."""
        fraction = self._fraction()
        with self._lock:
            completed, description = self._tally.now(fraction)
        elapsed = _clock(time.monotonic() - self._start)
        return {"completed": completed, "description": description, "elapsed": elapsed}


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"
