"""ndeval's subtopic qrels, `qid subtopic docno grade`: the TREC Web track's diversity judgments.

Only a collection's `format: subtopics` names them (their lines look like TREC's). They are read
into `subtopic_qrels`, one row per (qid, subtopic, docno), the grade as TREC's is under the
`grades` setting and the subtopic plain digits (ndeval reads a natural number); `qrels` then
holds each document's highest grade over its subtopics (`max_grades`), which every measure but
the diversity ones reads. A table holds them as columns `qid`, `docno`, `rel`, `subtopic`.
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import SUBTOPIC_QRELS
from pipeline.inputs.rules import Rule, grade_field, quoted
from pipeline.inputs.text_lines import field_count, text_rules
from pipeline.sql import Statement

__all__ = ["READS_TABLES", "FIELDS", "NAME", "max_grades", "read"]

#: the name a collection's `format` gives it
NAME = "subtopics"
#: a line's fields, as messages name them
FIELDS = "qid subtopic docno grade"

# ndeval reads a subtopic as a natural number (digits only): so does irpipe, in either mode.
_SUBTOPIC = "TRY_CAST(f[2] AS INTEGER)"
_SUBTOPIC_RULES = [
    Rule(
        "NOT regexp_full_match(f[2], '[0-9]+')",
        f"""'the subtopic must be a non-negative integer (subtopic qrels: {FIELDS}), '
        || 'found ' || {quoted("f[2]")}""",
    ),
    Rule(f"{_SUBTOPIC} IS NULL", f"'the subtopic ' || {quoted('f[2]')} || ' is out of range'"),
]
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = True


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


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How subtopic qrels are read into `subtopic_qrels`, under the collection's name."""
    rel, rel_rules = grade_field("f[4]", mode, grades)
    rules = text_rules(field_count("<>", 4, FIELDS), *_SUBTOPIC_RULES, *rel_rules)
    select = f"f[1], f[3], {rel}, {_SUBTOPIC}"
    return Format(
        NAME,
        SUBTOPIC_QRELS.name,
        select,
        rules,
        grades=grades,
        called=f"subtopic qrels (format: {NAME})",
        after=max_grades,
    )
