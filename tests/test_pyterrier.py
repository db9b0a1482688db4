"""`pipeline.pyterrier.Experiment` against PyTerrier's own `pt.Experiment` on generated systems
(ties, some only in float32, graded and negative judgments, unjudged documents, qrels queries a
system lacks, queries only a system has): the same columns, the same values and counts, the same
p-values (to 1e-12, the tests' tolerance for statistics), frames or transformers alike."""

from __future__ import annotations

import subprocess
import sys

import ir_measures
import pandas as pd
import pyterrier as pt
import pytest

from pipeline.errors import SpecError
from pipeline.pyterrier import Experiment
from pipeline.synthetic import generate


@pytest.fixture(scope="module")
def data():
    c = generate(29, queries=20, runs=3, extremes=True, skill=(0.0, 0.5, 1.0))
    qrels = pd.DataFrame([(q, d, g) for q, docs in c.qrels.items() for d, g in docs.items()],
                         columns=["qid", "docno", "label"])  # fmt: skip
    systems = {name: pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                                  columns=["qid", "docno", "score"])
               for name, run in c.runs.items()}  # fmt: skip
    topics = pd.DataFrame({"qid": sorted(c.qrels), "query": "unused"})
    return systems, topics, qrels


def _same(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Equal columns; numbers equal to 1e-12, empty cells in the same places."""
    assert sorted(got.columns) == sorted(expected.columns)
    for column in expected.columns:
        a, b = got[column].reset_index(drop=True), expected[column].reset_index(drop=True)
        if b.dtype.kind == "f":
            assert (a.isna() == b.isna()).all(), column
            assert ((a - b).abs().fillna(0) <= 1e-12).all(), (column, list(a), list(b))
        else:
            assert list(a) == list(b), column


@pytest.mark.parametrize(
    "options",
    [
        {"eval_metrics": ["map", "ndcg_cut_10", "P_10", "recip_rank", "mrt"], "baseline": 0,
         "correction": "holm"},
        {"eval_metrics": ["map", ir_measures.nDCG @ 10, "Rprec", "num_ret"], "baseline": 1,
         "test": "wilcoxon", "correction": "bonferroni"},
        {"eval_metrics": ["map", "P_5", "recall_20"], "round": 3},
        {"eval_metrics": ["map", "bpref"], "baseline": "run2"},
    ],
)  # fmt: skip
def test_the_frame_is_pt_experiment_s(data, options):
    systems, topics, qrels = data
    given = systems if isinstance(options.get("baseline"), str) else list(systems.values())
    names = None if isinstance(given, dict) else list(systems)
    _same(Experiment(given, topics, qrels, names=names, **options),
          pt.Experiment(given, topics, qrels, names=names, **options))  # fmt: skip


def test_per_query_frames_are_pt_experiment_s(data):
    systems, topics, qrels = data
    order = ["name", "qid", "measure"]
    got = Experiment(systems, topics, qrels, ["map", "P_5"], perquery=True).sort_values(order)
    expected = pt.Experiment(systems, topics, qrels, ["map", "P_5"], perquery=True)
    _same(got, expected.sort_values(order))
    means, per_query = Experiment(systems, topics, qrels, ["map"], perquery="both")
    _same(means, pt.Experiment(systems, topics, qrels, ["map"]))
    assert len(per_query) == len(topics) * len(systems)


def test_transformers_are_run_on_the_topics_and_timed(data):
    systems, topics, qrels = data
    ranked = [pt.Transformer.from_df(frame) for frame in systems.values()]
    options = {"names": list(systems), "baseline": 0}
    got = Experiment(ranked, topics, qrels, ["map", "P_10", "mrt"], **options)
    expected = pt.Experiment(ranked, topics, qrels, ["map", "P_10", "mrt"], **options)
    _same(got.drop(columns="mrt"), expected.drop(columns="mrt"))
    assert (got["mrt"] > 0).all()  # milliseconds a query, as pt.Experiment measures it


def test_several_baselines_give_each_its_columns(data):
    systems, topics, qrels = data
    got = Experiment(systems, topics, qrels, ["map"], baseline=["run0", "run1"], correction="holm")
    for baseline in ("run0", "run1"):
        alone = pt.Experiment(systems, topics, qrels, ["map"], baseline=baseline, correction="holm")
        columns = {c: c.removesuffix(f" vs {baseline}") for c in got.columns
                   if c.endswith(f" vs {baseline}")}  # fmt: skip
        _same(got[["name", "map", *columns]].rename(columns=columns), alone)


def test_results_come_beside_the_frame_and_save_dir_keeps_a_history(data, tmp_path):
    systems, topics, qrels = data
    frame, results = Experiment(systems, topics, qrels, ["map"], save_dir=tmp_path, results=True)
    assert list(results.aggregate().run.unique()) == list(systems)
    with pytest.raises(SpecError, match=r"save_dir: .*irpipe.duckdb holds earlier evaluations"):
        Experiment(systems, topics, qrels, ["map"], save_dir=tmp_path, save_mode="error")
    again, reused = Experiment(systems, topics, qrels, ["map"], save_dir=tmp_path,
                               save_mode="reuse", results=True)  # fmt: skip
    assert again.equals(frame)
    assert "all 3 runs unchanged" in reused.evaluation.history_note()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"baseline": 5}, r"baseline: 5 is neither a system's index nor its name"),
        ({"correction": "holm"}, r"correction: a correction needs a baseline"),
        ({"baseline": 0, "correction": "hs"}, r"correction: 'hs'; give one of"),
        ({"names": ["a"]}, r"names: 1 names for 3 systems"),
    ],
)
def test_mistakes_are_named(data, options, message):
    systems, topics, qrels = data
    with pytest.raises(SpecError, match=message):
        Experiment(list(systems.values()), topics, qrels, ["map"], **options)


def test_frames_need_no_pyterrier():
    script = """
import sys
sys.modules["pyterrier"] = None  # not installed: importing it fails
import pandas as pd
from pipeline.pyterrier import Experiment
qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "label": [1, 0, 2]})
run = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "x"], "score": [2.0, 1.0, 1.0]})
topics = pd.DataFrame({"qid": ["1", "2"], "query": ["", ""]})
print(Experiment([run], topics, qrels, ["map", "P_1"], names=["bm25"]).to_dict("records"))
"""
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[{'name': 'bm25', 'map': 0.5, 'P_1': 0.5}]"


def test_transformers_are_timed_query_by_query_for_latency(data, monkeypatch):
    """With a Latency or QPS metric, each transformer runs on one query at a time, timed: the
    frame's Latency is the statistic of those times (a clock that advances 2 ms a query here),
    QPS their rate, and mrt their mean over the judged queries."""
    import pipeline.pyterrier as experiment

    systems, topics, qrels = data
    ticks = iter(range(0, 10**6))
    monkeypatch.setattr(experiment.time, "perf_counter", lambda: next(ticks) * 0.002 / 2)
    ranked = [pt.Transformer.from_df(frame) for frame in systems.values()]
    got = Experiment(ranked, topics, qrels, ["map", "Latency(stat=p95)", "QPS", "mrt"],
                     names=list(systems))  # fmt: skip
    assert list(got["Latency(stat=p95)"]) == pytest.approx([1.0] * 3)
    assert list(got["QPS"]) == pytest.approx([1000.0] * 3)
    judged = qrels["qid"].nunique()
    assert list(got["mrt"]) == pytest.approx([len(topics) * 1.0 / judged] * 3)
    expected = pt.Experiment(ranked, topics, qrels, ["map"], names=list(systems))
    _same(got[["name", "map"]], expected)
