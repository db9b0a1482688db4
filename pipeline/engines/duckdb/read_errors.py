"""DuckDB's errors about reading an input, as one clear InputDataError naming the file (and the
line where DuckDB says which)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipeline.errors import InputDataError
from pipeline.inputs.format import Load
from pipeline.inputs.table_rows import is_registered, is_table_input, not_parquet_message

__all__ = [
    "first_line",
    "reading",
]


@contextmanager
def reading(load: Load) -> Iterator[None]:
    """DuckDB's errors about a file, as one clear InputDataError naming it (and the line)."""
    try:
        yield
    except duckdb.IOException as exc:
        raise InputDataError(f"{load.path}: {_io_problem(str(exc))}") from None
    except duckdb.InvalidInputException as exc:
        if _is_parquet(load):
            raise InputDataError(_parquet_problem(load, str(exc))) from None
        raise InputDataError(_text_problem(load, str(exc))) from None
    except duckdb.Error as exc:
        # DuckDB raises its base class for a Parquet file whose footer it cannot decode (Thrift's
        # "Negative size", "Footer length error"); its subclasses (an interrupt) are not the file's.
        if type(exc) is not duckdb.Error or not _is_parquet(load):
            raise
        raise InputDataError(_parquet_problem(load, str(exc))) from None


def _is_parquet(load: Load) -> bool:
    """A Parquet file (not a table registered in Python, which DuckDB does not read)."""
    return is_table_input(load.path) and not is_registered(load.path)


def _parquet_problem(load: Load, message: str) -> str:
    return not_parquet_message(load.path, re.sub(r"^[A-Za-z ]*Error: ", "", first_line(message)))


def _io_problem(message: str) -> str:
    if "Unexpected end of GZIP stream" in message:
        return "the gzip file is truncated or corrupt (unexpected end of the compressed data)"
    if "not a GZIP stream" in message:
        return "the name ends in .gz but the file is not gzip-compressed"
    return f"cannot read: {first_line(message)}"


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
    return f"{where}: not a readable text file: {first_line(message)}"


def _is_gzip(load: Load) -> bool:
    try:
        with load.path.open("rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def first_line(message: str) -> str:
    return message.strip().splitlines()[0]
