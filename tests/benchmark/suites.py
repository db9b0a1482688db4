"""The suites: track, grid and run100k (everyday.py), five and official (compare.py), scale, runs10,
spill, validate (startup_suite.py), python, significance, history (history_suite.py), pools
(pools_suite.py), pooled (pooled_suite.py), spark (spark_suite.py), notebook (notebook_suite.py), loop (loop_suite.py),
dashboard (dashboard_suite.py), fusion (fusion_suite.py), judgments (judgments_suite.py), cwl
(cwl_suite.py), diversity (diversity_suite.py) and answers (answers_suite.py).

Each suite measures its commands in turns, then adds a section (and its targets) to the report.
"""

from __future__ import annotations

import sys
from pathlib import Path

from answers_suite import answers
from compare import compare
from context import FIVE_IRPIPE, TIMING_HEADERS, Context, measured, progress, show, timing_row
from cwl_suite import cwl
from dashboard_suite import dashboard
from diversity_suite import diversity
from everyday import EVERYDAY_SUITES, everyday
from fusion_suite import fusion
from generate import SIZES
from history_suite import history
from judgments_suite import judgments
from loop_suite import loop
from measure import ToolFailed, take_turns
from notebook_suite import notebook
from pooled_suite import pooled
from pools_suite import pools
from report import agreement, table
from spark_suite import spark
from startup_suite import validate
from tools import FIVE, OFFICIAL, RUNNERS, read_summary, run_name, write_spec

__all__ = ["SUITE_GROUPS", "SUITE_NAMES", "run_suite"]


def scale(ctx: Context) -> None:
    """irpipe with the five measures on every size, taking turns: is time linear in rows?"""
    jobs = {size: ctx.irpipe_job(f"scale-{size}", size) for size in SIZES}
    timings = measured(take_turns(jobs, ctx.repeat))
    reference = timings["7M"].wall
    rows = [
        [
            *timing_row(size, t),
            f"{SIZES[size]:,}",
            t.wall / SIZES[size] * 1e6,
            t.wall / reference,
        ]
        for size, t in timings.items()
    ]
    headers = [*TIMING_HEADERS, "run lines", "s per M lines", "wall / 7M wall"]
    ctx.report.sections.append(
        "## scale: irpipe, five measures, one run\n\n" + table(headers, rows)
    )
    ctx.report.target("scale: 14M / 7M wall time", timings["14M"].wall / reference, 2.2)


def runs10(ctx: Context) -> None:
    """Ten runs in one spec against ten times one run alone (and the cost of only reading it)."""
    one = ctx.irpipe_job(f"runs1-{ctx.size}", ctx.size)
    read = [sys.executable, str(RUNNERS / "irpipe_read.py"), one[0][-1]]  # the same spec
    jobs = {
        "`irpipe run`: 10 runs, five measures": ctx.irpipe_job(f"runs10-{ctx.size}", ctx.size, 10),
        "`irpipe run`: 1 run, five measures": one,
        "read only: qrels + 1 run": (read, one[1].with_name("read.log")),
    }
    timings = measured(take_turns(jobs, ctx.repeat))
    rows = [timing_row(what, t) for what, t in timings.items()]
    ten, one_run, read_one = timings.values()
    rows.append(["10 × 1 run", 10 * one_run.wall, 10 * one_run.best, 10 * one_run.cpu, "-"])
    rows.append(["10 × read only", 10 * read_one.wall, 10 * read_one.best, 10 * read_one.cpu, "-"])
    ctx.report.sections.append(
        f"## runs10: ten {ctx.size} runs in one spec\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{READ_ONLY_NOTE}"
    )
    ratio = ten.wall / (10 * one_run.wall)
    ctx.report.target("runs10: 10 runs / (10 × 1 run) wall time", ratio, 1.2)


READ_ONLY_NOTE = (
    '"Read only" (runners/irpipe_read.py) is a fresh Python process that imports irpipe, validates '
    "a one-run spec and executes its plan without the measure statements: the qrels and the run "
    "are loaded into DuckDB with the same fast pass and line checks `irpipe run` uses; no metrics, "
    "no outputs."
)


def spill(ctx: Context) -> None:
    """irpipe on one run with DuckDB's memory limit set low: it must complete by spilling."""
    baseline = ctx.irpipe_job(f"spill-{ctx.size}", ctx.size)
    work = baseline[1].parent
    qrels, runs = ctx.dataset(ctx.size)
    spec = write_spec(work / "limited.yaml", qrels, runs, FIVE_IRPIPE, work / "limited")
    script = str(RUNNERS / "irpipe_spill.py")
    limited = [sys.executable, script, str(spec), ctx.memory_limit, str(work / "tmp")]
    jobs = {
        "`irpipe run`, no limit": baseline,
        f"runners/irpipe_spill.py, memory_limit {ctx.memory_limit}": (limited, work / "spill.log"),
    }
    results = take_turns(jobs, ctx.repeat)
    show(results)
    outcome = list(results.values())[1]
    failed = isinstance(outcome, ToolFailed)
    note = f"FAILED: {outcome}" if failed else _spill_note(work, run_name(runs[0]))
    rows = [timing_row(what, t) for what, t in results.items()]
    ctx.report.sections.append(
        f"## spill: one {ctx.size} run, DuckDB memory_limit {ctx.memory_limit}\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{note}"
    )


def _spill_note(work: Path, run: str) -> str:
    """Completed: what DuckDB still held on disk, and whether the numbers match the unlimited run."""
    held = (work / "spill.log").read_text().strip().splitlines()[-1]
    both = {
        "irpipe": read_summary(FIVE, work / "out" / "summary.csv")[run],
        "spilled": read_summary(FIVE, work / "limited" / "summary.csv")[run],
    }
    warnings = agreement(both, "irpipe")
    same = "; ".join(warnings) if warnings else "the same numbers as without a limit"
    return f"Completed; {held}; {same}."


def python(ctx: Context) -> None:
    """One metric on one run: in SQL, in Python per query, and in Python over batches."""
    qrels, runs = ctx.dataset(ctx.size)
    work = ctx.results / "python"
    script = str(RUNNERS / "irpipe_python.py")
    jobs = {
        f"P@10 {mode}": (
            [sys.executable, script, str(qrels), str(runs[0]), mode],
            work / f"{mode}.log",
        )
        for mode in ("sql", "query", "batch")
    }
    work.mkdir(parents=True, exist_ok=True)
    timings = measured(take_turns(jobs, ctx.repeat))
    means = {what: (work / f"{what.split()[-1]}.log").read_text().split()[1] for what in jobs}
    same = "the same mean in every mode" if len(set(means.values())) == 1 else f"DIFFER: {means}"
    rows = [timing_row(what, t) for what, t in timings.items()]
    ctx.report.sections.append(
        f"## python: one metric on one {ctx.size} run, in SQL and through the Python path\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{same}."
    )


def significance(ctx: Context) -> None:
    """Comparing runs, apart from evaluating them: every pair of 100 runs on 5 metrics and 50
    queries by the randomization test with 100,000 samples (issue 10: at most 10 s)."""
    work = ctx.results / "significance"
    script = str(RUNNERS / "irpipe_significance.py")
    shape = "100 runs x 5 metrics x 50 queries, all 4,950 pairs, randomization, 100,000 samples"
    jobs = {shape: ([sys.executable, script], work / "randomization.log")}
    timings = measured(take_turns(jobs, ctx.repeat))
    log = dict(line.split() for line in (work / "randomization.log").read_text().splitlines())
    seconds, cpu = float(log["seconds"]), float(log["cpu"])
    rows = [timing_row(f"process: {shape}", timings[shape])]
    rows.append(
        [f"of which compare_runs ({log['comparisons']} comparisons)", seconds, "-", cpu, "-"]
    )
    ctx.report.sections.append(
        "## significance: comparing runs (runners/irpipe_significance.py)\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{SIGNIFICANCE_NOTE}"
    )
    ctx.report.target("significance: compare_runs, all pairs of 100 runs (s)", seconds, 10.0)


SIGNIFICANCE_NOTE = (
    "The process generates per-query values, loads them into DuckDB as `per_query`, and times "
    "`compare_runs`, the step `irpipe run` takes once runs are evaluated: values out of DuckDB, "
    "every comparison, Holm's correction, the `comparison` table written back (the last round's "
    "figure; the process row is the median)."
)


SUITES = {
    **{name: (lambda ctx, name=name: everyday(ctx, name)) for name in EVERYDAY_SUITES},
    "five": lambda ctx: compare(ctx, FIVE),
    "official": lambda ctx: compare(ctx, OFFICIAL),
    "pooled": pooled,
    "scale": scale,
    "runs10": runs10,
    "spill": spill,
    "validate": validate,
    "python": python,
    "significance": significance,
    "history": history,
    "pools": pools,
    "spark": spark,
    "notebook": notebook,
    "loop": loop,
    "dashboard": dashboard,
    "fusion": fusion,
    "diversity": diversity,
    "judgments": judgments,
    "cwl": cwl,
    "answers": answers,
}
SUITE_NAMES = list(SUITES)
# Names that stand for several suites on the command line.
SUITE_GROUPS = {"everyday": list(EVERYDAY_SUITES), "all": SUITE_NAMES}


def run_suite(ctx: Context, name: str) -> None:
    """Run one suite by name, adding its section to the report."""
    progress(f"suite {name}")
    try:
        SUITES[name](ctx)
    except ToolFailed as exc:
        ctx.report.sections.append(f"## {name}\n\nFAILED: {exc}")
