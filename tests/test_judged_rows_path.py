"""The judged-rows plan (unjudged rows dropped once ranked) gives the full plan's values exactly.

Every measure that declares `judged_rows_suffice` is evaluated alone (judged-rows plan) and beside
Unjudged@10, which needs every row (full plan), on generated collections under several settings.
"""

from __future__ import annotations

import pytest
from conftest import spec_of_runs

from pipeline.measures.registry import get_registry
from pipeline.measures.resolve import resolve_metrics
from pipeline.measures.trec_names import select
from pipeline.plan.compile import compile_plan
from pipeline.plan.slices import slice_rows
from pipeline.run.evaluation import evaluate
from pipeline.spec import load_spec
from pipeline.synthetic import generate, write_qrels, write_run

SAFE = [
    {"metric": metric, "label": label, **params}
    for s in select(["all_trec", "ndcg.1=3,2=9", "rbp.p=0.8"])
    for label, metric, params in s.outputs
    if metric in {m.name for m in get_registry().measures if m.judged_rows_suffice}
] + [
    # Measures that read the collection's size and the ranking's length, not in trec_eval's set.
    {"metric": "Fallout@5"},
    {"metric": "Utility", "label": "utility_abcd", "a": 2.0, "b": -0.5, "c": -1.0, "d": 0.25},
]
SETTINGS = [
    {},
    {"relevance_level": 2},
    {"compatibility": "trec_eval-9"},
    {"max_docs": 7},
    {"ordering": "rank", "queries": "intersection"},
]


def _spec(tmp_path, write_spec, collection, metrics, settings, name):
    write_qrels(collection.qrels, tmp_path / "qrels.txt")
    for run_name, run in collection.runs.items():
        write_run(run, tmp_path / f"{run_name}.trec")
    spec = spec_of_runs(collection.runs, metrics, ".trec", collection={"num_docs": 100})
    return write_spec({**spec, "settings": settings}, name)


def _values(path):
    evaluation = evaluate(path, write=False)
    return {(r, q, m): v for r, _, q, m, v in evaluation.per_query()}, {
        (r, m): v for r, _, m, v, _ in evaluation.aggregate()
    }


def test_every_safe_measure_is_selected():
    assert {m["metric"] for m in SAFE} >= {
        "AP",
        "P",
        "nDCG",
        "RR",
        "Bpref",
        "IPrec",
        "infAP",
        "RBP",
        "NumRet",
        "SetP",
        "SetF",
        "Utility",
    }


def _ranking(path):
    spec = load_spec(path)
    return compile_plan(spec, resolve_metrics(spec, get_registry())).runs.ranking


@pytest.fixture(scope="module")
def full_plan_values() -> dict:
    """The full plan's values by (seed, settings), evaluated once for both forms of the
    judged-rows plan: the full plan has no form to choose (its ranking's `dense` is None, which
    each test asserts), so the choice the test patches cannot change them."""
    return {}


@pytest.mark.parametrize("dense", [False, True], ids=["judged-rows", "dense-batch"])
@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("seed", range(6))
def test_judged_rows_plan_equals_full_plan(
    tmp_path, write_spec, monkeypatch, full_plan_values, seed, settings, dense
):
    """Both forms of the judged-rows plan's ranking (judged rows, or every row for a batch whose
    queries are mostly judged) against a spec that needs the full plan."""
    monkeypatch.setattr(
        "pipeline.plan.sql_plan.mostly_judged", lambda: f"SELECT {dense} AND len(?) > 0, 0"
    )
    collection = generate(seed)
    fast = _spec(tmp_path, write_spec, collection, SAFE, settings, "fast.yaml")
    full = _spec(
        tmp_path, write_spec, collection, [*SAFE, {"metric": "Unjudged@10"}], settings, "full.yaml"
    )
    assert "positions AS" in _ranking(fast).statement.sql
    full_ranking = _ranking(full)
    assert "positions AS" not in full_ranking.statement.sql and full_ranking.dense is None
    key = (seed, SETTINGS.index(settings))
    if key not in full_plan_values:
        full_plan_values[key] = _values(full)
    (fast_q, fast_a), (full_q, full_a) = _values(fast), full_plan_values[key]
    for key, value in fast_q.items():
        assert value == pytest.approx(full_q[key], abs=1e-12, nan_ok=True), key
    assert fast_a == pytest.approx({k: v for k, v in full_a.items() if k in fast_a}, abs=1e-12)
    assert set(fast_q) == {k for k in full_q if k[2] != "Unjudged@10"}


@pytest.mark.parametrize("dense", [False, True], ids=["full-plan", "dense-batch"])
@pytest.mark.parametrize("seed", range(3))
def test_a_batch_ranked_in_slices_of_queries_gives_the_same_values(
    tmp_path, write_spec, monkeypatch, seed, dense
):
    """The full plan ranks a large batch in slices of whole queries (so that its sort holds one
    slice): the values are those of the batch ranked at once, to the last bit."""
    collection = generate(seed, queries=30)
    metrics = [*SAFE, *([] if dense else [{"metric": "Unjudged@10"}])]
    path = _spec(tmp_path, write_spec, collection, metrics, SETTINGS[0], "spec.yaml")
    monkeypatch.setattr("pipeline.plan.sql_plan.mostly_judged", lambda: "SELECT len(?) > 0")
    whole = _values(path)
    slices = []
    monkeypatch.setattr("pipeline.plan.slices.SLICE_ROWS", 40)
    monkeypatch.setattr("pipeline.engines.duckdb.steps.slice_rows", lambda last: slices.append(last) or slice_rows(last))  # fmt: skip
    assert _values(path) == whole
    assert len(slices) > 5 and slices.count(True) == 1  # sliced indeed


@pytest.mark.parametrize(("judged", "dense"), [(50, True), (15, False), (2, False)])
def test_a_batch_takes_the_dense_form_when_its_queries_are_mostly_judged(
    tmp_path, write_spec, judged, dense
):
    """Pooled qrels (50 of 100 retrieved judged) rank every row; a shallow pool (15), whose
    ranks a join counts for less than a sort of every row costs, and sparse ones (2) judged rows."""
    (tmp_path / "qrels.txt").write_text("".join(f"1 0 d{i} {i % 2}\n" for i in range(judged)))
    (tmp_path / "run.trec").write_text("".join(f"1 Q0 d{i} {i} {-i} t\n" for i in range(100)))
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.trec", "collection": "c"}},
        "metrics": ["AP", "nDCG@10"],
    }
    evaluation = evaluate(write_spec(spec), write=False)
    test = evaluation.sql.runs.ranking.test(evaluation.sql.runs.batches[0])
    assert evaluation.con.execute(test.sql, test.params).fetchone()[0] is dense
