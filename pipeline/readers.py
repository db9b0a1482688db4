"""TREC qrels and run files -> DuckDB tables, with explicit column types.

Readers are pure: they return SQL (with bound parameters) and `execute` runs it. A file is read by
DuckDB line by line (plain or gzip-compressed) in up to three steps:
  fast      split each line on single spaces or tabs: one parallel pass, right for nearly every file;
  general   only if the fast pass flagged a line: split on any run of whitespace (slower);
  problems  only if lines are still bad: number the lines and report the first few.
Lines that are blank or start with '#' are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Load", "Statement", "TABLES", "load_qrels", "load_run"]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its bound parameters."""

    sql: str
    params: list = field(default_factory=list)


@dataclass(frozen=True)
class Load:
    """How to load one file: the fast statement, its fallback, and the query that explains errors.

    `flagged` counts the rows whose fields did not parse; `problems` returns
    (line number, line text, problem) for the first bad lines.
    """

    path: Path
    table: tuple[str, str]  # the table loaded, and its column naming the file's collection or run
    fast: Statement
    general: Statement
    flagged: Statement
    problems: Statement


TABLES = [
    Statement(
        "CREATE TABLE qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, rel INTEGER, ok BOOLEAN)"
    ),
    Statement(
        "CREATE TABLE run_rows (run VARCHAR, qid VARCHAR, docno VARCHAR, rank BIGINT, "
        "score DOUBLE, ok BOOLEAN)"
    ),
]

_READ = """read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = '\\x1f', quote = '',
                    escape = '', auto_detect = false, strict_mode = false)"""
_SKIP = "line IS NULL OR regexp_matches(line, '^\\s*(#|$)')"
_FAST_FIELDS = "string_split(replace(line, '\\t', ' '), ' ')"
_ALL_FIELDS = "string_split(trim(regexp_replace(line, '\\s+', ' ', 'g')), ' ')"

QRELS_FIELDS = "qid iter docno rel"
RUN_FIELDS = "qid Q0 docno rank score tag"


def _lines(fields: str) -> str:
    return f"SELECT {fields} AS f FROM {_READ} WHERE NOT ({_SKIP})"


def _numbered_lines() -> str:
    return f"""SELECT line_no, line, {_ALL_FIELDS} AS f
        FROM (SELECT row_number() OVER () AS line_no, line FROM {_READ})
        WHERE NOT ({_SKIP})"""


def _load(path: Path, table: str, key: str, select: str, problem: str, bad: str) -> Load:
    def insert(fields: str) -> Statement:
        sql = f"INSERT INTO {table} SELECT ?, {select}, NOT ({bad}) FROM ({_lines(fields)})"
        return Statement(sql, [key, str(path)])

    problems = f"""SELECT line_no, line, {problem} FROM ({_numbered_lines()})
        WHERE {bad} ORDER BY line_no LIMIT 5"""
    return Load(
        path=path,
        table=(table, _KEYS[table]),
        fast=insert(_FAST_FIELDS),
        general=insert(_ALL_FIELDS),
        flagged=Statement(
            f"SELECT count(*) FILTER (WHERE NOT ok) FROM {table} WHERE {_KEYS[table]} = ?", [key]
        ),
        problems=Statement(problems, [str(path)]),
    )


_KEYS = {"qrels": "collection", "run_rows": "run"}


def load_qrels(collection: str, path: Path) -> Load:
    """Load a qrels file (qid iter docno rel) into `qrels` under the collection's name."""
    return _load(
        path,
        "qrels",
        collection,
        "f[1], f[3], TRY_CAST(f[4] AS INTEGER)",
        f"""CASE WHEN len(f) <> 4 THEN 'expected 4 fields ({QRELS_FIELDS}), found ' || len(f)
            ELSE 'the relevance grade must be an integer, found ''' || f[4] || '''' END""",
        "len(f) <> 4 OR list_contains(f, '') OR TRY_CAST(f[4] AS INTEGER) IS NULL",
    )


def load_run(run: str, path: Path) -> Load:
    """Load a run file (qid Q0 docno rank score tag) into `run_rows` under the run's name."""
    return _load(
        path,
        "run_rows",
        run,
        "f[1], f[3], TRY_CAST(f[4] AS BIGINT), TRY_CAST(f[5] AS DOUBLE)",
        f"""CASE WHEN len(f) < 6 THEN 'expected 6 fields ({RUN_FIELDS}), found ' || len(f)
            ELSE 'the score must be a number, found ''' || f[5] || '''' END""",
        "len(f) < 6 OR list_contains(f, '') OR TRY_CAST(f[5] AS DOUBLE) IS NULL",
    )
