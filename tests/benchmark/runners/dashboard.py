"""The dashboard suite's runner.

    dashboard.py history DIR        a history of 365 nightly evaluations in DIR/history.duckdb
                                    (once: kept while DIR/complete says the same shape)
    dashboard.py ready SITE CALLS   open SITE/index.html in headless Chromium (Playwright) and
                                    append to CALLS the seconds until it is ready (what is on
                                    screen drawn), and until every chart is (scrolled to)

The history: 20 runs × 50 queries × 100 documents, 10 metrics, an expected value and a gate;
each night two runs are new versions (a ranker retrained), the other 18 are unchanged and their
results reused, as a nightly job's history holds them. Each evaluation is `irpipe run`'s, in this
process; its times are then set one day apart, the last one today.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import yaml

NIGHTS, RUNS, QUERIES, DEPTH = 365, 20, 50, 100
METRICS = ["AP", "nDCG@10", "nDCG@20", "nDCG", "P@5", "P@10", "R@100", "RR", "bpref", "R@20"]
SHAPE = {"nights": NIGHTS, "runs": RUNS, "queries": QUERIES, "depth": DEPTH, "metrics": METRICS}
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", "--disable-quic"]  # fmt: skip


def write_run(path: Path, rng: np.random.Generator, skill: float, relevant: np.ndarray) -> None:
    """A run: each query's 100 documents of 500, scored by noise plus skill where relevant."""
    lines = []
    for q in range(QUERIES):
        docs = rng.choice(500, DEPTH, replace=False)
        scores = rng.random(DEPTH) + skill * relevant[q, docs]
        for rank, i in enumerate(np.argsort(-scores), 1):
            lines.append(f"q{q} Q0 d{docs[i]} {rank} {scores[i]:.6f} r\n")
    path.write_text("".join(lines))


def history(root: Path) -> None:
    from pipeline.cli import main

    root.mkdir(parents=True, exist_ok=True)
    done = root / "complete"
    if done.exists() and json.loads(done.read_text()) == SHAPE:
        return
    rng = np.random.default_rng(365)
    relevant = (rng.random((QUERIES, 500)) < 0.06) * rng.integers(1, 3, (QUERIES, 500))
    (root / "qrels.txt").write_text("".join(
        f"q{q} 0 d{d} {relevant[q, d]}\n" for q in range(QUERIES) for d in range(500)
        if relevant[q, d] or rng.random() < 0.05))  # fmt: skip
    skills = rng.uniform(0.2, 1.5, RUNS)
    for r in range(RUNS):
        write_run(root / f"run{r:02}.txt", rng, skills[r], relevant)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {f"run{r:02}": {"path": f"run{r:02}.txt", "collection": "c"} for r in range(RUNS)},
        "metrics": METRICS,
        "history": "history.duckdb",
        "expect": [{"run": "run00", "metric": "AP", "value": 0.13, "tolerance": 0.01}],
        "gates": [{"metric": "nDCG@10", "max_drop": 0.02, "against": "previous"}],
    }
    (root / "nightly.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (root / "history.duckdb").unlink(missing_ok=True)
    for night in range(NIGHTS):
        for r in rng.choice(RUNS, 2, replace=False) if night else []:
            skills[r] = min(2.0, max(0.1, skills[r] + rng.normal(0, 0.1)))
            write_run(root / f"run{r:02}.txt", rng, skills[r], relevant)
        code = main(["run", str(root / "nightly.yaml"), "--quiet"])
        assert code in (0, 5), code  # 5: a check failed, as some nights do
    _one_day_apart(root / "history.duckdb")
    done.write_text(json.dumps(SHAPE))


def _one_day_apart(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(
        "UPDATE evaluations SET started = DATE '2026-11-25' - INTERVAL (? - id) DAY "
        "+ INTERVAL 2 HOUR, finished = DATE '2026-11-25' - INTERVAL (? - id) DAY "
        "+ INTERVAL 2 HOUR + (finished - started)",
        [NIGHTS, NIGHTS],
    )
    con.close()


def ready(site: Path, calls: Path) -> None:
    """Seconds until the page is ready (what is on screen drawn), then until every chart is
    drawn too, scrolled to one after another."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        started = time.perf_counter()
        page.goto((site / "index.html").absolute().as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=120_000)
        seconds = time.perf_counter() - started
        for chart in page.locator(".chart").all():
            chart.scroll_into_view_if_needed()
            chart.locator("canvas, svg").first.wait_for(timeout=120_000)
        every = time.perf_counter() - started
        browser.close()
    with calls.open("a") as out:
        out.write(f"{seconds:.4f} {every:.4f}\n")


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "history":
        history(Path(args[0]))
    else:
        ready(Path(args[0]), Path(args[1]))
