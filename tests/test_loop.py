"""The loop's short path (`pipeline.engines.duckdb.loop`): an `Evaluator` call on one run table
ranks its rows in Arrow and runs few statements. Every call must give, bit for bit, what
`evaluate` gives for the same run by the whole plan; a run that breaks an input rule, or
retrieves nothing judged, must be refused as the whole plan refuses it."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest

from pipeline import Evaluator, evaluate
from pipeline.engines.duckdb import loop
from pipeline.errors import DuplicateError, InputDataError
from pipeline.plan.ranking import ORDERINGS
from pipeline.synthetic import generate

#: metrics whose judged rows suffice: the short path's shape
JUDGED = ["AP", "nDCG@10", "P@5", "RR", "R@20", "NumRelRet", "Bpref", "Rprec", "nDCG", "infAP"]


@pytest.fixture(scope="module")
def data():
    """Ties (and ties only in float32), graded and negative judgments, unjudged documents,
    qrels queries a run lacks, queries only a run has."""
    return generate(43, queries=30, runs=2, extremes=True)


@pytest.fixture
def taken(monkeypatch):
    """What the short path answered, call by call."""
    answers: list[bool] = []
    short = loop.evaluate

    def spy(*args):
        answers.append(short(*args))
        return answers[-1]

    monkeypatch.setattr(loop, "evaluate", spy)
    return answers


def _frame(run: dict) -> pd.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


@pytest.mark.parametrize(
    "settings",
    [None, {"compatibility": "trec_eval-9", "relevance_level": 2}, {"max_docs": 7},
     {"queries": "qrels"}],
)  # fmt: skip
def test_every_call_equals_the_whole_plan_bit_for_bit(data, taken, settings):
    evaluator = Evaluator(data.qrels, JUDGED, settings=settings)
    for name, run in data.runs.items():
        got = evaluator(_frame(run), name=name)
        alone = evaluate(qrels=data.qrels, runs={name: _frame(run)}, metrics=JUDGED,
                         settings=settings)  # fmt: skip
        assert got.per_query().equals(alone.per_query()), (name, settings)
        assert got.aggregate().equals(alone.aggregate()), (name, settings)
    assert taken == [True] * len(data.runs)


def test_ranks_follow_the_ordering_ties_by_docno_descending_bytewise():
    table = pa.table({"qid": ["q", "q", "q", "q", "r"], "docno": ["d10", "d9", "d2", "D1", "x"],
                      "score": [1.0, 1.0, 1.0 + 1e-12, 2.0, 0.5]})  # fmt: skip
    rows = loop.ranked_rows(table, ORDERINGS["trec_eval"]).to_pylist()
    assert [(r["qid"], r["docno"], r["rank"], r["retrieved"]) for r in rows] == [
        ("q", "D1", 1, 4), ("q", "d2", 2, 4), ("q", "d9", 3, 4), ("q", "d10", 4, 4),
        ("r", "x", 1, 1),
    ]  # fmt: skip
    # trec_eval 9 compared scores as C floats: 1 + 1e-12 ties with 1, and docno decides
    rows = loop.ranked_rows(table, ORDERINGS["trec_eval-9"]).to_pylist()
    assert [r["docno"] for r in rows[:4]] == ["D1", "d9", "d2", "d10"]


@pytest.mark.parametrize(
    "broken",
    [
        lambda f: pd.concat([f, f.head(1)], ignore_index=True),  # a (qid, docno) twice
        lambda f: f.assign(score=[math.nan, *f.score[1:]]),
        lambda f: f.assign(score=[math.inf, *f.score[1:]]),
        lambda f: f.assign(docno=[None, *f.docno[1:]]),
        lambda f: f.head(0),
        lambda f: f.assign(docno="never-judged"),  # nothing judged retrieved
    ],
)
def test_a_run_that_breaks_a_rule_is_refused_as_the_whole_plan_refuses_it(data, taken, broken):
    run = broken(_frame(next(iter(data.runs.values()))))
    with pytest.raises((InputDataError, DuplicateError)) as alone:
        evaluate(qrels=data.qrels, runs={"run": run}, metrics=["AP"])
    with pytest.raises(type(alone.value)) as called:
        Evaluator(data.qrels, ["AP"])(run)
    assert str(called.value) == str(alone.value)
    assert taken == [False]


def test_a_call_after_a_refused_run_takes_the_short_path_again(data, taken):
    evaluator = Evaluator(data.qrels, ["AP", "RR"])
    good = _frame(next(iter(data.runs.values())))
    with pytest.raises(InputDataError):
        evaluator(good.assign(docno="never-judged"))
    got = evaluator(good).aggregate()
    assert got.equals(
        evaluate(qrels=data.qrels, runs={"run": good}, metrics=["AP", "RR"]).aggregate()
    )
    assert taken == [False, True]


@pytest.mark.parametrize(
    ("metrics", "settings"),
    [
        (["AP", "Unjudged@10"], None),  # unjudged rows count: every row is ranked
        (["AP"], {"missing_queries": "trec_eval_c", "queries": "qrels"}),  # -c adds rankings
        (["AP"], {"ordering": "rank"}),  # the file's ranks
    ],
)
def test_other_plans_take_the_whole_plan(data, taken, metrics, settings):
    run = _frame(next(iter(data.runs.values()))).assign(rank=1)
    got = Evaluator(data.qrels, metrics, settings=settings)(run).per_query()
    alone = evaluate(qrels=data.qrels, runs={"run": run}, metrics=metrics, settings=settings)
    assert got.equals(alone.per_query())
    assert taken == [False]
