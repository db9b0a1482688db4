"""The Spark engine as a user meets it: the session irpipe builds from the `spark:` section,
pyspark missing (a spec error saying what to install; validate and compile need none),
`irpipe trec-eval --engine spark` printing DuckDB's bytes, spark-submit, manifests and the
history naming the engine, and outputs written by Spark (per-query Parquet at scale, deep
rankings byte for byte). Spark runs as in test_engine_spark.py (the `spark` fixture in
conftest.py; helpers in spark_support.py).
"""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest
from conftest import collection_spec, deep_collection
from spark_support import QRELS, ROOT, RUN, same_rows, spec_file

from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate


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
        [sys.executable, "-m", "pipeline.cli", "run", str(spec_file(tmp_path / "s.yaml", spec))],
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
    path = spec_file(tmp_path / "spec.yaml", spec)
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
    path = spec_file(tmp_path / "spec.yaml", spec)
    assert main([str(path), "--quiet"]) == 0
    written = (tmp_path / "out" / "a.csv").read_text()
    assert (
        evaluate(path, write=False).aggregate()
        == evaluate(path, write=False, engine="spark").aggregate()
    )
    assert written.count("\n") == 1 + 2 * 2  # a header, then two runs by two metrics


@pytest.mark.parametrize("kept", [False, True], ids=["aggregated_on_workers", "also_collected"])
def test_the_per_query_table_at_scale_is_written_by_spark(spark, tmp_path, kept):

    data = generate(seed=13, queries=30, runs=3, extremes=True)
    metrics = ["AP", "nDCG@10", "P@5", "gmAP", "NumRelRet", "RelString"]
    more = {"history": {"path": "h.duckdb"}} if kept else {}
    spec = collection_spec(tmp_path, data, metrics, settings={"missing_queries": "trec_eval_c"})
    expected = evaluate(spec_file(tmp_path / "duckdb.yaml", spec), write=False).con
    spec |= {"spark": {"per_query": "pq"}, "outputs": [{"path": "out/a.csv"}], **more}
    got = evaluate(spec_file(tmp_path / "spark.yaml", spec), engine="spark").con
    query = "SELECT * FROM aggregate"
    same_rows(got.execute(query).fetchall(), expected.execute(query).fetchall())
    (collected,) = got.execute("SELECT count(*) FROM per_query").fetchone()
    written = duckdb.sql(
        "SELECT run, collection, qid, metric, value, text FROM "
        f"read_parquet('{tmp_path}/pq/*/*/*.parquet', hive_partitioning = true) ORDER BY ALL"
    ).fetchall()
    everything = expected.execute("SELECT * FROM per_query ORDER BY ALL").fetchall()
    same_rows(written, everything)
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
    path = spec_file(tmp_path / "spec.yaml", spec)
    written = {}
    for engine, threads in (("spark", None), ("duckdb", 1), ("duckdb", 4)):
        evaluate(path, engine=engine, threads=threads)
        for output in outputs:
            written.setdefault(output["path"], set()).add((tmp_path / output["path"]).read_bytes())
    assert {path: len(contents) for path, contents in written.items()} == {
        "out/per_query.parquet": 1,
        "out/aggregate.csv": 1,
    }
