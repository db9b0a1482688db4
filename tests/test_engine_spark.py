"""The Spark engine gives the DuckDB engine's tables, value for value, bit for bit.

Spark runs in local mode (`local[2]`) in one session per worker for every Spark test (the `spark`
fixture in conftest.py): a machine with pyspark but without Java fails these tests, it never skips
them. Each case evaluates one spec on both engines and compares every table: generated collections
with every hard case (ties, graded and negative judgments, unjudged documents, queries missing
from runs or only in runs) under every setting that changes what a query's values are, the
quickstart, other tools' measures, plugins' metrics, comparisons, judgment sets. Reading inputs and
bad inputs are in test_spark_inputs.py; the session, the command line and outputs in
test_spark_session.py; runs' times in test_spark_latency.py; what they share in spark_support.py.
"""

from __future__ import annotations

import shutil
import sys

import pytest
from conftest import collection_spec
from spark_support import METRICS, ROOT, TABLES, same_tables, spec_file

from pipeline.api import Measure, PythonMeasure
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels
from pipeline.testing import installed

SETTINGS = [
    {},
    {"queries": "intersection"},
    {"missing_queries": "trec_eval_c"},
    {"judged_only": True, "max_docs": 15},
    {"max_docs": 0},
    {"compatibility": "trec_eval-9", "relevance_level": 2},
    {"ordering": "rank", "input": "lenient"},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "defaults")
def test_hard_collections_give_the_same_values(spark, tmp_path, settings):
    data = generate(seed=len(str(settings)), queries=25, runs=3, extremes=True)
    spec = collection_spec(tmp_path, data, METRICS, settings=settings)
    spec["collections"]["c"]["num_docs"] = 5000
    same_tables(spec, tmp_path)


def test_other_tools_measures_and_judged_only_give_the_same_values(spark, tmp_path):
    """gdeval's and rbp_eval's variants (queries without a value), ERR, and metrics over the
    condensed ranking (`judged_only=true`) beside the same metrics over the whole ranking."""
    data = generate(seed=33, queries=25, runs=3, max_grade=4, extremes=True)
    metrics = [
        "nDCG(variant=gdeval)@20", "ERR(variant=gdeval)@20", "ERR@10", "nDCG@10",
        "RBP(p=0.8,variant=rbp_eval)", "RBP(p=0.8,variant=rbp_eval,residual=true)@10",
        "nDCG(judged_only=true)@10", "AP(judged_only=true)", "RnDCG(judged_only=true)",
        "NumRet(judged_only=true)",
    ]  # fmt: skip
    same_tables(collection_spec(tmp_path, data, metrics), tmp_path)


def test_cwl_measures_and_residuals_give_the_same_values(spark, tmp_path):
    # Running products and sums over lists of positions past the ranking, on the workers too.
    data = generate(seed=13, queries=20, runs=2, extremes=True)
    metrics = ["INST", "INSQ(T=2)", "BPM(T=2)@20", "NERR8@10", "NERR9@10", "NERR10(p=0.8)",
               "NERR11", "SDCG@10", "U(L=50)", "TBG"]  # fmt: skip
    both = [{"metric": m, "max_rel": 3, **r} for m in metrics for r in ({}, {"residual": True})]
    same_tables(collection_spec(tmp_path, data, both), tmp_path)


def test_the_quickstart_gives_the_same_tables(spark, tmp_path):
    shutil.copytree(ROOT / "configs" / "data", tmp_path / "data")
    shutil.copy(ROOT / "configs" / "quickstart.yaml", tmp_path)
    same_tables(tmp_path / "quickstart.yaml")


def test_precision_recall_curves_come_from_the_shards_too(spark, tmp_path):
    data = generate(seed=7, queries=20, runs=2, extremes=True)
    outputs = [{"path": "out/pr.csv", "level": "pr_curve", "recall_levels": 101}]
    spec = collection_spec(tmp_path, data, ["AP", "P@10"], outputs=outputs)
    same_tables(spec, tmp_path, (*TABLES, "curve_per_query", "curve_aggregate", "pr_curve_101"))


class SpreadOfGrades(PythonMeasure):
    """A metric of the Python path: the spread of the grades retrieved (a plugin's)."""

    name = "SpreadOfGrades"
    description = "largest minus smallest grade retrieved, in Python"

    def compute(self, p, query):
        return float(query.grades.max() - query.grades.min()) if len(query.grades) else 0.0


class JudgedShare(Measure):
    """A plugin's SQL metric: the share of the ranking that the qrels judge."""

    name = "JudgedShare"
    description = "judged documents retrieved / documents retrieved, in SQL"

    def needs(self, p, c):
        return ()

    def per_query(self, p, c):
        return f"count(*) FILTER (WHERE {c.relv} <> -1) / count(*)"

    def missing(self, p, c):
        return "0.0"


def test_plugin_metrics_sql_and_python_run_on_the_workers(spark, tmp_path):
    from pyspark import cloudpickle

    # The workers unpickle the measures' classes: this test module is not importable there.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    data = generate(seed=11, queries=20, runs=2, extremes=True)
    spec = collection_spec(tmp_path, data, ["SpreadOfGrades", "JudgedShare", "AP"])
    with installed(SpreadOfGrades, JudgedShare):
        same_tables(spec, tmp_path)


def test_comparisons_come_from_the_same_per_query_values(spark, tmp_path):
    shutil.copytree(ROOT / "configs" / "data", tmp_path / "data")
    shutil.copy(ROOT / "configs" / "compare.yaml", tmp_path)
    same_tables(tmp_path / "compare.yaml", tables=(*TABLES, "comparison"))


JUDGMENT_TABLES = ("agreement", "confusion", "correlation")


def test_judgment_sets_and_orderings_give_the_duckdb_engine_s_tables(spark, tmp_path):
    """Two generated judgment sets (every grade, negative ones, pairs missing on both sides),
    one of them Parquet, compared label by label (their cells counted by Spark
    SQL), and two metrics' orderings of the runs with bootstrap intervals: the same rows as on
    DuckDB, to the last bit. A spec of the judgment sets alone runs on Spark too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.synthetic import llm_judgments

    data = generate(seed=11, queries=25, runs=4, max_grade=3, extremes=True)
    spec = collection_spec(tmp_path, data, ["AP", "P@10", "nDCG@10"])
    llm = llm_judgments(data.qrels, seed=11, max_grade=3)
    rows = [(q, d, g) for q, docs in llm.items() for d, g in docs.items()]
    columns = dict(zip(("qid", "docno", "rel"), map(list, zip(*rows, strict=True)), strict=True))
    pq.write_table(pa.table(columns), tmp_path / "llm.parquet")
    spec["collections"]["llm"] = {"qrels": "llm.parquet"}
    spec["agreement"] = [{"reference": "c", "other": "llm", "thresholds": [1, 2, 3]},
                         {"reference": "llm", "other": "c"}]  # fmt: skip
    spec["correlation"] = [{"reference": "AP", "other": "P@10", "collection": "c",
                            "bootstrap": 50, "seed": 3}]  # fmt: skip
    for judged in (spec, {k: spec[k] for k in ("collections", "agreement")}):
        path = spec_file(tmp_path / "spec.yaml", judged)
        on_duckdb = evaluate(path, write=False, engine="duckdb").con
        on_spark = evaluate(path, write=False, engine="spark").con
        for table in JUDGMENT_TABLES[: 3 if "runs" in judged else 2]:
            expected = on_duckdb.execute(f"SELECT * FROM {table}").fetchall()
            assert expected, f"{table} is empty: nothing was compared"
            assert on_spark.execute(f"SELECT * FROM {table}").fetchall() == expected, table
            types = "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?"
            assert (
                on_spark.execute(types, [table]).fetchall()
                == on_duckdb.execute(types, [table]).fetchall()
            )


def test_runs_under_several_judgment_sets_and_an_overlay_give_the_same_values(spark, tmp_path):
    """Runs evaluated under two judgment sets and an overlay of them (tests/test_judgment_sets.py),
    trec_eval -c's rankings included (a query two sets judge gets one): DuckDB's tables."""
    data = generate(seed=33, queries=20, runs=3, extremes=True)
    spec = collection_spec(
        tmp_path, data, METRICS[:20], settings={"missing_queries": "trec_eval_c"}
    )
    write_qrels(generate(seed=34, queries=20).qrels, tmp_path / "llm.txt")
    spec["collections"] = {
        "human": {"qrels": "qrels.txt", "num_docs": 5000},
        "llm": {"qrels": "llm.txt", "num_docs": 5000},
        "filled": {"qrels": {"overlay": ["human", "llm"]}, "num_docs": 5000},
    }
    for name, run in spec["runs"].items():
        run["collection"] = ["human", "llm", "filled"] if name != "run2" else "filled"
    same_tables(spec, tmp_path)
