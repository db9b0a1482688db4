"""Every loaded table's rows as one stream, for an engine that carries the inputs of every format
together: the Spark engine's workers read each input into these rows and hand a shard all of its
queries' rows at once, which it puts back into the loaded tables (`into_tables`).

A row is `kind` ("qrels", "run" or "latency": its table's), `name` (its collection or run),
every loaded table's columns once (NULL where its table has none; a grade travels as a double,
exact for every integer one), then `ok`. A new format's table adds its columns here by being
declared in `loaded_tables`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import LOADED_TABLES, LoadedTable
from pipeline.sql import Statement

__all__ = ["IDENTITY", "STREAM_COLUMNS", "checked_rows", "into_tables", "padded", "stream_columns"]


def _values() -> dict[str, str]:
    """Every loaded table's columns, once, in declaration order, with their DuckDB types (a
    grade a double)."""
    found: dict[str, str] = {}
    for table in LOADED_TABLES.values():
        for column, kind in table.typed("real").items():
            found.setdefault(column, kind)
    return found


#: the stream's columns and their DuckDB types
STREAM_COLUMNS = {"kind": "VARCHAR", "name": "VARCHAR", **_values(), "ok": "BOOLEAN"}


def stream_columns() -> list[str]:
    """The value columns of a row, between `name` and `ok`."""
    return [c for c in STREAM_COLUMNS if c not in ("kind", "name", "ok")]


def padded(
    table: LoadedTable, given: dict[str, str] | None = None, types: dict[str, str] | None = None
) -> list[str]:
    """The value columns of a row of `table`, as SELECT expressions over a relation with its
    columns (`given`: SQL for a column instead of its name), each cast to the stream's type (as
    `types` names DuckDB's in another dialect); NULL for another table's."""
    given, types = given or {}, types or {}
    mine = table.typed()
    return [
        f"CAST({given.get(c, c) if c in mine else 'NULL'} AS {types.get(t, t)}) AS {c}"
        for c, t in STREAM_COLUMNS.items()
        if c in stream_columns()
    ]


def into_tables(loads: Sequence[Load]) -> list[Statement]:
    """Statements putting the stream's rows (a relation `rows`) back into the table of each
    input of `loads`, by its kind and name."""
    by_table: dict[str, list[str]] = {}
    for load in loads:
        by_table.setdefault(load.table, []).append(load.name)
    return [_into(LOADED_TABLES[table], names) for table, names in by_table.items()]


def _into(table: LoadedTable, names: list[str]) -> Statement:
    columns = ", ".join(table.typed())
    return Statement(
        f"INSERT INTO {table.name} SELECT name, {columns}, ok FROM rows "
        "WHERE kind = ? AND list_contains(?, name)",
        [table.kind, names],
    )


#: every column some loaded table's rows may not repeat, once (a row of another table: NULL)
IDENTITY = tuple(dict.fromkeys(c for t in LOADED_TABLES.values() for c in t.identity))


def checked_rows(identified: bool = False) -> str:
    """SQL of every loaded table's rows as (kind, name, the `IDENTITY` columns, ok): what the
    checks of lines read, whatever the format; `identified`: only the tables whose rows may not
    repeat (an `identity`), which the check of duplicates reads."""
    parts = []
    for table in LOADED_TABLES.values():
        if identified and not table.identity:
            continue
        ids = ", ".join(c if c in table.identity else f"NULL AS {c}" for c in IDENTITY)
        parts.append(
            f"SELECT '{table.kind}' AS kind, {table.key} AS name, {ids}, ok FROM {table.name}"
        )
    return "(" + "\n      UNION ALL ".join(parts) + ")"
