"""The Python door: every input form a notebook holds gives the numbers the same data gives in
files, value for value; pytrec_eval's and ir_measures' shapes agree with those tools; bad input
gets one message naming the input and the row; to_spec round-trips through `irpipe run`."""

from __future__ import annotations

from collections import namedtuple

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import irpipe_inprocess
from test_pytrec_eval_agreement import METRICS as ALL_TREC
from test_pytrec_eval_agreement import _check_run, _pytrec

from pipeline import Evaluator, InputDataError, SpecError, evaluate
from pipeline.outputs import OutputJob, write_outputs
from pipeline.synthetic import generate, write_qrels, write_run

METRICS = ["AP", "nDCG@10", "P@5", "RR", "R@20", "NumRelRet", "bpref", "Unjudged@10"]
Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")
ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")


@pytest.fixture(scope="module")
def data():
    """A collection with ties, graded and negative judgments, unjudged documents, queries
    without relevant documents and queries missing from runs."""
    return generate(7, queries=30, runs=3, extremes=True)


@pytest.fixture(scope="module")
def from_files(data, tmp_path_factory):
    """Per-query rows of the same data evaluated from TREC files by a spec."""
    root = tmp_path_factory.mktemp("files")
    write_qrels(data.qrels, root / "qrels.txt")
    runs = {}
    for name, run in data.runs.items():
        write_run(run, root / f"{name}.trec", tag=name)
        runs[name] = {"path": f"{name}.trec", "collection": "default"}
    spec = {"collections": {"default": {"qrels": "qrels.txt"}}, "runs": runs, "metrics": METRICS}
    (root / "spec.yaml").write_text(yaml.safe_dump(spec))
    return sorted(evaluate(root / "spec.yaml", write=False).per_query(to="rows")), root


def _frames(data):
    qrels = pd.DataFrame(
        [(q, d, g) for q, docs in data.qrels.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {
        name: pd.DataFrame(
            [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
            columns=["qid", "docno", "score"],
        )
        for name, run in data.runs.items()
    }
    return qrels, runs


def _forms(data, root):
    """Each input form, as (qrels, runs) holding the same data."""
    qrels, runs = _frames(data)
    arrow = {n: pa.Table.from_pandas(f) for n, f in runs.items()}
    con = duckdb.connect()
    return {
        "paths": (root / "qrels.txt", {n: root / f"{n}.trec" for n in data.runs}),
        "pandas": (qrels, runs),
        "polars": (pl.from_pandas(qrels), {n: pl.from_pandas(f) for n, f in runs.items()}),
        "arrow": (pa.Table.from_pandas(qrels), arrow),
        "arrow stream": (qrels, {n: t.to_reader() for n, t in arrow.items()}),
        "duckdb relation": (qrels, {n: con.from_arrow(t) for n, t in arrow.items()}),
        "dicts": (data.qrels, data.runs),
        "named tuples": (
            [Qrel(q, d, g, "0") for q, docs in data.qrels.items() for d, g in docs.items()],
            {
                n: (ScoredDoc(q, d, s) for q, docs in r.items() for d, s in docs.items())
                for n, r in data.runs.items()
            },
        ),  # fmt: skip
        "parquet": (_parquet(qrels, root / "q.parquet"), _parquet_runs(runs, root)),
    }


def _parquet(frame, path):
    pq.write_table(pa.Table.from_pandas(frame.rename(columns={
        "query_id": "qid", "doc_id": "docno", "relevance": "rel"})), path)  # fmt: skip
    return path


def _parquet_runs(runs, root):
    return {n: _parquet(f, root / f"{n}.parquet") for n, f in runs.items()}


@pytest.mark.parametrize(
    "form",
    ["paths", "pandas", "polars", "arrow", "arrow stream", "duckdb relation", "dicts",
     "named tuples", "parquet"],
)  # fmt: skip
def test_every_input_form_gives_the_values_of_the_same_data_in_files(data, from_files, form):
    expected, root = from_files
    qrels, runs = _forms(data, root)[form]
    results = evaluate(qrels=qrels, runs=runs, metrics=METRICS)
    assert sorted(results.per_query(to="rows")) == expected


def test_many_frames_read_side_by_side_give_the_files_values_and_keep_the_order_setting(
    tmp_path,
):
    """DuckDB reads a batch's frames in parallel, its insertion order let go for that statement
    alone: the values are the files' to the bit, and the connection keeps its order afterwards
    (the reports number a bad input's rows in that order)."""
    data = generate(11, queries=60, runs=12, extremes=True)
    write_qrels(data.qrels, tmp_path / "qrels.txt")
    for name, run in data.runs.items():
        write_run(run, tmp_path / f"{name}.trec", tag=name)
    qrels, runs = _frames(data)
    from_files = evaluate(qrels=tmp_path / "qrels.txt", metrics=METRICS,
                          runs={n: tmp_path / f"{n}.trec" for n in data.runs})  # fmt: skip
    results = evaluate(qrels=qrels, runs=runs, metrics=METRICS)
    assert sorted(results.per_query(to="rows")) == sorted(from_files.per_query(to="rows"))
    con = results.evaluation.con
    assert con.execute("SELECT current_setting('preserve_insertion_order')").fetchone() == (True,)


def test_integer_ids_are_read_as_their_exact_text(tmp_path):
    qrels = pd.DataFrame({"qid": [101, 101, 2**40], "docno": [7, 8, 9], "rel": [1, 0, 2]})
    run = pd.DataFrame({"qid": [101, 101, 2**40], "docno": [7, 8, 9], "score": [2.0, 1.0, 1.0]})
    per_query = evaluate(qrels=qrels, runs=run, metrics=["AP"]).per_query()
    assert set(per_query["qid"]) == {"101", str(2**40)}


def test_the_dict_shape_equals_pytrec_eval_on_hard_collections():
    """pytrec_eval's own input shape, in its compatibility mode (trec_eval 9.x)."""
    for seed in range(4):
        collection = generate(seed)
        results = evaluate(qrels=collection.qrels, runs=collection.runs, metrics=ALL_TREC,
                           settings={"compatibility": "trec_eval-9"})  # fmt: skip
        rows = results.evaluation
        per_query = {(0, r, q, m): v for r, _, q, m, v in rows.per_query()}
        aggregate = {(0, r, m): (v, n) for r, _, m, v, n in rows.aggregate()}
        for run, found in _pytrec(collection, 1, False).items():
            _check_run(per_query, aggregate, (0, run), found)


def test_named_tuples_equal_ir_measures(data):
    """ir_measures' shape; its measures here run trec_eval 9.x (pytrec_eval), and it scores a
    qrels query the run lacks 0: irpipe's `trec_eval-9` with `queries: qrels`."""
    import ir_measures
    from ir_measures import AP, RR, P, nDCG

    qrels = [ir_measures.Qrel(q, d, g) for q, docs in data.qrels.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in data.runs["run0"].items()
           for d, s in docs.items()]  # fmt: skip
    theirs = ir_measures.calc_aggregate([AP, nDCG @ 10, P @ 5, RR], qrels, run)
    ours = evaluate(qrels=qrels, runs=run, metrics=["AP", "nDCG@10", "P@5", "RR"],
                    settings={"compatibility": "trec_eval-9", "queries": "qrels"}).aggregate()  # fmt: skip
    found = dict(zip(ours["metric"], ours["value"], strict=True))
    for measure, value in theirs.items():
        assert found[str(measure)] == pytest.approx(value, abs=1e-12)


def test_a_generator_is_read_once_and_an_exhausted_one_is_named():
    rows = (ScoredDoc("1", d, 1.0 / (i + 1)) for i, d in enumerate("abc"))
    qrels = {"1": {"a": 1, "c": 1}}
    assert evaluate(qrels=qrels, runs=rows, metrics=["AP"]).aggregate()["value"][0] > 0
    with pytest.raises(SpecError, match=r"runs\['run1'\]: no rows: the iterable was empty"):
        evaluate(qrels=qrels, runs=rows, metrics=["AP"])


@pytest.mark.parametrize(
    ("run", "error", "message"),
    [
        (pd.DataFrame({"qid": [1.0], "docno": ["a"], "score": [1.0]}), SpecError,
         r"runs\['run1'\]: column 'qid' holds floats \(double\); ids are text"),
        (pd.DataFrame({"qid": ["1"], "doc": ["a"], "score": [1.0]}), SpecError,
         r"runs\['run1'\]: no docno column among qid, doc, score; name it one of docno, doc_id"),
        (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, float("inf")]}),
         InputDataError, r"runs\['run1'\]: row 2: the score must be a finite number"),
        (pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "score": [1.0, 2.0]}),
         InputDataError, r"runs\['run1'\]: row 2: the qid is missing"),
        (pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "a"], "score": [3.0, 2, 1]}),
         InputDataError, r"runs\['run1'\]: row 1: query '1' has document 'a' again on row 3"),
    ],
)  # fmt: skip
def test_bad_input_is_one_message_naming_the_input_and_the_row(run, error, message):
    with pytest.raises(error, match=message):
        evaluate(qrels={"1": {"a": 1}}, runs=run, metrics=["AP"])


def test_columns_are_mapped_by_name():
    run = pd.DataFrame({"topic": ["1", "1"], "passage": ["a", "b"], "score": [2.0, 1.0]})
    results = evaluate(qrels={"1": {"b": 1}}, runs=run, metrics=["RR"],
                       columns={"docno": "passage"})  # fmt: skip
    assert results.aggregate()["value"].tolist() == [0.5]


def test_to_spec_round_trips_byte_for_byte_through_irpipe_run(data, tmp_path):
    qrels, runs = _frames(data)
    results = evaluate(qrels=qrels, runs=runs, metrics=METRICS, settings={"relevance_level": 2})
    spec_path = results.to_spec(tmp_path / "experiment")
    spec = yaml.safe_load(spec_path.read_text())
    spec["outputs"] = [{"path": "out/per_query.parquet", "level": "query"},
                       {"path": "out/aggregate.csv", "level": "aggregate"}]  # fmt: skip
    spec_path.write_text(yaml.safe_dump(spec))
    done = irpipe_inprocess("run", "--quiet", spec_path)
    assert done.returncode == 0, done.stderr
    ours = tmp_path / "notebook"
    jobs = [OutputJob("per_query", ours / "per_query.parquet", "query"),
            OutputJob("aggregate", ours / "aggregate.csv", "aggregate")]  # fmt: skip
    write_outputs(results.evaluation.con, jobs, {})
    for name in ("per_query.parquet", "aggregate.csv"):
        assert (ours / name).read_bytes() == (spec_path.parent / "out" / name).read_bytes()


def test_an_evaluator_equals_evaluate_for_each_run(data):
    """Each call after the first evaluates its table by the plan validated at the first."""
    qrels, runs = _frames(data)
    evaluator = Evaluator(qrels, METRICS)
    for frame in [*runs.values(), *runs.values()]:
        alone = evaluate(qrels=qrels, runs={"run": frame}, metrics=METRICS).aggregate()
        assert evaluator(frame).aggregate().equals(alone)
    path_run = evaluate(qrels=qrels, runs={"run": runs["run0"]}, metrics=METRICS).aggregate()
    assert evaluator(data.runs["run0"]).aggregate().equals(path_run)  # a dict: a table too


def test_tables_come_back_as_pandas_polars_or_arrow(data):
    qrels, runs = _frames(data)
    results = evaluate(qrels=qrels, runs=runs, metrics=["AP"])
    tables = {to: results.aggregate(to=to) for to in ("pandas", "polars", "arrow")}
    rows = [tuple(r) for r in tables["pandas"].itertuples(index=False)]
    assert [tuple(r.values()) for r in tables["polars"].iter_rows(named=True)] == rows
    assert list(zip(*tables["arrow"].to_pydict().values(), strict=True)) == rows
    with pytest.raises(SpecError, match=r"to='excel': expected one of pandas, polars, arrow"):
        results.aggregate(to="excel")


def test_the_table_marks_the_best_run_and_shows_in_html(data):
    qrels, runs = _frames(data)
    results = evaluate(qrels=qrels, runs=runs, metrics=["AP", "P@5"])
    table = results.table()
    assert list(table.columns) == ["AP", "P@5"] and len(table) == 3
    assert all(table[m].str.endswith("*").sum() >= 1 for m in table.columns)
    assert "<table" in results._repr_html_() and "queries: qrels" in results._repr_html_()


def test_a_parquet_run_without_a_score_column_is_named(tmp_path):
    pq.write_table(
        pa.table({"qid": ["1"], "docno": ["a"], "points": [1.0]}), tmp_path / "r.parquet"
    )
    with pytest.raises(InputDataError, match=r"r\.parquet: a run table needs the columns qid, "
                       r"docno, score; missing: score \(found: qid, docno, points\)"):  # fmt: skip
        evaluate(qrels={"1": {"a": 1}}, runs={"r": tmp_path / "r.parquet"}, metrics=["AP"])


def test_with_comparisons_the_table_carries_the_marks_its_legend_explains(data):
    qrels, runs = _frames(data)
    oracle = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "score"})
    results = evaluate(qrels=qrels, runs={"run0": runs["run0"], "oracle": oracle},
                       metrics=["AP", "P@5"], compare={"baseline": "run0", "tests": ["t"]})  # fmt: skip
    marks = results.comparisons().query("p_adjusted < 0.05")[["run", "metric"]].values.tolist()
    assert marks == [["oracle", "AP"], ["oracle", "P@5"]]  # the judgments themselves, ranked
    table = results.table()
    for run, metric in marks:
        assert table.loc[("default", run), metric].endswith("▲")  # better than run0
    legend = results.legend()
    assert legend[0].startswith("* the best value")
    assert "▲ significantly better than run0, ▼ significantly worse" in legend[1]
    assert "paired t-test, Holm-corrected" in legend[1]
    assert all(line in results.__repr__() for line in legend)


def test_to_spec_names_files_safely_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    runs = {"grid/k1=0.9": {"1": {"a": 2.0}}, "grid_k1=0.9": {"1": {"a": 1.0}}}
    results = evaluate(qrels={"1": {"a": 1}}, runs=runs, metrics=["AP"])
    spec = yaml.safe_load(results.to_spec(tmp_path / "ok").read_text())
    assert [r["path"] for r in spec["runs"].values()] == [
        "runs.grid_k1=0.9.parquet", "runs.grid_k1=0.92.parquet"]  # fmt: skip
    import pyarrow.parquet

    write = pyarrow.parquet.write_table
    calls = []

    def failing(table, where):  # the first file is written, the second fails
        calls.append(where)
        if len(calls) > 1:
            raise OSError("disk full")
        write(table, where)

    monkeypatch.setattr(pyarrow.parquet, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        results.to_spec(tmp_path / "failed")
    assert len(calls) == 2 and list((tmp_path / "failed").iterdir()) == []


def test_a_ranking_without_scores_is_read_by_its_ranks_under_ordering_rank(data):
    qrels, runs = _frames(data)
    ranked = {
        name: frame.assign(rank=frame.groupby("qid").cumcount() + 1) for name, frame in runs.items()
    }
    settings = {"ordering": "rank"}
    alone = {name: frame.drop(columns="score") for name, frame in ranked.items()}
    with pytest.raises(SpecError, match=r"no score column .* settings=\{'ordering': 'rank'\}"):
        evaluate(qrels=qrels, runs=alone, metrics=METRICS)
    found = evaluate(qrels=qrels, runs=alone, metrics=METRICS, settings=settings)
    expected = evaluate(qrels=qrels, runs=ranked, metrics=METRICS, settings=settings)
    assert found.per_query().equals(expected.per_query())
    evaluator = Evaluator(qrels, METRICS, settings=settings)
    assert (
        evaluator(alone["run0"])
        .aggregate()
        .equals(
            evaluate(
                qrels=qrels, runs={"run": ranked["run0"]}, metrics=METRICS, settings=settings
            ).aggregate()  # fmt: skip
        )
    )
