"""The SQL that reads what the judgments' statistics need, over the evaluation's tables.

Labels: one pass over the loaded `qrels` (collection, qid, docno, rel): the reference set's rows
FULL OUTER JOIN the other set's on (qid, docno), counted per (reference grade, other grade), a
grade being NULL where that set does not judge the pair; the same aggregation's grand total
counts the queries with a pair both judge. Orderings: the `aggregate` rows of the two sides,
matched by run name; with a bootstrap, their `per_query` rows. Collections, runs and metrics are
bound values, never SQL text.
"""

from __future__ import annotations

__all__ = [
    "CONFUSION_TABLE",
    "CELLS",
    "CORRELATION_TABLE",
    "AGREEMENT_TABLE",
    "cells_sql",
    "confusion_rows",
    "per_query_sql",
    "values_sql",
]

#: the tables made, with their columns; a grade has the qrels' type (an integer, or a decimal
#: grade), taken from `qrels` itself
AGREEMENT_TABLE = """CREATE TABLE agreement (reference VARCHAR, other VARCHAR,
    collection VARCHAR, statistic VARCHAR, value DOUBLE)"""
CONFUSION_TABLE = """CREATE TABLE confusion AS
    SELECT ''::VARCHAR AS reference, ''::VARCHAR AS other, rel AS reference_grade,
        rel AS other_grade, 0::BIGINT AS pairs
    FROM qrels LIMIT 0"""
CORRELATION_TABLE = """CREATE TABLE correlation (reference VARCHAR, other VARCHAR,
    collection VARCHAR, metric VARCHAR, statistic VARCHAR, value DOUBLE, ci_low DOUBLE,
    ci_high DOUBLE, run VARCHAR)"""

#: the cells of one agreement entry, made by `cells_sql`, read and then dropped
CELLS = "irpipe_judgment_cells"


def cells_sql() -> str:
    """The cells of one agreement entry (bound: reference, other) as the table `CELLS`: each
    (reference_grade, other_grade) with its pairs, and the total row (`total`), whose
    `queries` is the number of queries with a pair both sets judge."""
    return f"""
CREATE TEMP TABLE {CELLS} AS
WITH r AS (SELECT qid, docno, rel FROM qrels WHERE collection = $reference),
o AS (SELECT qid, docno, rel FROM qrels WHERE collection = $other),
pairs AS (
    SELECT coalesce(r.qid, o.qid) AS qid, r.rel AS reference_grade, o.rel AS other_grade
    FROM r FULL OUTER JOIN o ON r.qid = o.qid AND r.docno = o.docno
)
SELECT reference_grade, other_grade, count(*) AS pairs,
    count(DISTINCT qid) FILTER (WHERE reference_grade IS NOT NULL AND other_grade IS NOT NULL)
        AS queries,
    grouping(reference_grade, other_grade) <> 0 AS total
FROM pairs
GROUP BY GROUPING SETS ((reference_grade, other_grade), ())"""


#: the cells as numbers (NaN: the set does not judge the pair), the total row last
CELL_VALUES = f"""
SELECT coalesce(CAST(reference_grade AS DOUBLE), 'NaN'::DOUBLE) AS reference,
    coalesce(CAST(other_grade AS DOUBLE), 'NaN'::DOUBLE) AS other,
    CAST(pairs AS DOUBLE) AS pairs, queries
FROM {CELLS} ORDER BY total, reference_grade, other_grade"""


def confusion_rows() -> str:
    """The cells of an agreement entry (bound: reference, other) into `confusion`, in grade
    order, the pairs only one set judges (a NULL grade) after the others."""
    return f"""
INSERT INTO confusion
SELECT $reference, $other, reference_grade, other_grade, pairs FROM {CELLS}
WHERE NOT total
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
