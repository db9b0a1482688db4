"""Reproductions against repro_eval 0.5.0, called on the same run files the spec reads.

Collections are generated (`pipeline.synthetic`): graded and negative judgments, score ties,
qrels queries no run answers (missing queries), run-only queries; the reproductions
(`pipeline.synthetic_reproduction`) move scores (new ties), lose and find documents and, in one
case, lose topics. The originals answer the same judged topics, as repro_eval needs for the
effect measures; its values, pytrec_eval's through ir_measures, score every qrels query (one a run
lacks 0), as irpipe's default query set does. Where repro_eval fails (rankings of
unequal length for τ Union, a topic the reproduction lost for the per-metric measures), its
functions are called on what irpipe's definition reads: both rankings cut to the shorter, the
topics both runs have.
"""

from __future__ import annotations

import math
import warnings

import pytest
from repro_eval.measure.document_order import KTU, RBO
from repro_eval.measure.effectiveness import RMSE, nRMSE
from repro_eval.measure.overall_effects import DRI, ER
from repro_eval.measure.statistics import ttest
from repro_eval.util import break_ties, evaluate_run, load_qrels, load_run

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run
from pipeline.synthetic_reproduction import reproduce

METRICS = ["AP", "nDCG@10", "P@10", "RR"]
NAMES = ("b", "a")  # the baseline, the advanced run


def _files(tmp_path, seed: int, lost_topics: float = 0.0, other: int | None = None) -> dict:
    """qrels.txt, b.trec, a.trec and their reproductions b_rep.trec, a_rep.trec (under
    other_qrels.txt, generated from seed `other`, when given); the spec's collections and runs."""
    original = generate(seed, queries=30, runs=2, float32_ties=False, skill=(2.0, 4.0))
    write_qrels(original.qrels, tmp_path / "qrels.txt")
    collections = {"orig": {"qrels": "qrels.txt"}}
    if other is None:
        reproduced = [reproduce(run, seed + i, lost_topics=lost_topics)
                      for i, run in enumerate(original.runs.values())]  # fmt: skip
    else:
        replicated = generate(other, queries=25, runs=2, float32_ties=False, skill=(2.0, 3.0))
        write_qrels(replicated.qrels, tmp_path / "other_qrels.txt")
        collections["other"] = {"qrels": "other_qrels.txt"}
        reproduced = list(replicated.runs.values())
    runs = {}
    for name, run, rep in zip(NAMES, original.runs.values(), reproduced, strict=True):
        write_run(run, tmp_path / f"{name}.trec", tag=name)
        write_run(rep, tmp_path / f"{name}_rep.trec", tag=f"{name}_rep")
        runs[name] = {"path": f"{name}.trec", "collection": "orig"}
        runs[f"{name}_rep"] = {
            "path": f"{name}_rep.trec",
            "collection": "other" if other else "orig",
        }
    return {"collections": collections, "runs": runs}


def _spec(inputs: dict, settings: dict | None = None) -> dict:
    entry = {"original": list(NAMES), "reproduced": [f"{n}_rep" for n in NAMES]}
    return {**inputs, "metrics": METRICS, "settings": settings or {}, "reproduction": [entry]}


def _table(evaluation) -> dict:
    """(original, measure, metric, qid) -> (value, n_original, n_reproduced)."""
    return {(r[3], r[7], r[8], r[9]): tuple(r[10:]) for r in evaluation.rows("reproduction")}


def _close(ours, theirs) -> bool:
    if theirs is None or not math.isfinite(theirs):
        return ours is None
    return ours is not None and ours == pytest.approx(theirs, abs=1e-9)


def _runs(tmp_path, name: str) -> dict:
    return break_ties(load_run(str(tmp_path / f"{name}.trec")))


def _cut_to_shorter(orig: dict, rep: dict) -> tuple[dict, dict]:
    """Per topic both rank, both rankings cut to the shorter one's length."""
    cut = {q: min(len(orig[q]), len(rep[q])) for q in rep if q in orig}
    return ({q: dict(list(orig[q].items())[:n]) for q, n in cut.items()},
            {q: dict(list(rep[q].items())[:n]) for q, n in cut.items()})  # fmt: skip


def _check_orderings(table: dict, tmp_path) -> None:
    for name in NAMES:
        orig, rep = _runs(tmp_path, name), _runs(tmp_path, f"{name}_rep")
        rbo = RBO(orig, rep, p=0.95, depth=1000, pbar=False, per_topic=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy: a topic of one document has no τ
            ktu = KTU(*_cut_to_shorter(orig, rep), per_topic=True)
        for measure, theirs in (("ktu", ktu), ("rbo", rbo)):
            ours = {k[3]: v[0] for k, v in table.items() if k[:2] == (name, measure)}
            assert set(ours) == {*theirs, None}
            for qid, value in theirs.items():
                assert _close(ours[qid], value), (name, measure, qid, ours[qid], value)
            finite = [v for v in theirs.values() if not math.isnan(v)]
            assert _close(ours[None], math.fsum(finite) / len(finite))


def _scores(tmp_path, qrels: str, name: str, topics: set[str] | None = None) -> dict:
    """repro_eval's per-topic scores of a run file (its evaluate_run, pytrec_eval's numbers),
    only `topics` if given."""
    from ir_measures import parse_measure

    measures = [parse_measure(m) for m in METRICS]
    scores = evaluate_run(measures, load_qrels(str(tmp_path / qrels)), _runs(tmp_path, name))
    return {q: v for q, v in scores.items() if topics is None or q in topics}


def _p_values(orig: dict, rep: dict, paired: bool) -> dict:
    """repro_eval's t-test p-values, but 1 where scipy's NaN means that the samples do not
    differ at all: every difference 0 (paired), one value throughout both (unpaired). That is
    irpipe's rule, per metric; repro_eval sets 1 only when every metric's scores are equal."""
    found = ttest(orig, rep, rpd=paired)
    for metric, p in found.items():
        if paired:
            alike = all(orig[q][metric] == rep[q][metric] for q in orig)
        else:
            alike = len({s[q][metric] for s in (orig, rep) for q in s}) == 1
        if math.isnan(p) and alike:
            found[metric] = 1.0
    return found


def _check_metric(table, name: str, measure: str, theirs: dict) -> None:
    for metric in METRICS:
        ours = table[name, measure, metric, None][0]
        assert _close(ours, theirs[metric]), (name, measure, metric, ours, theirs[metric])


def test_reproducibility_equals_repro_eval(tmp_path, write_spec):
    """One reproducibility entry: τ Union and RBO per topic and averaged, RMSE, nRMSE, the
    paired t-test, ER and ΔRI, each to 1e-9 of repro_eval's."""
    table = _table(evaluate(write_spec(_spec(_files(tmp_path, 7))), write=False))
    _check_orderings(table, tmp_path)
    scores = {n: _scores(tmp_path, "qrels.txt", n) for n in ("b", "a", "b_rep", "a_rep")}
    for name in NAMES:
        orig, rep = scores[name], scores[f"{name}_rep"]
        _check_metric(table, name, "rmse", RMSE(orig, rep))
        _check_metric(table, name, "nrmse", nRMSE(orig, rep))
        _check_metric(table, name, "p_value", _p_values(orig, rep, paired=True))
        assert table[name, "rmse", "AP", None][1:] == (len(orig), len(orig))
    effects = (scores["a"], scores["b"], scores["a_rep"], scores["b_rep"])
    _check_metric(table, "a", "er", ER(*effects))
    _check_metric(table, "a", "delta_ri", DRI(*effects))
    assert ("b", "er", "AP", None) not in table  # the baseline has no effect of its own


def test_lost_topics_are_compared_where_both_runs_have_them(tmp_path, write_spec):
    """Reproductions that lost topics, under `queries: intersection` (a run's values only for
    the queries it answers): per topic both rank, and the per-metric measures over the topics
    both runs have (repro_eval, whose values score every qrels query, is given those)."""
    spec = _spec(_files(tmp_path, 11, lost_topics=0.3), {"queries": "intersection"})
    table = _table(evaluate(write_spec(spec), write=False))
    _check_orderings(table, tmp_path)
    for name in NAMES:
        both = set(load_run(str(tmp_path / f"{name}.trec")))
        both &= set(load_run(str(tmp_path / f"{name}_rep.trec")))
        orig = _scores(tmp_path, "qrels.txt", name, both)
        rep = _scores(tmp_path, "qrels.txt", f"{name}_rep", both)
        assert len(orig) < len(_scores(tmp_path, "qrels.txt", name))  # a judged topic was lost
        _check_metric(table, name, "rmse", RMSE(orig, rep))
        _check_metric(table, name, "p_value", _p_values(orig, rep, paired=True))


def test_replicability_equals_repro_eval(tmp_path, write_spec):
    """Reproductions under another collection: the unpaired t-test, ER and ΔRI, and no
    comparison of rankings or per-topic values (the topics are another collection's)."""
    evaluation = evaluate(write_spec(_spec(_files(tmp_path, 5, other=6))), write=False)
    table = _table(evaluation)
    orig = {n: _scores(tmp_path, "qrels.txt", n) for n in NAMES}
    rep = {n: _scores(tmp_path, "other_qrels.txt", f"{n}_rep") for n in NAMES}
    for name in NAMES:
        _check_metric(table, name, "p_value", _p_values(orig[name], rep[name], paired=False))
        assert table[name, "p_value", "AP", None][1:] == (len(orig[name]), len(rep[name]))
    effects = (orig["a"], orig["b"], rep["a"], rep["b"])
    _check_metric(table, "a", "er", ER(*effects))
    _check_metric(table, "a", "delta_ri", DRI(*effects))
    assert {k[1] for k in table} == {"p_value", "er", "delta_ri"}
    assert {r[1] for r in evaluation.rows("reproduction")} == {"replicability"}
