"""A session: the DuckDB engine for a loop over runs judged by the same qrels (the Python door's
`Evaluator`: validation during training, a parameter sweep).

One connection holds a plan's qrels' part, made once (`executor.prepare`: the qrels loaded and
checked, their facts). Each evaluation then runs a plan's runs' part (`executor.execute_runs`) on
a cursor of that connection whose schema is its own, ahead of `main` on its search path: its
tables (`run_rows`, `wide`, `per_query`, ...) shadow the prepared ones and never meet another
evaluation's, while the qrels' tables are read from `main`. The cursor is what the evaluation's
results read, so results of earlier calls stay as they were; a schema is dropped once nothing
reads it (at the next evaluation, or when the session closes).
"""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING

from pipeline.digest import digest_table
from pipeline.engines.duckdb import loop
from pipeline.engines.duckdb.executor import connect, execute_runs, prepare
from pipeline.inputs.table_rows import memory_view

if TYPE_CHECKING:
    import duckdb

    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.spec import LoadedSpec

__all__ = ["Session"]


class Session:
    """An `Engine` (`pipeline.engines.Engine`) whose every evaluation shares one qrels' part."""

    reuses_results = True
    counts_judgment_cells = False  # `qrels` holds the labels: they are counted from it

    def __init__(self) -> None:
        self._con: duckdb.DuckDBPyConnection | None = None
        self._prepared: tuple | None = None  # the qrels' part made in `main`
        self._numbers = itertools.count(1)
        self._unread: list[str] = []  # schemas whose cursor is gone, to drop

    def connect(self, plan: SqlPlan) -> duckdb.DuckDBPyConnection:
        """A cursor on the session's connection, in a new schema of its own (the qrels' part is
        made on the first call; a plan with other qrels or metrics is refused)."""
        if self._con is None:
            self._con = connect(plan)
        self._drop_unread()
        schema = f"evaluation_{next(self._numbers)}"
        cursor = self._con.cursor()
        cursor.execute(f"CREATE SCHEMA {schema}")
        cursor.execute(f"SET search_path = '{schema},main'")
        weakref.finalize(cursor, self._unread.append, schema)
        return cursor

    def describe(self, loaded: LoadedSpec) -> None:
        return None  # as the DuckDB engine: every input is a local file or a table, digested

    def execute(
        self, plan: SqlPlan, loaded: LoadedSpec, con: duckdb.DuckDBPyConnection
    ) -> duckdb.DuckDBPyConnection:
        """The plan's runs' part on `con` (a cursor from `connect`), after its qrels' part on
        the session's connection the first time."""
        self._prepare(plan, loaded)
        if loop.evaluate(plan, loaded, con):  # one run's table: ranked in Arrow, few statements
            return con
        for view, table in loaded.tables.items():  # registered per cursor, as DuckDB keeps them
            con.register(view, table)
        return execute_runs(plan, con)

    def close(self) -> None:
        """Close the connection, and every cursor with it."""
        if self._con is not None:
            self._con.close()
            self._con, self._prepared = None, None

    def _prepare(self, plan: SqlPlan, loaded: LoadedSpec) -> None:
        part = _qrels_part(plan, loaded)
        if self._prepared is None:
            for view, table in loaded.tables.items():
                self._con.register(view, table)
            prepare(plan, self._con)
            self._prepared = part
        elif part != self._prepared:
            raise ValueError("a session evaluates runs against the qrels it was prepared for")

    def _drop_unread(self) -> None:
        while self._unread:
            self._con.execute(f"DROP SCHEMA IF EXISTS {self._unread.pop()} CASCADE")


def _qrels_part(plan: SqlPlan, loaded: LoadedSpec) -> tuple:
    """What the qrels' part of a plan is made of: its qrels (and the digests of the tables that
    hold them) and the statements that do not depend on the runs."""
    tables = [loaded.tables.get(memory_view(load.path, "qrels")) for load in plan.qrels.loads]
    tables = tuple(None if table is None else digest_table(table) for table in tables)
    qrels = plan.qrels
    return qrels.loads, tables, [*qrels.names, *qrels.statements]
