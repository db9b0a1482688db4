"""The spark suite (issue 14): the Spark engine on local[2] against the DuckDB engine, same data.

runs     ten runs of --size lines (and of 1M, a size that finishes in minutes) in one spec, the
         five measures: `irpipe run` on DuckDB, and `irpipe run --engine spark` on local[2] (a
         fresh JVM each time, as a job would start). Both write the same outputs; the numbers
         must agree (the summary csv's, compared value by value).
shard    the work of one Spark task without Spark (runners/spark_shard.py): parsing one run's
         text and evaluating it as one shard, each on one core; RESULTS.md's estimate for a
         cluster starts from these costs per million lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from context import FIVE_IRPIPE, TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import agreement, table
from tools import FIVE, RUNNERS, irpipe_executable, read_summary, write_spec

__all__ = ["spark"]

SPARK = {
    "master": "local[2]",
    "conf": {
        "spark.ui.enabled": False,
        # local mode runs the executors in the driver's JVM: give it the memory of the machine's
        # share a job would get, so that the shuffle spills as little as in a cluster's executor
        "spark.driver.memory": "6g",
    },
}


def _on_spark(spec: Path) -> Path:
    """The spec on Spark (local[2]), its outputs in a directory of their own."""
    data = yaml.safe_load(spec.read_text())
    data["spark"] = SPARK
    for output in data["outputs"]:
        output["path"] = output["path"].replace("/out/", "/out-spark/")
    on_spark = spec.with_name("spark.yaml")
    on_spark.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return on_spark


def _jobs(ctx: Context, size: str) -> tuple[dict, Path]:
    qrels, runs = ctx.dataset(size, 10)
    work = ctx.results / f"spark-{size}"
    spec = write_spec(work / "spec.yaml", qrels, runs, FIVE_IRPIPE, work / "out")
    irpipe = irpipe_executable()
    jobs = {
        f"DuckDB engine, 10 × {size}": ([irpipe, "run", "--quiet", str(spec)], work / "duckdb.log"),
        f"Spark engine, local[2], 10 × {size}": (
            [irpipe, "run", "--quiet", "--engine", "spark", str(_on_spark(spec))],
            work / "spark.log",
        ),
    }
    return jobs, work


def _agreement(work: Path) -> str:
    both = {
        "duckdb": read_summary(FIVE, work / "out" / "summary.csv"),
        "spark": read_summary(FIVE, work / "out-spark" / "summary.csv"),
    }
    flat = {
        tool: {f"{run}/{m}": v for run, values in runs.items() for m, v in values.items()}
        for tool, runs in both.items()
    }
    warnings = agreement(flat, "duckdb")
    return "; ".join(warnings) if warnings else "the same numbers on both engines"


def _shard(ctx: Context, size: str) -> list[str]:
    """runners/spark_shard.py on one run of `size`: its printed lines."""
    qrels, runs = ctx.dataset(size, 10)
    work = ctx.results / f"spark-shard-{size}"
    spec = write_spec(work / "spec.yaml", qrels, runs[:1], FIVE_IRPIPE, work / "out")
    command = [sys.executable, str(RUNNERS / "spark_shard.py"), str(spec)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()


def spark(ctx: Context) -> None:
    """Time both engines on ten runs (--size, and 1M), then one task's work per million lines."""
    rows, notes = [], []
    for size in dict.fromkeys(["1M", ctx.size]):
        jobs, work = _jobs(ctx, size)
        timings = measured(take_turns(jobs, ctx.repeat))
        rows += [timing_row(what, t) for what, t in timings.items()]
        notes.append(f"10 × {size}: {_agreement(work)}.")
    shard = _shard(ctx, "1M")
    ctx.report.sections.append(
        "## spark: ten runs on the Spark engine (local[2]) and on DuckDB\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{' '.join(notes)} {CPU_NOTE}\n\n"
        "One task's work, one core, no Spark (runners/spark_shard.py, one 1M run):\n\n"
        + "\n".join(f"    {line}" for line in shard)
    )


CPU_NOTE = (
    "The Spark rows' CPU time and peak RSS are the driver's Python alone: GNU time does not see "
    "Spark's JVM and its Python workers, which pyspark starts and stops itself; compare wall times."
)
