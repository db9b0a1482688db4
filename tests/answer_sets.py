"""Generated answer sets for the tests: nuggets (TREC RAG's, as nuggetizer writes them) and runs
of assignments with every label, empty nugget sets, missing answers and integer qids, and the
records nuggetizer's scorer reads for the same answers."""

from __future__ import annotations

import json
import random
from pathlib import Path

import yaml

LABELS = ("support", "partial_support", "not_support")
#: irpipe's metric -> nuggetizer's field
NUGGETIZER = {
    "NuggetAll": "all_score",
    "NuggetVital": "vital_score",
    "NuggetAll(strict=True)": "strict_all_score",
    "NuggetVital(strict=True)": "strict_vital_score",
}
METRICS = [*NUGGETIZER, "NuggetWeighted", "NuggetWeighted(strict=True)"]


def draw_topics(rng: random.Random, n: int, odd: bool = False) -> dict[str, list[dict]]:
    """`n` topics, each with 0 to 12 nuggets, vital or okay (`odd`: now and then another)."""
    importances = ["vital", "okay", *(["failed"] if odd else [])]
    return {
        str(100 + t): [
            {"text": f"fact {t}.{i}", "importance": rng.choice(importances)}
            for i in range(rng.choice([0, 1, 2, 3, 5, 8, 12]))
        ]
        for t in range(n)
    }


def draw_assignments(rng: random.Random, topics: dict, odd: bool = False) -> dict[str, list[dict]]:
    """A run's assignments: each topic answered (now and then not), every label drawn."""
    labels = [*LABELS, *(["supporter", "failed"] if odd else [])]
    return {
        qid: [{**n, "assignment": rng.choice(labels)} for n in nuggets]
        for qid, nuggets in topics.items()
        if rng.random() > 0.15
    }


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def collection(tmp_path: Path, seed: int, runs: int = 3, odd: bool = False):
    """A spec over generated nuggets and runs, and nuggetizer's records of every run, each topic
    without an answer assigned nothing (as nuggetizer's assign step writes it)."""
    rng = random.Random(seed)
    topics = draw_topics(rng, 25, odd)
    nuggets = [{"qid": int(q) if rng.random() < 0.3 else q, "query": "q", "nuggets": n}
               for q, n in topics.items()]  # fmt: skip
    write(tmp_path / "nuggets.jsonl", nuggets)
    spec_runs, records = {}, {}
    for r in range(runs):
        assigned = draw_assignments(rng, topics, odd)
        lines = [{"qid": q, "run_id": "answers", "nuggets": a} for q, a in assigned.items()]
        write(tmp_path / f"run{r}.jsonl", lines)
        spec_runs[f"run{r}"] = {"assignments": f"run{r}.jsonl", "collection": "rag"}
        missing = {q: [{**n, "assignment": "not_support"} for n in nugs]
                   for q, nugs in topics.items() if q not in assigned}  # fmt: skip
        records[f"run{r}"] = {
            "answered": [{"qid": q, "nuggets": a} for q, a in assigned.items()],
            "all": [{"qid": q, "nuggets": {**assigned, **missing}[q]} for q in topics],
        }
    spec = {"collections": {"rag": {"nuggets": "nuggets.jsonl"}}, "runs": spec_runs,
            "metrics": METRICS, "settings": {"input": "lenient" if odd else "strict"}}  # fmt: skip
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "spec.yaml", records
