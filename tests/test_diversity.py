"""Subtopic qrels and the diversity measures (configs/REFERENCE.md, "Diversity measures"): every
value equals ndeval's, the TREC Web track's tool, through pyndeval (ndeval 4.5's own C code), per
query, on generated subtopic qrels (graded, zero and negative grades, documents relevant to
several subtopics, subtopics without a relevant document, a query without any) and runs (ties,
unjudged documents, queries a run lacks), in ndeval's two orders: by the run's ranks (its
default: `ordering: rank`) and `-traditional` (score, then docno descending: `ordering:
trec_eval`). Beyond ndeval's depth of 20 the values equal a direct computation of the same
definitions in numpy (itself checked against ndeval up to 20). Ordinary measures on subtopic qrels
see each document's highest grade; the Spark engine gives the same tables; every mistake is one
message naming the key or the file and line.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pyndeval
import pytest
import yaml
from conftest import snapshot
from test_user_errors import DATA_ERROR, SPEC_ERROR, irpipe, refused

from pipeline import evaluate
from pipeline.errors import InputDataError, SpecError
from pipeline.run.evaluation import evaluate as run_evaluation
from pipeline.synthetic import generate_subtopics, write_qrels, write_subtopic_qrels

# irpipe's name -> ndeval's (pyndeval's), at every cutoff ndeval has and some it has not.
NDEVAL = {
    "alpha_DCG@1": "alpha-DCG@1", "alpha_DCG@5": "alpha-DCG@5", "alpha_DCG@20": "alpha-DCG@20",
    "alpha_nDCG@1": "alpha-nDCG@1", "alpha_nDCG@10": "alpha-nDCG@10",
    "alpha_nDCG@20": "alpha-nDCG@20", "ERR_IA@1": "ERR-IA@1", "ERR_IA@5": "ERR-IA@5",
    "ERR_IA@20": "ERR-IA@20", "nERR_IA@3": "nERR-IA@3", "nERR_IA@20": "nERR-IA@20",
    "NRBP": "NRBP", "nNRBP": "nNRBP", "P_IA@5": "P-IA@5", "P_IA@20": "P-IA@20",
    "AP_IA": "MAP-IA", "StRecall@2": "strec@2", "StRecall@20": "strec@20",
}  # fmt: skip
ORDERINGS = ["trec_eval", "rank"]
# ndeval prints 6 decimals; the values agree far beyond (the sums differ in order only).
TOLERANCE = 1e-9


def _write_runs(data, where: Path, seed: int) -> dict[str, dict[str, list[tuple[str, int, float]]]]:
    """Each run as a TREC file whose rank column disagrees with its scores (a shuffled
    permutation), so that ndeval's two orders differ; returns run -> qid -> (docno, rank, score)."""
    rng = random.Random(seed)
    written = {}
    for name, run in data.runs.items():
        rows = {}
        for qid, docs in run.items():
            ranks = rng.sample(range(1, len(docs) + 1), len(docs))
            rows[qid] = [(d, r, s) for (d, s), r in zip(docs.items(), ranks, strict=True)]
        lines = [f"{q} Q0 {d} {r} {s!r} {name}" for q, docs in rows.items() for d, r, s in docs]
        (where / f"{name}.trec").write_text("\n".join(lines) + "\n")
        written[name] = rows
    return written


def _ranked(docs: list[tuple[str, int, float]], ordering: str) -> list[str]:
    """The docnos in ndeval's order: by rank, or (-traditional) by score then docno descending."""
    if ordering == "rank":
        return [d for d, _, _ in sorted(docs, key=lambda x: x[1])]
    return [d for d, _, _ in sorted(docs, key=lambda x: (x[2], x[0]), reverse=True)]


def _spec(where: Path, runs, metrics: list, qrels: str = "qrels.txt", **settings) -> Path:
    spec = {
        "collections": {"web": {"qrels": qrels, "format": "subtopics"}},
        "runs": {name: {"path": f"{name}.trec", "collection": "web"} for name in runs},
        "metrics": metrics,
        "settings": settings,
    }
    path = where / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _values(spec: Path) -> dict[tuple[str, str, str], float]:
    table = evaluate(str(spec)).per_query(to="arrow").to_pylist()
    return {(r["run"], r["qid"], r["metric"]): r["value"] for r in table}


def _ndeval(data, runs, ordering: str, measures: list[str], **params) -> dict:
    """pyndeval's values: run -> qid -> measure -> value, for the queries of run and qrels."""
    # pyndeval numbers subtopics as it first meets them, ndeval by their number: met in order
    # of their numbers, they are summed in ndeval's order (which decides its ties).
    qrels = sorted([(q, str(s), d, g) for q, docs in data.qrels.items()
                    for d, subs in docs.items() for s, g in subs.items()],
                   key=lambda qrel: int(qrel[1]))  # fmt: skip
    evaluator = pyndeval.RelevanceEvaluator(qrels, measures, **params)
    found = {}
    for name, rows in runs.items():
        # Scores that pyndeval sorts into exactly the order ndeval's own reading gives.
        run = [(q, d, -float(i)) for q in sorted(rows)
               for i, d in enumerate(_ranked(rows[q], ordering))]  # fmt: skip
        found[name] = evaluator.evaluate(run)
    return found


@pytest.fixture(scope="module", params=[7, 21, 2026])
def collection(request, tmp_path_factory):
    where = tmp_path_factory.mktemp(f"subtopics{request.param}")
    data = generate_subtopics(request.param, queries=24, runs=3)
    write_subtopic_qrels(data.qrels, where / "qrels.txt")
    return where, data, _write_runs(data, where, request.param)


def _compare(ours: dict, theirs: dict, data, names: dict[str, str], level: int = 1) -> int:
    """Every (run, qrels query, metric) of `ours` against ndeval's (0 where the run lacks the
    query); how many values were compared."""
    compared = 0
    for run, by_query in theirs.items():
        for qid in data.qrels:
            for metric, theirs_name in names.items():
                expected = by_query.get(qid, {}).get(theirs_name, 0.0)
                if math.isnan(expected):  # nNRBP of a query with nothing relevant: 0 / 0
                    grades = [g for s in data.qrels[qid].values() for g in s.values()]
                    assert max(grades) < level
                    expected = 0.0
                got = ours[run, qid, metric]
                assert abs(got - expected) <= TOLERANCE, (run, qid, metric, got, expected)
                compared += 1
    return compared


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_every_query_equals_ndeval(collection, ordering):
    where, data, runs = collection
    ours = _values(_spec(where, runs, list(NDEVAL), ordering=ordering))
    theirs = _ndeval(data, runs, ordering, list(NDEVAL.values()))
    assert _compare(ours, theirs, data, NDEVAL) == 3 * 24 * len(NDEVAL)


@pytest.mark.parametrize(
    "params",
    [{"alpha": 0.3, "beta": 0.8}, {"alpha": 1.0, "beta": 1.0}, {"alpha": 0.0, "beta": 0.0},
     {"rel": 2}],
    ids=str,
)  # fmt: skip
def test_alpha_beta_and_the_relevance_level_are_ndevals(collection, params):
    where, data, runs = collection
    names = {"alpha_nDCG@10": "alpha-nDCG@10", "alpha_DCG@10": "alpha-DCG@10",
             "nERR_IA@10": "nERR-IA@10", "ERR_IA@10": "ERR-IA@10", "NRBP": "NRBP",
             "nNRBP": "nNRBP", "P_IA@10": "P-IA@10", "AP_IA": "MAP-IA"}  # fmt: skip
    rel = params.get("rel", 1)
    metrics = [{"metric": m, "label": m, **params} for m in names]
    for m in metrics:  # alpha and beta only where the measure has them
        if m["metric"] in ("P_IA@10", "AP_IA"):
            m.pop("alpha", None)
        if m["metric"] not in ("NRBP", "nNRBP"):
            m.pop("beta", None)
    ours = _values(_spec(where, runs, metrics))
    ndeval_params = {k: v for k, v in params.items() if k != "rel"}
    theirs = _ndeval(data, runs, "trec_eval", list(names.values()), relevance_level=rel,
                     **ndeval_params)  # fmt: skip
    _compare(ours, theirs, data, names, rel)


def test_queries_intersection_averages_as_ndeval_and_qrels_as_its_c(collection):
    """ndeval averages the queries of both run and qrels; with -c every qrels query, missing
    ones 0: irpipe's `queries: intersection` and its default."""
    where, data, runs = collection
    for queries in ("intersection", "qrels"):
        table = (
            evaluate(str(_spec(where, runs, ["alpha_nDCG@20"], queries=queries)))
            .aggregate(to="arrow")
            .to_pylist()
        )
        theirs = _ndeval(data, runs, "trec_eval", ["alpha-nDCG@20"])
        for row in table:
            values = [v["alpha-nDCG@20"] for v in theirs[row["run"]].values()]
            count = len(values) if queries == "intersection" else len(data.qrels)
            assert row["n_queries"] == count
            assert abs(row["value"] - sum(values) / count) <= TOLERANCE


# -- beyond ndeval's depth: a direct computation of the same definitions ----------------------


def _reference(ranking: list[str], judged: dict[str, dict[int, int]], k: int | None,
               alpha: float = 0.5, beta: float = 0.5) -> dict[str, float]:  # fmt: skip
    """ndeval's definitions for one query, in numpy, at any cutoff k (None: the whole ranking)."""
    relevant = {d: sorted(s for s, g in subs.items() if g >= 1) for d, subs in judged.items()}
    subtopics = sorted({s for subs in relevant.values() for s in subs})
    if not subtopics:
        return dict.fromkeys(("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP",
                              "P_IA", "StRecall", "AP_IA"), 0.0)  # fmt: skip
    n_sub, nrel = len(subtopics), {s: sum(s in r for r in relevant.values()) for s in subtopics}
    gains, pairs, new, precision = _novelty(ranking, relevant, alpha, nrel)
    ideal = _greedy(relevant, alpha)
    depth = len(ranking) if k is None else k
    ranks = np.arange(1, depth + 1)
    g, ig = _padded(gains, depth), _padded(ideal, depth)
    log = np.log2(ranks + 1)
    per_rank = (1 - alpha) ** (ranks - 1.0)
    dcg, err = (g / log).sum(), (g / ranks).sum()
    scale = 1.0 if depth == 1 else n_sub * (per_rank / log).sum()
    scale_err = 1.0 if depth == 1 else n_sub * (per_rank / ranks).sum()
    whole = np.arange(1, max(len(gains), len(ideal)) + 1)
    rbp = (_padded(gains, len(whole)) * beta ** (whole - 1.0)).sum()
    ideal_rbp = (_padded(ideal, len(whole)) * beta ** (whole - 1.0)).sum()
    return {
        "alpha_DCG": dcg / scale,
        "alpha_nDCG": dcg / (ig / log).sum() if dcg else 0.0,
        "ERR_IA": err / scale_err,
        "nERR_IA": err / (ig / ranks).sum() if err else 0.0,
        "NRBP": rbp * (1 - (1 - alpha) * beta) / n_sub,
        "nNRBP": rbp / ideal_rbp if rbp else 0.0,
        "P_IA": _padded(pairs, depth).sum() / (depth * n_sub),
        "StRecall": _padded(new, depth).sum() / n_sub,
        "AP_IA": (np.array(precision) / np.arange(1, len(precision) + 1)).sum() / n_sub
        if precision else 0.0,
    }  # fmt: skip


def _padded(values: list[float], depth: int) -> np.ndarray:
    return np.array((list(values) + [0.0] * depth)[:depth], dtype=float)


def _novelty(ranking, relevant, alpha, nrel):
    """Per rank: the novelty gain, the relevant pairs, the new subtopics, AP-IA's term."""
    seen: dict[int, int] = {}
    gains, pairs, new, precision = [], [], [], []
    for docno in ranking:
        subs = relevant.get(docno, [])
        gains.append(sum((1 - alpha) ** seen.get(s, 0) for s in subs))
        pairs.append(len(subs))
        new.append(sum(seen.get(s, 0) == 0 for s in subs))
        precision.append(sum((seen.get(s, 0) + 1) / nrel[s] for s in subs))
        for s in subs:
            seen[s] = seen.get(s, 0) + 1
    return gains, pairs, new, precision


def _greedy(relevant: dict[str, list[int]], alpha: float) -> list[float]:
    """ndeval's ideal ranking: the greatest gain next, a tie to the greatest docno."""
    left, seen, gains = dict(relevant), {}, []
    while left:
        scored = {d: sum((1 - alpha) ** seen.get(s, 0) for s in subs) for d, subs in left.items()}
        best = max(scored, key=lambda d: (scored[d], d))
        if scored[best] <= 0:
            break
        gains.append(scored[best])
        for s in left.pop(best):
            seen[s] = seen.get(s, 0) + 1
    return gains


REFERENCE = {"alpha_DCG": "alpha-DCG", "alpha_nDCG": "alpha-nDCG", "ERR_IA": "ERR-IA",
             "nERR_IA": "nERR-IA", "P_IA": "P-IA", "StRecall": "strec"}  # fmt: skip


def test_the_reference_computation_is_ndevals(collection):
    """The numpy reference below equals ndeval up to its depth, so that it can stand in for
    ndeval beyond."""
    _, data, runs = collection
    measures = [f"{m}@{k}" for m in REFERENCE.values() for k in (1, 7, 20)]
    theirs = _ndeval(data, runs, "trec_eval", [*measures, "NRBP", "nNRBP", "MAP-IA"])
    compared = 0
    for name, rows in runs.items():
        for qid, values in theirs[name].items():
            ranking = _ranked(rows[qid], "trec_eval")
            for k in (1, 7, 20):
                ours = _reference(ranking, data.qrels[qid], k)
                for mine, ndeval in REFERENCE.items():
                    assert abs(ours[mine] - values[f"{ndeval}@{k}"]) <= TOLERANCE
                    compared += 1
            whole = _reference(ranking, data.qrels[qid], None)
            assert abs(whole["NRBP"] - values["NRBP"]) <= TOLERANCE
            assert abs(whole["AP_IA"] - values["MAP-IA"]) <= TOLERANCE
            if not math.isnan(values["nNRBP"]):
                assert abs(whole["nNRBP"] - values["nNRBP"]) <= TOLERANCE
    assert compared > 500


@pytest.mark.parametrize("k", [21, 35, 100])
def test_beyond_depth_20_the_same_definitions(collection, k):
    where, data, runs = collection
    metrics = [f"{m}@{k}" for m in REFERENCE]
    ours = _values(_spec(where, runs, metrics))
    for name, rows in runs.items():
        for qid in data.qrels:
            ranking = _ranked(rows.get(qid, []), "trec_eval")
            expected = _reference(ranking, data.qrels[qid], k) if ranking else None
            for m in REFERENCE:
                want = 0.0 if expected is None else expected[m]
                assert abs(ours[name, qid, f"{m}@{k}"] - want) <= TOLERANCE, (name, qid, m)


# -- ordinary measures, the Python door, Parquet and Spark -------------------------------------

ORDINARY = ["AP", "nDCG@10", "P@5", "RR", "Rprec", "Bpref", "NumRel", "nDCG(gain='exponential')"]


def test_ordinary_measures_see_each_documents_highest_grade(collection):
    where, data, runs = collection
    write_qrels(data.max_grades(), where / "max.txt")
    ours = _values(_spec(where, runs, ORDINARY))
    spec = yaml.safe_load((where / "spec.yaml").read_text())
    spec["collections"]["web"] = {"qrels": "max.txt"}
    (where / "max.yaml").write_text(yaml.safe_dump(spec))
    assert _values(where / "max.yaml") == ours
    assert len(ours) == 3 * 24 * len(ORDINARY)


# -- decimal grades (grades: real) and judged_only ------------------------------------------------

#: the relevance level of soft labels: a probability of relevance of at least one half
SOFT_LEVEL = 0.5


def _binarised(qrels: dict, level: float) -> dict:
    """Subtopic qrels whose grades reach `level` as 1, the others as 0 (negative ones kept)."""
    return {q: {d: {s: g if g < 0 else int(g >= level) for s, g in subs.items()}
                for d, subs in docs.items()} for q, docs in qrels.items()}  # fmt: skip


def test_decimal_subtopic_grades_under_real_grades(collection):
    """Under `grades: real` a subtopic grade is a decimal, read as the qrels' grades are: whole
    grades written as decimals (`2.0`) give every diversity measure, and the ordinary ones on
    the highest grades, the integers' values bit for bit; soft labels at a decimal level give
    the values of their grades binarised at that level, read as integers at level 1, since a
    diversity measure compares a grade with the level and nothing else."""
    where, data, runs = collection
    metrics = [*NDEVAL, *ORDINARY]
    write_subtopic_qrels(data.soft_labels(5, whole=True), where / "whole.txt")
    integer = _values(_spec(where, runs, metrics))
    assert _values(_spec(where, runs, metrics, qrels="whole.txt", grades="real")) == integer
    assert len(integer) == 3 * 24 * len(metrics)
    soft = data.soft_labels(5)
    grades = [g for docs in soft.values() for subs in docs.values() for g in subs.values()]
    assert any(0 < g < SOFT_LEVEL for g in grades) and any(g % 1 and g > SOFT_LEVEL for g in grades)
    write_subtopic_qrels(soft, where / "soft.txt")
    write_subtopic_qrels(_binarised(soft, SOFT_LEVEL), where / "binary.txt")
    real = _spec(where, runs, list(NDEVAL), qrels="soft.txt", grades="real",
                 relevance_level=SOFT_LEVEL)  # fmt: skip
    assert _values(real) == _values(_spec(where, runs, list(NDEVAL), qrels="binary.txt"))


def test_judged_only_ranks_the_judged_documents_again(collection, tmp_path):
    """`judged_only=true` on a diversity measure gives its value over the run without the
    documents the qrels do not judge (or judge negatively for every subtopic), ranked again."""
    where, data, runs = collection
    judged = data.max_grades()
    write_subtopic_qrels(data.qrels, tmp_path / "qrels.txt")
    for name, rows in runs.items():
        kept = [f"{q} Q0 {d} {r} {s!r} {name}" for q, docs in rows.items() for d, r, s in docs
                if judged.get(q, {}).get(d, -1) >= 0]  # fmt: skip
        (tmp_path / f"{name}.trec").write_text("\n".join(kept) + "\n")
    metrics = ["alpha_nDCG@10", "nERR_IA@20", "NRBP", "P_IA@5", "AP_IA", "StRecall@5"]
    condensed = [m.replace("@", "(judged_only=true)@") if "@" in m else f"{m}(judged_only=true)"
                 for m in metrics]  # fmt: skip
    ours = _values(_spec(where, runs, condensed))
    renamed = {(r, q, m.replace("(judged_only=True)", "")): v for (r, q, m), v in ours.items()}
    assert len(renamed) == len(ours) == 3 * 24 * len(metrics)
    _same(renamed, _values(_spec(tmp_path, runs, metrics)))


def _frames(data, runs):
    import pandas as pd

    qrels = pd.DataFrame(
        [(q, s, d, g) for q, docs in data.qrels.items() for d, subs in docs.items()
         for s, g in subs.items()],
        columns=["qid", "subtopic", "docno", "rel"],
    )  # fmt: skip
    frames = {name: pd.DataFrame([(q, d, s) for q, docs in rows.items() for d, _, s in docs],
                                 columns=["qid", "docno", "score"])
              for name, rows in runs.items()}  # fmt: skip
    return qrels, frames


def test_a_frame_with_a_subtopic_column_is_read_as_subtopic_qrels(collection, tmp_path):
    """In the Python door a qrels frame with a `subtopic` column is subtopic qrels, with the
    same values as the file; `to_spec` writes it as Parquet, which the spec reads alike."""
    where, data, runs = collection
    metrics = ["alpha_nDCG@20", "nNRBP", "AP_IA", "AP"]
    expected = _values(_spec(where, runs, metrics))
    qrels, frames = _frames(data, runs)
    results = evaluate(qrels={"web": qrels}, runs=frames, metrics=metrics)
    table = results.per_query(to="arrow").to_pylist()
    _same({(r["run"], r["qid"], r["metric"]): r["value"] for r in table}, expected)
    results.to_spec(tmp_path / "copy")
    written = yaml.safe_load((tmp_path / "copy" / "spec.yaml").read_text())
    assert written["collections"]["web"]["format"] == "subtopics"
    _same(_values(tmp_path / "copy" / "spec.yaml"), expected)


def test_a_subtopic_text_file_is_named_by_its_format_in_the_python_door(collection):
    """A text file has no columns to tell: the Python door takes the collection spelled out as
    a spec writes it, and gives the spec's values; the same file given alone is ordinary qrels,
    refused by a diversity measure naming the format setting."""
    where, _, runs = collection
    metrics = ["alpha_nDCG@20", "StRecall@20", "AP"]
    expected = _values(_spec(where, runs, metrics))
    qrels = {"web": {"qrels": str(where / "qrels.txt"), "format": "subtopics"}}
    frames = {name: str(where / f"{name}.trec") for name in runs}
    table = evaluate(qrels=qrels, runs=frames, metrics=metrics).per_query(to="arrow").to_pylist()
    _same({(r["run"], r["qid"], r["metric"]): r["value"] for r in table}, expected)
    with pytest.raises(SpecError, match=r"format: subtopics"):
        evaluate(qrels={"web": str(where / "qrels.txt")}, runs=frames, metrics=metrics)


def _same(got: dict, expected: dict) -> None:
    """The same keys, and values to 1e-12 (sums over rows read in another order may differ in
    their last bit)."""
    assert got.keys() == expected.keys()
    assert all(abs(got[key] - value) <= 1e-12 for key, value in expected.items())


def test_the_spark_engine_gives_the_same_tables(spark, tmp_path):
    from spark_support import same_tables

    data = generate_subtopics(5, queries=20, runs=2)
    write_subtopic_qrels(data.qrels, tmp_path / "qrels.txt")
    runs = _write_runs(data, tmp_path, 5)
    spec = yaml.safe_load(_spec(tmp_path, runs, [*NDEVAL, "AP", "nDCG@10"]).read_text())
    same_tables(spec, tmp_path)
    for bad in ("1 1 a 1\n1 x b 1\n", "1 1 a 1\n1 2 b 1\n1 1 a 0\n"):  # the same words
        (tmp_path / "qrels.txt").write_text(bad)
        messages = []
        for engine in ("duckdb", "spark"):
            with pytest.raises(InputDataError) as raised:
                run_evaluation(tmp_path / "spec.yaml", write=False, engine=engine)
            messages.append(str(raised.value))
        assert messages[1] == messages[0] and "qrels.txt:" in messages[0]


def test_the_spark_engine_reads_decimal_subtopic_grades_alike(spark, tmp_path):
    """Soft labels in subtopic qrels under `grades: real` at the level 0.5, as text read on the
    workers and as Parquet of doubles: the same tables as on DuckDB; a decimal subtopic grade
    under integer grades is refused in the same words, naming the setting."""
    import duckdb
    from spark_support import same_tables

    data = generate_subtopics(5, queries=20, runs=2)
    soft = data.soft_labels(5)
    write_subtopic_qrels(soft, tmp_path / "qrels.txt")
    runs = _write_runs(data, tmp_path, 5)
    metrics = [*NDEVAL, "AP", "nDCG@10"]
    real = _spec(tmp_path, runs, metrics, grades="real", relevance_level=SOFT_LEVEL)
    spec = yaml.safe_load(real.read_text())
    same_tables(spec, tmp_path)
    rows = [(q, s, d, float(g)) for q, docs in soft.items() for d, subs in docs.items()
            for s, g in subs.items()]  # fmt: skip
    duckdb.sql(f"COPY (SELECT * FROM (VALUES {', '.join(map(repr, rows))}) "
               f"t(qid, subtopic, docno, rel)) TO '{tmp_path / 'q.parquet'}' (FORMAT parquet)")  # fmt: skip
    spec["collections"]["web"]["qrels"] = "q.parquet"
    same_tables(spec, tmp_path)
    (tmp_path / "qrels.txt").write_text("1 1 a 1\n1 2 b 0.5\n")
    messages = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(InputDataError) as raised:
            run_evaluation(_spec(tmp_path, runs, metrics), write=False, engine=engine)
        messages.append(str(raised.value))
    assert messages[1] == messages[0] and "qrels.txt:2:" in messages[0]
    assert "grades: real" in messages[0]


# -- mistakes: one message naming the key, or the file and line; nothing written ---------------

SUBTOPIC_QRELS = "1 1 a 1\n1 2 a 0\n1 2 b 2\n2 4 c 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.0 r\n"


def _case(tmp_path: Path, metric: str, qrels: str = SUBTOPIC_QRELS, **collection) -> Path:
    case = tmp_path / "case"
    case.mkdir()
    (case / "qrels.txt").write_text(qrels)
    (case / "run.txt").write_text(RUN)
    spec = {
        "collections": {"web": {"qrels": "qrels.txt", "format": "subtopics", **collection}},
        "runs": {"r": {"path": "run.txt", "collection": "web"}},
        "metrics": [metric],
        "outputs": [{"path": "out.csv"}],
    }
    (case / "spec.yaml").write_text(yaml.safe_dump(spec))
    return case


@pytest.mark.parametrize(
    "metric, message",
    [
        ("alpha_nDCG@0", r"spec.yaml:\d+: metrics.0: 'alpha_nDCG@0': parameter 'k': .*greater than 0"),
        ("alpha_nDCG(alpha=1.5)@20", r"metrics.0: .*parameter 'alpha': .*less than or equal to 1"),
        ("ERR_IA(alpha=-0.1)@20", r"metrics.0: .*parameter 'alpha': .*greater than or equal to 0"),
        ("NRBP(beta=-0.5)", r"metrics.0: .*parameter 'beta': .*greater than or equal to 0"),
        ("nNRBP(beta=1.5)", r"metrics.0: .*parameter 'beta': .*less than or equal to 1"),
        ("P_IA", r"metrics.0: 'P_IA': P_IA needs k \(e.g. P_IA@10\)"),
    ],
)  # fmt: skip
def test_bad_parameters_are_spec_errors(tmp_path, metric, message):
    case = _case(tmp_path, metric)
    refused(case, SPEC_ERROR, message, "run", str(case / "spec.yaml"))


@pytest.mark.parametrize("format_", [None, "trec"])
def test_a_diversity_measure_on_ordinary_qrels_names_the_format_setting(tmp_path, format_):
    case = _case(tmp_path, "alpha_nDCG@20", "1 0 a 1\n2 0 c 1\n", format=format_)
    message = (
        r"spec.yaml:\d+: collections.web: alpha_nDCG@20 reads subtopic judgments, but collection "
        r"'web' has ordinary qrels .*; .*set collections.web.format: subtopics$"
    )
    refused(case, SPEC_ERROR, message, "run", str(case / "spec.yaml"))


@pytest.mark.parametrize(
    "qrels, message",
    [
        ("1 1 a 1\n1 x b 1\n", r"qrels.txt:2: the subtopic must be a non-negative integer .*'x'"),
        ("1 1 a 1\n1 -3 b 1\n", r"qrels.txt:2: the subtopic must be a non-negative integer .*'-3'"),
        ("1 1 a 1\n1 1.5 b 1\n", r"qrels.txt:2: the subtopic must be a non-negative integer"),
        ("1 1 a 1\n1 2 b\n", r"qrels.txt:2: expected 4 fields \(qid subtopic docno grade\)"),
    ],
)  # fmt: skip
def test_a_bad_subtopic_line_names_the_file_and_line(tmp_path, qrels, message):
    case = _case(tmp_path, "alpha_nDCG@20", qrels)
    refused(case, DATA_ERROR, message, "run", str(case / "spec.yaml"))


def test_a_document_twice_for_one_subtopic_is_a_duplicate(tmp_path):
    case = _case(tmp_path, "alpha_nDCG@20", "1 1 a 1\n1 2 b 1\n1 2 a 0\n1 1 a 0\n")
    before = snapshot(case)
    done = irpipe("run", str(case / "spec.yaml"))
    assert done.returncode == DATA_ERROR and "Traceback" not in done.stderr
    first, total = done.stderr.removeprefix("Error: ").splitlines()
    assert first.endswith("qrels.txt:1: query '1' has document 'a' for subtopic 1 again on line 4")
    assert total.endswith(
        "qrels.txt: 1 duplicate (qid, subtopic, docno) triple; a document may appear once per "
        "query and subtopic"
    )
    assert snapshot(case) == before


def test_subtopic_qrels_read_as_trec_name_the_format_setting(tmp_path):
    case = _case(tmp_path, "AP", format=None)
    message = (
        r"qrels.txt:1: query '1' has document 'a' again on line 2 with another second field: "
        r"these look like subtopic qrels .*; set collections.web.format: subtopics$"
    )
    refused(case, DATA_ERROR, message, "run", str(case / "spec.yaml"))


def test_a_table_declared_subtopic_qrels_needs_a_subtopic_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    case = _case(tmp_path, "alpha_nDCG@20")
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "rel": [1]}), case / "qrels.parquet")
    spec = yaml.safe_load((case / "spec.yaml").read_text())
    spec["collections"]["web"]["qrels"] = "qrels.parquet"
    (case / "spec.yaml").write_text(yaml.safe_dump(spec))
    message = r"qrels.parquet: a subtopic qrels \(format: subtopics\) table needs the columns .*missing: subtopic"
    refused(case, DATA_ERROR, message, "run", str(case / "spec.yaml"))
