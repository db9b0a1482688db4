"""The loop suite's runner: one process; the qrels and a run frame of 50 queries × 100
documents (seeded, scores random, a fifth of the rows judged 0 to 2, some negatively, a few
judged documents never retrieved); each tool set up once (untimed), then called N times, the
tools taking turns call by call. Prints JSON: each tool's median call (s) and the largest
difference between the tools' means.

    loop.py N
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np
import pandas as pd

METRICS = ["nDCG@10", "RR"]
TREC_EVAL = {"nDCG@10": "ndcg_cut_10", "RR": "recip_rank"}


def data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The qrels and the run."""
    rng = np.random.default_rng(43)
    qids = np.repeat([f"q{i}" for i in range(50)], 100)
    docnos = np.array([f"d{i}" for i in rng.integers(0, 2000, qids.size)])
    run = pd.DataFrame({"qid": qids, "docno": docnos, "score": rng.random(qids.size)})
    run = run.drop_duplicates(["qid", "docno"]).reset_index(drop=True)
    judged = run.sample(frac=0.2, random_state=43)[["qid", "docno"]]
    unretrieved = pd.DataFrame({"qid": qids[::50], "docno": [f"u{i}" for i in range(100)]})
    qrels = pd.concat([judged, unretrieved], ignore_index=True)
    return qrels.assign(rel=rng.choice([-1, 0, 0, 1, 2], len(qrels))), run


def irpipe(qrels: pd.DataFrame, run: pd.DataFrame):
    from pipeline import Evaluator

    evaluator = Evaluator(qrels, METRICS, settings={"compatibility": "trec_eval-9"})

    def call() -> dict[str, float]:
        found = evaluator(run).aggregate()
        return dict(zip(found.metric, found.value, strict=True))

    return call


def pytrec_eval(qrels: pd.DataFrame, run: pd.DataFrame):
    import pytrec_eval as pe

    judged: dict = {}
    for qid, docno, rel in zip(qrels.qid, qrels.docno, qrels.rel, strict=True):
        judged.setdefault(qid, {})[docno] = int(rel)
    evaluator = pe.RelevanceEvaluator(judged, set(TREC_EVAL.values()))

    def call() -> dict[str, float]:
        scored: dict = {}
        for qid, docno, score in zip(run.qid, run.docno, run.score, strict=True):
            scored.setdefault(qid, {})[docno] = float(score)
        found = evaluator.evaluate(scored)
        return {
            m: statistics.fmean(v[name] for v in found.values()) for m, name in TREC_EVAL.items()
        }

    return call


def ir_measures(qrels: pd.DataFrame, run: pd.DataFrame):
    import ir_measures as im

    measures = {m: im.parse_measure(m) for m in METRICS}
    judged = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "rel": "relevance"})
    evaluator = im.evaluator(list(measures.values()), judged)
    scored = run.rename(columns={"qid": "query_id", "docno": "doc_id"})

    def call() -> dict[str, float]:
        found = evaluator.calc_aggregate(scored)
        return {m: found[measure] for m, measure in measures.items()}

    return call


def main(n: int) -> None:
    qrels, run = data()
    calls = {tool.__name__: tool(qrels, run) for tool in (irpipe, pytrec_eval, ir_measures)}
    means = {tool: call() for tool, call in calls.items()}  # warm-up: imports, first use
    times: dict[str, list[float]] = {tool: [] for tool in calls}
    for _ in range(n):
        for tool, call in calls.items():
            started = time.perf_counter()
            call()
            times[tool].append(time.perf_counter() - started)
    difference = max(
        abs(means[tool][m] - means["pytrec_eval"][m]) for tool in means for m in METRICS
    )
    print(json.dumps({"calls": {t: statistics.median(v) for t, v in times.items()},
                      "difference": difference}))  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]))
