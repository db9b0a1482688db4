"""The SQL of pools: the pooled rows of each batch of runs, then each pool's tables. Pure, no I/O.

pool_rows       per pool: each run's ranked rows (`ordering` setting), down to the depth the
                method reads, with the score normalised per query (for CombSUM)
excluded        per pool: documents of its `exclude` qrels (already judged)
pool_docs       per pool and query: the documents to judge
pool_<i>        the documents of pool i per query, in the seeded judging order (level pool)
contributions_<i>  which run contributed each document, at which rank
pool_stats_<i>  per query, then per run: documents, judged, relevant, unique
removed_<i>     per leave-one-out group: the pool documents only its runs contributed

Every random choice is an md5 of the seed, the query and the document (and what it is for):
the same on every machine and DuckDB version, whatever the order of the rows.
"""

from __future__ import annotations

from pipeline.contract.columns import grade_literal
from pipeline.plan.ranking import order_by
from pipeline.plan.tables import values_table
from pipeline.pools.plan import RRF_K, PoolPlan
from pipeline.sql import Statement

__all__ = ["pool_tables", "pooled_rows", "setup_tables"]

POOL_TABLES = [
    Statement(
        "CREATE TABLE pool_rows (pool INTEGER, run VARCHAR, qid VARCHAR, docno VARCHAR, "
        "rank BIGINT, score DOUBLE, norm DOUBLE)"
    ),
    Statement("CREATE TABLE excluded (pool INTEGER, qid VARCHAR, docno VARCHAR)"),
    Statement("CREATE TABLE pool_docs (pool INTEGER, qid VARCHAR, docno VARCHAR)"),
]

#: queries in numeric order where their ids are numbers, then by text
QUERY_ORDER = "try_cast(qid AS BIGINT) NULLS LAST, qid"


def setup_tables(plans: list[PoolPlan]) -> list[Statement]:
    """The tables filled batch by batch, and each pool's runs: (pool, ordinal, run, group)."""
    rows = [
        (p.index, i, run, group)
        for p in plans
        for i, (run, group) in enumerate(zip(p.runs, p.groups, strict=True))
    ]
    columns = "pool INTEGER, ordinal INTEGER, run VARCHAR, grp VARCHAR"
    return [*POOL_TABLES, *values_table("pool_runs", columns, rows)]


def pooled_rows(plan: PoolPlan, keys) -> Statement:
    """Keep the loaded batch's rows of the pool's runs: ranked by `keys`, down to the depth the
    method reads; for CombSUM, each score min-max normalised within its ranking (1 where all
    scores tie)."""
    cut = "" if plan.kept_rank is None else f"QUALIFY rank <= {int(plan.kept_rank)}"
    norm = "NULL::DOUBLE"
    if plan.kind == "combsum":
        norm = "coalesce((score - min(score) OVER q) / nullif(max(score) OVER q - min(score) OVER q, 0), 1.0)"  # fmt: skip
    sql = f"""
INSERT INTO pool_rows
SELECT ?, run, qid, docno,
    row_number() OVER (PARTITION BY run, qid ORDER BY {order_by(keys)}) AS rank, score, {norm}
FROM (SELECT run, qid, docno, score, rank AS file_rank FROM run_rows WHERE list_contains(?, run))
WINDOW q AS (PARTITION BY run, qid)
{cut}"""
    return Statement(sql, [plan.index, list(plan.runs)])


def pool_tables(plan: PoolPlan, relevance_level: int | float) -> list[Statement]:
    """Once every run is read: the pool's documents, and its tables."""
    return [
        Statement(_documents(plan), [plan.index]),
        _judging_order(plan),
        _contributions(plan),
        _statistics(plan, relevance_level),
        _removed(plan),
    ]


_CANDIDATES = """(SELECT * FROM pool_rows r WHERE pool = ? AND NOT EXISTS (
    SELECT 1 FROM excluded e WHERE e.pool = r.pool AND e.qid = r.qid AND e.docno = r.docno))"""

# A fused score sums its terms in order of size, so that documents with the same terms (from
# different runs) have the same sum to the last bit, and their tie is broken by docno.
_FUSED = {
    "rrf": f"list_sum(list(1.0 / ({RRF_K} + rank) ORDER BY 1.0 / ({RRF_K} + rank) DESC))",
    "combsum": "list_sum(list(norm ORDER BY norm DESC))",
}


def _documents(plan: PoolPlan) -> str:
    """The pool's documents per query: the union of each run's top k (depth), the top n by a
    fused score with ties broken as trec_eval breaks them (docno descending), or n drawn."""
    top = f"QUALIFY row_number() OVER (PARTITION BY qid ORDER BY {{}}) <= {int(plan.size)}"
    if plan.kind == "depth":
        return f"""INSERT INTO pool_docs SELECT DISTINCT pool, qid, docno FROM {_CANDIDATES}
WHERE rank <= {int(plan.size)}"""
    if plan.kind == "uniform":
        draw = _draw("sample", plan.seed)
        return f"""INSERT INTO pool_docs SELECT pool, qid, docno FROM (
    SELECT DISTINCT pool, qid, docno FROM {_CANDIDATES})
{top.format(f"{draw}, docno")}"""
    return f"""INSERT INTO pool_docs SELECT pool, qid, docno FROM (
    SELECT pool, qid, docno, {_FUSED[plan.kind]} AS fused FROM {_CANDIDATES} GROUP BY ALL)
{top.format("fused DESC, docno DESC")}"""


def _draw(purpose: str, seed: int) -> str:
    """A document's random key: an md5 of what it is for, the seed, its query and its docno."""
    return f"md5(concat_ws(' ', '{purpose}', '{int(seed)}', qid, docno))"


def _judging_order(plan: PoolPlan) -> Statement:
    """pool_<i>: the documents of each query in the seeded judging order."""
    sql = f"""CREATE TABLE pool_{plan.index} AS
SELECT ? AS pool, ? AS collection, qid, docno,
    row_number() OVER (PARTITION BY qid ORDER BY {_draw("order", plan.seed)}, docno) AS position
FROM pool_docs WHERE pool = ?
ORDER BY {QUERY_ORDER}, position"""
    return Statement(sql, [plan.name, plan.collection, plan.index])


def _contributions(plan: PoolPlan) -> Statement:
    """contributions_<i>: per document, each run that put it in the pool (its top k; for the
    other methods, any run that retrieved it) and the rank it gave it."""
    within = "" if plan.kind != "depth" else f"AND r.rank <= {int(plan.size)}"
    sql = f"""CREATE TABLE contributions_{plan.index} AS
SELECT pool, collection, qid, docno, run, rank FROM (
    SELECT ? AS pool, ? AS collection, d.qid, d.docno, r.run, r.rank, o.ordinal
    FROM pool_docs d
    JOIN pool_rows r ON r.pool = d.pool AND r.qid = d.qid AND r.docno = d.docno {within}
    JOIN pool_runs o ON o.pool = d.pool AND o.run = r.run
    WHERE d.pool = ?)
ORDER BY {QUERY_ORDER}, docno, ordinal"""
    return Statement(sql, [plan.name, plan.collection, plan.index])


def _statistics(plan: PoolPlan, relevance_level: int | float) -> Statement:
    """pool_stats_<i>: per query, then per run: the documents (contributed), how many are judged
    and relevant, and how many of them no other run contributed. Judged and relevant are empty
    while the collection has no qrels."""
    i = plan.index
    sql = f"""CREATE TABLE pool_stats_{i} AS
WITH docs AS (
    SELECT c.qid, c.docno, c.run, count(*) OVER (PARTITION BY c.qid, c.docno) AS contributors,
        q.rel IS NOT NULL AS judged, coalesce(q.rel >= {grade_literal(relevance_level)}, false) AS relevant
    FROM contributions_{i} c
    LEFT JOIN qrels q ON q.collection = ? AND q.qid = c.qid AND q.docno = c.docno
),
per_document AS (SELECT qid, docno, any_value(contributors) AS contributors,
    any_value(judged) AS judged, any_value(relevant) AS relevant FROM docs GROUP BY qid, docno)
SELECT * FROM (
    SELECT ? AS pool, ? AS collection, qid, NULL::VARCHAR AS run, {_counts(plan, "*")}
    FROM per_document GROUP BY qid ORDER BY {QUERY_ORDER})
UNION ALL
SELECT * FROM (  -- a run that contributed nothing has a row of zeros
    SELECT ?, ?, NULL, o.run, {_counts(plan, "d.qid")}
    FROM pool_runs o LEFT JOIN docs d ON d.run = o.run
    WHERE o.pool = {i} GROUP BY o.run, o.ordinal ORDER BY o.ordinal)"""
    names = [plan.name, plan.collection]
    return Statement(sql, [plan.collection, *names, *names])


def _counts(plan: PoolPlan, rows: str) -> str:
    """The statistics' columns over documents, counting `rows` (* or a column, NULL where a
    left join found none)."""
    judged = plan.qrels is not None
    return f"""count({rows}) AS documents,
    {_when(judged, "count(*) FILTER (WHERE judged)")} AS judged,
    {_when(judged, "count(*) FILTER (WHERE relevant)")} AS relevant,
    count(*) FILTER (WHERE contributors = 1) AS "unique",
    {_when(judged, "count(*) FILTER (WHERE judged AND contributors = 1)")} AS unique_judged,
    {_when(judged, "count(*) FILTER (WHERE relevant AND contributors = 1)")} AS unique_relevant"""


def _when(judged: bool, count: str) -> str:
    return count if judged else "NULL::BIGINT"


def _removed(plan: PoolPlan) -> Statement:
    """removed_<i>: (group, qid, docno) of each pool document whose contributors are all of one
    leave-one-out group: left out with that group, it would not have been judged."""
    sql = f"""CREATE TABLE removed_{plan.index} AS
SELECT any_value(o.grp) AS grp, c.qid, c.docno
FROM contributions_{plan.index} c JOIN pool_runs o ON o.pool = {plan.index} AND o.run = c.run
GROUP BY c.qid, c.docno
HAVING count(DISTINCT o.grp) = 1"""
    return Statement(sql)
