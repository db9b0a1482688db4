"""Runs a plan on DuckDB: the only module that talks to the database."""

from __future__ import annotations

import duckdb

from .compile import Plan
from .errors import InputDataError
from .readers import TABLES, Load

__all__ = ["execute"]


def execute(plan: Plan, con: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
    """Load the files, compute every measure, and return the connection holding the tables
    `per_query` and `aggregate`."""
    con = con or duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for statement in TABLES:
        con.execute(statement.sql, statement.params)
    for load in plan.loads:
        _load(con, load)
    for statement in plan.statements:
        con.execute(statement.sql, statement.params)
    return con


def _load(con: duckdb.DuckDBPyConnection, load: Load) -> None:
    """Fast pass; the general pass only if a line was flagged; the problem report if still bad."""
    try:
        con.execute(load.fast.sql, load.fast.params)
        if _flagged(con, load):
            table, column = load.table
            con.execute(f"DELETE FROM {table} WHERE {column} = ?", load.flagged.params)
            con.execute(load.general.sql, load.general.params)
            if _flagged(con, load):
                bad = con.execute(load.problems.sql, load.problems.params).fetchall()
                lines = (f"{load.path}:{no}: {problem}: {text!r}" for no, text, problem in bad)
                raise InputDataError("\n".join(lines))
    except duckdb.IOException as exc:
        raise InputDataError(f"{load.path}: cannot read: {_first_line(exc)}") from None
    except duckdb.InvalidInputException as exc:
        raise InputDataError(f"{load.path}: not a readable text file: {_first_line(exc)}") from None


def _flagged(con: duckdb.DuckDBPyConnection, load: Load) -> int:
    return con.execute(load.flagged.sql, load.flagged.params).fetchone()[0]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]
