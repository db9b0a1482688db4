"""TREC qrels and run files -> DuckDB tables, with explicit column types and the input rules.

Readers are pure: they return SQL (with bound parameters) and `execute` runs it. A file is read by
DuckDB line by line (plain or gzip-compressed) in up to three steps:
  fast      split each line on single spaces or tabs: one parallel pass, right for nearly every file;
  general   only if the fast pass flagged a line: split on any run of C whitespace (slower);
  problems  only if lines are still bad: number the lines and report the first few.
Lines that are blank or whose first non-blank character is '#' are skipped. What a line must hold is
a list of `Rule`s over its fields `f` (README "Input rules"): the `strict` mode rejects numbers that
are not plainly numbers; `lenient` reads them as trec_eval's C `atof`/`atol` do ("1,5" is 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .sql import quote_identifier

__all__ = [
    "INPUT_MODES",
    "Load",
    "Rule",
    "Statement",
    "TABLES",
    "load_qrels",
    "load_run",
    "numbered_lines",
]

INPUT_MODES = ("strict", "lenient")


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its bound parameters."""

    sql: str
    params: list = field(default_factory=list)


@dataclass(frozen=True)
class Rule:
    """A condition on a line's fields `f` that makes the line bad, and SQL text saying why."""

    bad: str
    problem: str


@dataclass(frozen=True)
class Load:
    """How to load one file into `table`, its rows marked `name` in the column `key`.

    `fast` and `general` insert the lines with a column `ok` (every rule passed); `problems` returns
    (line number, line text, problem) for the first bad lines. A run's `collection` names the
    collection whose qrels it is evaluated against.
    """

    path: Path
    table: str
    key: str
    name: str
    fast: Statement
    general: Statement
    problems: Statement
    collection: str | None = None


TABLES = [
    Statement(
        "CREATE TABLE qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, rel INTEGER, ok BOOLEAN)"
    ),
    Statement(
        "CREATE TABLE run_rows (run VARCHAR, qid VARCHAR, docno VARCHAR, rank BIGINT, "
        "score DOUBLE, ok BOOLEAN)"
    ),
    # The queries each run answers and how many documents each ranks, recorded as the run is
    # loaded (its rows are dropped once ranked).
    Statement("CREATE TABLE present (run VARCHAR, qid VARCHAR, retrieved BIGINT)"),
]

QRELS_FIELDS = "qid iter docno rel"
RUN_FIELDS = "qid Q0 docno rank score tag"

_READ = """read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = '\\x1f', quote = '',
                    escape = '', auto_detect = false, strict_mode = false)"""
_SKIP = "line IS NULL OR regexp_matches(line, '^[ \\t\\v\\f]*(#|$)')"
_FAST_FIELDS = "string_split(replace(line, chr(9), ' '), ' ')"
_ALL_FIELDS = "string_split(trim(regexp_replace(line, '[ \\t\\v\\f]+', ' ', 'g')), ' ')"
# Lines the fast split cannot take: two separators in a row (an empty field), or a vertical tab or
# form feed, which C's isspace (and so trec_eval) also counts as separators. The general pass can.
_NOT_FAST = "list_contains(f, '') OR contains(line, chr(11)) OR contains(line, chr(12))"


def load_qrels(collection: str, path: Path, mode: str = "strict") -> Load:
    """Load a qrels file (qid iter docno rel) into `qrels` under the collection's name."""
    rel = _atol("f[4]", "INTEGER") if mode == "lenient" else "TRY_CAST(f[4] AS INTEGER)"
    rules = [
        _field_count("<>", 4, QRELS_FIELDS),
        *_integer_rules("f[4]", rel, "the relevance grade", strict=mode == "strict"),
    ]
    return _load(path, "qrels", "collection", collection, f"f[1], f[3], {rel}", rules)


def load_run(
    run: str,
    path: Path,
    collection: str | None = None,
    mode: str = "strict",
    use_rank: bool = False,
) -> Load:
    """Load a run file (qid Q0 docno rank score tag) into `run_rows` under the run's name.

    The rank field is checked only when it orders the list (`use_rank`); trec_eval ignores it.
    """
    strict = mode == "strict"
    rank = "TRY_CAST(f[4] AS BIGINT)" if strict else _atol("f[4]", "BIGINT")
    score, score_rules = (
        (_STRICT_SCORE, _STRICT_SCORE_RULES) if strict else (_LENIENT_SCORE, _LENIENT_SCORE_RULES)
    )
    rules = [_field_count("<", 6, RUN_FIELDS), *score_rules]
    if use_rank:
        rules += _integer_rules("f[4]", rank, "the rank (settings.ordering: rank)", strict)
    load = _load(path, "run_rows", "run", run, f"f[1], f[3], {rank}, {score}", rules)
    return replace(load, collection=collection)


def numbered_lines() -> str:
    """SQL over one bound path: (line_no, line, f) for every data line, numbered in file order."""
    return f"""SELECT line_no, line, {_ALL_FIELDS} AS f
        FROM (SELECT row_number() OVER () AS line_no, line FROM {_READ})
        WHERE NOT ({_SKIP})"""


def literal_path(path: Path) -> str:
    """`path` as DuckDB must be given it to read exactly that file.

    DuckDB expands `*`, `?` and `[` in file names, so `run[1].trec` would read `run1.trec`; each of
    them becomes a one-character class (`[[]`), which matches only itself.
    """
    return "".join(f"[{c}]" if c in "*?[" else c for c in str(path))


def _quoted(expr: str) -> str:
    return f"'''' || {expr} || ''''"


def _field_count(op: str, n: int, names: str) -> Rule:
    return Rule(f"len(f) {op} {n}", f"'expected {n} fields ({names}), found ' || len(f)")


# Valid UTF-8 can still be binary, or UTF-16 without a byte-order mark: NUL never occurs in text.
_NUL = Rule("contains(line, chr(0))", "'a NUL byte: not a text file (UTF-16, or binary?)'")


def _atol(expr: str, sql_type: str) -> str:
    """C atol: an optional sign and the digits that follow; no digits read as 0."""
    digits = f"coalesce(nullif(regexp_extract({expr}, '^[+-]?[0-9]+'), ''), '0')"
    return f"TRY_CAST({digits} AS {sql_type})"


def _integer_rules(expr: str, value: str, what: str, strict: bool) -> list[Rule]:
    # DuckDB's cast rounds "1.7" to 2 and reads "1e2", "0x10" and "1_0"; only plain digits pass.
    rules = [Rule(f"{value} IS NULL", f"'{what} ' || {_quoted(expr)} || ' is out of range'")]
    if strict:
        plain = f"NOT regexp_full_match({expr}, '[+-]?[0-9]+')"
        rules.insert(0, Rule(plain, f"'{what} must be an integer, found ' || {_quoted(expr)}"))
    return rules


_STRICT_SCORE = "TRY_CAST(f[5] AS DOUBLE)"
# DuckDB also reads "1_000" as 1000, where C reads 1: such a score is not plainly a number.
_PLAIN_SCORE = f"{_STRICT_SCORE} IS NOT NULL AND NOT contains(f[5], '_')"
_STRICT_SCORE_RULES = [
    Rule(f"NOT ({_PLAIN_SCORE})", f"'the score must be a number, found ' || {_quoted('f[5]')}"),
    Rule(
        f"NOT isfinite({_STRICT_SCORE})",
        f"'the score must be a finite number, found ' || {_quoted('f[5]')}",
    ),
]
# C atof: the longest prefix that is a decimal number, inf or nan; no number reads as 0. Hexadecimal
# ("0x1p3") is the one form atof reads that DuckDB cannot, so it stays NULL and is reported.
_ATOF_PREFIX = "'^[+-]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|(?i:inf(inity)?|nan))'"
_LENIENT_SCORE = f"""CASE WHEN {_PLAIN_SCORE} THEN {_STRICT_SCORE}
    WHEN regexp_matches(f[5], '^[+-]?0[xX]') THEN NULL
    ELSE coalesce(TRY_CAST(nullif(regexp_extract(f[5], {_ATOF_PREFIX}), '') AS DOUBLE), 0.0) END"""
_LENIENT_SCORE_RULES = [
    Rule(
        f"({_LENIENT_SCORE}) IS NULL",
        f"'hexadecimal scores are not read, found ' || {_quoted('f[5]')}",
    )
]


def _load(path: Path, table: str, key: str, name: str, select: str, rules: list[Rule]) -> Load:
    rules = [_NUL, *rules]
    bad = "coalesce(" + " OR ".join(f"({r.bad})" for r in rules) + ", true)"
    explain = " ".join(f"WHEN {r.bad} THEN {r.problem}" for r in rules)

    def insert(fields: str, bad: str) -> Statement:
        lines = f"SELECT line, {fields} AS f FROM {_READ} WHERE NOT ({_SKIP})"
        sql = f"INSERT INTO {quote_identifier(table)} SELECT ?, {select}, NOT {bad} FROM ({lines})"
        return Statement(sql, [name, literal_path(path)])

    problems = f"""SELECT line_no, line, CASE {explain} ELSE 'unreadable' END
        FROM ({numbered_lines()}) WHERE {bad} ORDER BY line_no LIMIT 5"""
    return Load(
        path=path,
        table=table,
        key=key,
        name=name,
        fast=insert(_FAST_FIELDS, f"({_NOT_FAST} OR {bad})"),
        general=insert(_ALL_FIELDS, bad),
        problems=Statement(problems, [literal_path(path)]),
    )
