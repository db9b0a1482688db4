"""The confusion cells of the spec's agreement entries, counted by Spark SQL where the qrels live.

The driver's DuckDB holds only the qrels' (collection, qid): their labels stay with Spark. The
judgment sets the entries name are read again (the same readers, only their files), kept while
the plan's statement of cells (`pipeline.plan.judgment_cells`, the SQL the DuckDB engine runs)
counts them, and only the cells, a few rows per entry, reach the driver: the table
`judgment_cells` that the judgments' statistics read on either engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.engines.spark.inputs import input_rows
from pipeline.plan.judgment_cells import CELLS_TABLE, cells_statement

if TYPE_CHECKING:
    import duckdb
    from pyspark.sql import SparkSession

    from pipeline.plan.sql_plan import SqlPlan

__all__ = ["count_cells"]

#: the judgment sets' rows, as the statement reads them: a temporary view of the session
VIEW = "irpipe_judgment_sets"
#: a grade's type on one machine, by the qrels' `grades` setting: the cells take it, whatever
#: type Spark read the grades as (a double holds both)
GRADE_TYPES = {"integer": "INTEGER", "real": "DOUBLE"}


def count_cells(
    spark: SparkSession,
    plan: SqlPlan,
    inputs: tuple[dict, set],
    pairs: tuple[tuple[str, str], ...],
    con: duckdb.DuckDBPyConnection,
    grades: str = "integer",
) -> None:
    """Leave the cells of each (reference, other) of `pairs` in `con`'s `judgment_cells`, each
    grade of the type the `grades` setting gives it on one machine; `inputs`: each load's
    files and the loads read as Parquet (as the evaluation found them). The inputs were
    checked by the evaluation: their rows are all good."""
    files, parquet = inputs
    named = {name for pair in pairs for name in pair}
    loads = [load for load in plan.qrels.loads if load.name in named]
    rows = input_rows(spark, loads, files, parquet).where("ok")
    sets = rows.selectExpr("name AS collection", "qid", "docno", "rel").persist()
    sets.createOrReplaceTempView(VIEW)
    try:
        statement = cells_statement(pairs, VIEW)
        cells = spark.sql(statement.sql, args=statement.params).toArrow()
    finally:
        spark.catalog.dropTempView(VIEW)
        sets.unpersist()
    typed = GRADE_TYPES[grades]
    con.register("spark_cells", cells)
    try:
        con.execute(
            f"CREATE TABLE {CELLS_TABLE} AS SELECT reference, other, "
            f"CAST(reference_grade AS {typed}) AS reference_grade, "
            f"CAST(other_grade AS {typed}) AS other_grade, pairs, queries, total FROM spark_cells"
        )
    finally:
        con.unregister("spark_cells")
