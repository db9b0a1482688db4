"""The per-query table at scale: written by Spark as partitioned Parquet, aggregated on workers.

With `spark: {per_query: DIR}` the shards' per-query rows are written by Spark to DIR as Parquet,
partitioned by collection and run (`collection=c/run=r/part-*.parquet`), once the checks have
passed. Unless the spec needs them on the driver (a query-level output, comparisons, a history,
expected values or gates), they never reach it: the aggregates are computed on the workers, each
run's rows together, by the DuckDB engine's aggregate statement (means summed in query order),
and only those rows are collected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...tables import BOGUS_ROWS, name_tables
from .inputs import uri_of
from .results import finish, prepare
from .shard import AGGREGATE_SCHEMA, PER_QUERY_SCHEMA, aggregate_shard

if TYPE_CHECKING:
    import duckdb
    from pyspark.sql import DataFrame

    from ...compile import Plan
    from ...readers import Load
    from ...spec import LoadedSpec
    from .problems import Reporter

__all__ = ["needs_per_query", "per_query_at_scale"]


def needs_per_query(loaded: LoadedSpec) -> bool:
    """Whether something on the driver reads the per-query table."""
    spec = loaded.spec
    levels = {output.level for output in spec.outputs} - {"aggregate", "pr_curve", "pr_plot"}
    return bool(levels or spec.compare or spec.history or spec.expect or spec.gates)


def per_query_at_scale(
    con: duckdb.DuckDBPyConnection,
    plan: Plan,
    loaded: LoadedSpec,
    shards: DataFrame,
    reporter: Callable[[Load], Reporter],
) -> None:
    """Check, write the per-query table with Spark, and fill `con` as `results.collect` does
    (with `per_query` empty unless the spec needs it on the driver)."""
    from pyspark import StorageLevel

    shards = shards.persist(StorageLevel.MEMORY_AND_DISK)  # read three times, computed once
    try:
        keep = needs_per_query(loaded)
        small = shards if keep else shards.filter("tbl <> 'per_query'")
        prepare(con, plan, loaded, small.toArrow(), reporter)
        rows = shards.filter("tbl = 'per_query'").select(*_columns(PER_QUERY_SCHEMA))
        target = uri_of(loaded.spec.spark.per_query)
        rows.write.mode("overwrite").partitionBy("collection", "run").parquet(target)
        finish(con, plan, None if keep else _aggregate(con, plan, loaded, rows))
    finally:
        shards.unpersist()


def _aggregate(con, plan: Plan, loaded: LoadedSpec, rows: DataFrame):
    """The aggregate rows, computed on the workers from each run's per-query rows."""
    names = name_tables(loaded, plan.metrics)
    positive = [tuple(row) for row in con.execute("SELECT * FROM positive_judgments").fetchall()]
    bogus = plan.per_batch == BOGUS_ROWS

    def aggregate(batches):
        return aggregate_shard(names, positive, bogus, batches)

    runs = max(1, len(loaded.spec.runs))
    by_run = rows.repartition(
        min(runs, rows.sparkSession.sparkContext.defaultParallelism * 4), "run"
    )
    return by_run.mapInArrow(aggregate, AGGREGATE_SCHEMA).toArrow()


def _columns(schema: str) -> list[str]:
    return [field.split()[0] for field in schema.split(", ")]
