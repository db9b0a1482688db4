"""The answers suite (issue 42): TREC RAG-shaped nugget evaluation, 300 topics of 20 nuggets (half
vital) and 100 runs of nuggetizer's assignments (one JSON line a topic, every label drawn), scored
with the six nugget measures (all, vital, weighted; each also strict) by irpipe (one spec) and by
a plain Python script reading the same lines (runners/nuggets_script.py), whole processes.
Target: irpipe ≤ 0.3 × the script's wall time. Every run's means must be equal.
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

import yaml
from context import TIMING_HEADERS, Context, measured, timing_row
from measure import take_turns
from report import agreement, table
from tools import irpipe_executable

__all__ = ["answers", "write_answer_runs"]

RUNNER = Path(__file__).resolve().parent / "runners" / "nuggets_script.py"
MEASURES = [f"{m}{s}" for s in ("", "(strict=true)") for m in
            ("NuggetAll", "NuggetVital", "NuggetWeighted")]  # fmt: skip
TOPICS, RUNS, NUGGETS = 300, 100, 20
LABELS = ("support", "partial_support", "not_support")


def write_answer_runs(where: Path, runs: int = RUNS) -> tuple[Path, list[Path]]:
    """The nuggets and `runs` assignment files, deterministic, written once."""
    where.mkdir(parents=True, exist_ok=True)
    nuggets, paths = where / "nuggets.jsonl", [where / f"run{r:03d}.jsonl" for r in range(runs)]
    if nuggets.exists() and all(p.exists() for p in paths):
        return nuggets, paths
    rng = random.Random(2024)
    topics = {
        str(2024_000 + t): [
            {"text": f"topic {t} nugget {i}: " + "a fact " * rng.randint(2, 10),
             "importance": "vital" if i < NUGGETS // 2 else "okay"}
            for i in range(NUGGETS)
        ]
        for t in range(TOPICS)
    }  # fmt: skip
    lines = [{"qid": q, "query": f"question {q}", "nuggets": n} for q, n in topics.items()]
    nuggets.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for path in paths:
        answered = [
            {"qid": q, "run_id": path.stem, "nuggets": [
                {**n, "assignment": rng.choice(LABELS)} for n in found]}
            for q, found in topics.items()
        ]  # fmt: skip
        path.write_text("".join(json.dumps(line) + "\n" for line in answered))
    return nuggets, paths


def _spec(work: Path, nuggets: Path, runs: list[Path]) -> Path:
    spec = {
        "collections": {"rag": {"nuggets": str(nuggets)}},
        "runs": {p.stem: {"assignments": str(p), "collection": "rag"} for p in runs},
        "metrics": MEASURES,
        "outputs": [{"path": str(work / "irpipe.csv"), "level": "aggregate"}],
    }
    path = work / "answers.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def answers(ctx: Context, runs: int = RUNS) -> None:
    """Both, taking turns; the ratio is the target, and the means must be equal."""
    nuggets, paths = write_answer_runs(ctx.data / "answers", runs)
    work = ctx.results / "answers"
    work.mkdir(parents=True, exist_ok=True)
    theirs = work / "script.json"
    jobs = {
        "irpipe": ([irpipe_executable(), "run", "--quiet", str(_spec(work, nuggets, paths))],
                   work / "irpipe.log"),
        "a Python script": ([sys.executable, str(RUNNER), str(theirs), *map(str, paths)],
                            work / "script.log"),
    }  # fmt: skip
    timings = measured(take_turns(jobs, ctx.repeat))
    rows = [timing_row(tool, t) for tool, t in timings.items()]
    ours, other = timings.values()
    ctx.report.target("answers: irpipe / a Python script, wall", ours.wall / other.wall, 0.3)
    with (work / "irpipe.csv").open(newline="") as handle:
        mine = {f"{r['run']}/{r['metric']}": float(r["value"]) for r in csv.DictReader(handle)}
    found = {"irpipe": mine, "script": json.loads(theirs.read_text())}
    ctx.report.sections.append(
        f"## answers: {len(paths)} runs × {TOPICS} topics × {NUGGETS} nuggets, six nugget "
        f"measures\n\n{table(TIMING_HEADERS, rows)}\n\n" + "\n".join(agreement(found, "irpipe"))
    )
