"""A run's per-query times, `qid time` (`runs.NAME.latency`): how long the system took to answer
each query, in milliseconds, or in microseconds where the file's first line is the header
`qid usec` (as PISA writes its per-query times; `qid ms` names milliseconds). Fields past the
second are allowed. A query may be timed several times (repetitions): the median of its times
counts (`pipeline.plan.latency`). A time must be a finite number, not negative; a query the run
does not answer is an input error naming the line (`unanswered`: both engines ask it).

A run frame's `latency_ms` column (one value per query) gives the same rows as a table of
columns `qid`, `ms` (`pipeline.notebook.inputs`).
"""

from __future__ import annotations

import re

from pipeline.inputs.format import Format, Load
from pipeline.inputs.loaded_tables import LATENCY
from pipeline.inputs.messages import input_name
from pipeline.inputs.rules import Rule, number, number_rules, quoted
from pipeline.inputs.table_rows import is_table_input
from pipeline.inputs.text_lines import field_count, literal_path, numbered_lines, text_rules
from pipeline.sql import Statement

__all__ = [
    "FIELDS", "NAME", "UNITS", "read", "unanswered", "unanswered_line", "unanswered_message",
    "unit_named",
]  # fmt: skip

#: what the loads of these files are called (they are no run's `format`)
NAME = "latency"
#: a line's fields, as messages name them
FIELDS = "qid time"
#: the units a header may name, and what a time in each is in milliseconds
UNITS = {"ms": "", "usec": " / 1000.0"}


def unit_named(first_line: str) -> str:
    """The unit a file's first line names as its header (`qid usec`, `qid ms`); else `ms`."""
    fields = [
        f.lower() for f in re.split(r"[ \t\v\f\r\n]+", first_line.removeprefix("\ufeff")) if f
    ]
    return fields[1] if len(fields) == 2 and fields[0] == "qid" and fields[1] in UNITS else "ms"


def _header(unit: str) -> str:
    """SQL over `line`: the header naming `unit`, skipped as a comment is."""
    return f"regexp_full_match(line, '(?i)[ \\t]*qid[ \\t]+{unit}[ \\t\\r]*')"


def read(mode: str = "strict", unit: str = "ms") -> Format:
    """How a latency file in `unit` is read into `latency` under the `input` `mode`: each line's
    qid and its time in milliseconds."""
    strict = mode == "strict"
    value = number("f[2]", strict)
    negative = Rule(f"{value} < 0", f"'the time must not be negative, found ' || {quoted('f[2]')}")
    rules = text_rules(
        field_count("<", 2, FIELDS),
        *number_rules("f[2]", value, "the time", strict, finite=True),
        negative,
    )
    return Format(NAME, LATENCY.name, f"f[1], {value}{UNITS[unit]}", rules, skip=_header(unit),
                  called=f"latency ({FIELDS}, in {unit})", member="query")  # fmt: skip


def unanswered(loads: list[Load]) -> Statement:
    """(run, qid) of the first query, in qid order, that each latency input of `loads` times
    and its run does not answer (`present`), in spec order."""
    sql = """SELECT l.run, min(l.qid) FROM latency l
WHERE list_contains(?, l.run) AND NOT EXISTS (
    SELECT 1 FROM present p WHERE p.run = l.run AND p.qid = l.qid)
GROUP BY l.run ORDER BY list_position(?, l.run)"""
    names = [load.name for load in loads]
    return Statement(sql, [names, names])


def unanswered_line(load: Load, qid: str) -> Statement:
    """(line number, line) of the first line of a latency file timing `qid`."""
    sql = f"""SELECT line_no, line FROM ({numbered_lines(load.format)})
WHERE f[1] = ? ORDER BY line_no LIMIT 1"""
    return Statement(sql, [[literal_path(load.path)], qid])


def unanswered_message(load: Load, qid: str, found: tuple | None) -> str:
    """A latency input timing a query its run does not answer: the line (a table's input
    name), and the fix."""
    where = input_name(load)
    if found is not None and not is_table_input(load.path):
        where = f"{load.path}:{found[0]}"
    return (
        f"{where}: query {qid!r} is timed, and run '{load.name}' does not answer it: are these "
        "the run's times? (runs.NAME.latency times the run's own queries)"
    )
