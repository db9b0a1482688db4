"""Text inputs (plain or gzip-compressed) read line by line by DuckDB, each line split into its
fields `f` as trec_eval splits it and checked by its format's rules; every text format reads here.

Readers are pure: they return SQL (with bound parameters) and an engine runs it, in up to two steps:
  read      every file of a batch in one statement (`insert_lines`): one parallel pass that splits
            each line on any run of C whitespace and marks the lines that break a rule
  problems  only for a file with such a line: number its lines and report the first few.
Lines that are blank or whose first non-blank character is '#' are skipped. What a line must hold is
its format's list of `Rule`s over the fields (configs/REFERENCE.md, "Input rules"; the number fields
are `rules`'). The Spark engine reads lines on its workers by `parsed_lines`, so that a line means
and fails exactly as here.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.inputs.format import Format, Load
from pipeline.inputs.rules import Rule
from pipeline.sql import Statement, quote_identifier

__all__ = [
    "INPUT_MODES",
    "LINE_RULES",
    "field_count",
    "insert_lines",
    "lenient_lines",
    "literal_path",
    "numbered_lines",
    "parsed_lines",
    "problem_lines",
    "text_rules",
]

INPUT_MODES = ("strict", "lenient")


# A line is everything up to its end: the delimiter is the control character 0x1F, which text never
# holds. In the loading passes a line that does hold it has a second column, `cut`, and is reported
# (never truncated); they name an impossible null string, so that an empty `cut` is '' and not
# NULL. Two columns make DuckDB skip empty lines, so the numbered reading (error reports only) reads
# one column, delimited by 0x1E instead: it numbers every line and sees a 0x1F in the text.
_OPTIONS = """header = false, quote = '', escape = '', auto_detect = false, strict_mode = false,
                    null_padding = true"""
# A reading of whole lines (not split at 0x1F) gives a line holding it the `cut` the loading pass
# would: '' where the loading pass has the text after it.
_CUT = "CASE WHEN contains(line, chr(31)) THEN '' END"
_READ_NUMBERED = f"read_csv(?, columns = {{'line': 'VARCHAR'}}, delim = chr(30), {_OPTIONS})"
_READ_DATA = f"""read_csv(?, columns = {{'line': 'VARCHAR', 'cut': 'VARCHAR'}}, delim = chr(31),
                    {_OPTIONS}, nullstr = chr(30) || chr(29) || chr(28))"""
# C's isspace (and so trec_eval) separates fields by spaces, tabs, \v and \f. A line whose
# separators are single spaces or tabs is split as it is; other lines (runs of separators, \v,
# \f, leading or trailing ones) are split at every separator and their empty fields dropped: in
# DuckDB that is half the time of squeezing the separators first (by replacements or a regex).
_TABS = "replace(line, chr(9), ' ')"
_SPACES = "replace(replace(spaced, chr(11), ' '), chr(12), ' ')"
_NONEMPTY = f"list_filter(string_split({_SPACES}, ' '), lambda field: field <> '')"
# A line whose single-space split has no empty field and holds no \v or \f is split as it is.
_UNEVEN = "list_contains(split, '') OR contains(line, chr(11)) OR contains(line, chr(12))"
_FIELDS = f"CASE WHEN {_UNEVEN} THEN {_NONEMPTY} ELSE split END"


def _split(rows: str, fmt: Format) -> str:
    """SQL over the relation `rows` (a column `line`): its columns and the line's fields `f`; or,
    for a format that parses its lines (`Format.parse`: JSON), its parsed line `j` instead (and
    no fields). Every reading splits here: the loading pass, the numbered one of a report,
    Spark's workers."""
    if fmt.parse:
        return f"SELECT *, {fmt.parse} AS j, []::VARCHAR[] AS f FROM ({rows})"
    spaced = f"SELECT *, {_TABS} AS spaced FROM ({rows})"
    split = f"SELECT *, string_split(spaced, ' ') AS split FROM ({spaced})"
    return f"SELECT *, {_FIELDS} AS f FROM ({split})"


def insert_lines(loads: list[Load]) -> Statement:
    """Every file of `loads` (one format) in one statement, each row marked with its file's name;
    `ok` is false for a line that breaks a rule."""
    fmt = loads[0].format
    names = [load.name for load in loads]
    lines = _split(f"SELECT line, cut, file_index FROM {_READ_DATA} WHERE NOT ({fmt.skipped})", fmt)
    sql = f"""INSERT INTO {quote_identifier(fmt.table)}
        SELECT (?::VARCHAR[])[CAST(file_index AS BIGINT) + 1], {fmt.select}, NOT {fmt.bad}
        FROM ({lines})"""
    return Statement(sql, [names, [literal_path(load.path) for load in loads]])


def problem_lines(load: Load) -> Statement:
    """(line number, line text, problem) of a file's first bad lines."""
    fmt = load.format
    explain = " ".join(f"WHEN {r.bad} THEN {r.problem}" for r in fmt.rules)
    sql = f"""SELECT line_no, line, CASE {explain} ELSE 'unreadable' END
        FROM ({numbered_lines(fmt)}) WHERE {fmt.bad} ORDER BY line_no LIMIT 5"""
    return Statement(sql, [[literal_path(load.path)]])


def lenient_lines(load: Load) -> Statement:
    """How many lines of a file hold what `input: strict` would refuse (`Format.lenient`)."""
    sql = f"SELECT count(*) FROM ({numbered_lines(load.format)}) WHERE {load.format.lenient}"
    return Statement(sql, [[literal_path(load.path)]])


def parsed_lines(source: str, fmt: Format, columns: str, explain: bool = False) -> str:
    """SQL over a relation `source` of text lines (a column `line`, and `columns` passed
    through): each data line split and read by `fmt`, named `columns`,
    `fmt`'s columns (`qid, docno, rel` or `qid, docno, rank, score`), `ok`, and with `explain`
    the `problem` of a bad line. The Spark engine reads lines this way on its workers, so that
    a line means and fails exactly as in `insert_lines` and `problem_lines`."""
    names = ", ".join(c.name for c in fmt.loaded.columns)
    why = " ".join(f"WHEN {r.bad} THEN {r.problem}" for r in fmt.rules)
    problem = (
        f", CASE WHEN NOT ({fmt.bad}) THEN NULL {why} ELSE 'unreadable' END" if explain else ""
    )
    lines = _split(f"SELECT *, {_CUT} AS cut FROM {source} WHERE NOT ({fmt.skipped})", fmt)
    return f"""SELECT * FROM (SELECT {columns}, {fmt.select}, NOT {fmt.bad}{problem} FROM ({lines}))
        AS t({columns}, {names}, ok{", problem" if explain else ""})"""


def numbered_lines(fmt: Format) -> str:
    """SQL over one bound path: (line_no, line, f) for every data line of a file read by `fmt`,
    numbered in file order (skipped lines, a header too, count)."""
    numbered = f"""SELECT * FROM (SELECT row_number() OVER () AS line_no, line, {_CUT} AS cut
              FROM {_READ_NUMBERED})
        WHERE NOT ({fmt.skipped})"""
    parsed = ", j" if fmt.parse else ""
    return f"SELECT line_no, line, cut, f{parsed} FROM ({_split(numbered, fmt)})"


def literal_path(path: Path) -> str:
    """`path` as DuckDB must be given it to read exactly that file.

    DuckDB expands `*`, `?` and `[` in file names, so `run[1].trec` would read `run1.trec`; each of
    them becomes a one-character class (`[[]`), which matches only itself.
    """
    return "".join(f"[{c}]" if c in "*?[" else c for c in str(path))


def field_count(op: str, n: int, names: str) -> Rule:
    """A line whose field count compares by `op` with `n` is bad (`names`: the fields expected)."""
    return Rule(f"len(f) {op} {n}", f"'expected {n} fields ({names}), found ' || len(f)")


# Valid UTF-8 can still be binary, or UTF-16 without a byte-order mark: NUL never occurs in text.
_NUL = Rule("contains(line, chr(0))", "'a NUL byte: not a text file (UTF-16, or binary?)'")
# The reader's delimiter: a line holding it has a `cut` (see _OPTIONS).
_UNIT_SEPARATOR = Rule(
    "cut IS NOT NULL", "'the control character 0x1F (unit separator): not a TREC text file'"
)


#: the rules every text file obeys, over the whole line (text, no 0x1F)
LINE_RULES = (_NUL, _UNIT_SEPARATOR)


def text_rules(*rules: Rule) -> tuple[Rule, ...]:
    """A text format's rules: `rules` after the ones every text file obeys (`LINE_RULES`)."""
    return (*LINE_RULES, *rules)
