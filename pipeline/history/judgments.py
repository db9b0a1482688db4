"""The judgment sets' comparisons in the history: an evaluation's tables `agreement`,
`confusion` and `correlation` appended with it (in its transaction, in SQL), and read back for
`irpipe show` and the dashboard. Each row keeps its place in the evaluation's table
(`ordinal`): the order in which the statistics were listed is the order they are read in.

A history of schema version 1, read before any evaluation migrated it, has none of these tables:
its evaluations compared no judgment sets, and are read as having no rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.history.store import ALIAS, tables_of

if TYPE_CHECKING:
    import duckdb

__all__ = ["COLUMNS", "TABLES", "append_judgments", "as_records", "judgment_rows"]

H = ALIAS

#: the tables, and their columns as the evaluation made them (the history adds evaluation_id
#: and ordinal before them)
COLUMNS = {
    "agreement": ("reference", "other", "collection", "statistic", "value"),
    "confusion": ("reference", "other", "reference_grade", "other_grade", "pairs"),
    "correlation": ("reference", "other", "collection", "metric", "statistic", "value",
                    "ci_low", "ci_high", "run"),
}  # fmt: skip
TABLES = tuple(COLUMNS)


def append_judgments(con: duckdb.DuckDBPyConnection, evaluation: int) -> None:
    """The evaluation's judgment tables (those `con` holds: a spec without agreement or
    correlation entries makes none) appended to the attached history; inside the caller's
    transaction. A row's `ordinal` is its place in the table (DuckDB's rowid: the order rows
    were inserted in)."""
    made = tables_of(con, "memory")
    for table in (t for t in TABLES if t in made):
        columns = ", ".join(COLUMNS[table])
        con.execute(
            f"INSERT INTO {H}.{table} (evaluation_id, ordinal, {columns}) "
            f"SELECT ?, rowid, {columns} FROM {table} ORDER BY rowid",
            [evaluation],
        )


def judgment_rows(con: duckdb.DuckDBPyConnection, ids: list[int]) -> dict[str, list[tuple]]:
    """Each judgment table's rows of the evaluations `ids`, as (evaluation_id, *columns), in
    evaluation and table order; none for a history that has not the tables yet."""
    held = tables_of(con, ALIAS)
    found: dict[str, list[tuple]] = {}
    for table in TABLES:
        if table not in held:
            found[table] = []
            continue
        found[table] = con.execute(
            f"SELECT evaluation_id, {', '.join(COLUMNS[table])} FROM {H}.{table} "
            "WHERE list_contains(?, evaluation_id) ORDER BY evaluation_id, ordinal",
            [ids],
        ).fetchall()
    return found


def as_records(rows: dict[str, list[tuple]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of `judgment_rows` (one evaluation's) as the documents hold them: a mapping per
    row, without the evaluation's id."""
    return {
        table: [dict(zip(COLUMNS[table], row[1:], strict=True)) for row in found]
        for table, found in rows.items()
    }
