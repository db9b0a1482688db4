"""pytrec_eval: TREC text in (parsed with plain Python, as its users do), means out as JSON.

Usage: common.py; measures by trec_eval's names (map, P.10, P, ...). One RelevanceEvaluator holds
the qrels and evaluates each run in turn.
"""

from __future__ import annotations

import pytrec_eval
from common import arguments, write


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


def means(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    """Aggregate as trec_eval does (sums, geometric mean), with the number of queries."""
    names = next(iter(per_query.values())).keys()
    values = {
        name: pytrec_eval.compute_aggregated_measure(name, [q[name] for q in per_query.values()])
        for name in names
    }
    return {**values, "num_q": len(per_query)}


def main() -> None:
    """Evaluate every run against the qrels, one RelevanceEvaluator for all."""
    args = arguments(__doc__.split("\n")[0])
    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(args.qrels), set(args.measures))
    write(args.out, {run: means(evaluator.evaluate(read_run(run))) for run in args.runs})


if __name__ == "__main__":
    main()
