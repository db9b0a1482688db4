"""The pooled suite (issue 34, item 3): one 7M-line run against pooled judgments.

The run is the `five` suite's (data/<size>/run0.trec); the qrels are generate.py's pooled ones
(about 15 graded judgments a query, most from the top of the ranking, a few negative): ten times
`five`'s judged rows, nearly all of them retrieved. The executor chooses its plan by how many
judged rows a query has against log2 of its ranking's length (`pipeline.plan.ranking.COUNTED`,
`mostly_judged`): this shape took the full plan (every row sorted, in slices) until that choice
was measured, and now takes the judged-rows plan, counting each judged row's rank; a pool of 3 ×
log2(1,000) = 30 or more judgments a query still takes the full plan. Each tool runs the five
measures and trec_eval's default set. Targets: irpipe in at most 0.5 × trec_eval's wall time
(0.3 the goal beyond), and no more memory.
"""

from __future__ import annotations

from pathlib import Path

from compare import Outcome, agreement_text, measure, tool_table
from context import Context, progress
from generate import SIZES, write_pooled_qrels
from report import Report
from tools import FIVE, OFFICIAL

__all__ = ["pooled"]

HOW = (
    "Each tool evaluates the run in one process (trec_eval once, with the suite's -m flags or "
    "none); irpipe with a one-run spec. Wall time runs from process start to results written; "
    "peak RSS is the largest of the measured runs. A warm-up round, then the measured rounds, "
    "in turns."
)


def pooled(ctx: Context) -> None:
    """Every tool on the run under pooled judgments, with the five and with the official set."""
    _, runs = ctx.dataset(ctx.size)
    progress(f"data {ctx.size}: pooled qrels in {runs[0].parent}")
    qrels = write_pooled_qrels(runs[0].parent, SIZES[ctx.size])
    for suite in (FIVE, OFFICIAL):
        label = f"pooled-{suite.name}-{ctx.size}"
        outcomes = measure(ctx, suite, label, qrels, runs)
        measures = (
            ", ".join(m.trec for m in suite.metrics) if suite is FIVE else "trec_eval's default set"
        )
        text = f"## pooled ({suite.name}): {measures}\n\n{HOW}\n\nData: {_about(ctx.size, qrels)}"
        ctx.report.sections += [
            f"{text}\n\n{tool_table(outcomes, ctx.repeat)}",
            agreement_text(outcomes, runs),
        ]
        _targets(ctx.report, suite.name, outcomes)


def _about(size: str, qrels: Path) -> str:
    """The shape in a line: run lines, queries, judgments a query and their grades."""
    grades: dict[str, int] = {}
    queries: set[str] = set()
    with qrels.open() as handle:
        for line in handle:
            qid, _, _, grade = line.split()
            queries.add(qid)
            grades[grade] = grades.get(grade, 0) + 1
    judged = sum(grades.values())
    shares = ", ".join(
        f"{g}: {n / judged:.0%}" for g, n in sorted(grades.items(), key=lambda kv: int(kv[0]))
    )
    return (
        f"{size} ({SIZES[size]:,} run lines, {SIZES[size] // 1000:,} queries × 1,000 documents); "
        f"pooled qrels: {judged:,} judgments, {judged / len(queries):.1f} a query, grades {shares}."
    )


def _targets(report: Report, name: str, outcomes: dict[str, Outcome]) -> None:
    """irpipe against trec_eval: wall time (0.5, 0.3 beyond) and peak RSS (1.0)."""
    irpipe, trec = outcomes.get("irpipe"), outcomes.get("trec_eval")
    if not (irpipe and irpipe.timing and trec and trec.timing):
        return
    wall = irpipe.timing.wall / trec.timing.wall
    report.target(f"pooled ({name}): irpipe / trec_eval wall time", wall, 0.5, 0.3)
    rss = irpipe.timing.rss_mb / trec.timing.rss_mb
    report.target(f"pooled ({name}): irpipe / trec_eval peak RSS", rss, 1.0)
