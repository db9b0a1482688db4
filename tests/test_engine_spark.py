"""The Spark engine gives the DuckDB engine's tables, value for value, bit for bit.

Spark runs in local mode (`local[2]`) in one session for every test here (the `spark` fixture in
conftest.py): a machine with pyspark but without Java fails these tests, it never skips them.
Each case evaluates one spec on both engines and compares every table: generated collections
with every hard case (ties, graded and negative judgments, unjudged documents, queries missing
from runs or only in runs) under every setting that changes what a query's values are, the
quickstart, Parquet part files, `irpipe trec-eval`, and bad inputs (the same messages).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import collection_spec, deep_collection, snapshot

from pipeline.api import Measure, PythonMeasure
from pipeline.errors import DuplicateError, InputDataError, SpecError
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, soft_labels, write_beir_qrels, write_qrels
from pipeline.testing import installed

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("per_query", "aggregate")
# Every family of measure: counts, ranks, cutoffs, graded gains, the ideal ranking, judged-only
# rankings (Bpref, infAP), collection fields (Fallout), text (RelString), geometric means.
METRICS = [
    "AP", "P@5", "P@10", "R@10", "RR", "Rprec", "Bpref", "infAP", "nDCG", "nDCG@10", "DCG@5",
    "IDCG", "RBP", "RBPResid", "Success@5", "SetF", "SetAP", "Utility", "NumRet", "NumRel",
    "NumRelRet", "NumQ", "gmAP", "SearchLength", "Unjudged@10", "RelString", "YAAP", "BinG",
    "Fallout@10", "IPrec@0.5", "AP(rel=2)", "nDCG(gain='exponential')@10", "Rprec(mult=0.5)",
    {"metric": "AP", "variant": "interpolated_11pt"},
]  # fmt: skip
SETTINGS = [
    {},
    {"queries": "intersection"},
    {"missing_queries": "trec_eval_c"},
    {"judged_only": True, "max_docs": 15},
    {"max_docs": 0},
    {"compatibility": "trec_eval-9", "relevance_level": 2},
    {"ordering": "rank", "input": "lenient"},
]


def same_tables(spec: Path | dict, tmp_path: Path | None = None, tables=TABLES) -> None:
    """`spec` evaluated by both engines gives the same rows in every table, every number the
    same double: a query's rows add in rank order on a shard as on one machine."""
    if isinstance(spec, dict):
        spec = _written(tmp_path / "spec.yaml", spec)
    on_duckdb = evaluate(spec, write=False, engine="duckdb").con
    on_spark = evaluate(spec, write=False, engine="spark").con
    for table in tables:
        expected = on_duckdb.execute(f"SELECT * FROM {table}").fetchall()
        got = on_spark.execute(f"SELECT * FROM {table}").fetchall()
        assert expected, f"{table} is empty: nothing was compared"
        _same_rows(got, expected, table)


def _same_rows(got: list[tuple], expected: list[tuple], what: str = "") -> None:
    assert [_keys(row) for row in got] == [_keys(row) for row in expected], what
    for a, b in zip(got, expected, strict=True):
        for x, y in zip(a, b, strict=True):
            if isinstance(y, float):
                assert _same(x, y), (what, a, b)


def _keys(row: tuple) -> tuple:
    """A row without its numbers."""
    return tuple(v for v in row if not isinstance(v, float))


def _same(x: float, y: float) -> bool:
    """The same double (NaN is NaN)."""
    if math.isnan(y):
        return math.isnan(x)
    return x == y


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
        path = _written(tmp_path / "spec.yaml", judged)
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


def test_parquet_part_files_and_uris_are_read_where_they_live(spark, tmp_path):
    import duckdb

    data = generate(seed=5, queries=30, runs=2, extremes=True)
    text = collection_spec(tmp_path, data, ["AP", "nDCG@10", "P@5", "RelString"])
    expected = evaluate(_written(tmp_path / "text.yaml", text), write=False).con
    parts = tmp_path / "run0.parquet"
    parts.mkdir()
    con = duckdb.connect()
    read = "read_csv(?, delim=' ', header=false, columns={'qid':'VARCHAR','q0':'VARCHAR','docno':'VARCHAR','rank':'BIGINT','score':'DOUBLE','tag':'VARCHAR'})"
    con.execute(f"CREATE TABLE r AS SELECT * FROM {read}", [str(tmp_path / "run0.txt")])
    for i, half in enumerate(("qid < '5'", "qid >= '5'")):  # two part files, split by query
        con.execute(f"COPY (SELECT * FROM r WHERE {half}) TO '{parts}/part-{i}.parquet'")
    con.execute(
        "COPY (SELECT column0 AS qid, column2 AS docno, column3 AS rel FROM "
        f"read_csv('{tmp_path}/qrels.txt', delim=' ', header=false)) TO '{tmp_path}/qrels.parquet'"
    )
    (tmp_path / "text parts").mkdir()  # a space: Hadoop takes a path's text as it is
    shutil.copy(tmp_path / "run1.txt", tmp_path / "text parts" / "part 00000")
    spark_spec = {
        **text,
        "settings": {"engine": "spark"},
        "collections": {"c": {"qrels": "qrels.parquet"}},
        "runs": {
            "run0": {"path": "run0.parquet", "collection": "c"},
            "run1": {"path": f"file://{tmp_path}/text parts", "collection": "c"},
        },
    }
    got = evaluate(_written(tmp_path / "spark.yaml", spark_spec), write=False).con
    for table in TABLES:
        query = f"SELECT * FROM {table}"
        _same_rows(got.execute(query).fetchall(), expected.execute(query).fetchall(), table)


def _written(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_trec_eval_prints_the_same_bytes(spark, tmp_path, capsys):
    from pipeline.cli import main

    data = generate(seed=3, queries=20, runs=1, extremes=True)
    collection_spec(tmp_path, data, ["AP"])
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run0.txt")]
    # Without -c, a qrels query the run lacks stops trec_eval (exit 4) where it is reached.
    for flags in (["-q", "-c", "-m", "all_trec"], ["-c", "-J", "-M", "9"], ["-q", "-l", "2"]):
        printed = []
        for engine in ("duckdb", "spark"):
            code = main(["trec-eval", *flags, "--engine", engine, *files])
            printed.append((code, *capsys.readouterr()))
        assert printed[0][1] or printed[0][2], flags
        assert printed[1] == printed[0], flags
    assert [code for code, *_ in printed] == [4, 4]


QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e 0\n"
RUN = "1 Q0 a 1 3.5 sys\n1 Q0 b 2 2.5 sys\n1 Q0 c 3 1.5 sys\n2 Q0 d 1 1 sys\n2 Q0 e 2 0.5 sys\n"
BAD_INPUTS = {
    "a score that is not a number": ("run", RUN.replace("2.5", "2,5")),
    "too few fields in a run": ("run", RUN + "\n# a comment\n2 Q0 f 3\n"),
    "a grade that is not an integer": ("qrels", QRELS.replace("c 1", "c 1.5")),
    "a qrels file that looks like a run": ("qrels", RUN),
    "a document twice in a run": ("run", RUN + RUN.splitlines()[0] + "\n"),
    "a document twice in the qrels": ("qrels", QRELS + QRELS + QRELS),
    "an empty run": ("run", "\n# nothing\n"),
    "a run of other queries": ("run", RUN.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0")),
    # trec_eval -c ranks a document for every query a run lacks: the check comes before that
    "a run of other queries, -c": ("run", RUN.replace("1 Q0", "7 Q0").replace("2 Q0", "8 Q0")),
    "a run of docnos spelt otherwise": ("run", RUN.upper()),
    "a run of docnos spelt otherwise, -c": ("run", RUN.upper()),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_inputs_are_reported_in_the_same_words(spark, tmp_path, case):
    which, text = BAD_INPUTS[case]
    (tmp_path / "qrels.txt").write_text(text if which == "qrels" else QRELS)
    (tmp_path / "run.txt").write_text(text if which == "run" else RUN)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"missing_queries": "trec_eval_c"} if case.endswith("-c") else {},
    }
    path = _written(tmp_path / "spec.yaml", spec)
    messages = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(InputDataError) as raised:
            evaluate(path, write=False, engine=engine)
        messages.append((type(raised.value), str(raised.value)))
    assert messages[1] == messages[0]
    duplicates = "twice" in case
    assert (messages[0][0] is DuplicateError) == duplicates


def test_a_run_matches_the_qrels_if_any_shard_finds_a_judged_document(spark, tmp_path):
    """A run whose docnos are upper-cased but in one query, on four shards: judged documents in
    one shard are enough, as on one machine; allowed, the upper-cased run's values agree."""
    data = generate(4, queries=12, runs=2)
    qid, kept = max((q, d) for q, docs in data.runs["run1"].items() for d in docs
                    if d in data.qrels.get(q, {}))  # fmt: skip
    data.runs["run1"] = {q: {(d if (q, d) == (qid, kept) else d.upper()): s for d, s in docs.items()}
                         for q, docs in data.runs["run1"].items()}  # fmt: skip
    spec = collection_spec(tmp_path, data, ["AP", "P@5"], spark={"partitions": 4})
    same_tables(spec, tmp_path)
    data.runs["run1"][qid][kept.upper()] = data.runs["run1"][qid].pop(kept)
    spec = collection_spec(tmp_path, data, ["AP"], spark={"partitions": 4})
    messages = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(
            InputDataError, match="run 'run1' retrieves no document judged"
        ) as raised:
            evaluate(_written(tmp_path / "spec.yaml", spec), write=False, engine=engine)
        messages.append(str(raised.value))
    assert messages[1] == messages[0]
    same_tables({**spec, "settings": {"unmatched_runs": "allow"}}, tmp_path)


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


def test_beir_qrels_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """BEIR qrels (tests/test_beir.py), recognised and named, plain and .gz: the same tables as on
    DuckDB, and a bad header, a decimal grade and a duplicate refused in the same words."""
    data = generate(seed=32, queries=20, runs=2, extremes=True)
    spec = collection_spec(tmp_path, data, METRICS[:12])
    write_beir_qrels(data.qrels, tmp_path / "test.tsv")
    write_beir_qrels(data.qrels, tmp_path / "test.tsv.gz")
    spec["collections"] = {
        "c": {"qrels": "test.tsv"},
        "z": {"qrels": "test.tsv.gz", "format": "beir"},
    }
    spec["runs"]["z"] = {**spec["runs"]["run0"], "collection": "z"}
    same_tables(spec, tmp_path)
    header = "query-id\tcorpus-id\tscore\n"
    for bad in (
        "query-id\tscore\n1\ta\t1\n",
        header + "1\ta\t0.5\n",
        header + "1\ta\t1\n1\ta\t0\n",
    ):
        (tmp_path / "test.tsv").write_text(bad)
        (tmp_path / "run.txt").write_text(RUN)
        spec = {"collections": {"c": {"qrels": "test.tsv"}}, "metrics": ["AP"],
                "runs": {"r": {"path": "run.txt", "collection": "c"}}}  # fmt: skip
        messages = []
        for engine in ("duckdb", "spark"):
            with pytest.raises(InputDataError) as raised:
                evaluate(_written(tmp_path / "bad.yaml", spec), write=False, engine=engine)
            messages.append(str(raised.value))
        assert messages[1] == messages[0]
        assert re.match(r".*test.tsv:[12]: ", messages[0]), messages[0]


def test_soft_labels_give_the_same_values_and_the_same_errors(spark, tmp_path):
    """Decimal grades (`grades: real`, tests/test_soft_labels.py) at the level 0.5, as text read
    on the workers, as BEIR TSV and as Parquet of doubles: the same tables as on DuckDB; a grade
    that is not finite refused in the same words."""
    data = generate(seed=5, queries=20, runs=2, extremes=True)
    data.qrels = soft_labels(data.qrels, 5)
    real = {"grades": "real", "relevance_level": 0.5}
    spec = collection_spec(tmp_path, data, [*METRICS, "G", "RnDCG"], settings=real)
    spec["collections"]["c"]["num_docs"] = 5000
    same_tables(spec, tmp_path)
    write_beir_qrels(data.qrels, tmp_path / "test.tsv")
    rows = [(q, d, float(g)) for q, docs in data.qrels.items() for d, g in docs.items()]
    duckdb.sql(f"COPY (SELECT * FROM (VALUES {', '.join(map(repr, rows))}) t(qid, docno, rel)) "
               f"TO '{tmp_path / 'q.parquet'}' (FORMAT parquet)")  # fmt: skip
    for qrels in ("test.tsv", "q.parquet"):
        spec["collections"]["c"]["qrels"] = qrels
        same_tables(spec, tmp_path)
    (tmp_path / "qrels.txt").write_text(QRELS.replace("c 1", "c inf"))
    (tmp_path / "run.txt").write_text(RUN)
    bad = {"collections": {"c": {"qrels": "qrels.txt"}}, "metrics": ["AP"], "settings": real,
           "runs": {"r": {"path": "run.txt", "collection": "c"}}}  # fmt: skip
    messages = []
    for engine in ("duckdb", "spark"):
        with pytest.raises(InputDataError) as raised:
            evaluate(_written(tmp_path / "bad.yaml", bad), write=False, engine=engine)
        messages.append(str(raised.value))
    assert messages[1] == messages[0]
    assert "qrels.txt:3: the relevance grade must be a finite number, found 'inf'" in messages[0]


def test_a_bad_line_in_a_part_file_is_named_by_that_file(spark, tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    parts = tmp_path / "run"
    parts.mkdir()
    (parts / "part-0").write_text(RUN)
    (parts / "part-1").write_text("3 Q0 x 1 1 sys\n\n3 Q0 y 2 high sys\n")
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"engine": "spark"},
    }
    with pytest.raises(InputDataError, match=r"run/part-1:3: the score must be a number, found 'high': '3 Q0 y 2 high sys'"):  # fmt: skip
        evaluate(_written(tmp_path / "spec.yaml", spec), write=False)


def test_a_uri_needs_the_spark_engine(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "hdfs://namenode/runs/r", "collection": "c"}},
        "metrics": ["AP"],
    }
    with pytest.raises(SpecError, match=r"runs.r.path: hdfs://namenode/runs/r is a URI, which only the Spark engine reads"):  # fmt: skip
        evaluate(_written(tmp_path / "spec.yaml", spec), write=False)


@pytest.mark.parametrize("missing", ["pyspark", "pandas"])
def test_without_pyspark_the_engine_is_a_spec_error_saying_what_to_install(tmp_path, missing):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"engine": "spark"},
    }
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import sys\nclass Without:\n    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.partition('.')[0] == {missing!r}:\n"
        "            raise ModuleNotFoundError(name, name=name)\nsys.meta_path.insert(0, Without())\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "run", str(_written(tmp_path / "s.yaml", spec))],
        capture_output=True, text=True, cwd=ROOT,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "settings.engine: engine spark needs pyspark, pyarrow and pandas" in done.stderr
    assert f"({missing} is not installed)" in done.stderr
    assert "pip install 'irpipe[spark]'" in done.stderr


@pytest.fixture
def without_pyspark(monkeypatch):
    """pyspark unimportable in this process, as where it is not installed (its modules already
    imported by other tests included)."""
    for name in [n for n in sys.modules if n.partition(".")[0] == "pyspark"] + ["pyspark"]:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(
    ("command", "printed"),
    [
        (("validate", "--no-data"), "valid without data (4 metrics, 2 runs)"),
        (("compile",), "ranked AS ("),
    ],
)
def test_validate_without_data_and_compile_need_no_pyspark(
    without_pyspark, capsys, command, printed
):
    """Neither runs Spark: the guide offers both on a machine without it (or without the data)."""
    from pipeline.cli import main

    with pytest.raises(ImportError):
        import pyspark  # noqa: F401
    assert main([*command, str(ROOT / "configs" / "spark.yaml")]) == 0, capsys.readouterr().err
    assert printed in capsys.readouterr().out


def test_manifests_and_the_history_record_the_engine_and_its_version(spark, tmp_path):
    import json

    import pyspark

    data = generate(seed=2, queries=10, runs=2)
    spec = collection_spec(
        tmp_path, data, ["AP"], outputs=[{"path": "out/a.csv"}], history={"path": "h.duckdb"}
    )
    path = _written(tmp_path / "spec.yaml", spec)
    evaluation = evaluate(path, engine="spark")
    manifest = json.loads((tmp_path / "out" / "a.csv.manifest.json").read_text())
    assert manifest["settings"]["engine"] == "spark"
    assert manifest["versions"]["pyspark"] == pyspark.__version__
    assert "evaluated on Spark" in evaluation.history_note()
    again = evaluate(path, engine="spark")  # Spark reuses nothing, and says so
    assert again.keeper.reused == {}
    # The engine changes no number: DuckDB reuses what Spark recorded.
    assert set(evaluate(path, engine="duckdb").keeper.reused) == {"run0", "run1"}


def test_spark_submit_runs_a_spec(spark, tmp_path, capsys):
    from pipeline.cli.spark_submit import main

    data = generate(seed=9, queries=10, runs=2)
    spec = collection_spec(tmp_path, data, ["AP", "P@10"], outputs=[{"path": "out/a.csv"}])
    path = _written(tmp_path / "spec.yaml", spec)
    assert main([str(path), "--quiet"]) == 0
    written = (tmp_path / "out" / "a.csv").read_text()
    assert (
        evaluate(path, write=False).aggregate()
        == evaluate(path, write=False, engine="spark").aggregate()
    )
    assert written.count("\n") == 1 + 2 * 2  # a header, then two runs by two metrics


@pytest.mark.parametrize("kept", [False, True], ids=["aggregated_on_workers", "also_collected"])
def test_the_per_query_table_at_scale_is_written_by_spark(spark, tmp_path, kept):
    import duckdb

    data = generate(seed=13, queries=30, runs=3, extremes=True)
    metrics = ["AP", "nDCG@10", "P@5", "gmAP", "NumRelRet", "RelString"]
    more = {"history": {"path": "h.duckdb"}} if kept else {}
    spec = collection_spec(tmp_path, data, metrics, settings={"missing_queries": "trec_eval_c"})
    expected = evaluate(_written(tmp_path / "duckdb.yaml", spec), write=False).con
    spec |= {"spark": {"per_query": "pq"}, "outputs": [{"path": "out/a.csv"}], **more}
    got = evaluate(_written(tmp_path / "spark.yaml", spec), engine="spark").con
    query = "SELECT * FROM aggregate"
    _same_rows(got.execute(query).fetchall(), expected.execute(query).fetchall())
    (collected,) = got.execute("SELECT count(*) FROM per_query").fetchone()
    written = duckdb.sql(
        "SELECT run, collection, qid, metric, value, text FROM "
        f"read_parquet('{tmp_path}/pq/*/*/*.parquet', hive_partitioning = true) ORDER BY ALL"
    ).fetchall()
    everything = expected.execute("SELECT * FROM per_query ORDER BY ALL").fetchall()
    _same_rows(written, everything)
    assert collected == (len(everything) if kept else 0)


def test_the_spark_section_configures_a_session_irpipe_builds():
    from pyspark.sql import SparkSession

    from pipeline.engines.spark.session import _configured
    from pipeline.spec.models import SparkSection

    section = SparkSection(master="local[3]", conf={"spark.executor.memory": "2g", "x.on": True})
    options = _configured(SparkSession.builder, section)._options
    assert options["spark.master"] == "local[3]"
    assert options["spark.executor.memory"] == "2g"
    assert options["x.on"] == "true"  # Spark's spelling of booleans
    assert options["spark.ui.showConsoleProgress"] == "false"


def test_a_spec_of_uris_validates_without_data_or_spark(tmp_path):
    from pipeline.run.evaluation import validate

    spec = {
        "collections": {"c": {"qrels": "s3a://lake/qrels/"}},
        "runs": {"r": {"path": "hdfs://namenode/runs/r/*.parquet", "collection": "c"}},
        "metrics": ["AP"],
        "settings": {"engine": "spark"},
        "spark": {"master": "yarn", "partitions": 400, "per_query": "s3a://lake/out/pq"},
    }
    plan = validate(_written(tmp_path / "spec.yaml", spec), data=False).sql
    assert [load.path for load in plan.loads] == [
        "s3a://lake/qrels/",
        "hdfs://namenode/runs/r/*.parquet",
    ]


def test_on_the_command_line_a_bad_input_is_one_message_and_its_exit_code(spark, tmp_path, capsys):
    from pipeline.cli import main

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN.replace("2.5", "high"))
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {"r": {"path": "run.txt", "collection": "c"}, "s": {"path": "nowhere://x/r", "collection": "c"}},
        "metrics": ["AP"],
    }  # fmt: skip
    path = str(_written(tmp_path / "spec.yaml", spec))
    assert main(["run", "--quiet", "--engine", "spark", path]) == 2  # the URI, before any data
    err = capsys.readouterr().err
    assert "nowhere://x/r: Spark cannot list it:" in err and "Traceback" not in err
    del spec["runs"]["s"]
    path = str(_written(tmp_path / "spec.yaml", spec))
    assert main(["run", "--quiet", "--engine", "spark", path]) == 3
    err = capsys.readouterr().err
    assert f"{tmp_path}/run.txt:2: the score must be a number, found 'high'" in err
    assert "Traceback" not in err


def test_spark_refuses_the_parquet_files_duckdb_refuses(spark, tmp_path, capsys):
    """Parquet ids that are floats, a file that is not Parquet, fractional grades: the same
    one-line refusal on both engines (tests/test_user_errors.py has the DuckDB cases), here
    to share this file's Spark session."""
    from test_user_errors import (
        DATA_ERROR,
        FLOAT_DOCNOS,
        FRACTIONAL_GRADES,
        RUN_A,
        case_dir,
        parquet,
        spec_of,
    )

    from pipeline.cli import main

    case = case_dir(tmp_path, spec_of({"p": {"path": "p.parquet", "collection": "c"}}))
    parquet(case / "p.parquet", FLOAT_DOCNOS, "qid, docno, score")
    spec = str(case / "spec.yaml")
    before = snapshot(case)
    said = {}
    for engine in ("duckdb", "spark"):
        assert main(["run", "--quiet", "--engine", engine, spec]) == DATA_ERROR
        said[engine] = capsys.readouterr().err
    assert said["spark"] == said["duckdb"]
    assert re.fullmatch(r"Error: \S+/p\.parquet: column 'docno' holds floats \(double\).*\n", said["spark"])  # fmt: skip
    (case / "p.parquet").write_text(RUN_A)
    before["p.parquet"] = RUN_A.encode()
    assert main(["run", "--quiet", "--engine", "spark", spec]) == DATA_ERROR
    err = capsys.readouterr().err
    assert re.fullmatch(r"Error: \S+/p\.parquet: not a valid Parquet file \(.*is not a Parquet file.*\n", err)  # fmt: skip
    assert snapshot(case) == before
    spec_data = yaml.safe_load((case / "spec.yaml").read_text())
    spec_data["collections"]["c"]["qrels"] = "q.parquet"
    (case / "spec.yaml").write_text(yaml.safe_dump(spec_data, sort_keys=False))
    parquet(case / "q.parquet", FRACTIONAL_GRADES, "qid, docno, rel")
    (case / "p.parquet").unlink()
    spec_data["runs"].pop("p")
    (case / "spec.yaml").write_text(yaml.safe_dump(spec_data, sort_keys=False))
    assert main(["run", "--quiet", "--engine", "spark", spec]) == DATA_ERROR
    err = capsys.readouterr().err
    assert re.search(r"q\.parquet: .*rel must be an integer, found 2\.5", err), err


def test_deep_rankings_write_the_duckdb_engine_s_bytes(spark, tmp_path):
    """Rankings deep enough for DuckDB to split a query between threads: the per-query and
    aggregate tables Spark's shards compute are written byte for byte as DuckDB's are, at one
    thread and at four."""
    deep_collection(tmp_path, queries=12, depth=1000, runs=2)
    runs = {f"run{r}": {"path": f"run{r}.txt", "collection": "c"} for r in range(2)}
    outputs = [
        {"path": "out/per_query.parquet", "level": "query"},
        {"path": "out/aggregate.csv", "level": "aggregate"},
    ]
    spec = {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": runs,
        "metrics": ["AP", "nDCG", "Bpref", "infAP", "RBP(p=0.8)", "ERR@20", "nDCG@10"],
        "outputs": outputs,
    }
    path = _written(tmp_path / "spec.yaml", spec)
    written = {}
    for engine, threads in (("spark", None), ("duckdb", 1), ("duckdb", 4)):
        evaluate(path, engine=engine, threads=threads)
        for output in outputs:
            written.setdefault(output["path"], set()).add((tmp_path / output["path"]).read_bytes())
    assert {path: len(contents) for path, contents in written.items()} == {
        "out/per_query.parquet": 1,
        "out/aggregate.csv": 1,
    }
