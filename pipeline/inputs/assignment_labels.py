"""nuggetizer's assignments read as judgments (`format: assignments` of a collection, or `irpipe
agree --format assignments`): who assigned the labels (an LLM, a person) judged each answer's
support of each nugget, so that two assignment sets of the same answers are two judgment sets,
compared label by label by `agreement:`.

Each (answer, nugget) is a judged document of its topic, named by the answer's `run_id` and the
nugget's text (a tab between them): two sets meet on (run_id, qid, text). Its grade is its
assignment: `support` 2, `partial_support` 1, `not_support` 0; under `input: lenient` another
label is 0 (strict refuses it, as the run format `assignments` does).
"""

from __future__ import annotations

from pipeline.inputs.assignments import label_rule, support
from pipeline.inputs.format import Format
from pipeline.inputs.json_lines import NUGGETS, QID, each, json_rules, parsed
from pipeline.inputs.loaded_tables import QRELS
from pipeline.inputs.text_lines import text_rules

__all__ = ["FIELDS", "NAME", "READS_TABLES", "read"]

#: the name a collection's `format` gives it (the run format of the same files has it too)
NAME = "assignments"
#: a line's keys, as messages name them
FIELDS = '{"qid", "run_id", "nuggets": [{"text", "assignment"}]}'
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = False
#: an answer's nugget as a document: the answer's run_id and the nugget's text
_DOCNO = "(coalesce(j.run_id, '') || chr(9) || coalesce(n.text, ''))"


def read(mode: str = "strict", grades: str = "integer") -> Format:
    """How an assignments file is read into `qrels`: one judgment per (answer, nugget)."""
    # A topic without nuggets has nothing to agree on: no row (no placeholder).
    grade = f"CAST({support()} AS INTEGER)"
    select = f"{QID}, {each(_DOCNO, placeholder=False)}, {each(grade, placeholder=False)}"
    rules = text_rules(*json_rules(FIELDS), label_rule(mode))
    docnos = f"list_transform({NUGGETS}, lambda n: {_DOCNO})"
    shape = parsed(("text", "assignment"), ("run_id",))
    return Format(NAME, QRELS.name, select, rules, grades=grades, called="assignments",
                  qid=QID, docnos=docnos, member="nugget", parse=shape)  # fmt: skip
