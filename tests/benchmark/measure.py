"""Time one command as a fresh child process: wall time and the peak RSS of that process."""

from __future__ import annotations

import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Timing", "ToolFailed", "require_gnu_time", "take_turns", "timed"]

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
class Timing:
    """Median wall time over the measured runs and the largest peak RSS any of them reached."""

    wall: float
    rss_mb: float
    walls: tuple[float, ...]

    @property
    def best(self) -> float:
        """The fastest measured run: what the machine can do when nothing else competes."""
        return min(self.walls)


def timed(command: list[str], log: Path) -> tuple[float, float]:
    """Run `command` once under GNU time; return (wall seconds, peak RSS in MB), spawn to exit."""
    log.parent.mkdir(parents=True, exist_ok=True)
    rss_file = log.with_name(log.name + ".rss")
    wrapped = [GNU_TIME, "-f", "%M", "-o", str(rss_file), *command]
    with log.open("wb") as out:
        start = time.perf_counter()
        done = subprocess.run(wrapped, stdout=out, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise ToolFailed(f"exit code {done.returncode}; see {log}")
    kilobytes = int(rss_file.read_text().split()[-1])  # the last line; earlier ones are notes
    return wall, kilobytes / 1024


def take_turns(
    jobs: dict[str, tuple[list[str], Path]], repeat: int
) -> dict[str, Timing | ToolFailed]:
    """Benchmark several commands in rounds: a warm-up round, then `repeat` measured rounds.

    Taking turns means a machine that slows down for a while slows every command alike, so the
    ratios between them hold even where absolute times drift. A failing command drops out.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in jobs}
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
    return {name: failed.get(name) or _timing(samples[name]) for name in jobs}


def _timing(samples: list[tuple[float, float]]) -> Timing:
    walls = tuple(wall for wall, _ in samples)
    return Timing(statistics.median(walls), max(rss for _, rss in samples), walls)
