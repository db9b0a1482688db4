"""The Python door's `Evaluator` in a loop: one DuckDB connection holds the qrels, loaded and
checked once; each call evaluates its run in a schema of its own. Every call must give what
`evaluate` gives for the same run alone, results of earlier calls must stay as they were, and
nothing may pile up in the connection over a long loop."""

from __future__ import annotations

import gc

import pandas as pd
import pytest

from pipeline import Evaluator, evaluate
from pipeline.api import PythonMeasure
from pipeline.errors import DuplicateError
from pipeline.synthetic import generate
from pipeline.testing import installed

METRICS = ["AP", "nDCG@10", "P@5", "RR", "R@20", "NumRelRet", "bpref", "Unjudged@10"]


@pytest.fixture(scope="module")
def data():
    """Ties, graded and negative judgments, unjudged documents, queries missing from runs."""
    return generate(17, queries=25, runs=3, extremes=True)


def _frame(run: dict) -> pd.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


def _alone(data, run, metrics=METRICS, settings=None) -> pd.DataFrame:
    return evaluate(qrels=data.qrels, runs={"run": run}, metrics=metrics, settings=settings)


def _schemas(evaluator: Evaluator) -> list[str]:
    con = evaluator._session._con
    rows = con.execute("SELECT schema_name FROM duckdb_schemas() WHERE NOT internal").fetchall()
    return sorted(name for (name,) in rows if name.startswith("evaluation_"))


def test_earlier_results_stay_as_they_were_while_later_calls_run(data):
    evaluator = Evaluator(data.qrels, METRICS)
    runs = [_frame(run) for run in data.runs.values()]
    kept = [evaluator(run) for run in runs]  # all alive at once, each in its own schema
    for run, results in zip(runs, kept, strict=True):
        alone = _alone(data, run)
        assert results.aggregate().equals(alone.aggregate())
        assert results.per_query().equals(alone.per_query())
        assert results.table().equals(alone.table())
    assert len(_schemas(evaluator)) == len(runs)


@pytest.mark.parametrize(
    "settings",
    [
        {"queries": "qrels", "missing_queries": "trec_eval_c"},  # trec_eval -c's rankings
        {"queries": "qrels"},
        {"relevance_level": 2, "compatibility": "trec_eval-9"},
        {"ordering": "rank"},
    ],
)
def test_every_call_equals_evaluate_under_the_settings(data, settings):
    evaluator = Evaluator(data.qrels, METRICS, settings=settings)
    for name, run in [*data.runs.items(), *data.runs.items()]:  # each twice: plans reused
        ranked = _frame(run).assign(rank=lambda f: f.groupby("qid").cumcount() + 1)
        got = evaluator(ranked, name=name).per_query()
        alone = evaluate(qrels=data.qrels, runs={name: ranked}, metrics=METRICS,
                         settings=settings).per_query()  # fmt: skip
        assert got.equals(alone), (name, settings)


class Retrieved(PythonMeasure):
    """A metric of the Python path: the number of documents retrieved."""

    name = "EvaluatorRetrieved"
    description = "documents retrieved, in Python"

    def compute(self, p, query):
        return float(len(query.grades))


def test_python_metrics_read_their_own_call_s_ranking(data):
    pytest.importorskip("pyarrow")
    metrics = ["EvaluatorRetrieved", "AP"]
    with installed(Retrieved):
        evaluator = Evaluator(data.qrels, metrics)
        first, second = (_frame(run) for run in list(data.runs.values())[:2])
        kept = evaluator(first)
        assert evaluator(second).aggregate().equals(_alone(data, second, metrics).aggregate())
        assert kept.aggregate().equals(_alone(data, first, metrics).aggregate())


def test_a_long_loop_keeps_one_schema_per_result_still_held(data):
    evaluator = Evaluator(data.qrels, ["AP"])
    run = _frame(next(iter(data.runs.values())))
    for _ in range(12):
        evaluator(run).aggregate()  # a training loop keeps the numbers, not the results
    gc.collect()
    held = evaluator(run)
    assert _schemas(evaluator) == [f"evaluation_{13}"]  # the 12 before were dropped
    assert held.aggregate()["value"].iloc[0] == _alone(data, run, ["AP"]).aggregate()["value"][0]


def test_a_bad_run_is_named_and_the_next_call_still_works(data):
    evaluator = Evaluator(data.qrels, ["AP", "P@5"])
    good = _frame(next(iter(data.runs.values())))
    twice = pd.concat([good, good.head(1)], ignore_index=True)
    with pytest.raises(DuplicateError, match=r"runs\['run'\]: row 1: query .* again on row"):
        evaluator(twice)
    assert evaluator(good).aggregate().equals(_alone(data, good, ["AP", "P@5"]).aggregate())


def test_runs_of_other_names_share_the_qrels_loaded_once(data):
    evaluator = Evaluator(data.qrels, ["AP"])
    for name, run in data.runs.items():
        got = evaluator(_frame(run), name=name).aggregate()
        assert list(got.run) == [name]
        assert got.equals(
            evaluate(qrels=data.qrels, runs={name: _frame(run)}, metrics=["AP"]).aggregate()
        )
    (qrels_tables,) = evaluator._session._con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'qrels'"
    ).fetchone()
    assert qrels_tables == 1
