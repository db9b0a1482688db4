"""The history suite (issue 11): what remembering costs, and what it saves.

nightly  20 runs × 100,000 lines with the five measures: no history; recorded with --refresh
         (everything evaluated, then appended); unchanged, every run's results reused.
         Target (issue 34): the unchanged re-run in at most 0.15 × the first run's time.
7M       one 7M-line run: without a history and recorded with --refresh.
         Target: recording adds at most 10%.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from context import FIVE_IRPIPE, TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table
from tools import irpipe_executable, write_spec

__all__ = ["history"]


def _kept(spec: Path, history: Path) -> Path:
    """The spec, recording in `history` (a copy beside it)."""
    data = yaml.safe_load(spec.read_text())
    data["history"] = str(history)
    kept = spec.with_name(f"{spec.stem}-history.yaml")
    kept.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return kept


def _jobs(work: Path, qrels: Path, runs: list[Path], cached: bool) -> dict:
    """`irpipe run` without a history, recorded with --refresh, and (if `cached`) reusing it."""
    work.mkdir(parents=True, exist_ok=True)
    plain = write_spec(work / "spec.yaml", qrels, runs, FIVE_IRPIPE, work / "out")
    kept = _kept(plain, work / "history.duckdb")
    irpipe = irpipe_executable()
    jobs = {
        "no history": [irpipe, "run", "--quiet", str(plain)],
        "recorded (--refresh: everything evaluated)": [irpipe, "run", "--quiet", "--refresh", str(kept)],
    }  # fmt: skip
    if cached:  # the warm-up round recorded every run: measured rounds reuse them all
        jobs["unchanged: every run reused"] = [irpipe, "run", "--quiet", str(kept)]
    return {what: (command, work / f"{i}.log") for i, (what, command) in enumerate(jobs.items())}


def history(ctx: Context) -> None:
    """Time both shapes; the ratios are the targets."""
    nightly = ctx.everyday("nightly")
    qrels, runs = ctx.dataset(ctx.size)
    shapes = {
        "20 runs × 100k lines": _jobs(ctx.results / "history-nightly", nightly.qrels, nightly.runs, True),
        f"one {ctx.size} run": _jobs(ctx.results / f"history-{ctx.size}", qrels, runs, False),
    }  # fmt: skip
    rows = []
    for shape, jobs in shapes.items():
        timings = measured(take_turns(jobs, ctx.repeat))
        rows += [[shape, *timing_row(what, t)] for what, t in timings.items()]
        first, recorded, *reused = (t.wall for t in timings.values())
        if reused:
            ctx.report.target(
                "history: unchanged re-run / first run, 20 × 100k", reused[0] / first, 0.15
            )
        else:
            ctx.report.target(
                f"history: recorded / not, one {ctx.size} run", recorded / first, 1.10
            )
    ctx.report.sections.append(
        "## history: recording evaluations and reusing unchanged runs\n\n"
        f"{table(['shape', *TIMING_HEADERS], rows)}\n\n{NOTE}"
    )


NOTE = (
    "`irpipe run --quiet` with the five measures, per-query parquet and summary csv written. The "
    "recorded job appends every evaluation to the history (one transaction: provenance, inputs, "
    "per-query values of new result keys, aggregates); the unchanged job digests every input, "
    "finds every run's result key in the history, copies their per-query rows, and writes the "
    "outputs: it reads no run and no qrels (the keys cover them). Rounds take turns; the history "
    "grows by one evaluation per job and round."
)
