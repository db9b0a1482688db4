"""nuggetizer's nuggets, JSONL: one topic a line, `{"qid", "query", "nuggets": [{"text",
"importance"}]}` (the TREC RAG track's nugget evaluation). A collection's `nuggets:` names such a
file (the same as `qrels:` with `format: nuggets`).

A nugget is read as a judged document of its topic: its docno its grade and text
(`grade<TAB>text`, so that an answer's nugget of the same text and another importance is another
nugget: `DOCNO`), its importance the grade
(`vital` 2, `okay` 1; under `input: lenient`, any other importance 0, counted among all nuggets
only, as nuggetizer counts it). An answer's assignments are then a run over these documents
(`assignments`), and the nugget measures read both. A topic without nuggets is still a topic: one
judgment of no text, graded -1 (judged, not a nugget), so that its answers score 0.
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.json_lines import (
    NUGGETS,
    QID,
    TEXT,
    each,
    field,
    json_rules,
    label_rule,
    parsed,
)
from pipeline.inputs.loaded_tables import QRELS
from pipeline.inputs.text_lines import text_rules

__all__ = [
    "DOCNO",
    "DOCNOS",
    "FIELDS",
    "GRADES",
    "IMPORTANCE",
    "NAME",
    "READS_TABLES",
    "importance_grade",
    "read",
    "shown",
]

#: the name a collection's `format` gives it
NAME = "nuggets"
#: a line's keys, as messages name them
FIELDS = '{"qid", "nuggets": [{"text", "importance"}]}'
#: the importances, and the grade each is read as
GRADES = {"vital": 2, "okay": 1}
IMPORTANCE = field("importance")
#: what `input: lenient` reads that strict refuses, as a notice says it
LENIENT_READS = "an importance other than vital or okay, counted among all nuggets only"
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False


def importance_grade(expr: str = IMPORTANCE) -> str:
    """SQL: the grade of an importance `expr` (0 for another, -1 for the placeholder's NULL)."""
    whens = " ".join(f"WHEN '{name}' THEN {grade}" for name, grade in GRADES.items())
    return f"CASE WHEN n IS NULL THEN -1 ELSE CASE {expr} {whens} ELSE 0 END END"


#: SQL over a nugget `n`: its docno, the grade of its importance and its text ('' for the
#: placeholder)
DOCNO = f"CASE WHEN n IS NULL THEN '' ELSE CAST({importance_grade()} AS VARCHAR) || chr(9) || {TEXT} END"
#: SQL over a line: its nuggets' docnos, which the reports of duplicates find its lines by
DOCNOS = f"list_transform({NUGGETS}, lambda n: {DOCNO})"
_IMPORTANCES = {str(grade): name for name, grade in GRADES.items()}


def shown(docno: str) -> str:
    """How a message names a nugget by its docno: its text and importance."""
    grade, _, text = docno.partition("\t")
    return f"{text!r} ({_IMPORTANCES.get(grade, 'of another importance')})"


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How a nuggets file is read into `qrels`: one row per nugget (docno its text, rel the
    grade of its importance)."""
    select = f"{QID}, {each(DOCNO)}, {each(importance_grade())}"
    rules = text_rules(
        *json_rules(FIELDS),
        label_rule(mode, "importance", tuple(GRADES), "a nugget of no importance"),
    )
    return Format(NAME, QRELS.name, select, rules, grades=grades, called="nuggets", qid=QID,
                  docnos=DOCNOS, member="nugget", shown=shown,
                  parse=parsed(("text", "importance")))  # fmt: skip
