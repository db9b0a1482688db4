"""Runs a plan on DuckDB: the only module that talks to the database."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from . import interrupts
from . import validation as check
from .compile import Plan
from .errors import DuplicateError, InputDataError
from .readers import TABLES, Load, Statement

__all__ = ["execute"]


def execute(plan: Plan, con: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
    """Load and check the files, compute every measure, and return the connection holding the
    tables `per_query` and `aggregate`."""
    # A memory limit is connection configuration, given as a value: never SQL text.
    config = {"memory_limit": plan.memory_limit} if plan.memory_limit else {}
    con = interrupts.watch(con or duckdb.connect(config=config))  # a signal stops its query
    con.execute("SET enable_progress_bar = false")
    for statement in TABLES:
        _run(con, statement)
    for load in plan.loads:
        if load.collection is None:
            _load_file(con, load)
    for statement in plan.statements:
        _run(con, statement)
    for load in plan.loads:  # one run at a time: memory holds one run, not all of them
        if load.collection is not None:
            _load_file(con, load)
            _run(con, check.record_queries(load))
            _check_shared_queries(con, load)
            for statement in plan.per_run:
                _run(con, statement)
    for statement in plan.finish:
        _run(con, statement)
    return con


def _load_file(con: duckdb.DuckDBPyConnection, load: Load) -> None:
    with _reading(load):
        _load(con, load)


def _load(con: duckdb.DuckDBPyConnection, load: Load) -> None:
    """Fast pass; the general pass only if a line was flagged; then the file-level checks."""
    _run(con, load.fast)
    rows, bad = _one(con, check.summary(load))
    if bad:
        _run(con, check.discard(load))
        _run(con, load.general)
        rows, bad = _one(con, check.summary(load))
        if bad:
            found = _all(con, load.problems)
            raise InputDataError(check.problems_message(load, found, bad))
    if rows == 0:
        raise InputDataError(check.empty_message(load))
    if _one(con, check.maybe_duplicates(load))[0]:
        found = _all(con, check.duplicates(load))
        if found:
            raise DuplicateError(check.duplicates_message(load, found))


def _check_shared_queries(con: duckdb.DuckDBPyConnection, load: Load) -> None:
    row = _one(con, check.shared_queries(load))
    if row[0] == 0:
        raise InputDataError(check.no_shared_queries_message(load, row))


def _run(con: duckdb.DuckDBPyConnection, statement: Statement) -> None:
    con.execute(statement.sql, statement.params)


def _one(con: duckdb.DuckDBPyConnection, statement: Statement) -> tuple:
    return con.execute(statement.sql, statement.params).fetchone()


def _all(con: duckdb.DuckDBPyConnection, statement: Statement) -> list[tuple]:
    return con.execute(statement.sql, statement.params).fetchall()


@contextmanager
def _reading(load: Load) -> Iterator[None]:
    """DuckDB's errors about a file, as one clear InputDataError naming it (and the line)."""
    try:
        yield
    except duckdb.IOException as exc:
        raise InputDataError(f"{load.path}: {_io_problem(str(exc))}") from None
    except duckdb.InvalidInputException as exc:
        raise InputDataError(_text_problem(load, str(exc))) from None


def _io_problem(message: str) -> str:
    if "Unexpected end of GZIP stream" in message:
        return "the gzip file is truncated or corrupt (unexpected end of the compressed data)"
    if "not a GZIP stream" in message:
        return "the name ends in .gz but the file is not gzip-compressed"
    return f"cannot read: {_first_line(message)}"


def _text_problem(load: Load, message: str) -> str:
    line = re.search(r"CSV Error on Line: (\d+)", message)
    where = f"{load.path}:{line.group(1)}" if line else str(load.path)
    if _is_gzip(load) and not load.path.name.lower().endswith(".gz"):
        return f"{where}: the file is gzip-compressed; name it *.gz"
    if "Invalid unicode" in message:
        return (
            f"{where}: not UTF-8 text: a binary file, or text in another encoding "
            "(Latin-1, UTF-16); convert it to UTF-8"
        )
    if "Maximum line size" in message:
        return f"{where}: a line longer than 2 MB: not a TREC text file"
    return f"{where}: not a readable text file: {_first_line(message)}"


def _is_gzip(load: Load) -> bool:
    try:
        with load.path.open("rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0]
