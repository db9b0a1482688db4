"""TREC qrels, `qid iter docno rel` (trec_eval's): a collection's judgments, the default format.

The `iter` field is read and ignored, as trec_eval does; the grade is an integer (negative
grades included), or a finite decimal under `grades: real`. A Parquet file or a frame holds the
same judgments as columns `qid`, `docno`, `rel` (`table_rows`).
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import QRELS
from pipeline.inputs.rules import grade_field
from pipeline.inputs.text_lines import field_count, text_rules

__all__ = ["READS_TABLES", "FIELDS", "NAME", "read"]

#: the name a collection's `format` gives it
NAME = "trec"
#: a line's fields, as messages name them
FIELDS = "qid iter docno rel"
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = True


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How a qrels file is read into `qrels` under the `input` `mode` and `grades` setting."""
    rel, rel_rules = grade_field("f[4]", mode, grades)
    rules = text_rules(field_count("<>", 4, FIELDS), *rel_rules)
    return Format(NAME, QRELS.name, f"f[1], f[3], {rel}", rules, grades=grades)
