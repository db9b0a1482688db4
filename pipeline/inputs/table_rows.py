"""Inputs that are tables rather than text: Parquet files, and the tables the Python door hands
over (pandas, polars, Arrow and the rest, as Arrow: `memory://` paths, registered on the
connection by the engine). Pure, like the text readers: SQL with bound parameters.

A table has the columns `qid`, `docno` and `rel` (qrels; and `subtopic`, subtopic qrels) or
`qid`, `docno`, `score` and optionally `rank` (runs), the Spark engine's Parquet contract. Each is cast to its column's type
(an integer id becomes its exact decimal text; a grade an integer, or a double under the `grades:
real` setting); a row is bad when an id or a value is missing or cannot be cast, or a score (or a
real grade) is not finite, as a bad line of a text file is. Rows are numbered from
1 in the table's order in the reports of bad rows and duplicates.
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.inputs.format import Load
from pipeline.inputs.loaded_tables import GRADE, LoadedTable
from pipeline.inputs.rules import REAL_GRADES_HINT
from pipeline.inputs.text_lines import literal_path
from pipeline.sql import Statement, quote_identifier

__all__ = [
    "MEMORY",
    "cast_sql",
    "column_types",
    "duplicate_rows",
    "id_type_problem",
    "identity",
    "insert_rows",
    "is_registered",
    "is_table_input",
    "memory_view",
    "not_parquet_message",
    "problem_rows",
    "table_columns",
]

#: the scheme of an input held in memory (`memory://runs/bm25`), which the spec names
MEMORY = "memory://"
#: the prefix of an ir_datasets id (`pipeline.frames.irds`), read in Python and registered
IRDS = "irds:"
#: the types an id column may have, as DuckDB and Spark name them: text and integers
_ID_TYPES = {
    "varchar", "string", "tinyint", "smallint", "int", "integer", "bigint", "hugeint",
    "utinyint", "usmallint", "uinteger", "ubigint", "uhugeint",
}  # fmt: skip
#: why a value of each type is not read, as a row's report says
_NOT_READ = {
    "VARCHAR": "is missing (or not text or an integer)",
    "INTEGER": "is missing or not an integer",
    "BIGINT": "is missing or not an integer",
    "DOUBLE": "is missing or not a number",
}


def is_registered(path: Path | str) -> bool:
    """Whether an input is a table the engine registers: one given in Python, or an
    ir_datasets id's (read in Python)."""
    return str(path).startswith((MEMORY, IRDS))


def is_table_input(path: Path | str) -> bool:
    """Whether an input is read as a table: registered, or a Parquet file."""
    return is_registered(path) or str(path).lower().endswith(".parquet")


def memory_view(path: Path | str, kind: str) -> str:
    """The name under which the engine registers a table input (`is_registered`) of `kind`,
    "qrels" or "run" (an ir_datasets id names both its qrels and its run)."""
    return f"irpipe_{kind}_" + re.sub(r"[^A-Za-z0-9]", "_", str(path))


def not_parquet_message(path: Path | str, detail: str) -> str:
    """A file named *.parquet that its engine cannot read as Parquet (`detail`: the reader's
    words): a text file so named, or a truncated or corrupt one."""
    return (
        f"{path}: not a valid Parquet file ({detail}); if it is TREC text, name it without "
        ".parquet, else write it again"
    )


def _source(load: Load) -> tuple[str, list]:
    """The relation a table input is read from, and its parameters."""
    if is_registered(load.path):
        return quote_identifier(memory_view(load.path, load.format.kind)), []
    return "read_parquet(?)", [literal_path(load.path)]


def column_types(load: Load) -> Statement:
    """(name, type) of each of a table input's columns."""
    source, params = _source(load)
    sql = f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {source})"
    return Statement(sql, params)


def id_type_problem(where: str, column: str, type_name: str) -> str | None:
    """Why an id column (`qid`, `docno`) of type `type_name` (DuckDB's or Spark's name) is
    refused, or None when it is read: text, or integers (as their decimal text). A float id
    would be read as the text '101.0', which matches no '101' of the other input: every value
    would silently be 0."""
    kind = type_name.lower()
    if column not in ("qid", "docno") or kind in _ID_TYPES:
        return None
    floats = kind.startswith(("float", "double", "real"))
    held = "floats" if floats else "decimals" if kind.startswith("decimal") else "values"
    why = " (pandas stores integers as floats when a value is missing)" if floats else ""
    return (
        f"{where}: column {column!r} holds {held} ({kind}); ids are text or integers: write "
        f"them as strings or integers{why}"
    )


def table_columns(load: Load) -> dict[str, str]:
    """The columns of the load's table and their types, a grade's by the `grades` setting its
    format reads under."""
    return load.format.loaded.typed(load.format.grades)


def _problems(load: Load) -> list[tuple[str, str]]:
    """Why a row of the load's table is bad, in the order the report names the first one that
    applies: per column its table needs, not read (a grade by the `grades` setting its format
    reads under), not finite (a double), negative (a natural number)."""
    table, grades = load.format.loaded, load.format.grades
    found = []
    for column in table.columns:
        name, kind, said = column.name, table_columns(load)[column.name], table.said(column.name)
        if column.optional:
            continue
        hint = REAL_GRADES_HINT if column.type == GRADE and kind != "DOUBLE" else ""
        found.append((f"{name} IS NULL", f"{said} {_NOT_READ[kind]}{hint}"))
        if name in table.finite(grades):
            found.append((f"NOT isfinite({name})", f"{said} must be a finite number"))
        if column.natural:
            found.append((f"{name} < 0", f"{said} must be a non-negative integer"))
        if column.nonnegative:
            found.append((f"{name} < 0", f"{said} must not be negative"))
    return found


def cast_sql(column: str, kind: str, name: str | None = None) -> str:
    """SQL (DuckDB's and Spark's alike) casting the input's `column` (written `name`: quoted
    where the dialect needs it) to `kind`, NULL where it cannot. An INTEGER (a grade, a
    subtopic) must be a whole number: a cast alone would round 2.5 to 2 (DuckDB) or truncate it
    (Spark), a wrong number where a text file's 2.5 is a bad line."""
    name = name or column
    cast = f"TRY_CAST({name} AS {kind})"
    if kind.lower() not in ("integer", "int"):
        return cast
    number = f"TRY_CAST({name} AS DOUBLE)"
    return f"CASE WHEN {number} = TRY_CAST({number} AS BIGINT) THEN {cast} END"


def _typed(load: Load, present: set[str]) -> str:
    """The columns of the load's table, cast from the input's (a missing rank is NULL)."""
    return ", ".join(
        f"{cast_sql(c, t, quote_identifier(c))} AS {c}" if c in present else f"NULL::{t} AS {c}"
        for c, t in table_columns(load).items()
    )


def _rows(load: Load, present: set[str], numbered: bool = False) -> tuple[str, list]:
    """SQL of the input's rows, typed, and its parameters; `numbered`: with `row_no` (from 1, in
    the table's order), which only the reports of a bad input pay for."""
    source, params = _source(load)
    if not numbered:
        return f"SELECT {_typed(load, present)} FROM {source}", params
    rows = f"SELECT *, row_number() OVER () AS row_no FROM {source}"
    # A grade that is not read is shown as given (2.5, where an integer is wanted)
    given = (
        f", TRY_CAST({quote_identifier('rel')} AS VARCHAR) AS given_rel"
        if load.format.kind == "qrels"
        else ""
    )
    return f"SELECT row_no, {_typed(load, present)}{given} FROM ({rows})", params


def _bad(load: Load) -> str:
    return " OR ".join(f"({condition})" for condition, _ in _problems(load))


def insert_rows(loads: list[Load], present: list[set[str]]) -> Statement:
    """Every row of a batch's table inputs (one format) into their table, each under its name,
    in one statement (DuckDB scans them in parallel); `ok` false for a bad row. `present`: each
    input's columns (`column_names`)."""
    parts, params = [], []
    for load, columns in zip(loads, present, strict=True):
        rows, more = _rows(load, columns)
        parts.append(f"SELECT ?, {', '.join(table_columns(load))}, NOT coalesce("
                     f"{_bad(load)}, true) FROM ({rows})")  # fmt: skip
        params += [load.name, *more]
    return Statement(
        f"INSERT INTO {quote_identifier(loads[0].table)}\n" + "\nUNION ALL ".join(parts), params
    )


def problem_rows(load: Load, present: set[str], limit: int) -> Statement:
    """(row number, the row as text, problem) of a table input's first bad rows."""
    rows, params = _rows(load, present, numbered=True)
    why = " ".join(f"WHEN {condition} THEN '{text}'" for condition, text in _problems(load))
    shown = " || ' ' || ".join(
        f"coalesce({c}::VARCHAR, {'given_rel, ' * (c == 'rel')}'NULL')" for c in table_columns(load)
    )
    sql = f"""SELECT row_no, {shown}, CASE {why} END FROM ({rows})
        WHERE coalesce({_bad(load)}, true) ORDER BY row_no LIMIT {int(limit)}"""
    return Statement(sql, params)


def duplicate_rows(load: Load, present: set[str], limit: int) -> Statement:
    """The first (qid, docno) pairs (with subtopic qrels, (qid, subtopic, docno) triples) a
    table input holds twice, each with its row numbers, how many there are, and the subtopic
    (the text files' `duplicates`, by row)."""
    rows, params = _rows(load, present, numbered=True)
    key = identity(load.format.loaded)
    subtopic = "d.subtopic" if "subtopic" in key else "NULL"
    sql = f"""
WITH numbered AS ({rows}),
dup AS (SELECT {key} FROM numbered GROUP BY {key} HAVING count(*) > 1)
SELECT d.qid, d.docno, list(n.row_no ORDER BY n.row_no), (SELECT count(*) FROM dup), {subtopic}
FROM dup d JOIN numbered n USING ({key})
GROUP BY {", ".join(f"d.{c}" for c in key.split(", "))}
ORDER BY min(n.row_no)
LIMIT {int(limit)}"""
    return Statement(sql, params)


def identity(table: LoadedTable) -> str:
    """The columns that a row of `table` may not repeat, as SQL: a document once per query
    (once per query and subtopic in subtopic qrels)."""
    return ", ".join(table.identity)
