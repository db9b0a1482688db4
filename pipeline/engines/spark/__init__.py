"""The Spark engine: the same plan, sharded by query id, with the DuckDB engine's numbers.

The driver reads the inputs where they live (`inputs`), Spark partitions every qrels and run row
(and every time of a run's latency input) by query id, and each partition is evaluated on a
worker by the plan's own SQL in an in-memory DuckDB (`shard`). The per-query rows come back to
the driver, where the aggregates are computed from them by the same SQL as on one machine
(`results`): so every table, and every digit, is the DuckDB engine's. The agreement entries' confusion cells are counted by Spark SQL, by the
statement the DuckDB engine runs (`cells`). pyspark is imported only here, and only when a spec chooses the engine.

Imports: pyspark and pyarrow, the DuckDB engine's SQL and the plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pipeline.engines.spark.session import quiet, require_pyspark, session, spark_version
from pipeline.plan.judgment_cells import judged_pairs

if TYPE_CHECKING:
    import duckdb

    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["ENGINE", "SparkEngine", "describe_input", "execute", "require_pyspark", "spark_version"]

#: Bytes of input text per shard when the spec does not say (`spark.partitions`): Spark's own
#: default split (128 MB) holds about 3.5M run lines, which DuckDB ranks in a couple of seconds.
SHARD_BYTES = 128 << 20


def execute(
    plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection
) -> duckdb.DuckDBPyConnection:
    """Evaluate `plan` on Spark; `con` (on the driver) receives the DuckDB engine's result tables."""
    require_pyspark()
    with quiet():
        spark = session(loaded.spec.spark, loaded.spec.settings.threads)
        with _arrow_batches(spark):
            _execute(spark, plan, loaded, con)
    return con


#: Spark's Arrow batch size, as a task hands rows to Python: its default (10,000 rows) costs a
#: DuckDB query per batch; 200,000 rows (about 10 MB of run rows) halve a run's time here.
ARROW_ROWS = 200_000
_ARROW_KEY = "spark.sql.execution.arrow.maxRecordsPerBatch"


@contextmanager
def _arrow_batches(spark) -> Iterator[None]:
    """Larger Arrow batches while irpipe runs, unless the session's configuration chose a size;
    the session's setting is restored after (a notebook's session goes on)."""
    before = spark.conf.get(_ARROW_KEY, None)
    if before not in (None, "10000"):
        yield
        return
    spark.conf.set(_ARROW_KEY, str(ARROW_ROWS))
    try:
        yield
    finally:
        spark.conf.unset(_ARROW_KEY) if before is None else spark.conf.set(_ARROW_KEY, before)


def _execute(spark, plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection) -> None:
    from pipeline.engines.spark.inputs import files_of, input_rows, is_parquet
    from pipeline.engines.spark.results import collect
    from pipeline.engines.spark.shard import RESULT_SCHEMA, evaluate_shard

    files = {load: files_of(spark, load.path) for load in plan.loads}
    parquet = {load for load, found in files.items() if is_parquet(found, load.path)}
    rows = input_rows(spark, plan.loads, files, parquet)
    threads = int(spark.conf.get("spark.task.cpus", "1") or 1)

    def shard(batches):
        return evaluate_shard(plan, batches, threads)

    shards = rows.repartition(_partitions(spark, loaded, files), "qid")
    results = shards.mapInArrow(shard, RESULT_SCHEMA)

    def reporter(load):
        return _reporter(spark, load, load in parquet)

    if loaded.spec.spark is not None and loaded.spec.spark.per_query is not None:
        from pipeline.engines.spark.scale import per_query_at_scale

        per_query_at_scale(con, plan, loaded, results, reporter)
    else:
        collect(con, plan, results.toArrow(), reporter)
    pairs = judged_pairs(loaded.spec.agreement)
    if pairs:  # once the inputs are checked: the judgment sets' labels compared
        from pipeline.engines.spark.cells import count_cells

        # `grades` where the spec has the setting (soft labels: decimal grades), else integers
        grades = getattr(loaded.spec.settings, "grades", "integer")
        count_cells(spark, plan, (files, parquet), pairs, con, grades)


def _partitions(spark, loaded: LoadedSpec, files: dict) -> int:
    section = loaded.spec.spark
    if section is not None and section.partitions:
        return section.partitions
    size = sum(length for found in files.values() for _, length, _ in found)
    return max(spark.sparkContext.defaultParallelism, -(-size // SHARD_BYTES))


def _reporter(spark, load, parquet: bool):
    from pipeline.engines.spark.problems import Reporter

    return Reporter(spark, load, parquet)


def describe_input(loaded: LoadedSpec):
    """`(size, digest)` of an input that is not one local file (a directory, a URI), from its
    files' listing: paths, sizes and modification times (reading a data lake's runs on the
    driver to digest them would cost what the evaluation does)."""
    from pipeline.digest import digest_text
    from pipeline.engines.spark.inputs import files_of

    spark = session(loaded.spec.spark, loaded.spec.settings.threads)

    def describe(path) -> tuple[int, str]:
        found = files_of(spark, path)
        return sum(length for _, length, _ in found), "listing-" + digest_text(found)

    return describe


class SparkEngine:
    """The `Engine` that shards the plan by query id on a Spark cluster (or Spark in local mode).
    It evaluates every run: its results are never taken from the history. The qrels' labels stay
    with Spark: it counts the agreement entries' confusion cells itself."""

    reuses_results = False
    counts_judgment_cells = True

    def connect(self, plan: SqlPlan) -> duckdb.DuckDBPyConnection:
        from pipeline.engines.duckdb.executor import connect

        return connect(plan)

    def describe(self, loaded: LoadedSpec):
        return describe_input(loaded)

    def execute(
        self, plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection
    ) -> duckdb.DuckDBPyConnection:
        return execute(plan, loaded, con)


ENGINE = SparkEngine()
