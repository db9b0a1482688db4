"""The order of an SQL plan's statements once a batch of runs is loaded, written once for both
engines: the DuckDB engine runs it for each batch of runs (`executor`), the Spark engine for each
shard of queries, every run at once (`pipeline.engines.spark.shard`).

For a loaded batch (`rank`): the plan's per-batch statements (an engine may give its own form of
them: a shard adds trec_eval -c's empty rankings for its own queries), then the ranking into
`wide` (its dense form if the batch is mostly judged; the full plan a large batch's slices of
queries in turn), one collection at a time when a run is evaluated under several, then the
batch's rows are dropped. Once every batch is ranked (`compute`): the metrics computed in Python,
then the result tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pipeline import interrupts
from pipeline.engines.duckdb.python_values import python_values
from pipeline.inputs.format import Load
from pipeline.plan.slices import (
    ONE_COLLECTION,
    PUT_BACK,
    PUT_BACK_RUNS,
    SET_ASIDE,
    SET_ASIDE_RUNS,
    slice_rows,
)
from pipeline.sql import Statement

if TYPE_CHECKING:
    import duckdb

    from pipeline.engines.duckdb.arrow_rows import Rows
    from pipeline.plan.sql_plan import Ranking, ResultsPart, RunsPart

__all__ = ["compute", "fetch_all", "one", "rank", "run_all"]


def rank(
    con: duckdb.DuckDBPyConnection,
    runs: RunsPart,
    batch: list[Load],
    per_batch: Sequence[Statement] | None = None,
    rows: Rows | None = None,
) -> None:
    """Rank the loaded `batch` into `wide`, after the plan's per-batch statements (or
    `per_batch`), under one collection at a time if the plan says so, then drop its rows
    (`ranking.after`; `rows.drop` where `run_rows` is a view of Arrow `rows`)."""
    run_all(con, runs.per_batch if per_batch is None else per_batch)
    ranking = runs.ranking
    collections = ranking.collections(batch)
    if not collections:
        _rank_rows(con, ranking, batch)
    else:
        run_all(con, [Statement(SET_ASIDE_RUNS)])
        for collection in collections:
            run_all(con, [Statement(ONE_COLLECTION, [collection])])
            _rank_rows(con, ranking, batch)
        run_all(con, [Statement(PUT_BACK_RUNS)])
    if rows is None:
        run_all(con, ranking.after)
    else:
        rows.drop()


def _rank_rows(con: duckdb.DuckDBPyConnection, ranking: Ranking, batch: list[Load]) -> None:
    """The batch's rows ranked into `wide`: the dense plan if the test says so, the full plan
    in slices of queries if the batch is large."""
    test = ranking.test(batch)
    chosen, full = ranking.chosen(test is not None and one(con, test)[0])
    bounds = one(con, ranking.slices(batch))[0] if full else []
    if len(bounds) < 2:
        run_all(con, [chosen])
    else:
        run_all(con, [Statement(SET_ASIDE)])
        for first, after in zip(bounds, [*bounds[1:], None], strict=True):
            last = after is None
            run_all(con, [Statement(slice_rows(last), [first] if last else [first, after]), chosen])
        run_all(con, [Statement(PUT_BACK)])


def compute(
    con: duckdb.DuckDBPyConnection,
    results: ResultsPart,
    report: Callable[[str], None] = lambda kind: None,
) -> None:
    """Once every batch is ranked: the metrics computed in Python, then the result tables;
    `report` is told which ("Python metrics", "metrics") as each begins."""
    if results.python:
        report("Python metrics")
        python_values(con, results.python)
    report("metrics")
    run_all(con, results.finish)


def run_all(con: duckdb.DuckDBPyConnection, statements: Sequence[Statement]) -> None:
    """Run statements in order, each one stopped by a signal like the executor's own."""
    for statement in statements:
        interrupts.checkpoint()
        con.execute(statement.sql, statement.params)


def one(con: duckdb.DuckDBPyConnection, statement: Statement) -> tuple:
    """The first row of a statement's result."""
    interrupts.checkpoint()
    return con.execute(statement.sql, statement.params).fetchone()


def fetch_all(con: duckdb.DuckDBPyConnection, statement: Statement) -> list[tuple]:
    """Every row of a statement's result."""
    interrupts.checkpoint()
    return con.execute(statement.sql, statement.params).fetchall()
