"""Support judgments of generated answers, `run qid sentence docno support`: whether the document
a sentence of a run's answer cites supports it, 2 (full), 1 (partial) or 0 (none), as the TREC
RAG track judges citations. `sentence` counts from 0, as in the answer; `run` is the run's name
in the spec. A collection's `support:` names such a file (the same as `qrels:` with
`format: support`).

A judgment is read as one of a judged document: its docno `sentence<TAB>docno<TAB>run`, the docno
an answer's row of that citation has (`pipeline.inputs.answers`), its grade the support. Under
`input: strict` the support is 0, 1 or 2; under `lenient` any integer, which the measures read
as no support unless it is 1 or 2.
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import QRELS
from pipeline.inputs.rules import Rule, grade_field, quoted
from pipeline.inputs.text_lines import field_count, text_rules

__all__ = ["READS_TABLES", "FIELDS", "GRADES", "NAME", "read"]

#: the name a collection's `format` gives it
NAME = "support"
#: a line's fields, as messages name them
FIELDS = "run qid sentence docno support"
#: the supports a judgment may give, by what they mean
GRADES = {"full": 2, "partial": 1, "none": 0}
#: what `input: lenient` reads that strict refuses, as a notice says it
LENIENT_READS = "a support other than 2, 1 or 0, read as no support"
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False

# A sentence is a natural number, written as the answer numbers it; read as its digits, so that
# `03` is sentence 3.
_SENTENCE = "TRY_CAST(f[3] AS BIGINT)"
_SENTENCE_RULES = [
    Rule(
        f"NOT regexp_full_match(f[3], '[0-9]+') OR {_SENTENCE} IS NULL",
        f"'the sentence must be a number counted from 0 ({FIELDS}), found ' || {quoted('f[3]')}",
    ),
]


def _support_rule(rel: str) -> Rule:
    return Rule(
        f"{rel} NOT IN (0, 1, 2)",
        f"'the support must be 2 (full), 1 (partial) or 0 (none), found ' || {quoted('f[5]')}"
        " || ' (input: lenient reads another as no support)'",
    )


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How support judgments are read into `qrels`: one judged citation a line (the support an
    integer whatever `grades` says: it is a label, not a grade a measure could read as real)."""
    rel, rel_rules = grade_field("f[5]", mode, "integer")
    strict = [_support_rule(rel)] if mode == "strict" else []
    rules = text_rules(field_count("<>", 5, FIELDS), *_SENTENCE_RULES, *rel_rules, *strict)
    docno = f"{_SENTENCE}::VARCHAR || chr(9) || f[4] || chr(9) || f[1]"
    return Format(NAME, QRELS.name, f"f[2], {docno}, {rel}", rules, docno=docno,
                  called=f"support judgments (format: {NAME})")  # fmt: skip
