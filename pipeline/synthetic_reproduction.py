"""Generated reproductions of runs, as a second group's attempt at the same systems gives them:
the same documents mostly, their scores moved a little (so that neighbours swap places, and
rounding makes new ties), a document lost or found now and then, and a topic now and then not
run at all. Deterministic by seed, for the tests and the guide's data (`configs/data/reproduction`).
"""

from __future__ import annotations

import random
from pathlib import Path

from pipeline.synthetic import generate, write_qrels, write_run

__all__ = ["reproduce", "write_reproduction_sample"]

#: a run: qid -> docno -> score
Run = dict[str, dict[str, float]]


def reproduce(run: Run, seed: int, noise: float = 0.5, lost_topics: float = 0.05) -> Run:
    """A reproduction of `run`: each document's score moved by up to `noise` with probability
    0.4 (the others keep theirs, and their ties), rounded to 3 decimals; a document dropped with
    probability 0.05 and a new one (`r<n>`) added with 0.1; a share `lost_topics` of the topics
    left out. The same seed always gives the same reproduction."""
    rng = random.Random(f"reproduce {seed}")
    reproduced: Run = {}
    for qid, docs in run.items():
        if rng.random() < lost_topics:
            continue
        scores = {d: _moved(rng, s, noise) for d, s in docs.items() if rng.random() >= 0.05}
        if rng.random() < 0.1:
            scores[f"r{rng.randint(0, 99)}"] = round(rng.uniform(0, 20), 3)
        reproduced[qid] = scores or dict(docs)
    return reproduced


def _moved(rng: random.Random, score: float, noise: float) -> float:
    return round(score + rng.uniform(-noise, noise), 3) if rng.random() < 0.4 else score


def write_reproduction_sample(directory: str | Path, seed: int = 44) -> None:
    """A reproducibility and a replicability study's files: `qrels.txt` and the original runs
    `bm25.trec` and `bm25_rm3.trec` (50 queries, the advanced run better), their reproductions
    `bm25_rep.trec` and `bm25_rm3_rep.trec`; and another collection, `other_qrels.txt`, with the
    same two systems replicated on it, `bm25_other.trec` and `bm25_rm3_other.trec`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    original = generate(seed, queries=50, runs=2, float32_ties=False, skill=(1.0, 6.0))
    other = generate(seed + 1, queries=40, runs=2, float32_ties=False, skill=(1.0, 5.0))
    write_qrels(original.qrels, directory / "qrels.txt")
    write_qrels(other.qrels, directory / "other_qrels.txt")
    for i, name in enumerate(("bm25", "bm25_rm3")):
        run = original.runs[f"run{i}"]
        write_run(run, directory / f"{name}.trec", tag=name)
        write_run(reproduce(run, seed + i), directory / f"{name}_rep.trec", tag=f"{name}_rep")
        write_run(other.runs[f"run{i}"], directory / f"{name}_other.trec", tag=f"{name}_other")
