"""Runs a plan on DuckDB: the only module that talks to the database."""

from __future__ import annotations

import duckdb

from .compile import Plan
from .errors import InputDataError
from .readers import TABLES, Check

__all__ = ["execute"]


def execute(plan: Plan, con: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
    """Load the files, compute every measure, and return the connection holding the tables
    `per_query` and `aggregate`."""
    con = con or duckdb.connect()
    for statement in TABLES:
        con.execute(statement.sql, statement.params)
    for load, check in plan.loads:
        _check(con, check)
        con.execute(load.sql, load.params)
    for statement in plan.statements:
        con.execute(statement.sql, statement.params)
    return con


def _check(con: duckdb.DuckDBPyConnection, check: Check) -> None:
    try:
        bad = con.execute(check.sql, check.params).fetchall()
    except duckdb.IOException as exc:
        raise InputDataError(f"{check.path}: cannot read: {_first_line(exc)}") from None
    except duckdb.InvalidInputException as exc:
        raise InputDataError(f"{check.path}: not a readable text file: {_first_line(exc)}") from None
    if bad:
        lines = "\n".join(f"{check.path}:{no}: {problem}: {text!r}" for no, text, problem in bad)
        raise InputDataError(lines)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]
