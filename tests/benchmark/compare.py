"""Tools side by side on the same files: the five and official suites.

Each tool runs as its own process, in turns with the others; the table shows median wall time,
peak RSS and the ratio to irpipe, and every value the tools share is checked for agreement.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from context import TIMING_HEADERS, Context, progress, timing_row
from generate import SIZES
from measure import Timing, ToolFailed, take_turns
from report import Report, agreement, table
from tools import FIVE, OFFICIAL, Suite, Tool, missing

__all__ = ["Outcome", "compare", "measure"]

TOOL_HEADERS = ["tool", *TIMING_HEADERS[1:], "time tool/irpipe", "time irpipe/tool"]
TOOL_HEADERS += ["measured runs", "notes"]


@dataclass
class Outcome:
    """One tool on one suite and size: its timing (None if it could not run) and its numbers."""

    timing: Timing | None
    values: dict[str, float]
    note: str


def measure(ctx: Context, tools: list[Tool], suite: Suite) -> dict[str, Outcome]:
    """Each tool on the suite, on one run of --size, taking turns."""
    qrels, (run,) = ctx.dataset(ctx.size)
    outcomes = {t.name: Outcome(None, {}, t.unavailable()) for t in tools if t.unavailable()}
    ready = {tool.name: tool for tool in tools if tool.name not in outcomes}
    work = {name: ctx.results / f"{suite.name}-{ctx.size}" / name for name in ready}
    jobs = {
        name: (tool.command(suite, qrels, run, work[name]), work[name] / "log.txt")
        for name, tool in ready.items()
    }
    for name, timing in take_turns(jobs, ctx.repeat).items():
        outcomes[name] = _outcome(ready[name], suite, timing, work[name])
    return {tool.name: outcomes[tool.name] for tool in tools}


def _outcome(tool: Tool, suite: Suite, timing: Timing | ToolFailed, work: Path) -> Outcome:
    if isinstance(timing, ToolFailed):
        return Outcome(None, {}, f"failed: {timing}")
    walls = " ".join(f"{s.wall:.2f}" for s in timing.samples)
    progress(f"{suite.name} {tool.name}: {walls} s, {timing.rss_mb:.0f} MB")
    lacks = _grouped(missing(suite, tool.name))
    note = f"lacks {lacks}" if lacks else ""
    return Outcome(timing, tool.results(suite, work, work / "log.txt"), note)


def _grouped(names: list[str]) -> str:
    """trec_eval names, a family of cutoffs shown once: P_5, P_10 -> P_* (2)."""
    families: dict[str, list[str]] = {}
    for name in names:
        family = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
        families.setdefault(family, []).append(name)
    return ", ".join(f"{k}_* ({len(v)})" if len(v) > 1 else v[0] for k, v in families.items())


def compare(ctx: Context, suite: Suite) -> None:
    """Every tool on the same files with the suite's measures, side by side."""
    outcomes = measure(ctx, ctx.tools, suite)
    base = outcomes.get("irpipe")
    rows = [_tool_row(name, o, base, ctx.repeat) for name, o in outcomes.items()]
    values = {name: o.values for name, o in outcomes.items() if o.timing}
    warnings = agreement(values, "irpipe" if "irpipe" in values else "trec_eval")
    title = f"## {suite.name}: {', '.join(m.trec for m in suite.metrics)}"
    if suite is OFFICIAL:
        title = "## official: trec_eval's default measure set (no -m)"
    ctx.report.sections.append(f"{title}\n\n{_data_line(ctx.size)}\n\n{table(TOOL_HEADERS, rows)}")
    ctx.report.sections.append(_agreement_text(warnings, len(values)))
    for warning in warnings:
        print(warning, file=sys.stderr)
    _compare_targets(ctx.report, suite, outcomes)


# Known, documented reasons for disagreements, shown when the warnings they explain appear.
EXPLAINED = {
    "WARNING: ranx ": "ranx keeps tied scores in file order; trec_eval, pytrec_eval, ir_measures "
    "and irpipe order them by docno descending. About 5% of rows tie, so ranx differs slightly at "
    "cutoffs; with the ties broken in the file its numbers match.",
    "on iprec_at_recall": "pytrec_eval (and ir_measures, which calls it) embed trec_eval 9.x code, "
    "which counts a recall level as reached after (long)(r*R + 0.9) relevant documents; trec_eval "
    "10.0 and irpipe use lround(r*R). irpipe with `compatibility: trec_eval-9` matches pytrec_eval.",
}


def _agreement_text(warnings: list[str], tools: int) -> str:
    if tools < 2:
        return "Only one tool ran, so there was nothing to check its numbers against."
    if not warnings:
        return f"All {tools} tools agree within 1e-4 on every measure they share."
    reasons = [why for key, why in EXPLAINED.items() if any(key in w for w in warnings)]
    return "\n".join(f"- {w}" for w in warnings) + "".join(f"\n\n{why}" for why in reasons)


def _tool_row(name: str, outcome: Outcome, base: Outcome | None, repeat: int) -> list:
    timing = outcome.timing
    if timing is None:
        return [name, "-", "-", "-", "-", "-", "-", 0, outcome.note]
    ratio = timing.wall / base.timing.wall if base and base.timing else None
    ratios = [ratio, 1 / ratio] if ratio else ["-", "-"]
    return [*timing_row(name, timing), *ratios, repeat, outcome.note]


def _data_line(size: str) -> str:
    return (
        f"Data: {size} ({SIZES[size]:,} run lines, {SIZES[size] // 1000:,} queries). The tools "
        "take turns: a warm-up round, then the measured rounds. Wall time runs from process start "
        "to results written; peak RSS is the largest of the measured runs."
    )


def _compare_targets(report: Report, suite: Suite, outcomes: dict[str, Outcome]) -> None:
    irpipe, trec, pytrec = (outcomes.get(n) for n in ("irpipe", "trec_eval", "pytrec_eval"))
    if not (irpipe and irpipe.timing):
        return
    if trec and trec.timing:
        limit, stretch = (0.25, 0.20) if suite is FIVE else (0.35, None)
        name = f"{suite.name}: irpipe / trec_eval wall time"
        report.target(name, irpipe.timing.wall / trec.timing.wall, limit, stretch)
        if suite is FIVE:
            ratio = irpipe.timing.rss_mb / trec.timing.rss_mb
            report.target("five: irpipe / trec_eval peak RSS", ratio, 1.0)
    if suite is FIVE and pytrec and pytrec.timing:
        ratio = irpipe.timing.wall / pytrec.timing.wall
        report.target("five: irpipe / pytrec_eval wall time", ratio, 0.30)
