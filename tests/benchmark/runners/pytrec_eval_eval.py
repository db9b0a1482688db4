"""pytrec_eval: TREC text in (parsed with plain Python, as its users do), means out as JSON.

Usage: pytrec_eval_eval.py QRELS RUN OUT.json MEASURE... (trec_eval names: map, P.10, P, ...)
"""

from __future__ import annotations

import json
import sys

import pytrec_eval


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    """qid -> docno -> grade; pytrec_eval has no reader of its own."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as lines:
        for line in lines:
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path: str) -> dict[str, dict[str, float]]:
    """qid -> docno -> score."""
    run: dict[str, dict[str, float]] = {}
    with open(path) as lines:
        for line in lines:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, {})[docno] = float(score)
    return run


def main(qrels_path: str, run_path: str, out: str, *measures: str) -> None:
    """Evaluate per query, aggregate as trec_eval does (sums, geometric mean), write the means."""
    per_query = pytrec_eval.RelevanceEvaluator(read_qrels(qrels_path), set(measures)).evaluate(
        read_run(run_path)
    )
    names = next(iter(per_query.values())).keys()
    means = {
        name: pytrec_eval.compute_aggregated_measure(name, [q[name] for q in per_query.values()])
        for name in names
    }
    with open(out, "w") as handle:
        json.dump({**means, "num_q": len(per_query)}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
