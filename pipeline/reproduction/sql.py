"""The SQL of reproductions: the rankings kept as each batch of runs is read, the documents'
orderings compared per topic (τ Union, RBO), and the values the statistics read. Pure, no I/O;
runs, depths and the persistence are bound values, never SQL text.

reproduction_rows   each compared run's ranking (the `ordering` setting's), down to the depth its
                    entries read: kept before the batch's rows are dropped (and before trec_eval
                    -c's one-document rankings of missing queries are added to them)
reproduction        the table of the level `reproduction` (`names.COLUMNS`)
"""

from __future__ import annotations

from pipeline.plan.ranking import SortKey, order_by
from pipeline.sql import Statement

__all__ = [
    "KEPT_ROWS",
    "REPRODUCTION_TABLE",
    "ktu_sql",
    "kept_rows",
    "per_query_sql",
    "rbo_sql",
]

KEPT_ROWS = Statement(
    "CREATE TABLE reproduction_rows (run VARCHAR, qid VARCHAR, docno VARCHAR, rank BIGINT)"
)
REPRODUCTION_TABLE = """CREATE TABLE reproduction (entry INTEGER, kind VARCHAR, baseline VARCHAR,
    original VARCHAR, reproduced VARCHAR, collection VARCHAR, reproduced_collection VARCHAR,
    measure VARCHAR, metric VARCHAR, qid VARCHAR, value DOUBLE, n_original BIGINT,
    n_reproduced BIGINT)"""


def kept_rows(depths: dict[str, int], keys: tuple[SortKey, ...]) -> Statement:
    """Keep the loaded batch's rows of the compared runs, ranked by `keys`, each run down to its
    depth (`depths`: run -> deepest rank read)."""
    sql = f"""
INSERT INTO reproduction_rows
SELECT r.run, qid, docno,
    row_number() OVER (PARTITION BY r.run, qid ORDER BY {order_by(keys)}) AS rank
FROM (SELECT run, qid, docno, score, rank AS file_rank FROM run_rows) r
JOIN (SELECT unnest(?) AS run, unnest(?) AS depth) d ON d.run = r.run
QUALIFY rank <= depth"""
    return Statement(sql, [list(depths), list(depths.values())])


#: the two rankings compared (bound: original, reproduced, depth), and the topics both rank
_RANKINGS = """
o AS (SELECT qid, docno, rank FROM reproduction_rows WHERE run = $original AND rank <= $depth),
r AS (SELECT qid, docno, rank FROM reproduction_rows WHERE run = $reproduced AND rank <= $depth),
topics AS (SELECT DISTINCT qid FROM o WHERE qid IN (SELECT qid FROM r))"""

#: queries in numeric order where their ids are numbers, then by text
_QUERY_ORDER = "try_cast(t.qid AS BIGINT) NULLS LAST, t.qid"


def ktu_sql() -> str:
    """Per topic both rank: repro_eval's Kendall's τ Union. The documents at ranks 1..n of the
    two rankings (n the shorter's length) are coded by their place in the sorted union of both,
    and τ is taken between the two sequences of codes: a pair of ranks i < j is concordant when
    both rankings put their documents in the same docno order there (the codes keep docno order,
    and no ranking holds a document twice, so τ-b is (concordant - discordant) / pairs). NULL
    where n < 2 (scipy's NaN)."""
    return f"""
WITH {_RANKINGS},
ranks AS (SELECT qid, rank, o.docno AS a, r.docno AS b FROM o JOIN r USING (qid, rank)),
pairs AS (
    SELECT x.qid, sum(CASE WHEN (x.a < y.a) = (x.b < y.b) THEN 1 ELSE -1 END) AS agree,
        count(*) AS n
    FROM ranks x JOIN ranks y ON x.qid = y.qid AND x.rank < y.rank GROUP BY x.qid)
SELECT t.qid, CAST(p.agree AS DOUBLE) / p.n AS value
FROM topics t LEFT JOIN pairs p USING (qid)
ORDER BY {_QUERY_ORDER}"""


def rbo_sql() -> str:
    """Per topic both rank: repro_eval's rank-biased overlap (`plan.RBO_VARIANT`), as a sum over
    the documents both rankings hold: one at ranks i and j is in both top-d lists from
    d = max(i, j) on, and so adds sum_{d >= max(i, j)} p^(d-1)/d (bound: p). Identical rankings
    as deep as `depth` score 1, not a rounding above it. Sums are ordered by rank: a grouping's
    order of addition follows DuckDB's threads, and so would the last bit."""
    return f"""
WITH {_RANKINGS},
weights AS (
    SELECT d, sum(pow($p, d - 1) / d) OVER (ORDER BY d DESC) AS tail, pow($p, d - 1) AS w
    FROM range(1, $depth + 1) s(d)),
shared AS (SELECT qid, greatest(o.rank, r.rank) AS d FROM o JOIN r USING (qid, docno)),
overlap AS (SELECT qid, sum(tail ORDER BY d) AS s FROM shared JOIN weights USING (d) GROUP BY qid)
SELECT t.qid, least(coalesce(v.s, 0) / (SELECT sum(w ORDER BY d) FROM weights), 1.0) AS value
FROM topics t LEFT JOIN overlap v USING (qid)
ORDER BY {_QUERY_ORDER}"""


def per_query_sql() -> str:
    """The compared metrics' per-query values of some runs under a collection (bound:
    collection, runs, metrics), NULL as NaN."""
    return """
SELECT run, qid, metric, coalesce(value, 'NaN'::DOUBLE) AS value
FROM per_query
WHERE collection = $collection AND list_contains($runs, run) AND list_contains($metrics, metric)"""
