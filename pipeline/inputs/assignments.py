"""nuggetizer's assignments, JSONL: one answer's topic a line, `{"qid", "run_id", "nuggets":
[{"text", "importance", "assignment"}], ...}`: whether the answer supports each nugget. A run's
`assignments:` names such a file (the same as `path:` with `format: assignments`); the run's
name is the spec's (nuggetizer's `run_id` is its answer file's name).

An answer is read as a run over its topic's nuggets (`nuggets`): each nugget a document (its
importance and text the docno, `nuggets.DOCNO`: a nugget of another importance than the
collection's is not the collection's; its place in the list the rank), its assignment the score: `support` 2,
`partial_support` 1, `not_support` 0 (nuggetizer's 3-grade labels; its 2-grade mode writes the
first and the last). Under `input: lenient` another label (`failed`, or an LLM's own word) is 0, as
nuggetizer scores it. An answer without nuggets keeps its topic: one row of no text.
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.json_lines import (
    NUGGETS,
    QID,
    each,
    field,
    json_rules,
    parsed,
)
from pipeline.inputs.json_lines import (
    label_rule as labels_rule,
)
from pipeline.inputs.loaded_tables import RUNS
from pipeline.inputs.nuggets import DOCNO, DOCNOS, shown
from pipeline.inputs.text_lines import text_rules

__all__ = ["READS_TABLES", "RUNS_ARE", "FIELDS", "LABELS", "NAME", "label_rule", "read", "support"]

#: the name a run's `format` gives it
NAME = "assignments"
#: a line's keys, as messages name them
FIELDS = '{"qid", "nuggets": [{"text", "importance", "assignment"}]}'
#: each assignment label and the score it is read as
LABELS = {"support": 2, "partial_support": 1, "not_support": 0}
_LABEL = field("assignment")
#: what a run of this format is, as a measure reads it (`Measure.reads`)
RUNS_ARE = "assignments"
#: what `input: lenient` reads that strict refuses, as a notice says it
LENIENT_READS = (
    "an assignment other than support, partial_support or not_support, read as no support"
)
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False


def support() -> str:
    """SQL over a nugget `n`: its assignment's score, 2, 1 or 0 (0 for the placeholder)."""
    whens = " ".join(f"WHEN '{label}' THEN {score}" for label, score in LABELS.items())
    return f"CASE WHEN n IS NULL THEN 0.0 ELSE CAST(CASE {_LABEL} {whens} ELSE 0 END AS DOUBLE) END"


def label_rule(mode: str):
    """The rule of the assignments: one of `LABELS` under `strict`, there in both modes."""
    return labels_rule(mode, "assignment", tuple(LABELS), "no support")


def read(mode: str = "strict", use_rank: bool = False) -> Format:
    """How an assignments file is read into `run_rows`: one row per nugget (docno its text, rank
    its place, score its assignment)."""
    select = f"{QID}, {each(DOCNO)}, unnest(range(1, len({NUGGETS}) + 1)), {each(support())}"
    rules = text_rules(*json_rules(FIELDS), label_rule(mode))
    return Format(NAME, RUNS.name, select, rules, called="assignments", qid=QID, docnos=DOCNOS, shown=shown,
                  member="nugget", judged_only="r.docno <> ''" if mode == "strict" else "",
                  parse=parsed(("text", "importance", "assignment")))  # fmt: skip
