"""Deterministic synthetic test collections: qrels and runs with every hard case in them.

Used by the tests (differential checks against pytrec_eval) and to make the quickstart's sample data.
A collection has graded judgments (0..max_grade), negative judgments, queries with no relevant
document, queries absent from a run, run-only queries, retrieved documents that were never judged,
relevant documents never retrieved, and score ties (also ties that only exist in float32).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Collection", "generate", "write_qrels", "write_run"]


@dataclass
class Collection:
    """qrels[qid][docno] = grade and runs[name][qid][docno] = score."""

    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    runs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def generate(
    seed: int,
    queries: int = 12,
    runs: int = 2,
    max_grade: int = 3,
    float32_ties: bool = True,
    skill: tuple[float, ...] = (),
) -> Collection:
    """A random collection; the same seed always gives the same collection.

    `float32_ties` adds scores that differ from another by a relative 1e-12: distinct doubles that
    trec_eval 9.x (which stored float32) sees as ties. `skill[r]` raises the scores of run r's
    relevant documents by skill × grade, so that runs differ in quality (default: random runs).
    """
    rng = random.Random(seed)
    qids = [_qid(i) for i in range(queries)]
    collection = Collection()
    for qid in qids:
        collection.qrels[qid] = _judgments(rng, qid, max_grade)
    for r in range(runs):
        answered = [q for q in qids if rng.random() > 0.15]  # some qrels queries are missing
        answered.append(f"run_only_{r}")
        boost = skill[r] if r < len(skill) else 0.0
        collection.runs[f"run{r}"] = {
            q: _ranking(rng, float32_ties, collection.qrels.get(q, {}), boost) for q in answered
        }
    return collection


def _qid(i: int) -> str:
    # Mixed-width numeric ids, so that bytewise and numeric order differ ("10" < "9").
    return str(i * 7 % 23 + (i // 23) * 100)


def _judgments(rng: random.Random, qid: str, max_grade: int) -> dict[str, int]:
    pool = rng.randint(1, 30)
    judged = {}
    no_relevant = rng.random() < 0.15
    for d in rng.sample(range(60), pool):
        grade = 0 if no_relevant else rng.choice([0, 0, 0, *range(1, max_grade + 1)])
        if rng.random() < 0.08:
            grade = rng.choice([-1, -2])  # a negative judgment ("pooled but unjudged")
        judged[f"d{d}"] = grade
    return judged


def _ranking(
    rng: random.Random, float32_ties: bool, judged: dict[str, int], boost: float
) -> dict[str, float]:
    depth = rng.randint(1, 40)
    docs = rng.sample(range(60), depth)  # some judged, some not
    scores: dict[str, float] = {}
    level = rng.uniform(5, 20)
    for d in docs:
        roll = rng.random()
        if roll < 0.25 and scores:
            score = rng.choice(list(scores.values()))  # an exact tie
        elif roll < 0.35 and scores and float32_ties:
            score = rng.choice(list(scores.values())) * (1 + 1e-12)  # ties only in float32
        else:
            level -= rng.uniform(0, 1)
            score = round(level, rng.choice([1, 3, 6]))
        scores[f"d{d}"] = score
    for docno in scores:
        if boost and judged.get(docno, 0) > 0:
            scores[docno] = round(scores[docno] + boost * judged[docno], 6)
    return scores


def write_qrels(qrels: dict[str, dict[str, int]], path: Path) -> None:
    """TREC qrels: qid iter docno rel."""
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_run(run: dict[str, dict[str, float]], path: Path, tag: str = "run") -> None:
    """TREC run: qid Q0 docno rank score tag; ranks as a system would print them."""
    lines = []
    for q, docs in run.items():
        ordered = sorted(docs.items(), key=lambda item: -item[1])
        lines += [f"{q} Q0 {d} {i} {s!r} {tag}" for i, (d, s) in enumerate(ordered, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_sample(directory: str | Path, seed: int = 2026) -> None:
    """The quickstart's sample data: one collection of 50 queries and two runs."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    collection = generate(seed, queries=50, runs=2, float32_ties=False, skill=(4.0, 6.0))
    write_qrels(collection.qrels, directory / "qrels.txt")
    for name, run in zip(("bm25", "dense"), collection.runs.values(), strict=True):
        write_run(run, directory / f"{name}.trec", tag=name)
