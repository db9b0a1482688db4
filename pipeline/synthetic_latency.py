"""Generated per-query times of runs, as a search system's timing harness writes them (`qid
time` lines, milliseconds, or microseconds under PISA's header `qid usec`): a typical time per
run, a long tail of slow queries, some queries timed several times, some not timed at all.
Deterministic by seed, for the tests and the guide's sample data (`configs/data/latency`)."""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["generate_latency", "write_latency", "write_latency_sample"]


def generate_latency(
    seed: int, qids: list[str], typical_ms: float, repetitions: int = 1, untimed: float = 0.0
) -> dict[str, list[float]]:
    """Each query's times in milliseconds: lognormal around `typical_ms` (a slow query now and
    then), rounded to the microsecond as timers print them, so that queries tie; up to
    `repetitions` timings a query; a share `untimed` of the queries left out."""
    rng = random.Random(seed)
    times: dict[str, list[float]] = {}
    for qid in qids:
        if rng.random() < untimed:
            continue
        slow = 4.0 if rng.random() < 0.1 else 1.0
        count = rng.randint(1, repetitions)
        times[qid] = [
            round(typical_ms * slow * rng.lognormvariate(0, 0.4), 3) for _ in range(count)
        ]
    return times


def write_latency(times: dict[str, list[float]], path: Path, unit: str = "ms") -> None:
    """A latency file: one `qid time` line per timing; in microseconds (integers, PISA's) under
    the header `qid usec` where `unit` is `usec`, else milliseconds without a header."""
    if unit == "usec":
        lines = ["qid\tusec"] + [f"{q}\t{round(t * 1000)}" for q, ts in times.items() for t in ts]
    else:
        lines = [f"{q}\t{t!r}" for q, ts in times.items() for t in ts]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


#: the typical time of each sample run (configs/data's): bm25, the better ranker on this sample,
#: takes longer (served by PISA, which times in microseconds)
SAMPLE_RUNS = {"bm25": 30.0, "dense": 6.0}


def write_latency_sample(directory: str | Path, runs: str | Path, seed: int = 2026) -> None:
    """Times for the sample runs in `runs` (`pipeline.synthetic.write_sample`'s bm25.trec and
    dense.trec), written into `directory`: bm25's in microseconds under PISA's header, dense's
    in milliseconds, each query timed up to three times; and `dense_next.latency`, a slower
    build of dense (each time 5% longer) for a release gate."""
    directory, runs = Path(directory), Path(runs)
    directory.mkdir(parents=True, exist_ok=True)
    for i, (name, typical) in enumerate(SAMPLE_RUNS.items()):
        qids = list(dict.fromkeys(line.split()[0] for line in _lines(runs / f"{name}.trec")))
        times = generate_latency(seed + i, qids, typical, repetitions=3)
        write_latency(times, directory / f"{name}.latency", "usec" if name == "bm25" else "ms")
        if name == "dense":
            slower = {q: [round(t * 1.05, 3) for t in ts] for q, ts in times.items()}
            write_latency(slower, directory / "dense_next.latency")


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
