"""The per-query table at scale: written by Spark as partitioned Parquet, aggregated on workers.

With `spark: {per_query: DIR}` the shards' per-query rows are written by Spark to DIR as Parquet,
partitioned by collection and run (`collection=c/run=r/part-*.parquet`), once the checks have
passed. Unless the spec needs them on the driver (a query-level output, comparisons, a history,
expected values or gates, a bootstrap of orderings), they never reach it: the aggregates are
computed on the workers, each run's rows together, by the DuckDB engine's aggregate statement
(means summed in query order), and only those rows are collected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pipeline.engines.spark.inputs import uri_of
from pipeline.engines.spark.results import finish, prepare
from pipeline.engines.spark.shard import (
    AGGREGATE_SCHEMA,
    PER_QUERY_SCHEMA,
    RESULT_SCHEMA,
    aggregate_shard,
)
from pipeline.spec.levels import level_of

if TYPE_CHECKING:
    import duckdb
    from pyspark.sql import DataFrame

    from pipeline.engines.spark.problems import Reporter
    from pipeline.inputs.format import Load
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["needs_per_query", "per_query_at_scale"]


def needs_per_query(loaded: LoadedSpec) -> bool:
    """Whether something on the driver reads the per-query table (a bootstrap of orderings
    draws queries)."""
    spec = loaded.spec
    levels = {o.level for o in spec.outputs if level_of(o.level).reads_per_query}
    drawn = any(entry.bootstrap for entry in (*spec.agreement, *spec.correlation))
    powers = spec.suites or spec.discrimination  # a suite's micro mean reads every query
    return bool(levels or spec.compare or spec.history or spec.expect or spec.gates or drawn
                or powers)  # fmt: skip


def per_query_at_scale(
    con: duckdb.DuckDBPyConnection,
    plan: SqlPlan,
    loaded: LoadedSpec,
    shards: DataFrame,
    reporter: Callable[[Load], Reporter],
) -> None:
    """Check, write the per-query table with Spark, and fill `con` as `results.collect` does
    (with `per_query` empty unless the spec needs it on the driver)."""
    from pyspark import StorageLevel

    shards = shards.persist(StorageLevel.MEMORY_AND_DISK)  # read four times, computed once
    try:
        keep = needs_per_query(loaded)
        prepare(con, plan, _small(shards, keep), reporter)
        rows = shards.filter("tbl = 'per_query'").select(*_columns(PER_QUERY_SCHEMA))
        target = uri_of(loaded.spec.spark.per_query)
        rows.write.mode("overwrite").partitionBy("collection", "run").parquet(target)
        finish(con, plan, None if keep else _aggregate(con, plan, loaded, rows))
    finally:
        shards.unpersist()


#: What the driver reads row by row; every other row is a count, summed on the workers first
#: (a shard's counts per run and file are many at scale: shards × runs). A run's unmatched and
#: unjudged rows name a query and documents in `text`: they are rows, never summed.
_ROWS = ("facts", "missing", "curve_per_query", "unanswered", "unmatched", "unjudged")


def _small(shards: DataFrame, keep: bool):
    """The shards' results the driver needs, as one Arrow table: rows, and counts summed."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    wanted = [*_ROWS, "per_query"] if keep else list(_ROWS)
    rows = shards.filter(F.col("tbl").isin(wanted)).toArrow()
    counts = (
        shards.filter(~F.col("tbl").isin([*_ROWS, "per_query"]))
        .groupBy("tbl", "run", "collection", "metric")
        .agg(F.sum("value").alias("value"), F.sum(F.col("text").cast("bigint")).alias("text"))
        .selectExpr(*(_COUNTS.get(c, c) for c in _columns(RESULT_SCHEMA)))
    )
    return pa.concat_tables([rows, counts.toArrow().cast(rows.schema)])


_COUNTS = {"qid": "CAST(NULL AS STRING) AS qid", "text": "CAST(text AS STRING) AS text"}


def _aggregate(con, plan: SqlPlan, loaded: LoadedSpec, rows: DataFrame):
    """The aggregate rows, computed on the workers from each run's per-query rows."""
    names = [*plan.runs.names, *plan.qrels.names]
    positive = [tuple(row) for row in con.execute("SELECT * FROM positive_judgments").fetchall()]
    missing_rankings = plan.runs.missing_rankings
    exact, statistics = plan.results.exact_mean, plan.results.statistics

    def aggregate(batches):
        return aggregate_shard(names, positive, missing_rankings, batches, exact, statistics)

    runs = max(1, len(loaded.spec.runs))
    by_run = rows.repartition(
        min(runs, rows.sparkSession.sparkContext.defaultParallelism * 4), "run"
    )
    return by_run.mapInArrow(aggregate, AGGREGATE_SCHEMA).toArrow()


def _columns(schema: str) -> list[str]:
    return [field.split()[0] for field in schema.split(", ")]
