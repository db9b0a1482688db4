"""TREC runs, `qid Q0 docno rank score tag` (trec_eval's): a system's ranked documents per query.

Only the qid, docno and score are read (and the rank under `ordering: rank`, which trec_eval
ignores); fields past the sixth are allowed, as trec_eval allows them. A Parquet file or a frame
holds the same rows as columns `qid`, `docno`, `score` and optionally `rank` (`table_rows`).
"""

from __future__ import annotations

from pipeline.inputs.format import Format
from pipeline.inputs.loaded_tables import RUNS
from pipeline.inputs.rules import atol, integer_rules, number, number_rules
from pipeline.inputs.text_lines import field_count, text_rules

__all__ = ["READS_TABLES", "RUNS_ARE", "FIELDS", "NAME", "read"]

#: the name a run's `format` gives it (the default)
NAME = "trec"
#: a line's fields, as messages name them
FIELDS = "qid Q0 docno rank score tag"
#: what a run of this format is, as a measure reads it (`Measure.reads`)
RUNS_ARE = "rankings"
#: whether a table (Parquet, a frame) may hold it, by the columns of its table
READS_TABLES = True


def read(mode: str = "strict", use_rank: bool = False) -> Format:
    """How a run file is read into `run_rows` under the `input` `mode`; the rank field is
    checked only when it orders the list (`use_rank`)."""
    strict = mode == "strict"
    rank = "TRY_CAST(f[4] AS BIGINT)" if strict else atol("f[4]", "BIGINT")
    score = number("f[5]", strict)
    rules = [field_count("<", 6, FIELDS), *number_rules("f[5]", score, "the score", strict)]
    if use_rank:
        rules += integer_rules("f[4]", rank, "the rank (settings.ordering: rank)", strict)
    return Format(NAME, RUNS.name, f"f[1], f[3], {rank}, {score}", text_rules(*rules))
