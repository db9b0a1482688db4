"""The benchmark suites: tools side by side (five, official), scale, runs10, spill and validate.

Each suite measures, then adds a section (and its targets) to the report.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from generate import SIZES, write_collection
from measure import Timing, ToolFailed, bench
from report import Report, agreement, table
from tools import (
    FIVE,
    OFFICIAL,
    RUNNERS,
    Irpipe,
    Suite,
    Tool,
    irpipe_executable,
    missing,
    read_summary,
    write_spec,
)

__all__ = ["Context", "SUITE_NAMES", "run_suite"]

IRPIPE = Irpipe()
TOOL_HEADERS = ["tool", "median wall (s)", "peak RSS (MB)", "time tool/irpipe"]
TOOL_HEADERS += ["time irpipe/tool", "measured runs", "notes"]


@dataclass
class Outcome:
    """One tool on one suite and size: its timing (None if it could not run) and its numbers."""

    timing: Timing | None
    values: dict[str, float]
    note: str


@dataclass
class Context:
    """The command line's choices, the report being written, and outcomes already measured."""

    size: str
    repeat: int
    tools: list[Tool]
    data: Path
    results: Path
    memory_limit: str
    report: Report
    outcomes: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)
    datasets: dict[tuple[str, int], tuple[Path, list[Path]]] = field(default_factory=dict)

    def dataset(self, size: str, runs: int = 1) -> tuple[Path, list[Path]]:
        """The size's qrels and runs, generated into data/<size>/ unless already there."""
        if (size, runs) not in self.datasets:
            progress(f"data {size}: {runs} run(s) in {self.data / size}")
            self.datasets[size, runs] = write_collection(self.data / size, SIZES[size], runs=runs)
        return self.datasets[size, runs]

    def measure(self, tool: Tool, suite: Suite, size: str) -> Outcome:
        """The tool on the suite at this size; measured once per benchmark, then reused."""
        key = (tool.name, suite.name, size)
        if key not in self.outcomes:
            self.outcomes[key] = self._measure(tool, suite, size)
        return self.outcomes[key]

    def _measure(self, tool: Tool, suite: Suite, size: str) -> Outcome:
        reason = tool.unavailable()
        if reason:
            return Outcome(None, {}, reason)
        qrels, (run,) = self.dataset(size)
        work = self.results / f"{suite.name}-{size}" / tool.name
        log = work / "log.txt"
        try:
            timing = bench(tool.command(suite, qrels, run, work), log, self.repeat)
        except ToolFailed as exc:
            return Outcome(None, {}, f"failed: {exc}")
        progress(f"{suite.name} {size} {tool.name}: {timing.wall:.2f} s, {timing.rss_mb:.0f} MB")
        lacks = missing(suite, tool.name)
        note = f"lacks {', '.join(lacks)}" if lacks else ""
        return Outcome(timing, tool.results(suite, work, log), note)


def progress(message: str) -> None:
    """Progress goes to stderr, so stdout carries only the report."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def compare(ctx: Context, suite: Suite) -> None:
    """Every tool on the same files with the suite's measures, side by side."""
    outcomes = {tool.name: ctx.measure(tool, suite, ctx.size) for tool in ctx.tools}
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
    if not warnings:
        return f"All {tools} tools agree within 1e-4 on every measure they share."
    reasons = [why for key, why in EXPLAINED.items() if any(key in w for w in warnings)]
    return "\n".join(f"- {w}" for w in warnings) + "".join(f"\n\n{why}" for why in reasons)


def _tool_row(name: str, outcome: Outcome, base: Outcome | None, repeat: int) -> list:
    if outcome.timing is None:
        return [name, "-", "-", "-", "-", 0, outcome.note]
    wall, rss = outcome.timing.wall, outcome.timing.rss_mb
    if base is None or base.timing is None:
        return [name, wall, rss, "-", "-", repeat, outcome.note]
    ratio = wall / base.timing.wall
    return [name, wall, rss, ratio, 1 / ratio, repeat, outcome.note]


def _data_line(size: str) -> str:
    return (
        f"Data: {size} ({SIZES[size]:,} run lines, {SIZES[size] // 1000:,} queries), "
        "median wall time after one warm-up run; peak RSS is the largest of the measured runs."
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


def scale(ctx: Context) -> None:
    """irpipe with the five measures on every size: does time grow linearly in rows?"""
    timings = {size: ctx.measure(IRPIPE, FIVE, size).timing for size in SIZES}
    reference = timings.get("7M")
    rows = [
        [size, f"{SIZES[size]:,}", t.wall, t.rss_mb, t.wall / SIZES[size] * 1e6]
        + [t.wall / reference.wall if reference else "-"]
        for size, t in timings.items()
        if t
    ]
    headers = ["size", "run lines", "median wall (s)", "peak RSS (MB)", "s per M lines"]
    ctx.report.sections.append(
        "## scale: irpipe, five measures, one run\n\n" + table(headers + ["wall / 7M wall"], rows)
    )
    if reference and timings.get("14M"):
        ctx.report.target("scale: 14M / 7M wall time", timings["14M"].wall / reference.wall, 2.2)


def runs10(ctx: Context) -> None:
    """Ten runs in one spec against ten times the cost of only reading one run."""
    qrels, runs = ctx.dataset(ctx.size, runs=10)
    work = ctx.results / f"runs10-{ctx.size}"
    metrics = [m.irpipe for m in FIVE.metrics]
    spec10 = write_spec(work / "spec10.yaml", qrels, runs, metrics, work / "out10")
    spec1 = write_spec(work / "spec1.yaml", qrels, runs[:1], metrics, work / "out1")
    ten = bench([irpipe_executable(), "run", str(spec10)], work / "run10.log", ctx.repeat)
    read = [sys.executable, str(RUNNERS / "irpipe_read.py"), str(spec1)]
    read_one = bench(read, work / "read1.log", ctx.repeat)
    one = ctx.measure(IRPIPE, FIVE, ctx.size).timing
    rows = [
        ["irpipe run: 10 runs, five measures", ten.wall, ten.rss_mb],
        ["irpipe run: 1 run, five measures", one.wall if one else "-", one.rss_mb if one else "-"],
        ["read only: 1 run + qrels (runners/irpipe_read.py)", read_one.wall, read_one.rss_mb],
        ["10 × read only", 10 * read_one.wall, "-"],
    ]
    ctx.report.sections.append(
        f"## runs10: ten {ctx.size} runs in one spec\n\n"
        + table(["what", "median wall (s)", "peak RSS (MB)"], rows)
        + f"\n\n{READ_ONLY_NOTE}"
    )
    ctx.report.target("runs10: 10 runs / (10 × read one run)", ten.wall / (10 * read_one.wall), 1.2)


READ_ONLY_NOTE = (
    '"Read only" is a fresh Python process that imports irpipe, validates a one-run spec and '
    "executes its plan without the measure statements: the qrels and the run are loaded into DuckDB "
    "with the same fast pass and line checks `irpipe run` uses; no metrics, no outputs."
)


def spill(ctx: Context) -> None:
    """irpipe on one run with DuckDB's memory limit set low: it must complete by spilling."""
    qrels, (run,) = ctx.dataset(ctx.size)
    work = ctx.results / f"spill-{ctx.size}"
    spec = write_spec(work / "spec.yaml", qrels, [run], [m.irpipe for m in FIVE.metrics], work)
    script = str(RUNNERS / "irpipe_spill.py")
    command = [sys.executable, script, str(spec), ctx.memory_limit, str(work / "tmp")]
    baseline = ctx.measure(IRPIPE, FIVE, ctx.size)
    try:
        limited = bench(command, work / "log.txt", ctx.repeat)
    except ToolFailed as exc:
        limited, note = None, f"FAILED: {exc}"
    else:
        note = _spill_note(baseline, work)
    rows = [_timing_row("irpipe run, no limit", baseline.timing)]
    rows.append(_timing_row(f"memory_limit = {ctx.memory_limit}", limited))
    ctx.report.sections.append(
        f"## spill: one {ctx.size} run, DuckDB memory_limit {ctx.memory_limit}\n\n"
        + table(["irpipe", "median wall (s)", "peak RSS (MB)"], rows)
        + f"\n\n{note}"
    )


def _spill_note(baseline: Outcome, work: Path) -> str:
    """Completed: what DuckDB still held on disk, and whether the numbers match the unlimited run."""
    held = (work / "log.txt").read_text().strip().splitlines()[-1]
    spilled = {"irpipe": baseline.values, "spilled": read_summary(FIVE, work / "summary.csv")}
    warnings = agreement(spilled, "irpipe")
    same = "; ".join(warnings) if warnings else "the same numbers as without a limit"
    return f"Completed; {held}; {same}."


def _timing_row(what: str, timing: Timing | None) -> list:
    return [what, timing.wall, timing.rss_mb] if timing else [what, "-", "-"]


def validate(ctx: Context) -> None:
    """`irpipe validate SPEC`: import and spec validation before any data is touched."""
    qrels, (run,) = ctx.dataset(ctx.size)
    work = ctx.results / "validate"
    rows = []
    for suite in (FIVE, OFFICIAL):
        metrics = [m.irpipe for m in suite.metrics if m.irpipe]
        spec = write_spec(work / f"{suite.name}.yaml", qrels, [run], metrics, work / "out")
        command = [irpipe_executable(), "validate", str(spec)]
        rows.append([suite.name, len(metrics), bench(command, work / "log.txt", ctx.repeat)])
    ctx.report.sections.append(
        "## validate: `irpipe validate SPEC` (process start to exit, no data read)\n\n"
        + table(
            ["spec", "metrics", "median wall (s)", "peak RSS (MB)"],
            [[name, n, t.wall, t.rss_mb] for name, n, t in rows],
        )
    )
    ctx.report.target("validate: import + validate (s)", max(t.wall for *_, t in rows), 0.5)


SUITES = {
    "five": lambda ctx: compare(ctx, FIVE),
    "official": lambda ctx: compare(ctx, OFFICIAL),
    "scale": scale,
    "runs10": runs10,
    "spill": spill,
    "validate": validate,
}
SUITE_NAMES = list(SUITES)


def run_suite(ctx: Context, name: str) -> None:
    """Run one suite by name, adding its section to the report."""
    progress(f"suite {name}")
    SUITES[name](ctx)
