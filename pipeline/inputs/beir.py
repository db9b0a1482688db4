"""BEIR's qrels, `query-id corpus-id score` under a header line, as BEIR and MTEB distribute them.

A collection names the format (`format: beir`), or its file's first line does: a first line whose
fields are BEIR's column names is a BEIR header (`recognises`; a TREC line has four fields and the
header three, so a TREC file is never taken for a BEIR one). The lines are split and checked as
TREC's; the header (wherever it repeats, as it does in each part file a Spark job writes) is
skipped, and still counts as line 1.
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import QRELS
from pipeline.inputs.rules import Rule, grade_field
from pipeline.inputs.text_lines import field_count, text_rules

__all__ = ["READS_TABLES", "COLUMNS", "NAME", "read", "recognises"]

#: the name a collection's `format` gives it
NAME = "beir"
#: BEIR's header, in its order: the columns of its qrels' TSV files
COLUMNS = ("query-id", "corpus-id", "score")

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
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How a BEIR qrels file is read into `qrels`: the same rules as TREC's, its header skipped.
    Under integer grades a decimal one (MTEB's soft labels) is refused in both modes:
    `lenient`'s atol would silently make 0.7 a 0."""
    rel, rel_rules = grade_field("f[3]", mode, grades, decimals_refused=True)
    rules = text_rules(_BAD_HEADER, field_count("<>", 3, " ".join(COLUMNS)), *rel_rules)
    select = f"f[1], f[2], {rel}"
    return Format(NAME, QRELS.name, select, rules, docno="f[2]", skip=_HEADER, grades=grades)


def recognises(fields: list[str]) -> bool:
    """Whether a file's first line, split into `fields`, is a BEIR header: BEIR's column names,
    at most three of them."""
    return 0 < len(fields) <= 3 and set(fields) <= set(COLUMNS)
