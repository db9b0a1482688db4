"""The rows of a table irpipe wrote, read back (`irpipe verify` compares two such files).

A Parquet file is read as it is; a DuckDB database (`.duckdb`, `.db`) by its result table, the one
that is not its `manifest` (which holds the time it was written, so its bytes never repeat).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.sql import quote_identifier

__all__ = ["table_rows"]


def table_rows(path: Path, database: bool) -> list[tuple]:
    """Every row of the table in `path`, in the file's order."""
    import duckdb

    with duckdb.connect() as con:
        if not database:
            return con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        con.execute("ATTACH ? AS written (READ_ONLY)", [str(path)])
        (table,) = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'written' "
            "AND table_name <> 'manifest'"
        ).fetchone()
        return con.execute(f"SELECT * FROM written.{quote_identifier(table)}").fetchall()
