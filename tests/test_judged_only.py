"""`judged_only=true` on one metric is trec_eval -J for that metric alone.

The property: every metric with `judged_only=true` gives, query by query, the value of the same
metric under `settings.judged_only` (trec_eval -J), under every setting that changes a ranking;
pytrec_eval's `judged_docs_only_flag` is the reference for the measures it has; and the same
metric without it, in the same spec, keeps its own values. Generated collections (ties, graded
and negative judgments, unjudged documents, queries missing from a run, `synthetic.EXTREMES`).
"""

from __future__ import annotations

import math

import pytest
import pytrec_eval

from pipeline.api import PythonMeasure, RankedParams
from pipeline.errors import SpecError
from pipeline.measures.registry import get_registry
from pipeline.measures.resolve import resolve_metrics
from pipeline.measures.trec_names import select
from pipeline.plan.compile import compile_plan
from pipeline.run.evaluation import evaluate
from pipeline.spec import load_spec
from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.testing import installed

TREC = [
    {"metric": metric, "label": label, **params}
    for s in select(["all_trec", "ndcg.1=3,2=9", "rbp.p=0.8"])
    for label, metric, params in s.outputs
    if metric != "runid"
]
MORE = [
    {"metric": metric, "label": metric}
    for metric in (
        "ERR@10", "ERR(variant=gdeval)@20", "nDCG(variant=gdeval)@10", "RBP(p=0.8,variant=rbp_eval)",
        "RBP(p=0.8,variant=rbp_eval,residual=true)@10", "Fallout@5", "DCG(discount=jarvelin)@5",
        "CG@10", "SearchLength", "Success@3", "IDCG@10", "RR@5", "R@10",
    )
]  # fmt: skip
COLLECTIONS = 3
SETTINGS = [
    {},
    {"max_docs": 7},
    {"ordering": "rank", "queries": "intersection"},
    {"missing_queries": "trec_eval_c"},
    {"compatibility": "trec_eval-9", "relevance_level": 2},
]


def _spec(tmp_path, write_spec, metrics, settings, name="spec.yaml"):
    """Generated collections in one spec, `c<i>` with runs `<i>/<run>`."""
    spec = {"collections": {}, "runs": {}, "settings": settings, "metrics": metrics}
    for i in range(COLLECTIONS):
        data = generate(i, queries=16, runs=2, max_grade=4, extremes=True)
        write_qrels(data.qrels, tmp_path / f"qrels{i}.txt")
        spec["collections"][f"c{i}"] = {"qrels": f"qrels{i}.txt", "num_docs": 500}
        for run_name, run in data.runs.items():
            write_run(run, tmp_path / f"{i}_{run_name}.trec")
            spec["runs"][f"{i}/{run_name}"] = {
                "path": f"{i}_{run_name}.trec",
                "collection": f"c{i}",
            }
    return write_spec(spec, name)


def _per_query(spec) -> dict:
    """{(run, qid, metric): (value, text)}."""
    con = evaluate(spec, write=False).con
    rows = con.execute("SELECT run, qid, metric, value, text FROM per_query").fetchall()
    return {(r, q, m): (v, t) for r, q, m, v, t in rows}


def _same(a, b) -> bool:
    """Values equal, to 1e-12 (a sum over a different set of rows may differ in its last bit)."""
    (x, s), (y, t) = a, b
    if x is None or y is None or s is not None or t is not None:
        return (x, s) == (y, t)
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-9)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "defaults")
def test_every_metric_equals_itself_under_the_judged_only_setting(tmp_path, write_spec, settings):
    metrics = TREC + MORE
    per_metric = _spec(
        tmp_path, write_spec, [{**m, "judged_only": True} for m in metrics], settings
    )
    setting = _spec(tmp_path, write_spec, metrics, {**settings, "judged_only": True}, "j.yaml")
    ours, theirs = _per_query(per_metric), _per_query(setting)
    assert ours.keys() == theirs.keys()
    different = [key for key in theirs if not _same(ours[key], theirs[key])]
    assert not different, different[:5]
    assert len(ours) > 10_000


def test_beside_the_same_metric_without_it_each_keeps_its_values(tmp_path, write_spec):
    plain = [{**m, "label": f"plain {m['label']}"} for m in TREC + MORE]
    judged = [{**m, "label": f"judged {m['label']}", "judged_only": True} for m in TREC + MORE]
    both = _per_query(_spec(tmp_path, write_spec, plain + judged, {}))
    alone = _per_query(_spec(tmp_path, write_spec, plain, {}, "plain.yaml"))
    condensed = _per_query(_spec(tmp_path, write_spec, judged, {}, "judged.yaml"))
    expected = alone | condensed
    assert both.keys() == expected.keys()
    assert all(_same(both[key], expected[key]) for key in expected)


def _pytrec(collection, judged_only: bool) -> dict:
    names = {s.measure.name for s in SELECTED}
    evaluator = pytrec_eval.RelevanceEvaluator(
        collection.qrels, names, judged_docs_only_flag=judged_only
    )
    return {name: evaluator.evaluate(run) for name, run in collection.runs.items()}


SELECTED = [s for s in select(["official", "ndcg_cut", "bpref"]) if s.measure.name != "runid"]


def test_pytrec_eval_judged_docs_only_is_the_reference(tmp_path, write_spec):
    """pytrec_eval (trec_eval 9.x) with `judged_docs_only_flag`: its ranking is the condensed one."""
    metrics = [
        {"metric": metric, "label": label, "judged_only": True, **params}
        for s in SELECTED
        for label, metric, params in s.outputs
    ]
    spec = _spec(tmp_path, write_spec, metrics, {"compatibility": "trec_eval-9"})
    ours = _per_query(spec)
    checked = 0
    for i in range(COLLECTIONS):
        for run, results in _pytrec(
            generate(i, queries=16, runs=2, max_grade=4, extremes=True), True
        ).items():
            for qid, values in results.items():
                for label in (m["label"] for m in metrics):
                    value = ours[f"{i}/{run}", qid, label][0]
                    if label in ("gm_map",):
                        value = math.log(max(value, 1e-5))
                    assert _same((value, None), (values[label], None)), (i, run, qid, label)
                    checked += 1
    assert checked > 2000


def test_one_reading_of_the_run_and_a_window_over_its_judged_rows(tmp_path, write_spec):
    """The condensed ranking is made from the ranking's rows: the run is read as often as without."""

    def wide(metrics):
        loaded = load_spec(_spec(tmp_path, write_spec, metrics, {}, "plan.yaml"))
        plan = compile_plan(loaded, resolve_metrics(loaded, get_registry()))
        return plan.runs.ranking.statement.sql

    # Unjudged@10 needs every row: both plans rank the full run (not only its judged rows).
    plain = wide(["nDCG@10", "AP", "Unjudged@10"])
    judged = wide(["nDCG@10", "AP(judged_only=true)", "Unjudged@10"])
    assert plain.count("run_rows") == judged.count("run_rows")
    assert "ranked_condensed" in judged and "ranked_condensed" not in plain
    assert "FROM windowed WHERE relv >= 0" in judged


def test_names_and_parameters():
    registry = get_registry()
    [judged] = registry.resolve("nDCG(judged_only=true)@10")
    assert (judged.canonical, judged.judged_only) == ("nDCG(judged_only=True)@10", True)
    assert registry.resolve(judged.canonical) == [judged]
    [plain] = registry.resolve("nDCG", {"k": 10, "judged_only": False})
    assert (plain.canonical, plain.judged_only) == ("nDCG@10", False)
    with pytest.raises(SpecError, match=r"parameter 'judged_only': Input should be true or false"):
        registry.resolve("nDCG(judged_only=1)@10")
    with pytest.raises(SpecError, match=r"allowed: k, gain, discount, variant, judged_only"):
        registry.resolve("nDCG(judged=true)@10")


class Spread(PythonMeasure):
    name = "Spread"
    description = "a measure computed in Python"
    Params = RankedParams

    def compute(self, p, query):
        return float(len(query.grades))


def test_a_metric_computed_in_python_takes_no_judged_only():
    with (
        installed(Spread),
        pytest.raises(
            SpecError,
            match=r"Spread is computed in Python and takes no judged_only; set judged_only: true in settings",
        ),
    ):
        get_registry().resolve("Spread(judged_only=true)")
