"""Tools side by side on the same files: the five and official suites, and how any suite does it.

Each tool runs as its own process, in turns with the others; the table shows median wall time,
peak RSS and the ratio to irpipe, and every value the tools share is checked for agreement, run by
run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from context import TIMING_HEADERS, Context, progress, timing_row
from generate import SIZES
from measure import Timing, ToolFailed, take_turns
from report import Report, agreement, table
from tools import FIVE, OFFICIAL, Suite, Tool, Values, missing, run_name

__all__ = ["Outcome", "agreement_text", "compare", "measure", "tool_table"]

TOOL_HEADERS = ["tool", *TIMING_HEADERS[1:], "time tool/irpipe", "time irpipe/tool"]
TOOL_HEADERS += ["measured runs", "notes"]
SHOWN_WARNINGS = 10  # per suite in the report; stderr gets them all


@dataclass
class Outcome:
    """One tool on one suite's files: its timing (None if it could not run) and its numbers."""

    timing: Timing | None
    values: Values
    note: str


def measure(
    ctx: Context, suite: Suite, label: str, qrels: Path, runs: list[Path]
) -> dict[str, Outcome]:
    """Each tool on the suite's measures over all `runs` (one command each), taking turns."""
    outcomes = {t.name: Outcome(None, {}, t.unavailable()) for t in ctx.tools if t.unavailable()}
    ready = {tool.name: tool for tool in ctx.tools if tool.name not in outcomes}
    work = {name: ctx.results / label / name for name in ready}
    jobs = {
        name: (tool.command(suite, qrels, runs, work[name]), work[name] / "log.txt")
        for name, tool in ready.items()
    }
    for name, timing in take_turns(jobs, ctx.repeat).items():
        outcomes[name] = _outcome(ready[name], suite, timing, runs, work[name])
        _show(label, name, timing)
    return {tool.name: outcomes[tool.name] for tool in ctx.tools}


def _outcome(
    tool: Tool, suite: Suite, timing: Timing | ToolFailed, runs: list[Path], work: Path
) -> Outcome:
    if isinstance(timing, ToolFailed):
        return Outcome(None, {}, f"failed: {timing}")
    lacks = _grouped(missing(suite, tool.name))
    note = f"lacks {lacks}" if lacks else ""
    return Outcome(timing, tool.results(suite, runs, work, work / "log.txt"), note)


def _show(label: str, tool: str, timing: Timing | ToolFailed) -> None:
    if isinstance(timing, Timing):
        walls = " ".join(f"{s.wall:.2f}" for s in timing.samples)
        progress(f"{label} {tool}: {walls} s, {timing.rss_mb:.0f} MB")


def _grouped(names: list[str]) -> str:
    """trec_eval names, a family of cutoffs shown once: P_5, P_10 -> P_* (2)."""
    families: dict[str, list[str]] = {}
    for name in names:
        family = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
        families.setdefault(family, []).append(name)
    return ", ".join(f"{k}_* ({len(v)})" if len(v) > 1 else v[0] for k, v in families.items())


def compare(ctx: Context, suite: Suite) -> None:
    """Every tool on the same 7M-like run with the suite's measures, side by side."""
    qrels, runs = ctx.dataset(ctx.size)
    outcomes = measure(ctx, suite, f"{suite.name}-{ctx.size}", qrels, runs)
    title = f"## {suite.name}: {', '.join(m.trec for m in suite.metrics)}"
    if suite is OFFICIAL:
        title = "## official: trec_eval's default measure set (no -m)"
    text = f"{title}\n\n{_data_line(ctx.size)}\n\n{tool_table(outcomes, ctx.repeat)}"
    ctx.report.sections += [text, agreement_text(outcomes, runs)]
    _compare_targets(ctx.report, suite, outcomes)


def tool_table(outcomes: dict[str, Outcome], repeat: int) -> str:
    """The timing table: a row per tool, with its ratios to irpipe."""
    base = outcomes.get("irpipe")
    return table(TOOL_HEADERS, [_tool_row(name, o, base, repeat) for name, o in outcomes.items()])


# Known, documented reasons for disagreements, shown when the warnings they explain appear.
EXPLAINED = {
    "WARNING: ranx ": "ranx sorts a ranking by score alone (numba's argsort, which keeps no "
    "particular order among ties); trec_eval, pytrec_eval, ir_measures and irpipe order tied "
    "documents by docno descending. Where tied documents differ in relevance, ranx's numbers "
    "differ slightly; with the ties broken in the file its numbers match.",
    "on iprec_at_recall": "pytrec_eval (and ir_measures, which calls it) embed trec_eval 9.x code, "
    "which counts a recall level as reached after (long)(r*R + 0.9) relevant documents; trec_eval "
    "10.0 and irpipe use lround(r*R). irpipe with `compatibility: trec_eval-9` matches pytrec_eval.",
}


def agreement_text(outcomes: dict[str, Outcome], runs: list[Path]) -> str:
    """Whether the tools that ran agree within 1e-4 on every run; warnings also go to stderr."""
    values = {name: o.values for name, o in outcomes.items() if o.timing}
    if len(values) < 2:
        return "Only one tool ran, so there was nothing to check its numbers against."
    warnings = _warnings(values, [run_name(run) for run in runs])
    for warning in warnings:
        print(warning, file=sys.stderr)
    if not warnings:
        each = f", on each of the {len(runs)} runs" if len(runs) > 1 else ""
        return f"All {len(values)} tools agree within 1e-4 on every measure they share{each}."
    shown = [f"- {w}" for w in warnings[:SHOWN_WARNINGS]]
    if len(warnings) > SHOWN_WARNINGS:
        shown.append(f"- ... and {len(warnings) - SHOWN_WARNINGS} more (printed on stderr)")
    reasons = [why for key, why in EXPLAINED.items() if any(key in w for w in warnings)]
    return "\n".join(shown) + "".join(f"\n\n{why}" for why in reasons)


def _warnings(values: dict[str, Values], names: list[str]) -> list[str]:
    """One warning per run and tool that differs from the reference (irpipe, else trec_eval)."""
    reference = "irpipe" if "irpipe" in values else "trec_eval"
    warnings = []
    for name in names:
        per_tool = {tool: by_run.get(name, {}) for tool, by_run in values.items()}
        where = f" (run {name})" if len(names) > 1 else ""
        warnings += [w + where for w in agreement(per_tool, reference)]
    return warnings


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
    """five: the issue's (d) targets against trec_eval, and pytrec_eval; official: wall time."""
    irpipe, trec, pytrec = (outcomes.get(n) for n in ("irpipe", "trec_eval", "pytrec_eval"))
    if not (irpipe and irpipe.timing):
        return
    if trec and trec.timing:
        name = f"{suite.name}: irpipe / trec_eval wall time"
        report.target(name, irpipe.timing.wall / trec.timing.wall, 0.35)
        if suite is FIVE:
            ratio = irpipe.timing.rss_mb / trec.timing.rss_mb
            report.target("five: irpipe / trec_eval peak RSS", ratio, 1.0)
    if suite is FIVE and pytrec and pytrec.timing:
        ratio = irpipe.timing.wall / pytrec.timing.wall
        report.target("five: irpipe / pytrec_eval wall time", ratio, 0.30)
