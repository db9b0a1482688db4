"""Opening the history: attached to the evaluation's own DuckDB connection, so that results go
from the in-memory tables to the file in SQL, never through Python.

DuckDB lets one process at a time open a database file for writing (and none while it does,
for reading). Evaluations hold the file only while they read the cache or append: a job that
finds it held waits, retrying with growing pauses, up to `lock_timeout` seconds, then stops
with the holder's process id (DuckDB names it). Every write is one transaction: a crash or a
kill at any moment leaves the file with the whole evaluation or without it. A file of an older
schema is read as it is, and migrated (in a transaction of its own) before it is written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipeline.errors import HistoryError
from pipeline.history.schema import HISTORY_TABLES, MIGRATIONS, SCHEMA_VERSION, VIEWS

__all__ = ["ALIAS", "attached", "insert_rows", "tables_of"]

ALIAS = "irpipe_history"  # the history's name inside the evaluation's connection
_FIRST_PAUSE, _LONGEST_PAUSE = 0.05, 1.0


@contextmanager
def attached(
    con: duckdb.DuckDBPyConnection, path: Path, timeout: float, write: bool
) -> Iterator[bool]:
    """The history attached as `irpipe_history` for the block; yields whether it has a schema
    (a new file, written to, gets one). Read-only, a missing file yields False and attaches
    nothing."""
    if not write and not path.exists():
        yield False
        return
    _attach(con, path, timeout, write)
    try:
        yield _checked(con, path, write)
    finally:
        con.execute(f"DETACH {ALIAS}")


def _attach(con: duckdb.DuckDBPyConnection, path: Path, timeout: float, write: bool) -> None:
    # ATTACH takes no parameters: the path is a quoted SQL string literal. Absolute, so that
    # DuckDB takes no name for one of its own (":memory:" and "" are in-memory databases, "md:"
    # MotherDuck), and of TYPE duckdb, so that it never loads (or downloads) an extension to read
    # a file of another format, a SQLite database's.
    mode = "TYPE duckdb" if write else "TYPE duckdb, READ_ONLY"
    statement = f"ATTACH {_literal(str(path.absolute()))} AS {ALIAS} ({mode})"
    deadline, pause = time.monotonic() + timeout, _FIRST_PAUSE
    while (holder := _attached(con, statement, path)) is not None:
        if time.monotonic() + pause > deadline:
            raise HistoryError(_locked(path, holder, timeout))
        time.sleep(pause)
        pause = min(pause * 2, _LONGEST_PAUSE)


def _attached(con: duckdb.DuckDBPyConnection, statement: str, path: Path) -> str | None:
    """Run the ATTACH `statement`: None once attached, else the process holding the file (to
    wait for); a HistoryError when the file is not a DuckDB database DuckDB can read."""
    try:
        con.execute(statement)
        return None
    except duckdb.IOException as exc:
        holder = _lock_holder(str(exc))
        if holder is None:
            raise HistoryError(_unreadable(path, str(exc))) from None
        return holder
    except duckdb.InterruptException:
        raise  # a signal stopped it, not the file
    except duckdb.Error as exc:  # a corrupt file: DuckDB raises its base class
        raise HistoryError(_unreadable(path, str(exc))) from None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _lock_holder(message: str) -> str | None:
    """`PID 1234` (and its program) from DuckDB's lock conflict, or None for another error."""
    if "Could not set lock" not in message:
        return None
    found = re.search(r"held in (.*?) \(PID (\d+)\)", message)
    return f"process {found.group(2)} ({found.group(1)})" if found else "another process"


def _locked(path: Path, holder: str, timeout: float) -> str:
    return (
        f"{path}: the history is in use by {holder}, still after {timeout:g} s; "
        "wait for it to finish, or raise history.lock_timeout"
    )


def _unreadable(path: Path, message: str) -> str:
    if "not a valid DuckDB database" in message:
        return f"{path}: not a DuckDB database, so not an irpipe history; give another path"
    first = message.strip().splitlines()[0]
    return f"{path}: cannot open the history: {first}"


def _checked(con: duckdb.DuckDBPyConnection, path: Path, write: bool) -> bool:
    """Whether the attached file is a history this irpipe reads; a new (empty) file becomes one
    when writing, and one of an older version is migrated then. Anything else is refused."""
    tables = tables_of(con, ALIAS)
    if not tables:
        if write:
            _create(con)
        return write
    if "irpipe_history" not in tables:
        raise HistoryError(
            f"{path}: a DuckDB database but not an irpipe history (its tables: "
            f"{', '.join(sorted(tables)[:5])}); give another path"
        )
    version = _version(con, path)
    if write and version < SCHEMA_VERSION:
        _migrate(con, version)
    return True


def _version(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """The file's schema version: this irpipe's, or an older one it migrates."""
    row = con.execute(
        f"SELECT value FROM {ALIAS}.irpipe_history WHERE key = 'schema_version'"
    ).fetchone()
    version = int(row[0]) if row and row[0].isdigit() else None
    if version == SCHEMA_VERSION or _migrated(version):
        return version
    made_by = con.execute(
        f"SELECT value FROM {ALIAS}.irpipe_history WHERE key = 'created_by'"
    ).fetchone()
    who = f" (made by irpipe {made_by[0]})" if made_by else ""
    if version is not None and version > SCHEMA_VERSION:
        fix = "upgrade irpipe to read it"
    else:
        fix = "it cannot be migrated; start a new history (keep this file to read it yourself)"
    raise HistoryError(
        f"{path}: history schema version {version if version is not None else 'unknown'}{who}, "
        f"this irpipe reads version {SCHEMA_VERSION}; {fix}"
    )


def _migrated(version: int | None) -> bool:
    """Whether every version from `version` to this irpipe's has a migration."""
    steps = range(version, SCHEMA_VERSION) if version is not None else ()
    return version is not None and version < SCHEMA_VERSION and all(v in MIGRATIONS for v in steps)


def _migrate(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """An older file brought to this irpipe's schema, in one transaction: the tables each
    version since added (empty: the evaluations it holds had none of them), then its version."""
    con.execute("BEGIN TRANSACTION")
    try:
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step]:
                con.execute(statement.format(db=ALIAS))
        con.execute(
            f"UPDATE {ALIAS}.irpipe_history SET value = ? WHERE key = 'schema_version'",
            [str(SCHEMA_VERSION)],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _create(con: duckdb.DuckDBPyConnection) -> None:
    from pipeline._version import __version__

    con.execute("BEGIN TRANSACTION")
    for statement in (*HISTORY_TABLES, *VIEWS):
        con.execute(statement.format(db=ALIAS))
    con.execute(
        f"INSERT INTO {ALIAS}.irpipe_history VALUES ('schema_version', ?), ('created_by', ?)",
        [str(SCHEMA_VERSION), __version__],
    )
    con.execute("COMMIT")


def tables_of(con: duckdb.DuckDBPyConnection, database: str) -> set[str]:
    """The tables of an attached database (`memory`: the evaluation's own). duckdb_tables() and
    not information_schema, which takes 20 ms where this takes 1."""
    found = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [database]
    ).fetchall()
    return {name for (name,) in found}


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """Every row in one INSERT, its values bound (executemany runs one statement per row)."""
    if not rows:
        return
    row = "(" + ", ".join("?" * len(rows[0])) + ")"
    params = [value for values in rows for value in values]
    con.execute(f"INSERT INTO {table} VALUES {', '.join([row] * len(rows))}", params)
