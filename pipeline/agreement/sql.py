"""The SQL that reads what the judgments' statistics need, over the evaluation's tables.

Labels: the confusion cells of every agreement entry (`pipeline.plan.judgment_cells`: the
reference set's rows FULL OUTER JOIN the other set's on (qid, docno), counted per (reference
grade, other grade), a grade being NULL where that set does not judge the pair, and a total row
counting the queries with a pair both judge), which an engine that keeps the qrels' labels away
from this machine leaves in `judgment_cells`, and which are otherwise counted here from the
loaded `qrels`. Orderings: the `aggregate` rows of the two sides, matched by run name; with a
bootstrap, their `per_query` rows. Collections, runs and metrics are bound values, never SQL
text.
"""

from __future__ import annotations

from pipeline.agreement.names import COUNT_STATISTICS
from pipeline.plan.judgment_cells import CELLS_TABLE

__all__ = [
    "AGREEMENT_TABLE",
    "AGREEMENT_TEXT",
    "AGREEMENT_TEXT_VIEW",
    "CELL_VALUES",
    "CORRELATION_TABLE",
    "confusion_rows",
    "confusion_table",
    "per_query_sql",
    "values_sql",
]

#: the tables made, with their columns
AGREEMENT_TABLE = """CREATE TABLE agreement (reference VARCHAR, other VARCHAR,
    collection VARCHAR, statistic VARCHAR, value DOUBLE)"""
#: the view of `agreement` that text outputs (CSV, TSV, JSON lines) write: a count as the integer
#: it is (`pairs_shared,4423`), every other value as the table holds it, to the same digits; as
#: JSON, which those writers print as it is. Parquet and DuckDB outputs keep the table's doubles.
AGREEMENT_TEXT = "agreement_as_text"
_COUNTS = ", ".join(f"'{name}'" for name in COUNT_STATISTICS)  # irpipe's own names, not data
AGREEMENT_TEXT_VIEW = f"""CREATE VIEW {AGREEMENT_TEXT} AS
SELECT reference, other, collection, statistic,
    CASE WHEN list_contains([{_COUNTS}], statistic) THEN CAST(CAST(value AS BIGINT) AS JSON)
         ELSE CAST(value AS JSON) END AS value
FROM agreement"""
CORRELATION_TABLE = """CREATE TABLE correlation (reference VARCHAR, other VARCHAR,
    collection VARCHAR, metric VARCHAR, statistic VARCHAR, value DOUBLE, ci_low DOUBLE,
    ci_high DOUBLE, run VARCHAR)"""


def confusion_table(cells: bool) -> str:
    """The table `confusion`; a grade has the qrels' type (an integer, or a decimal grade),
    taken from the cells; without cells (no agreement entry) it stays empty, of integers."""
    if not cells:
        return """CREATE TABLE confusion (reference VARCHAR, other VARCHAR,
    reference_grade INTEGER, other_grade INTEGER, pairs BIGINT)"""
    return f"""CREATE TABLE confusion AS
    SELECT reference, other, reference_grade, other_grade, pairs FROM {CELLS_TABLE} LIMIT 0"""


_ENTRY = "reference = $reference AND other = $other"

#: the cells of one entry (bound: reference, other) as numbers (NaN: the set does not judge the
#: pair), the total row last
CELL_VALUES = f"""
SELECT coalesce(CAST(reference_grade AS DOUBLE), 'NaN'::DOUBLE) AS reference,
    coalesce(CAST(other_grade AS DOUBLE), 'NaN'::DOUBLE) AS other,
    CAST(pairs AS DOUBLE) AS pairs, queries
FROM {CELLS_TABLE} WHERE {_ENTRY} ORDER BY total, reference_grade, other_grade"""


def confusion_rows() -> str:
    """The cells of an agreement entry (bound: reference, other) into `confusion`, in grade
    order, the pairs only one set judges (a NULL grade) after the others."""
    return f"""
INSERT INTO confusion
SELECT reference, other, reference_grade, other_grade, pairs FROM {CELLS_TABLE}
WHERE NOT total AND {_ENTRY}
ORDER BY reference_grade NULLS LAST, other_grade NULLS LAST"""


def values_sql() -> str:
    """Each run's value under both sides (bound: reference and other collection and metric),
    for the runs both have a finite value of, in run name order."""
    return """
SELECT r.run, r.value AS reference, o.value AS other
FROM aggregate r JOIN aggregate o ON o.run = r.run
WHERE r.collection = $reference_collection AND r.metric = $reference_metric
    AND o.collection = $other_collection AND o.metric = $other_metric
    AND isfinite(r.value) AND isfinite(o.value)
ORDER BY r.run"""


def per_query_sql() -> str:
    """One side's per-query values (bound: collection, metric, runs), NULL as NaN."""
    return """
SELECT run, qid, coalesce(value, 'NaN'::DOUBLE) AS value
FROM per_query
WHERE collection = $collection AND metric = $metric AND list_contains($runs, run)"""
