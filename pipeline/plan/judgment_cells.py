"""The confusion cells of the spec's agreement entries: one statement of SQL that both engines run
over the qrels' rows, DuckDB over its loaded `qrels` and Spark SQL over the qrels it reads (so
that both count the same cells, and every statistic computed from them is the same).

Per entry, the reference set's rows FULL OUTER JOIN the other set's on (qid, docno), counted per
(reference grade, other grade), a grade being NULL where that set does not judge the pair; the
same aggregation's grand total (`total`) counts, in `queries`, the queries with a pair both
judge. The entries' cells are one UNION ALL; collections are bound values, never SQL text, and
the text is written in the SQL that DuckDB and Spark both read (positional parameters,
`grouping_id`, an aggregate's FILTER).
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline.sql import Statement

__all__ = ["CELLS_TABLE", "cells_statement", "judged_pairs"]

#: the table an engine leaves the cells in: (reference, other, reference_grade, other_grade,
#: pairs, queries, total)
CELLS_TABLE = "judgment_cells"

_ENTRY = """SELECT CAST(? AS STRING) AS reference, CAST(? AS STRING) AS other, reference_grade,
    other_grade, count(*) AS pairs,
    count(DISTINCT qid) FILTER (WHERE reference_grade IS NOT NULL AND other_grade IS NOT NULL)
        AS queries,
    grouping_id(reference_grade, other_grade) <> 0 AS total
FROM (
    SELECT coalesce(r.qid, o.qid) AS qid, r.rel AS reference_grade, o.rel AS other_grade
    FROM (SELECT qid, docno, rel FROM {qrels} WHERE collection = ?) r
    FULL OUTER JOIN (SELECT qid, docno, rel FROM {qrels} WHERE collection = ?) o
        ON r.qid = o.qid AND r.docno = o.docno
) pairs
GROUP BY GROUPING SETS ((reference_grade, other_grade), ())"""


def judged_pairs(entries: Iterable) -> tuple[tuple[str, str], ...]:
    """(reference, other) of each agreement entry (the spec's `agreement`, or the entries
    resolved), each pair once, in order."""
    return tuple(dict.fromkeys((entry.reference, entry.other) for entry in entries))


def cells_statement(pairs: tuple[tuple[str, str], ...], qrels: str = "qrels") -> Statement:
    """The SELECT of every pair's cells from the table (or view) `qrels` (collection, qid,
    docno, rel): a name the engine chose, never a user's."""
    select = "\nUNION ALL\n".join(_ENTRY.format(qrels=qrels) for _ in pairs)
    params = [name for reference, other in pairs for name in (reference, other) * 2]
    return Statement(select, params)
