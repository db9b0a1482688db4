"""The cwl suite (issue 33): C/W/L's INST, BPM and NERR measures on the track's 20 runs of 50
topics × 1,000 documents (50k lines each), irpipe (one spec, every run) against cwl_eval 1.0.12's
`cwl-eval` looped over the runs (runners/cwl_eval_loop.py). Gains are grade / 2 (the track's
grades are 0-2): irpipe's `max_rel: 2`, and cwl_eval's gain file written so. cwl_eval reads each
run's lines in the file's order, and the track's files list tied documents in an order of their
own: irpipe reads them by their rank column (`ordering: rank`), which numbers the lines.
Target: ≤ 0.2 × cwl-eval's wall time. Every per-query value is compared at the 4 decimals
cwl-eval prints.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import yaml
from context import TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import table
from tools import irpipe_executable

__all__ = ["cwl"]

RUNNER = Path(__file__).resolve().parent / "runners" / "cwl_eval_loop.py"
TOP = 2  # the track's highest grade
#: irpipe's metric and cwl_eval's metrics-file line for it, in cwl-eval's printing order
METRICS = [
    ("INST", "INSTCWLMetric(1.0)"),
    ("BPM@10", "BPMCWLMetric(1.0,10)"),
    ("NERR8@10", "NERReq8CWLMetric(10)"),
    ("NERR9@10", "NERReq9CWLMetric(10)"),
    ("NERR10", "NERReq10CWLMetric(0.9)"),
    ("NERR11", "NERReq11CWLMetric(1.0)"),
]


def _inputs(work: Path, qrels: Path, runs: list[Path]) -> tuple[Path, Path, Path]:
    """irpipe's spec, cwl_eval's gain file and its metrics file."""
    spec = {
        "collections": {"c": {"qrels": str(qrels)}},
        "runs": {path.name: {"path": str(path), "collection": "c"} for path in runs},
        "settings": {"ordering": "rank"},
        "metrics": [{"metric": m, "max_rel": TOP, "label": m} for m, _ in METRICS],
        "outputs": [{"path": str(work / "irpipe.csv"), "level": "query"}],
    }
    paths = work / "spec.yaml", work / "gains.txt", work / "metrics.txt"
    paths[0].write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    lines = [line.split() for line in qrels.read_text().splitlines() if line.strip()]
    paths[1].write_text("".join(f"{q} 0 {d} {max(int(g), 0) / TOP!r}\n" for q, _, d, g in lines))
    paths[2].write_text("".join(f"{line}\n" for _, line in METRICS))
    return paths


def _largest_difference(work: Path, runs: list[Path]) -> tuple[float, int]:
    """The largest |irpipe − cwl-eval| of the per-query values cwl-eval printed, and how many."""
    with (work / "irpipe.csv").open() as handle:
        ours = {
            (r["run"], r["qid"], r["metric"]): float(r["value"]) for r in csv.DictReader(handle)
        }
    largest, count = 0.0, 0
    for run in runs:
        rows = [
            line.split("\t") for line in (work / "cwl" / f"{run.name}.txt").read_text().splitlines()
        ]
        for i, row in enumerate(rows):  # each topic's lines in the metrics file's order
            metric = METRICS[i % len(METRICS)][0]
            largest = max(largest, abs(ours[run.name, row[0], metric] - float(row[2])))
            count += 1
    return largest, count


def cwl(ctx: Context) -> None:
    """Both tools taking turns; the ratio of wall times is the target."""
    track = ctx.everyday("track")
    work = ctx.results / "cwl"
    work.mkdir(parents=True, exist_ok=True)
    spec, gains, metrics = _inputs(work, track.qrels, track.runs)
    runs = len(track.runs)
    jobs = {
        f"irpipe: one spec, {runs} runs": ([irpipe_executable(), "run", "--quiet", str(spec)],
                                           work / "irpipe.log"),
        "cwl-eval, once per run": ([sys.executable, str(RUNNER), str(gains), str(metrics),
                                    str(work / "cwl"), *map(str, track.runs)], work / "cwl.log"),
    }  # fmt: skip
    timings = measured(take_turns(jobs, ctx.repeat))
    ours, theirs = timings.values()
    largest, count = _largest_difference(work, track.runs)
    rows = [timing_row(what, t) for what, t in timings.items()]
    ctx.report.sections.append(
        f"## cwl: {', '.join(m for m, _ in METRICS)} on the track's {runs} runs of 50k lines\n\n"
        f"{table(TIMING_HEADERS, rows)}\n\n{track.about}\n\n"
        f"{count:,} per-query values compared: the largest difference from cwl-eval's printed "
        f"value is {largest:.2g} (it prints 4 decimals)."
    )
    ratio = ours.wall / theirs.wall
    ctx.report.target(f"cwl: irpipe / cwl-eval looped over {runs} runs, wall", ratio, 0.2)
