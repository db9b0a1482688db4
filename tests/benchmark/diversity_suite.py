"""The diversity suite (issue 33): TREC Web-track-shaped data, 50 topics with 3 to 8 subtopics and
a few hundred judged documents each (ndeval's subtopic qrels), and 100 runs of 1,000 documents a
topic (5M lines), evaluated with the six diversity measures at k = 20 by irpipe (one spec) and by
ir_measures' diversity measures (its pyndeval provider: ndeval's C code), one process for all
runs. Target: irpipe ≤ 0.5 × ir_measures' wall time. Every run's means must agree within 1e-4
(scores are distinct within a topic: pyndeval breaks ties by docno ascending, ndeval's
-traditional and irpipe by docno descending).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import yaml
from context import TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import agreement, table
from tools import irpipe_executable

__all__ = ["diversity", "write_web_track"]

RUNNER = Path(__file__).resolve().parent / "runners" / "ir_measures_diversity.py"
#: the six measures with a cutoff, by ir_measures' names (irpipe's are the same)
MEASURES = ["alpha_nDCG@20", "alpha_DCG@20", "ERR_IA@20", "nERR_IA@20", "P_IA@20", "StRecall@20"]
TOPICS, DOCS, RUNS, POOL = 50, 1000, 100, 300


def write_web_track(where: Path, runs: int = RUNS) -> tuple[Path, list[Path]]:
    """Subtopic qrels and `runs` runs of TOPICS × DOCS lines, deterministic, written once."""
    where.mkdir(parents=True, exist_ok=True)
    qrels, paths = where / "qrels.ndeval.txt", [where / f"run{r:03d}.trec" for r in range(runs)]
    if qrels.exists() and all(p.exists() for p in paths):
        return qrels, paths
    topics = _qrels(np.random.default_rng(2014), qrels)
    for r, path in enumerate(paths):
        _run(np.random.default_rng(r), topics, path, f"run{r:03d}")
    return qrels, paths


def _qrels(rng: np.random.Generator, path: Path) -> dict[int, tuple[np.ndarray, set[int]]]:
    """Per topic, 3-8 subtopics and POOL judged documents, each judged for every subtopic and
    relevant (grade 1 or 2) to a few; returns each topic's pool and its relevant documents."""
    lines, topics = [], {}
    for topic in range(201, 201 + TOPICS):
        subtopics = int(rng.integers(3, 9))
        pool = rng.choice(20_000, POOL, replace=False)
        relevant = set()
        for d in pool:
            grades = (rng.random(subtopics) < 0.12).astype(int) * rng.integers(1, 3, subtopics)
            relevant |= {int(d)} if grades.any() else set()
            lines += [f"{topic} {s + 1} clueweb12-{d:07d} {g}" for s, g in enumerate(grades)]
        topics[topic] = (pool, relevant)
    path.write_text("\n".join(lines) + "\n")
    return topics


def _run(rng: np.random.Generator, topics: dict, path: Path, tag: str) -> None:
    """DOCS distinct scores a topic, a sixth of the documents from the judged pool (as a pooled
    track's runs meet them); relevant documents raised by a run's own skill."""
    lines = []
    for topic, (pool, relevant) in topics.items():
        judged = rng.choice(pool, DOCS // 6, replace=False)
        others = rng.choice(
            np.setdiff1d(np.arange(20_000), pool), DOCS - len(judged), replace=False
        )
        docs = np.concatenate([judged, others])
        scores = rng.random(DOCS) * 10 + np.isin(docs, list(relevant)) * rng.random() * 4
        order = np.argsort(-scores, kind="stable")
        lines += [f"{topic} Q0 clueweb12-{docs[i]:07d} {n} {scores[i]:.9f} {tag}"
                  for n, i in enumerate(order, 1)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def _spec(work: Path, qrels: Path, runs: list[Path]) -> Path:
    spec = {
        "collections": {"web": {"qrels": str(qrels), "format": "subtopics"}},
        "runs": {p.stem: {"path": str(p), "collection": "web"} for p in runs},
        "metrics": MEASURES,
        "outputs": [{"path": str(work / "irpipe.csv"), "level": "aggregate"}],
    }
    path = work / "diversity.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def diversity(ctx: Context, runs: int = RUNS) -> None:
    """Both tools, taking turns; the ratio is the target, and the means must agree."""
    qrels, paths = write_web_track(ctx.data / "diversity", runs)
    work = ctx.results / "diversity"
    work.mkdir(parents=True, exist_ok=True)
    theirs = work / "ir_measures.json"
    jobs = {
        "irpipe": ([irpipe_executable(), "run", "--quiet", str(_spec(work, qrels, paths))],
                   work / "irpipe.log"),
        "ir_measures (pyndeval)": ([sys.executable, str(RUNNER), str(qrels), str(theirs), "--runs",
                                    *map(str, paths), "--measures", *MEASURES],
                                   work / "ir_measures.log"),
    }  # fmt: skip
    timings = measured(take_turns(jobs, ctx.repeat))
    rows = [timing_row(tool, t) for tool, t in timings.items()]
    ours, other = timings.values()
    ctx.report.target(
        "diversity: irpipe / ir_measures (pyndeval), wall", ours.wall / other.wall, 0.5
    )
    warnings = agreement(_means(work / "irpipe.csv", theirs), "irpipe")
    ctx.report.sections.append(
        f"## diversity: {len(paths)} runs × {TOPICS} topics × {DOCS} documents, six diversity "
        f"measures at 20\n\n{table(TIMING_HEADERS, rows)}\n\n" + "\n".join(warnings)
    )


def _means(ours: Path, theirs: Path) -> dict[str, dict[str, float]]:
    """Each tool's means as {run/measure: value}, for `agreement`."""
    with ours.open(newline="") as handle:
        mine = {f"{r['run']}/{r['metric']}": float(r["value"]) for r in csv.DictReader(handle)}
    found = json.loads(theirs.read_text())
    other = {f"{Path(run).stem}/{m}": v for run, values in found.items() for m, v in values.items()}
    return {"irpipe": mine, "ir_measures": other}
