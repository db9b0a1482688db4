"""Text inputs read by columns: each line split at one delimiter (a tab or a space) into the
fields `f1` .. `fN` by a reader outside the engine (the DuckDB engine's Arrow reader), then
typed and checked by the format's own SQL, rewritten over those columns.

That reading is trec_eval's only where every line's separators are single delimiters of one
kind; the reader proves so for each file before anything of it is kept (every field non-empty,
and holding no other C whitespace and none of the control characters `text_lines` treats
apart: NUL, 0x1C to 0x1F; no comment line), and a file it cannot prove is read by
`text_lines`. On a proven file the two readings give the same rows: the fields are the line's
fields, the line is the fields joined by the delimiter, and the rules that test the line for
NUL and 0x1F (`text_lines.LINE_RULES`) hold by the proof. Blank lines are dropped by both.
Messages never come from here: a file with a bad line or a duplicate is numbered and reported
by `text_lines`' exact reading, as before.
"""

from __future__ import annotations

import re

from pipeline.inputs.format import Format
from pipeline.inputs.text_lines import LINE_RULES
from pipeline.sql import Statement, quote_identifier

__all__ = ["insert_columns", "over_columns", "read_by_columns", "field_names"]

_FIELD = re.compile(r"\bf\[(\d+)\]")


def read_by_columns(fmt: Format) -> bool:
    """Whether inputs of `fmt` may be read by columns: a whitespace format (not a parsed one,
    as JSON lines are)."""
    return not fmt.parse


def field_names(count: int) -> list[str]:
    """The columns of a line of `count` fields: f1 .. fN, as `f[1]` .. `f[N]` name them."""
    return [f"f{i}" for i in range(1, count + 1)]


def over_columns(sql: str, count: int) -> str:
    """SQL over a line's fields `f` rewritten over the columns of `count` fields: `f[i]` is the
    column `fi` (NULL past the last, as a list index past the end is), `len(f)` the count. A
    use of `f` beyond these reads the list, which the reading also gives."""

    def column(match: re.Match) -> str:
        i = int(match.group(1))
        return f"f{i}" if 1 <= i <= count else "NULL::VARCHAR"

    return _FIELD.sub(column, sql).replace("len(f)", str(count))


def insert_columns(
    fmt: Format, count: int, source: str, names: list[str], delimiters: list[str]
) -> Statement:
    """Insert the lines of the relation `source` (columns f1 .. fN of `count` fields and
    `file_index`, the index of its file in `names` and `delimiters`) into `fmt`'s table, each
    row under its file's name, as `text_lines.insert_lines` inserts the same files."""
    columns = ", ".join(field_names(count))
    bad = over_columns(fmt.bad_unless(LINE_RULES), count)
    # The line is needed only by a format that skips some lines (a BEIR header): DuckDB drops
    # the unused columns of the inner SELECT.
    lines = f"""SELECT *, [{columns}] AS f,
        concat_ws((?::VARCHAR[])[file_index + 1], {columns}) AS line FROM {source}"""
    sql = f"""INSERT INTO {quote_identifier(fmt.table)}
        SELECT (?::VARCHAR[])[file_index + 1], {over_columns(fmt.select, count)}, NOT {bad}
        FROM ({lines}) WHERE NOT ({over_columns(fmt.skip, count)})"""
    return Statement(sql, [names, delimiters])
