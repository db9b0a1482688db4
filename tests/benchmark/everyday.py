"""The everyday suites (issue 9): a TREC track's submissions, a grid search, one 100k-line run.

Each tool evaluates all of a suite's runs with the five measures as its users do: trec_eval once
per run in a shell loop, each Python library in one process for all runs (runners/), irpipe with
one spec that lists every run. The data is everyday_data.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from compare import Outcome, agreement_text, measure, tool_table
from context import Context
from report import Report
from tools import FIVE

__all__ = ["EVERYDAY_SUITES", "everyday"]


@dataclass(frozen=True)
class Everyday:
    """A suite's title and its targets: irpipe against the trec_eval loop, and the libraries."""

    title: str
    trec_eval_limit: float
    ahead_of: tuple[str, ...]  # the libraries irpipe must be faster than
    trec_eval_goal: float | None = None  # the stretch goal beyond the limit


# The targets of issue 34.
EVERYDAY_SUITES = {
    "track": Everyday(
        "a TREC track's 20 submissions (`input.<tag>`, 50 topics × 1,000 documents)",
        0.6, ("pytrec_eval", "ir_measures"), 0.3,
    ),
    "grid": Everyday(
        "a grid search: 100 runs of 50 topics × 100 documents", 0.7, ("pytrec_eval",), 0.4
    ),
    "run100k": Everyday(
        "one 100,000-line run (100 topics × 1,000 documents)", 2.5, ("pytrec_eval",), 1.5
    ),
}  # fmt: skip

HOW = (
    "Each tool evaluates every run with the five measures (AP, P@10, R@100, RR, nDCG@10) as its "
    "users do: trec_eval once per run, in a `bash` loop timed as one job (each run's output to a "
    "file of its own); pytrec_eval, ir_measures and ranx in one Python process that reads the "
    "qrels once and then each run (tests/benchmark/runners/); irpipe with one spec listing every "
    "run. Wall time runs from the start of that job to its last result written; CPU time and "
    "peak RSS cover its child processes too. A warm-up round, then the measured rounds, in turns."
)


def everyday(ctx: Context, name: str) -> None:
    """Time every tool on the suite's runs, check their numbers run by run, record the targets."""
    suite = EVERYDAY_SUITES[name]
    data = ctx.everyday(name)
    outcomes = measure(ctx, FIVE, name, data.qrels, data.runs)
    text = f"## {name}: {suite.title}\n\n{HOW}\n\nData: {data.about}"
    ctx.report.sections += [
        f"{text}\n\n{tool_table(outcomes, ctx.repeat)}",
        agreement_text(outcomes, data.runs),
    ]
    _targets(ctx.report, name, suite, outcomes)


def _targets(report: Report, name: str, suite: Everyday, outcomes: dict[str, Outcome]) -> None:
    """irpipe / trec_eval (all runs) within the limit; irpipe ahead of each library (< 1)."""
    irpipe = outcomes.get("irpipe")
    if not (irpipe and irpipe.timing):
        return
    limits = {"trec_eval": suite.trec_eval_limit, **dict.fromkeys(suite.ahead_of, 1.0)}
    for tool, limit in limits.items():
        other = outcomes.get(tool)
        if other and other.timing:
            ratio = irpipe.timing.wall / other.timing.wall
            strict = tool != "trec_eval"  # "ahead of" means faster, not as fast
            goal = suite.trec_eval_goal if tool == "trec_eval" else None
            target = f"{name}: irpipe / {tool} wall time"
            report.target(target, ratio, limit, stretch=goal, strict=strict)
    trec = outcomes.get("trec_eval")
    if trec and trec.timing:  # a figure, not a target: Python's and DuckDB's own memory is most
        report.figure(
            f"{name}: irpipe / trec_eval peak RSS", irpipe.timing.rss_mb / trec.timing.rss_mb
        )
