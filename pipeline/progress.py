"""What the executor reports while it evaluates, for whoever shows it. No presentation here.

The executor calls a `Progress`: `started` once, with the evaluation's total work and a way to
poll how far the running statement has got; `step` as each step begins (loading the qrels, then
for each batch of runs: loading, checking, ranking; computing the metrics); `finished` once at
the end, also when the evaluation fails or is interrupted. The base class ignores it all: it is
what the library gets unless a caller asks for more, as `irpipe run` does on a terminal
(`pipeline.console.progress_bar`), with `observing`.

Work is counted in bytes of input text: each file once when it is loaded, and a run's half again
when it is checked and half again when it is ranked (on a 7M-line run, loading takes about as
long as checking and ranking together). `Tally` turns the steps and polls into the figures shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["Progress", "Step", "Tally", "current", "observing"]


@dataclass(frozen=True)
class Step:
    """One step of an evaluation: `action` ("loading", "checking", "ranking", ...) on the inputs
    `names` of one `kind` ("run", "qrels"; none for "computing metrics"), in batch `batch` of
    `batches` of runs (0 outside the batches), and its share of the evaluation's `work`."""

    action: str
    kind: str = ""
    names: tuple[str, ...] = ()
    batch: int = 0
    batches: int = 0
    work: int = 0

    def describe(self) -> str:
        """What the step does, in a few words: `loading run bm25 (batch 2/5)`,
        `ranking 20 runs (batch 1/3)`, `computing metrics`."""
        if len(self.names) == 1:
            text = f"{self.action} {self.kind} {self.names[0]}"
        elif self.names:  # a batch of a hundred names would not fit on a line
            kinds = self.kind if self.kind.endswith("s") else f"{self.kind}s"  # "qrels" stays
            text = f"{self.action} {len(self.names)} {kinds}"
        else:
            text = f"{self.action} {self.kind}".rstrip()
        return text + (f" (batch {self.batch}/{self.batches})" if self.batches > 1 else "")


class Progress:
    """Receives the executor's steps and ignores them; a display overrides the three methods.

    `polls` says whether the observer calls the `fraction` given to `started`: only then does
    the executor keep DuckDB's progress tracking on (it never prints: DuckDB's own bar is off).
    """

    polls = False

    def started(self, total: int, fraction: Callable[[], float]) -> None:
        """The evaluation begins: `total` units of work in all (the sum of its steps' `work`).
        `fraction()`, callable from any thread, is how far the running SQL statement has got,
        from 0 to 1; 0 or negative when none runs or the engine cannot tell."""

    def step(self, step: Step) -> None:
        """`step` begins; the one before it is done."""

    def finished(self) -> None:
        """The evaluation is over, whether it succeeded, failed or was interrupted."""


_observer: ContextVar[Progress | None] = ContextVar("irpipe_progress", default=None)


def current() -> Progress:
    """The `Progress` installed by `observing`, or one that ignores everything."""
    return _observer.get() or Progress()


@contextmanager
def observing(progress: Progress) -> Iterator[Progress]:
    """Report every evaluation in the block to `progress` (the CLI installs its display this
    way, so that `pipeline.evaluate` needs no argument for it)."""
    token = _observer.set(progress)
    try:
        yield progress
    finally:
        _observer.reset(token)


class Tally:
    """The figures of a progress display: units of work done, out of `total`, and what is being
    done. The running step counts by the furthest fraction polled during it, so that the figure
    never goes back when a step runs several statements."""

    def __init__(self, total: int = 0) -> None:
        self.total = total
        self.done = 0  # the work of the steps before the running one
        self.running = Step("starting")
        self.reached = 0.0  # the furthest fraction of the running step seen

    def step(self, step: Step) -> None:
        """`step` begins: the one before it counts in full."""
        self.done += self.running.work
        self.running, self.reached = step, 0.0

    def now(self, fraction: float) -> tuple[int, str]:
        """Units done and the running step's description, given the running statement's
        `fraction` (negative: unknown)."""
        self.reached = max(self.reached, min(fraction, 1.0))
        completed = self.done + int(self.running.work * self.reached)
        return min(completed, self.total), self.running.describe()
