"""irpipe as an ir_measures provider (`pipeline.ir_measures`): every measure it takes gives, query
by query and in the mean, what ir_measures' pytrec_eval provider gives (bit for bit), on generated
collections with ties (some only in float32), graded and negative judgments, unjudged documents,
qrels queries a run lacks and queries only a run has; `install` puts it first in ir_measures'
pipeline, where the measures it does not take fall through to the next provider."""

from __future__ import annotations

import ir_measures
import pandas as pd
import pytest

from pipeline import ir_measures as irpipe_provider
from pipeline.synthetic import generate

MEASURES = [
    "P@10", "P(rel=2)@5", "RR", "RR(rel=2)", "Rprec", "Rprec(rel=2)", "AP", "AP@10", "AP(rel=2)",
    "nDCG@10", "nDCG", "nDCG@3", "R@20", "R@5", "Bpref", "Bpref(rel=2)", "Success@5", "NumRet",
]  # fmt: skip
PARSED = [ir_measures.parse_measure(m) for m in MEASURES]


@pytest.fixture(scope="module", params=[3, 43])
def data(request):
    return generate(request.param, queries=20, runs=2, extremes=True)


@pytest.fixture
def installed():
    provider = irpipe_provider.install()
    yield provider
    irpipe_provider.uninstall()


def _values(metrics) -> list[tuple[str, str, float]]:
    return sorted((str(m.measure), m.query_id, m.value) for m in metrics)


def test_every_measure_equals_pytrec_eval_s_query_by_query_and_in_the_mean(data):
    assert all(irpipe_provider.provider.supports(m) for m in PARSED)
    evaluator = irpipe_provider.provider.evaluator(PARSED, data.qrels)
    reference = ir_measures.pytrec_eval.evaluator(PARSED, data.qrels)
    for run in data.runs.values():
        assert _values(evaluator.iter_calc(run)) == _values(reference.iter_calc(run))
        assert evaluator.calc_aggregate(run) == reference.calc_aggregate(run)


def test_runs_in_ir_measures_forms_give_the_same_numbers(data):
    run = next(iter(data.runs.values()))
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows]
    expected = ir_measures.pytrec_eval.calc_aggregate(PARSED, data.qrels, run)
    for form in (run, frame, scored):
        assert irpipe_provider.provider.calc_aggregate(PARSED, data.qrels, form) == expected


def test_a_run_sharing_no_query_gets_every_default(data):
    run = {"not-a-qrels-query": {"d1": 1.0}}
    got = irpipe_provider.provider.calc_aggregate(PARSED[:3], data.qrels, run)
    assert got == ir_measures.pytrec_eval.calc_aggregate(PARSED[:3], data.qrels, run)


def test_install_puts_irpipe_first_and_other_measures_fall_through(data, installed, monkeypatch):
    calls = []
    own = irpipe_provider.IrpipeEvaluator._iter_calc
    monkeypatch.setattr(irpipe_provider.IrpipeEvaluator, "_iter_calc",
                        lambda self, run: calls.append(run) or own(self, run))  # fmt: skip
    assert ir_measures.DefaultPipeline.providers[0] is installed
    irpipe_provider.install()  # twice is once
    assert ir_measures.DefaultPipeline.providers.count(installed) == 1
    judged = ir_measures.parse_measure("Judged@10")  # not irpipe's: ir_measures' own provider
    assert not installed.supports(judged)
    evaluator = ir_measures.evaluator([*PARSED[:2], judged], data.qrels)
    kinds = [type(e).__name__ for e in evaluator.evaluators]
    assert kinds[0] == "IrpipeEvaluator" and len(kinds) == 2
    run = next(iter(data.runs.values()))
    got = ir_measures.calc_aggregate([*PARSED, judged], data.qrels, run)
    assert len(calls) == 1  # computed through irpipe
    uninstalled = ir_measures.providers.FallbackProvider(ir_measures.DefaultPipeline.providers[1:])
    assert got == uninstalled.calc_aggregate([*PARSED, judged], data.qrels, run)


def test_uninstall_restores_the_pipeline(installed):
    irpipe_provider.uninstall()
    assert installed not in ir_measures.DefaultPipeline.providers


def test_pyterrier_s_experiment_computes_through_irpipe_to_the_same_frame(installed, monkeypatch):
    import pyterrier as pt

    data = generate(11, queries=20, runs=3, extremes=True)
    calls = []
    own = irpipe_provider.IrpipeEvaluator._iter_calc
    monkeypatch.setattr(irpipe_provider.IrpipeEvaluator, "_iter_calc",
                        lambda self, run: calls.append(run) or own(self, run))  # fmt: skip
    qrels = pd.DataFrame([(q, d, g) for q, docs in data.qrels.items() for d, g in docs.items()],
                         columns=["qid", "docno", "label"])  # fmt: skip
    systems = [pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                            columns=["qid", "docno", "score"]) for run in data.runs.values()]  # fmt: skip
    topics = pd.DataFrame({"qid": sorted(data.qrels), "query": "unused"})
    options = {"eval_metrics": ["map", "ndcg_cut_10", "P_10", "recip_rank"], "baseline": 0,
               "correction": "holm", "names": list(data.runs)}  # fmt: skip
    got = pt.Experiment(systems, topics, qrels, **options)
    assert len(calls) >= len(systems)  # each system's run computed through irpipe
    irpipe_provider.uninstall()
    expected = pt.Experiment(systems, topics, qrels, **options)
    assert got[expected.columns].equals(expected)  # values, counts and p-values alike
