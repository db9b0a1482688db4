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

__all__ = [
    "COLUMNS",
    "TABLES",
    "append_judgments",
    "as_records",
    "judgment_rows",
    "statistic_changes",
]

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


# The statistics of both evaluations side by side, by what names one (a pair of judgment sets,
# or of metrics, a collection, a metric, the statistic), kept where they differ; a row's first
# place in its table orders them (an entry listed twice is read once).
_STATISTICS = """
SELECT '{table}' AS tbl, reference, other, {collection} AS collection, {metric} AS metric,
    statistic, arg_min(value, ordinal) FILTER (WHERE evaluation_id = $a) AS a,
    arg_min(value, ordinal) FILTER (WHERE evaluation_id = $b) AS b,
    count(*) FILTER (WHERE evaluation_id = $a) > 0 AS in_a,
    count(*) FILTER (WHERE evaluation_id = $b) > 0 AS in_b, min(ordinal) AS ordinal
FROM {history}.{table} WHERE evaluation_id IN ($a, $b)
GROUP BY ALL"""


def statistic_changes(con: duckdb.DuckDBPyConnection, a: int, b: int) -> list[dict[str, Any]]:
    """The statistics of the judgment sets' comparisons that differ from evaluation `a` to `b`
    (or that one of them lacks): table (agreement or correlation), reference, other,
    collection, metric, statistic, a, b, difference (b - a); none from a history without the
    tables."""
    if "agreement" not in tables_of(con, ALIAS):
        return []
    parts = [
        _STATISTICS.format(table="agreement", collection="collection", metric="NULL", history=H),
        _STATISTICS.format(table="correlation", collection="collection", metric="metric",
                           history=H),
    ]  # fmt: skip
    found = con.execute(
        f'SELECT tbl AS "table", reference, other, collection, metric, statistic, a, b, '
        f"b - a AS difference FROM ({' UNION ALL '.join(parts)}) "
        "WHERE a IS DISTINCT FROM b OR in_a <> in_b ORDER BY tbl, ordinal",
        {"a": a, "b": b},
    )
    names = [column[0] for column in found.description]
    return [dict(zip(names, row, strict=True)) for row in found.fetchall()]
