"""What every suite shares: the command line's choices, the data, the report, irpipe jobs."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from everyday_data import Dataset, write_everyday
from generate import SIZES, write_collection
from measure import Timing, ToolFailed
from report import Report
from tools import FIVE, Tool, irpipe_executable, write_spec

__all__ = ["FIVE_IRPIPE", "Context", "measured", "progress", "show", "TIMING_HEADERS", "timing_row"]

FIVE_IRPIPE = [m.irpipe for m in FIVE.metrics]


@dataclass
class Context:
    """The command line's choices, the report being written, and the data generated so far."""

    size: str
    repeat: int
    tools: list[Tool]
    data: Path
    results: Path
    memory_limit: str
    report: Report
    datasets: dict[tuple[str, int], tuple[Path, list[Path]]] = field(default_factory=dict)
    everyday_data: dict[str, Dataset] = field(default_factory=dict)

    def dataset(self, size: str, runs: int = 1) -> tuple[Path, list[Path]]:
        """The size's qrels and runs, generated into data/<size>/ unless already there."""
        if (size, runs) not in self.datasets:
            progress(f"data {size}: {runs} run(s) in {self.data / size}")
            self.datasets[size, runs] = write_collection(self.data / size, SIZES[size], runs=runs)
        return self.datasets[size, runs]

    def everyday(self, name: str) -> Dataset:
        """One of the everyday data sets, written into data/everyday/ unless already there."""
        if name not in self.everyday_data:
            progress(f"data {name} in {self.data / 'everyday'}")
            self.everyday_data[name] = write_everyday(self.data / "everyday", name)
        return self.everyday_data[name]

    def irpipe_job(self, name: str, size: str, runs: int = 1) -> tuple[list[str], Path]:
        """`irpipe run` with the five measures on the first `runs` runs of a size: (command, log).

        The spec is the command's last argument; its outputs go to results/work/<name>/out/.
        """
        qrels, paths = self.dataset(size, runs)
        work = self.results / name
        spec = write_spec(work / "spec.yaml", qrels, paths, FIVE_IRPIPE, work / "out")
        return [irpipe_executable(), "run", str(spec)], work / "log.txt"


def progress(message: str) -> None:
    """Progress goes to stderr, so stdout carries only the report."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def measured(results: dict[str, Timing | ToolFailed]) -> dict[str, Timing]:
    """The timings, or the first failure raised (run_suite reports it)."""
    show(results)
    for result in results.values():
        if isinstance(result, ToolFailed):
            raise result
    return results


def show(results: dict[str, Timing | ToolFailed]) -> None:
    """Every measured wall time on stderr: on a busy machine the spread matters."""
    for name, result in results.items():
        if isinstance(result, Timing):
            walls = " ".join(f"{s.wall:.2f}" for s in result.samples)
            progress(f"{name}: {walls} s, {result.rss_mb:.0f} MB")
        else:
            progress(f"{name}: {result}")


TIMING_HEADERS = ["", "median wall (s)", "fastest (s)", "CPU user+sys (s)", "peak RSS (MB)"]


def timing_row(what: str, timing: Timing | ToolFailed) -> list:
    """[what, median wall, fastest, CPU, peak RSS]: a row under TIMING_HEADERS."""
    if isinstance(timing, ToolFailed):
        return [what, "failed", "-", "-", "-"]
    return [what, timing.wall, timing.best, timing.cpu, timing.rss_mb]
