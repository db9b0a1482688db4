"""Time one command as a fresh child process: wall time and the peak RSS of that process."""

from __future__ import annotations

import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Sample", "Timing", "ToolFailed", "require_gnu_time", "take_turns", "timed"]

# GNU time reports the peak RSS of exactly its child. Measuring with os.wait4 from this process
# instead would not: a child's ru_maxrss starts at the RSS of the process that forked it, and this
# one holds generated data. GNU time is a small process, so its children start from near zero.
GNU_TIME = "/usr/bin/time"


def require_gnu_time() -> None:
    """Stop with a hint unless GNU time (which takes -f and -o) is installed."""
    probe = subprocess.run([GNU_TIME, "--version"], capture_output=True, text=True, check=False)
    if "GNU" not in probe.stdout + probe.stderr:
        raise SystemExit(
            f"the benchmark needs GNU time at {GNU_TIME} (Debian: apt-get install time)"
        )


class ToolFailed(RuntimeError):
    """A measured command exited non-zero; the message points at its log."""


@dataclass(frozen=True)
class Sample:
    """One run: wall seconds (spawn to exit), CPU seconds (user + system), peak RSS in MB."""

    wall: float
    cpu: float
    rss_mb: float


@dataclass(frozen=True)
class Timing:
    """Medians over the measured runs, and the largest peak RSS any of them reached."""

    samples: tuple[Sample, ...]

    @property
    def wall(self) -> float:
        """Median wall time: the figure the targets use."""
        return statistics.median(s.wall for s in self.samples)

    @property
    def best(self) -> float:
        """The fastest run: what the machine does when nothing else competes for it."""
        return min(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        """Median CPU time; steadier than wall time when other work shares the cores."""
        return statistics.median(s.cpu for s in self.samples)

    @property
    def rss_mb(self) -> float:
        """Peak RSS, the largest over the runs."""
        return max(s.rss_mb for s in self.samples)


def timed(command: list[str], log: Path) -> Sample:
    """Run `command` once under GNU time, output to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    usage = log.with_name(log.name + ".time")
    wrapped = [GNU_TIME, "-f", "%M %U %S", "-o", str(usage), *command]
    with log.open("wb") as out:
        start = time.perf_counter()
        done = subprocess.run(wrapped, stdout=out, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise ToolFailed(f"exit code {done.returncode}; see {log}")
    # The last line; GNU time puts notes such as a non-zero exit status before it.
    kilobytes, user, system = usage.read_text().splitlines()[-1].split()
    return Sample(wall, float(user) + float(system), int(kilobytes) / 1024)


def take_turns(
    jobs: dict[str, tuple[list[str], Path]], repeat: int
) -> dict[str, Timing | ToolFailed]:
    """Benchmark several commands in rounds: a warm-up round, then `repeat` measured rounds.

    Taking turns means a machine that slows down for a while slows every command alike, so the
    ratios between them hold even where absolute times drift. A failing command drops out.
    """
    samples: dict[str, list[Sample]] = {name: [] for name in jobs}
    failed: dict[str, ToolFailed] = {}
    for round_no in range(repeat + 1):
        for name, (command, log) in jobs.items():
            if name in failed:
                continue
            try:
                sample = timed(command, log)
            except ToolFailed as exc:
                failed[name] = exc
                continue
            if round_no > 0:
                samples[name].append(sample)
    return {name: failed.get(name) or Timing(tuple(samples[name])) for name in jobs}
