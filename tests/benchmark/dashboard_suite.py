"""The dashboard suite (issue: see it): a history of 365 nightly evaluations × 20 runs × 10
metrics × 50 queries (runners/dashboard.py builds it once, through `irpipe run`; two runs change
each night, the others are reused), then:

write   `irpipe dashboard HISTORY --out DIR`, whole processes. Target: ≤ 10 s.
weight  the site's bytes. Target: ≤ 10 MB.
ready   its index page opened in headless Chromium (Debian's, through Playwright) until it is
        ready (`data-ready`: what is on screen drawn; a chart further down is drawn when it is
        scrolled to), the browser's start not counted; and until every chart is drawn, scrolled
        to one after another (reported). Target: ready ≤ 2 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from context import TIMING_HEADERS, Context, measured, progress, timing_row
from measure import take_turns
from report import table
from tools import irpipe_executable

__all__ = ["dashboard"]

RUNNER = Path(__file__).resolve().parent / "runners" / "dashboard.py"


def _history(ctx: Context) -> Path:
    root = ctx.data / "dashboard"
    progress(f"data: a history of 365 nightly evaluations in {root} (once, a minute or two)")
    log = ctx.results / "dashboard-history.log"
    ctx.results.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        subprocess.run([sys.executable, str(RUNNER), "history", str(root)], check=True,
                       stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    return root / "history.duckdb"


def dashboard(ctx: Context) -> None:
    """Write the site (timed), weigh it, and time its index page in Chromium."""
    history = _history(ctx)
    work = ctx.results / "dashboard"
    work.mkdir(parents=True, exist_ok=True)
    site = work / "site"
    jobs = {"irpipe dashboard": ([irpipe_executable(), "dashboard", str(history), "--out",
                                  str(site)], work / "write.log")}  # fmt: skip
    timings = measured(take_turns(jobs, ctx.repeat))
    weight = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    calls = work / "ready.calls"
    calls.unlink(missing_ok=True)
    ready = {"index page ready": ([sys.executable, str(RUNNER), "ready", str(site), str(calls)],
                                  work / "ready.log")}  # fmt: skip
    browser = measured(take_turns(ready, ctx.repeat))
    rounds = [line.split() for line in calls.read_text().splitlines()[1:]]  # after the warm-up
    seconds = statistics.median(float(ready) for ready, _ in rounds)
    every = statistics.median(float(drawn) for _, drawn in rounds)
    rows = [timing_row(what, t) for what, t in {**timings, **browser}.items()]
    pages = sum(1 for _ in site.rglob("*.html"))
    ctx.report.sections.append(
        "## dashboard: 365 nightly evaluations × 20 runs × 10 metrics × 50 queries\n\n"
        + table(TIMING_HEADERS, rows)
        + f"\n\nThe site: {pages} pages, {weight / 1e6:.2f} MB (the Vega bundle "
        f"{(site / 'assets' / 'vega.js').stat().st_size / 1e6:.2f} MB of it). The index page "
        f"was ready (what is on screen drawn) {seconds:.2f} s after it was asked for, and every "
        f"chart was drawn, scrolled to one after another, after {every:.2f} s (medians; the "
        "browser's start not counted)."
    )
    ctx.report.target("dashboard: write the site (s)", timings["irpipe dashboard"].wall, 10.0)
    ctx.report.target("dashboard: the site's weight (MB)", weight / 1e6, 10.0)
    ctx.report.target("dashboard: index page ready in Chromium (s)", seconds, 2.0)
