"""The formats a collection's qrels file may have: TREC's (`qid iter docno rel`, the default),
BEIR's (`query-id corpus-id score` under a header line, as BEIR and MTEB distribute their qrels)
and ndeval's subtopic qrels (`qid subtopic docno grade`, the TREC Web track's diversity qrels).

A collection names its format (`format: beir`), or its file's first line says: a first line whose
fields are BEIR's column names is a BEIR header. A TREC line has four fields and BEIR's header
three, so a TREC file is never taken for a BEIR one. Both formats are read by the same passes
(`pipeline.plan.inputs`), split and checked alike; a BEIR file's header (wherever it repeats, as
it does in each part file a Spark job writes) is skipped, and still counts as line 1. Subtopic
qrels, which only their `format: subtopics` names (their lines look like TREC's), are read into
`subtopic_qrels`, one row per (qid, subtopic, docno); `qrels` then holds each document's highest
grade over its subtopics (`max_grades`), which every measure but the diversity ones reads.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

from pipeline.plan.inputs import SUBTOPIC_FIELDS, Format, field_count, qrels_format, text_format
from pipeline.plan.number_fields import Rule, grade_field, quoted
from pipeline.plan.statement import Statement
from pipeline.plan.table_inputs import is_table_input

__all__ = [
    "BEIR_COLUMNS",
    "QRELS_FORMATS",
    "beir_format",
    "format_of",
    "max_grades",
    "named_format",
    "recognised",
    "subtopics_format",
]

#: the formats a collection's `format` may name
QRELS_FORMATS = ("trec", "beir", "subtopics")
#: BEIR's header, in its order: the columns of its qrels' TSV files
BEIR_COLUMNS = ("query-id", "corpus-id", "score")

_NAMES = "['query-id', 'corpus-id', 'score']"
_GAP = "[ \\t\\v\\f]"
# The header itself, however separated; a UTF-8 byte-order mark before it is no data either.
_HEADER = (
    f"regexp_full_match(line, '\\x{{FEFF}}?{_GAP}*query-id{_GAP}+corpus-id{_GAP}+score{_GAP}*')"
)
# A line of column names that is not the header (the header was skipped): a header lacking one.
_MISSING = f"array_to_string(list_filter({_NAMES}, lambda c: NOT list_contains(f, c)), ', ')"
_BAD_HEADER = Rule(
    f"list_has_all({_NAMES}, f)",
    f"""'a BEIR header names the columns query-id, corpus-id, score in this order; '
    || CASE WHEN {_MISSING} = '' THEN 'found them out of order' ELSE 'missing: ' || {_MISSING}
    END""",
)


def beir_format(mode: str = "strict", grades: str = "integer") -> Format:
    """How a BEIR qrels file (`query-id corpus-id score`) is read into `qrels`, under its
    collection's name: the same rules as TREC's, its header skipped. Under integer grades a
    decimal one (MTEB's soft labels) is refused in both modes: `lenient`'s atol would silently
    make 0.7 a 0."""
    rel, rel_rules = grade_field("f[3]", mode, grades, decimals_refused=True)
    rules = [_BAD_HEADER, field_count("<>", 3, " ".join(BEIR_COLUMNS)), *rel_rules]
    select = f"f[1], f[2], {rel}"
    return text_format("qrels", "collection", select, rules, "f[2]", _HEADER, grades)


# ndeval reads a subtopic as a natural number (digits only): so does irpipe, in either mode.
_SUBTOPIC = "TRY_CAST(f[2] AS INTEGER)"
_SUBTOPIC_RULES = [
    Rule(
        "NOT regexp_full_match(f[2], '[0-9]+')",
        f"""'the subtopic must be a non-negative integer (subtopic qrels: {SUBTOPIC_FIELDS}), '
        || 'found ' || {quoted("f[2]")}""",
    ),
    Rule(f"{_SUBTOPIC} IS NULL", f"'the subtopic ' || {quoted('f[2]')} || ' is out of range'"),
]


def subtopics_format(mode: str = "strict", grades: str = "integer") -> Format:
    """How ndeval's subtopic qrels (`qid subtopic docno grade`) are read into `subtopic_qrels`,
    under the collection's name: the grade as TREC's is under the `grades` setting, and a
    subtopic of plain digits."""
    rel, rel_rules = grade_field("f[4]", mode, grades)
    rules = [field_count("<>", 4, SUBTOPIC_FIELDS), *_SUBTOPIC_RULES, *rel_rules]
    select = f"f[1], f[3], {rel}, {_SUBTOPIC}"
    return text_format("subtopic_qrels", "collection", select, rules, grades=grades)


def max_grades(names: list[str]) -> Statement:
    """`qrels` of the subtopic collections `names`: each judged document once, with its
    highest grade over its subtopics (ndeval's document is relevant when it is to any). In
    (collection, qid, docno) order: the rankings' joins then meet the qrels in one order on
    every run, and the measures' sums add their terms in one order, to the same bits (a
    grouping alone leaves the order to the threads)."""
    return Statement(
        """INSERT INTO qrels SELECT collection, qid, docno, max(rel), bool_and(ok)
        FROM subtopic_qrels WHERE list_contains(?, collection) GROUP BY collection, qid, docno
        ORDER BY collection, qid, docno""",
        [names],
    )


def named_format(given: str | None, mode: str = "strict", grades: str = "integer") -> Format:
    """How qrels of the format `given` are read (TREC's when none is) under the `input` `mode`
    and the `grades` setting: what the plan compiles, reading no file (validation gives a
    collection whose file shows a BEIR header its format)."""
    if given == "subtopics":
        return subtopics_format(mode, grades)
    return beir_format(mode, grades) if given == "beir" else qrels_format(mode, grades)


def format_of(
    path: Path | str, given: str | None, mode: str = "strict", grades: str = "integer"
) -> Format:
    """How a collection's qrels at `path` are read: by its `format` if `given`, else by the
    format its first line shows (`recognised`)."""
    return named_format(given or recognised(path), mode, grades)


def recognised(path: Path | str) -> str:
    """`beir` when a local text file's first line (plain or .gz) is a BEIR header, one whose
    fields are BEIR's column names (at most three: a TREC line has four); else `trec`. A file
    that cannot be read here is `trec`: reading it later says what is wrong."""
    if not isinstance(path, Path) or is_table_input(path):
        return "trec"  # a URI or a table: no first line to read here
    try:
        first = _first_line(path)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error):
        return "trec"
    fields = [f for f in re.split(r"[ \t\v\f\r\n]+", first.removeprefix("\ufeff")) if f]
    return "beir" if 0 < len(fields) <= 3 and set(fields) <= set(BEIR_COLUMNS) else "trec"


def _first_line(path: Path) -> str:
    """The first line of a plain or gzip-compressed text file (at most 4 kB of it)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        return handle.readline(4096)
