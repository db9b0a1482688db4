"""Random test collections that hold every case the measures treat apart, and their TREC files.

A collection has numeric query ids (gdeval.pl, behind ir_measures' ERR, accepts no others), docnos
whose byte order is not their numeric order (some not ASCII), grades -2..4 (gdeval.pl's maximum),
negative and zero grades, unjudged retrieved documents, qrels queries the run lacks, run queries
the qrels lack, queries whose qrels have no relevant document, and, in sparse collections, long
rankings with a few judgments (irpipe then ranks judged rows only). Each collection comes with two
runs over the same documents: `tied` (scores with many ties, negative and zero ones, neighbours one
ulp apart) and `tie_free` (distinct positive scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Qrels = dict[str, dict[str, int]]  # qid -> docno -> grade, in the file's order
Run = dict[str, dict[str, float]]  # qid -> docno -> score


@dataclass(frozen=True)
class Collection:
    """Qrels and two runs of the same documents: one with tied scores, one without."""

    qrels: Qrels
    tied: Run
    tie_free: Run

    def write(self, directory: Path, rng: np.random.Generator) -> None:
        """qrels.txt, tied.txt and tie_free.txt in `directory`, lines in a random order."""
        directory.mkdir(parents=True, exist_ok=True)
        lines = [f"{q} 0 {d} {g}" for q, docs in self.qrels.items() for d, g in docs.items()]
        _write(directory / "qrels.txt", lines, rng)
        for name, run in (("tied", self.tied), ("tie_free", self.tie_free)):
            lines = [
                f"{q} Q0 {d} {i + 1} {s!r} {name}"
                for q, docs in run.items()
                for i, (d, s) in enumerate(docs.items())
            ]
            _write(directory / f"{name}.txt", lines, rng)


def _write(path: Path, lines: list[str], rng: np.random.Generator) -> None:
    path.write_text("\n".join(lines[i] for i in rng.permutation(len(lines))) + "\n", "utf-8")


def collection(rng: np.random.Generator) -> Collection:
    """One random collection (see the module docstring)."""
    sparse = rng.random() < 0.3
    qids = rng.choice(np.arange(1, 100), size=int(rng.integers(1, 9)), replace=False)
    qrels: Qrels = {}
    retrieved: dict[str, list[str]] = {}
    for i, qid in enumerate(str(q) for q in qids):
        docs = docnos(rng, int(rng.integers(1, 7 if sparse else 40)))
        qrels[qid] = judgments(rng, docs, all_zero=i == 0)
        # Else a qrels query the run lacks; never the first: irpipe refuses a run that shares
        # no query with the qrels.
        if i == 0 or rng.random() >= 0.15:
            retrieved[qid] = retrieval(rng, qid, docs, sparse)
    for qid in rng.choice(np.arange(100, 200), size=int(rng.integers(0, 3)), replace=False):
        retrieved[str(qid)] = docnos(rng, int(rng.integers(1, 10)))  # not in the qrels
    return Collection(
        qrels, _scored(rng, retrieved, tied_scores), _scored(rng, retrieved, tie_free_scores)
    )


def retrieval(rng: np.random.Generator, qid: str, docs: list[str], sparse: bool) -> list[str]:
    """Most of the query's judged documents, then unjudged ones (many, in a sparse collection)."""
    unjudged = int(rng.integers(60, 150) if sparse else rng.integers(0, 6))
    return [d for d in docs if rng.random() < 0.7] + [f"x{qid}u{j}" for j in range(unjudged)]


def _scored(rng: np.random.Generator, retrieved: dict[str, list[str]], scores) -> Run:
    return {
        q: dict(zip(docs, scores(rng, len(docs)), strict=True)) for q, docs in retrieved.items()
    }


def docnos(rng: np.random.Generator, n: int) -> list[str]:
    """n distinct docnos of mixed shapes, in a random order."""
    shapes = ("d{}", "D{:03d}", "{}", "doc-{}", "d\u00e9{}", "Z{}a")
    found: set[str] = set()
    while len(found) < n:
        found.add(shapes[int(rng.integers(0, len(shapes)))].format(int(rng.integers(0, 300))))
    return [str(d) for d in rng.permutation(sorted(found))]


def judgments(rng: np.random.Generator, docs: list[str], all_zero: bool) -> dict[str, int]:
    """Grades for docs: a mix of -2..4, or a query without any relevant document."""
    kind = rng.random()
    if all_zero or kind < 0.1:
        choices = [0]
    elif kind < 0.2:
        choices = [-2, -1, 0]
    else:
        choices = [-2, -1, 0, 0, 1, 1, 2, 3, 4]
    return {d: int(rng.choice(choices)) for d in docs}


def tied_scores(rng: np.random.Generator, n: int) -> list[float]:
    """Scores with many ties: small integers (negative and 0 too), one decimal, one ulp apart."""
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return [float(x) for x in rng.integers(-3, 4, size=n)]
    if kind == 1:
        return [round(float(x), 1) for x in rng.normal(0, 1, size=n)]
    if kind == 2:
        return [1.5] * n
    scores = [float(x) for x in rng.random(n)]
    for i in range(1, n):
        if rng.random() < 0.3:
            scores[i] = (
                math.nextafter(scores[i - 1], math.inf) if rng.random() < 0.5 else scores[i - 1]
            )
    return scores


def tie_free_scores(rng: np.random.Generator, n: int) -> list[float]:
    """n distinct positive scores."""
    return [float(x + 1) / 7 for x in rng.permutation(n)]


def trec_eval_order(docs: dict[str, float]) -> list[str]:
    """irpipe's default order (trec_eval's, gdeval.pl's): score descending, docno descending
    byte by byte."""
    by_docno = sorted(docs, key=lambda d: d.encode(), reverse=True)
    return sorted(by_docno, key=lambda d: docs[d], reverse=True)  # stable: ties keep docno order
