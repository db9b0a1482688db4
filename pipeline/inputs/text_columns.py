"""Text inputs read by columns: each line split at one delimiter (a tab or a space) into the
fields `f1` .. `fN` by a reader outside the engine (the DuckDB engine's Arrow reader), then
typed and checked by the format's own SQL, rewritten over those columns. Pure, no I/O.

That reading is trec_eval's only where every line's separators are single delimiters of one
kind; the reader proves so before anything of a file is kept (every field non-empty, and
holding no other C whitespace and none of the control characters `text_lines` treats apart:
NUL, 0x1C to 0x1F; no comment line), and a file it cannot prove is read by `text_lines`. On a
proven file the two readings give the same rows: the fields are the line's fields, the line is
the fields joined by the delimiter, and the rules that test the line for NUL and 0x1F
(`text_lines.LINE_RULES`) hold by the proof. Blank lines are dropped by both. Messages never
come from here: a file with a bad line or a duplicate is numbered and reported by `text_lines`'
exact reading, as before.
"""

from __future__ import annotations

import re

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import RUNS
from pipeline.inputs.text_lines import LINE_RULES

__all__ = ["field_names", "fields_kept", "over_columns", "read_by_columns", "typed_columns"]

_FIELD = re.compile(r"\bf\[(\d+)\]")
_BARE_FIELD = re.compile(r"f\[(\d+)\]")


def read_by_columns(fmt: Format) -> bool:
    """Whether inputs of `fmt` may be read by columns: a whitespace format of runs (not a parsed
    one, as JSON lines are) whose every data line is a row (it skips no line of its own)."""
    return not fmt.parse and fmt.table == RUNS.name and fmt.skip == "false"


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


def _select_parts(fmt: Format) -> list[str]:
    """The expressions of `fmt.select`, one per column of its table (split at the commas
    outside parentheses and brackets)."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(fmt.select):
        quoted ^= char == "'"
        if not quoted and char in "([":
            depth += 1
        elif not quoted and char in ")]":
            depth -= 1
        elif not quoted and char == "," and depth == 0:
            parts.append(fmt.select[start:i].strip())
            start = i + 1
    return [*parts, fmt.select[start:].strip()]


def fields_kept(fmt: Format, count: int) -> dict[str, int]:
    """The columns of `fmt`'s table that are a line's field as it is (`qid` is `f[1]`), each
    with that field's index from 0: the reader's own column is the table's, uncopied."""
    names = [column.name for column in fmt.loaded.columns]
    kept = {}
    for name, part in zip(names, _select_parts(fmt), strict=True):
        match = _BARE_FIELD.fullmatch(part)
        if match and 1 <= int(match.group(1)) <= count:
            kept[name] = int(match.group(1)) - 1
    return kept


def typed_columns(fmt: Format, count: int, source: str) -> str:
    """SQL over the relation `source` (columns f1 .. fN of a line of `count` fields, split at
    one bound delimiter): for each of its rows, in order, the columns of `fmt`'s table that are
    not a field as it is (`fields_kept`), then `ok`, as `text_lines.insert_lines` makes them."""
    columns = ", ".join(field_names(count))
    names = [column.name for column in fmt.loaded.columns]
    computed = [name for name in names if name not in fields_kept(fmt, count)]
    bad = over_columns(fmt.bad_unless(LINE_RULES), count)
    # The line and the list of fields, for rules that read them: DuckDB drops what none reads.
    lines = f"SELECT *, [{columns}] AS f, concat_ws(?::VARCHAR, {columns}) AS line FROM {source}"
    typed = f"SELECT {over_columns(fmt.select, count)}, NOT {bad} FROM ({lines})"
    return f"SELECT {', '.join([*computed, 'ok'])} FROM ({typed}) AS t({', '.join(names)}, ok)"
