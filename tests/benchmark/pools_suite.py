"""The pools suite (issue 13): building a pool and leaving every run out, against evaluating once.

pooling  100 runs × 50 topics × 1,000 documents (the `pooling` data set, whose qrels pool all 100
         to depth 100) with the five measures:
           evaluate once          `irpipe run --quiet`: the runs evaluated, the summary written
           pool                   `irpipe pool`: the depth-100 pool, its contributions and
                                  statistics (no evaluation)
           pool + leave-one-out   `irpipe pool` with leave_one_out as well: every run evaluated,
                                  then each against the qrels without what only it contributed
         Target: pool + leave-one-out in at most 10 × the time of evaluating once.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from context import FIVE_IRPIPE, TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table
from tools import irpipe_executable, write_spec

__all__ = ["pools"]

LEVELS = ("pool", "contributions", "pool_stats")


def _pooled(spec: Path, name: str, levels: tuple[str, ...]) -> Path:
    """The spec with a depth-100 pool of every run writing `levels` (a copy beside it)."""
    data = yaml.safe_load(spec.read_text())
    out = spec.parent / f"out-{name}"
    suffix = {"pool": "txt"}
    outputs = [
        {"path": str(out / f"{lv}.{suffix.get(lv, 'parquet')}"), "level": lv} for lv in levels
    ]
    data["pools"] = {
        "p": {"collection": "c", "method": {"depth": 100}, "seed": 1, "outputs": outputs}
    }
    pooled = spec.with_name(f"{name}.yaml")
    pooled.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return pooled


def pools(ctx: Context) -> None:
    """Time the three jobs in turns; the ratio is the target."""
    data = ctx.everyday("pooling")
    work = ctx.results / "pools"
    spec = write_spec(work / "spec.yaml", data.qrels, data.runs, FIVE_IRPIPE, work / "out")
    irpipe = irpipe_executable()
    commands = {
        "evaluate once (`irpipe run`)": [irpipe, "run", "--quiet", str(spec)],
        "pool (`irpipe pool`)": [irpipe, "pool", str(_pooled(spec, "pool", LEVELS))],
        "pool + leave-one-out (`irpipe pool`)": [
            irpipe, "pool", str(_pooled(spec, "loo", (*LEVELS, "leave_one_out")))
        ],
    }  # fmt: skip
    jobs = {
        what: (command, work / f"{i}.log") for i, (what, command) in enumerate(commands.items())
    }
    timings = measured(take_turns(jobs, ctx.repeat))
    once, _, everything = (t.wall for t in timings.values())
    rows = [timing_row(what, t) for what, t in timings.items()]
    ctx.report.target(
        "pools: pool + leave-one-out / evaluate once, 100 runs", everything / once, 10.0
    )
    ctx.report.sections.append(
        f"## pools: judgment pools and leave-one-run-out\n\n{data.about}\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{NOTE}"
    )


NOTE = (
    "The five measures; depth-100 pool of all 100 runs, seed 1, written as a qrels-shaped text file "
    "with its contributions and statistics as parquet. Leave-one-out evaluates every run against "
    "its own reduced qrels (100 reduced collections) in one more pass over the runs, after the "
    "full evaluation that gives the values it is compared with."
)
