"""The notebook suite (issue: the Python door): the data held in memory as a notebook holds it,
each tool's call timed inside its process (runners/notebook.py), medians over the rounds.

frames     17 TREC-like runs (the track's first 17, ~50k rows each) as pandas frames, five
           measures: irpipe's `evaluate(qrels=..., runs=..., metrics=...)` against
           `ir_measures.calc_aggregate` per run and pytrec_eval (its dicts built from the same
           frames, in its time). Targets (issue 34): ≤ 0.1× ir_measures, ≤ 0.5× pytrec_eval.
evaluator  one 1,000-query × 100-document run frame, evaluated again and again: irpipe's
           `Evaluator(qrels, metrics)(run)` against pytrec_eval's evaluate (dicts built in its
           time). Target: ≤ 1.0× pytrec_eval.
arrow      the 7M-line run held as an Arrow table against the same run read from its file.
           Target: no more time.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from context import TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table

__all__ = ["notebook"]

RUNNER = Path(__file__).resolve().parent / "runners" / "notebook.py"


def _jobs(work: Path, mode: str, tools: list[str], paths: list[str]) -> dict:
    """(command, log) of each tool; each appends its timed call's seconds to `<tool>.calls`."""
    jobs = {}
    for tool in tools:
        calls = work / f"{mode}-{tool}.calls"
        calls.unlink(missing_ok=True)
        command = [sys.executable, str(RUNNER), mode, tool, str(calls), *paths]
        jobs[tool] = (command, work / f"{mode}-{tool}.log")
    return jobs


def _calls(work: Path, mode: str, tool: str) -> float:
    """The median of a tool's timed calls, the warm-up round's left out."""
    lines = (work / f"{mode}-{tool}.calls").read_text().split()
    return statistics.median(float(line) for line in lines[1:])


def _section(ctx: Context, work: Path, mode: str, title: str, tools: list[str], paths: list[str]):
    timings = measured(take_turns(_jobs(work, mode, tools, paths), ctx.repeat))
    calls = {tool: _calls(work, mode, tool) for tool in tools}
    headers = ["the call (s, median)", *TIMING_HEADERS[1:]]
    rows = [[*timing_row(tool, timings[tool])[:1], calls[tool], *timing_row(tool, timings[tool])[1:]]
            for tool in tools]  # fmt: skip
    ctx.report.sections.append(f"## notebook {mode}: {title}\n\n" + table(["", *headers], rows))
    return calls


def notebook(ctx: Context) -> None:
    """The three shapes; the targets compare the timed calls."""
    work = ctx.results / "notebook"
    work.mkdir(parents=True, exist_ok=True)
    track = ctx.everyday("track")
    paths = [str(track.qrels), *map(str, track.runs[:17])]
    calls = _section(ctx, work, "frames", "17 runs as pandas frames, five measures",
                     ["irpipe", "pytrec_eval", "ir_measures"], paths)  # fmt: skip
    ctx.report.target(
        "notebook: frames, irpipe / ir_measures", calls["irpipe"] / calls["ir_measures"], 0.1
    )
    ctx.report.target(
        "notebook: frames, irpipe / pytrec_eval", calls["irpipe"] / calls["pytrec_eval"], 0.5
    )
    calls = _section(ctx, work, "evaluator", "a 1,000 × 100 run frame, evaluated in a loop",
                     ["irpipe", "pytrec_eval"], [])  # fmt: skip
    ctx.report.target(
        "notebook: Evaluator / pytrec_eval", calls["irpipe"] / calls["pytrec_eval"], 1.0
    )
    qrels, runs = ctx.dataset("7M")
    calls = _section(ctx, work, "arrow", "the 7M-line run as an Arrow table, and from its file",
                     ["arrow", "file"], [str(qrels), str(runs[0])])  # fmt: skip
    ctx.report.target("notebook: 7M Arrow table / file", calls["arrow"] / calls["file"], 1.0)
    added = {tool: _added(work / f"arrow-{tool}.log") for tool in ("arrow", "file")}
    ctx.report.sections[-1] += (
        f"\n\nPeak memory the call adds (the last round; beyond holding the Arrow table, whose "
        f"reading by pyarrow sets the arrow process's peak): Arrow table {added['arrow']} MB, "
        f"file {added['file']} MB."
    )
    ctx.report.target("notebook: 7M memory the call adds, Arrow table / file",
                      added["arrow"] / added["file"], 1.0)  # fmt: skip


def _added(log: Path) -> int:
    """The peak memory the timed call added, as the runner printed it."""
    line = next(x for x in log.read_text().splitlines() if x.startswith("peak MB added"))
    return int(line.split()[-1])
