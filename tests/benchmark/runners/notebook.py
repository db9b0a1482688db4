"""The notebook suite's runner: data held in memory as a notebook holds it, then one tool's call
timed inside the process (its import included, as a notebook pays it on first use).

    notebook.py frames TOOL CALLS QRELS RUN...   the runs as pandas frames, five measures
    notebook.py evaluator TOOL CALLS             a 1,000-query × 100-document run frame (seeded),
                                                 evaluated 5 times after setting up
    notebook.py arrow TOOL CALLS QRELS RUN       irpipe on a run read into Arrow (TOOL arrow) or
                                                 from its file (TOOL file)

Appends `S` (seconds of the timed call; for evaluator the median of the calls) to the file CALLS,
one line a process, and prints `value V` where there is one (the first run's mean AP).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time

import pandas as pd

FIVE = ["AP", "P@10", "R@100", "RR", "nDCG@10"]
TREC_EVAL = {"AP": "map", "P@10": "P_10", "R@100": "recall_100", "RR": "recip_rank",
             "nDCG@10": "ndcg_cut_10"}  # fmt: skip
IDS = {"qid": str, "docno": str}


def frame(path: str, qrels: bool = False) -> pd.DataFrame:
    names = (
        ["qid", "iter", "docno", "rel"] if qrels else ["qid", "Q0", "docno", "rank", "score", "tag"]
    )
    return pd.read_csv(path, sep=r"\s+", names=names, dtype=IDS)


def irpipe(qrels: pd.DataFrame, runs: dict[str, pd.DataFrame]) -> float:
    from pipeline import evaluate

    values = evaluate(qrels=qrels, runs=runs, metrics=FIVE).aggregate()
    return float(values[values.metric == "AP"].value.iloc[0])


def pytrec_eval(qrels: pd.DataFrame, runs: dict[str, pd.DataFrame]) -> float:
    import pytrec_eval as pe

    judged: dict = {}
    for qid, docno, rel in zip(qrels.qid, qrels.docno, qrels.rel, strict=True):
        judged.setdefault(qid, {})[docno] = int(rel)
    evaluator = pe.RelevanceEvaluator(judged, set(TREC_EVAL.values()))
    first = None
    for run in runs.values():
        scored: dict = {}
        for qid, docno, score in zip(run.qid, run.docno, run.score, strict=True):
            scored.setdefault(qid, {})[docno] = float(score)
        found = evaluator.evaluate(scored)
        first = first if first is not None else statistics.fmean(v["map"] for v in found.values())
    return first


def ir_measures(qrels: pd.DataFrame, runs: dict[str, pd.DataFrame]) -> float:
    import ir_measures as im

    measures = [im.parse_measure(m) for m in FIVE]
    judged = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "rel": "relevance"})
    first = None
    for run in runs.values():
        scored = run.rename(columns={"qid": "query_id", "docno": "doc_id"})
        found = im.calc_aggregate(measures, judged, scored)
        first = first if first is not None else found[im.parse_measure("AP")]
    return first


def frames(tool: str, qrels_path: str, run_paths: list[str]) -> None:
    qrels = frame(qrels_path, qrels=True)
    runs = {path.rsplit(".", 1)[-1]: frame(path) for path in run_paths}
    started = time.perf_counter()
    value = {"irpipe": irpipe, "pytrec_eval": pytrec_eval, "ir_measures": ir_measures}[tool](
        qrels, runs
    )
    record(time.perf_counter() - started)
    print(f"value {value:.6f}")


def evaluator(tool: str) -> None:
    """Set up once (untimed), then one run frame evaluated five times, as a training loop does."""
    qrels, run = loop_data()
    if tool == "irpipe":
        from pipeline import Evaluator

        evaluate = Evaluator(qrels, FIVE)
        call = lambda: evaluate(run).aggregate()  # noqa: E731
    else:
        import pytrec_eval as pe

        judged: dict = {}
        for qid, docno, rel in zip(qrels.qid, qrels.docno, qrels.rel, strict=True):
            judged.setdefault(qid, {})[docno] = int(rel)
        checker = pe.RelevanceEvaluator(judged, set(TREC_EVAL.values()))

        def call():
            scored: dict = {}
            for qid, docno, score in zip(run.qid, run.docno, run.score, strict=True):
                scored.setdefault(qid, {})[docno] = float(score)
            return checker.evaluate(scored)

    call()  # a warm-up: imports and first use
    times = []
    for _ in range(5):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    record(statistics.median(times))


def arrow(tool: str, qrels_path: str, run_path: str) -> None:
    """irpipe on a run held as an Arrow table (`arrow`) or read from its file (`file`)."""
    import pyarrow.csv as pacsv

    from pipeline import evaluate

    run = run_path
    if tool == "arrow":
        options = pacsv.ParseOptions(delimiter=" ")
        names = pacsv.ReadOptions(column_names=["qid", "Q0", "docno", "rank", "score", "tag"])
        types = pacsv.ConvertOptions(column_types={"qid": "string", "docno": "string"})
        run = pacsv.read_csv(run_path, read_options=names, parse_options=options,
                             convert_options=types).select(["qid", "docno", "rank", "score"])  # fmt: skip
        run = run.combine_chunks()  # as a frame holds it, the reader's buffers let go
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    evaluate(qrels=qrels_path, runs={"run": run}, metrics=FIVE).aggregate()
    record(time.perf_counter() - started)
    added = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(f"peak MB added by the call {added / 1024:.0f}")  # beyond holding the table


def loop_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """1,000 queries × 100 documents with random scores, a tenth of them judged 0 to 2."""
    import numpy as np

    rng = np.random.default_rng(1)
    qids = np.repeat(np.arange(1000).astype(str), 100)
    docnos = np.array([f"d{i}" for i in rng.integers(0, 5000, qids.size)])
    run = pd.DataFrame({"qid": qids, "docno": docnos, "score": rng.random(qids.size)})
    run = run.drop_duplicates(["qid", "docno"])
    judged = run.sample(frac=0.1, random_state=1)[["qid", "docno"]]
    return judged.assign(rel=rng.integers(0, 3, len(judged))), run


def record(seconds: float) -> None:
    with open(CALLS, "a", encoding="utf-8") as calls:
        calls.write(f"{seconds:.4f}\n")


if __name__ == "__main__":
    mode, tool, CALLS, *paths = sys.argv[1:]
    {"frames": lambda: frames(tool, paths[0], paths[1:]),
     "evaluator": lambda: evaluator(tool),
     "arrow": lambda: arrow(tool, *paths)}[mode]()  # fmt: skip
