"""The fusion suite (issue: fused runs): two MS MARCO-like runs of `--size` lines (7M by default)
fused with RRF (k 60) and with min-max CombSUM, then evaluated with the five measures: irpipe
(one spec: the two runs and the fused one, every run evaluated) against ranx (its readers,
`fuse`, then `evaluate` of the fused run only). Target: ≤ 0.2 × ranx's time, peak memory ≤
ranx's. ranx's numba code is compiled in the warm-up round (its cache kept between rounds).
tune: the weights of 3 of the track's runs (~90k lines each, 50 topics) tuned for nDCG@10 by
wsum (grid 0.1: 66 weightings, 5 folds), then the tuned run evaluated. Target: ≤ 30 s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from context import FIVE_IRPIPE, TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table
from tools import irpipe_executable

__all__ = ["fusion"]

RUNNER = Path(__file__).resolve().parent / "runners" / "ranx_fuse.py"
METHODS = {"rrf": {"method": "rrf", "k": 60}, "combsum": {"method": "combsum", "norm": "min-max"}}


def _spec(work: Path, qrels: Path, runs: list[Path], method: str) -> Path:
    spec = {
        "collections": {"c": {"qrels": str(qrels)}},
        "runs": {"a": {"path": str(runs[0]), "collection": "c"},
                 "b": {"path": str(runs[1]), "collection": "c"},
                 "fused": {"fuse": ["a", "b"], **METHODS[method]}},
        "metrics": FIVE_IRPIPE,
        "outputs": [{"path": str(work / f"{method}.csv"), "level": "aggregate"}],
    }  # fmt: skip
    path = work / f"{method}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _tuning_job(ctx: Context, work: Path) -> tuple[list[str], Path]:
    track = ctx.everyday("track")
    runs = {
        f"r{i}": {"path": str(path), "collection": "c"} for i, path in enumerate(track.runs[:3])
    }
    tune = {"metric": "nDCG@10", "grid": 0.1, "folds": 5, "seed": 1}
    spec = {
        "collections": {"c": {"qrels": str(track.qrels)}},
        "runs": {**runs, "tuned": {"fuse": list(runs), "method": "wsum", "tune": tune}},
        "metrics": FIVE_IRPIPE,
        "outputs": [{"path": str(work / "tuned.csv"), "level": "aggregate"}],
    }
    path = work / "tune.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return [irpipe_executable(), "run", "--quiet", str(path)], work / "tune.log"


def fusion(ctx: Context) -> None:
    """Both methods, both tools, taking turns; the ratios are the targets."""
    qrels, runs = ctx.dataset(ctx.size, runs=2)
    work = ctx.results / "fusion"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for method in METHODS:
        jobs = {
            "irpipe": ([irpipe_executable(), "run", "--quiet", str(_spec(work, qrels, runs, method))],
                       work / f"irpipe-{method}.log"),
            "ranx": ([sys.executable, str(RUNNER), method, str(qrels), str(runs[0]), str(runs[1]),
                      str(work / f"ranx-{method}.json")], work / f"ranx-{method}.log"),
        }  # fmt: skip
        timings = measured(take_turns(jobs, ctx.repeat))
        rows += [[f"{method}: {tool}", *timing_row(tool, t)[1:]] for tool, t in timings.items()]
        ours, theirs = timings["irpipe"], timings["ranx"]
        ctx.report.target(f"fusion {method}: irpipe / ranx, wall", ours.wall / theirs.wall, 0.2)
        ctx.report.target(
            f"fusion {method}: irpipe / ranx, peak RSS", ours.rss_mb / theirs.rss_mb, 1.0
        )
    tuning = measured(take_turns({"irpipe tune": _tuning_job(ctx, work)}, ctx.repeat))
    rows += [timing_row("tune: irpipe", tuning["irpipe tune"])]
    ctx.report.target("fusion: tuning 3 track runs (s)", tuning["irpipe tune"].wall, 30.0)
    ctx.report.sections.append(
        f"## fusion: two {ctx.size}-line runs fused, then evaluated (five measures)\n\n"
        + table(TIMING_HEADERS, rows)
        + "\n\nirpipe evaluates the two runs too (they are runs of its spec); ranx only the fused one."
    )
