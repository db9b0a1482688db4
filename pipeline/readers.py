"""TREC qrels and run files -> DuckDB tables, with explicit column types.

Readers are pure: they return the SQL (with bound parameters) that loads a file, and the SQL that finds
lines breaking the format; `execute` runs them. Files are read line by line by DuckDB (plain or
gzip-compressed), split on any run of whitespace, so spaces, tabs and CRLF line ends all work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Statement", "Check", "TABLES", "load_qrels", "load_run"]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its bound parameters."""

    sql: str
    params: list = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """A query returning the bad lines of a file as (line number, line text, problem)."""

    sql: str
    params: list
    path: Path


TABLES = [
    Statement(
        "CREATE TABLE qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, rel INTEGER)"
    ),
    Statement(
        "CREATE TABLE run_rows (run VARCHAR, qid VARCHAR, docno VARCHAR, rank BIGINT, score DOUBLE)"
    ),
]

# Every line of a file, numbered, split into fields; blank lines and '#' comment lines marked.
_LINES = """
    SELECT line_no, line, string_split(trim(regexp_replace(line, '\\s+', ' ', 'g')), ' ') AS f
    FROM (
        SELECT row_number() OVER () AS line_no, coalesce(line, '') AS line
        FROM read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = '\\x1f',
                      quote = '', escape = '', auto_detect = false, strict_mode = false)
    )
    WHERE NOT regexp_matches(line, '^\\s*(#|$)')
"""

QRELS_FIELDS = "qid iter docno rel"
RUN_FIELDS = "qid Q0 docno rank score tag"


def load_qrels(collection: str, path: Path) -> tuple[Statement, Check]:
    """Load a qrels file (qid iter docno rel) into `qrels` under the collection's name."""
    sql = f"""
        INSERT INTO qrels
        SELECT ?, f[1], f[3], CAST(f[4] AS INTEGER) FROM ({_LINES})
    """
    check = f"""
        SELECT line_no, line,
            CASE WHEN len(f) <> 4 THEN 'expected 4 fields ({QRELS_FIELDS}), found ' || len(f)
                 ELSE 'the relevance grade must be an integer, found ''' || f[4] || '''' END
        FROM ({_LINES})
        WHERE len(f) <> 4 OR TRY_CAST(f[4] AS INTEGER) IS NULL
        ORDER BY line_no LIMIT 5
    """
    return Statement(sql, [collection, str(path)]), Check(check, [str(path)], path)


def load_run(run: str, path: Path) -> tuple[Statement, Check]:
    """Load a run file (qid Q0 docno rank score tag) into `run_rows` under the run's name."""
    sql = f"""
        INSERT INTO run_rows
        SELECT ?, f[1], f[3], TRY_CAST(f[4] AS BIGINT), CAST(f[5] AS DOUBLE) FROM ({_LINES})
    """
    check = f"""
        SELECT line_no, line,
            CASE WHEN len(f) < 6 THEN 'expected 6 fields ({RUN_FIELDS}), found ' || len(f)
                 ELSE 'the score must be a number, found ''' || f[5] || '''' END
        FROM ({_LINES})
        WHERE len(f) < 6 OR TRY_CAST(f[5] AS DOUBLE) IS NULL
        ORDER BY line_no LIMIT 5
    """
    return Statement(sql, [run, str(path)]), Check(check, [str(path)], path)
