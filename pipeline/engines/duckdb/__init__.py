"""The DuckDB engine (the default): the plan's statements in order on one embedded, in-memory
DuckDB connection (`executor`), with the metrics computed in Python over arrays it hands out
(`python_values`). Only the engines, the history and the DuckDB writer import duckdb.

Imports: duckdb, the plan and the foundation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["ENGINE", "DuckDBEngine"]


class DuckDBEngine:
    """The `Engine` that evaluates on this machine, every run in batches that memory holds."""

    reuses_results = True
    counts_judgment_cells = False  # `qrels` holds the labels: they are counted from it

    def connect(self, plan: SqlPlan) -> duckdb.DuckDBPyConnection:
        from pipeline.engines.duckdb.executor import connect  # duckdb only to evaluate

        return connect(plan)

    def describe(self, loaded: LoadedSpec) -> None:
        return None  # every input is one local file, digested

    def execute(
        self, plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection
    ) -> duckdb.DuckDBPyConnection:
        from pipeline.engines.duckdb.executor import execute

        for view, table in loaded.tables.items():  # tables read in Python, as Arrow
            con.register(view, table)
        return execute(plan, con)


ENGINE = DuckDBEngine()
