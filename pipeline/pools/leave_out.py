"""Leave-one-run-out (Zobel 1998): how far a pooled collection can be trusted for a new system.

Each run (or group of runs) is evaluated without the judgments of the pool documents only it
contributed, as if it had not been pooled. Every group's reduced qrels is a collection of its own
(`<collection> without <group>`), so the executor evaluates every run against its group's reduced
qrels in one pass over the runs, with the spec's settings and metrics, exactly as it evaluates any
spec. The table compares each run's reduced value with its full value (the spec's evaluation),
its rank among the other runs (at their full values) before and after, Kendall's tau between the
full ranking of systems and the ranking by the reduced values, and Judged@k under both qrels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.contract.columns import grade_literal
from pipeline.plan.tables import values_table
from pipeline.pools.plan import PoolPlan
from pipeline.spec import Collection, LoadedSpec, Run
from pipeline.sql import Statement

if TYPE_CHECKING:
    import duckdb

    from pipeline.measures.resolved import ResolvedMeasure

__all__ = ["leave_one_out", "reduced_spec"]


def variant(collection: str, group: str) -> str:
    """The name of a group's reduced collection."""
    return f"{collection} without {group}"


def reduced_spec(loaded: LoadedSpec, plan: PoolPlan) -> LoadedSpec:
    """The spec whose runs are the pool's, each evaluated against its group's reduced qrels (a
    collection named by `variant`), and that computes nothing else."""
    spec = loaded.spec
    original = spec.collections[plan.collection]
    # No file is read for a variant (`_reduced_qrels`): its qrels are copied, an overlay's too.
    collections = {
        variant(plan.collection, g): Collection(
            qrels=original.qrels_file, num_docs=original.num_docs
        )
        for g in dict.fromkeys(plan.groups)
    }
    runs = {
        r: Run(path=spec.runs[r].path, collection=variant(plan.collection, g))
        for r, g in zip(plan.runs, plan.groups, strict=True)
    }
    # A run whose judged documents only it contributed retrieves none of its reduced qrels':
    # its values then fall to 0, which is what leaving it out measures, not a wrong file.
    settings = spec.settings.model_copy(update={"unmatched_runs": "allow"})
    reduced = spec.with_runs(
        runs, collections=collections, outputs=[], compare=None, expect=[], gates=[],
        history=None, pools={}, settings=settings,
    )  # fmt: skip
    return LoadedSpec(spec=reduced, path=loaded.path, sha256=loaded.sha256, lines=loaded.lines)


def leave_one_out(
    con: duckdb.DuckDBPyConnection,
    loaded: LoadedSpec,
    plan: PoolPlan,
    metrics: list[ResolvedMeasure],
) -> None:
    """leave_one_out_<i> in `con`, which holds the pool's tables and the spec's `aggregate`.

    The reduced evaluation runs on the same connection in a schema of its own, whose tables
    (qrels, runs, aggregate...) the spec's evaluation, in `main`, never sees."""
    schema = f"leave_out_{plan.index}"
    con.execute(f"CREATE SCHEMA {schema}")
    con.execute(
        f"CREATE TABLE {schema}.removed_documents AS SELECT * FROM main.removed_{plan.index}"
    )
    try:
        _evaluate_reduced(con, schema, loaded, plan, metrics)
        for statement in _table(plan, loaded.spec.settings.relevance_level, metrics, schema):
            con.execute(statement.sql, statement.params)
    finally:
        con.execute("SET schema = 'main'")
        con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _evaluate_reduced(
    con, schema: str, loaded: LoadedSpec, plan: PoolPlan, metrics: list[ResolvedMeasure]
) -> None:
    """`aggregate` in `schema`: every pooled run evaluated against its reduced qrels."""
    from pipeline.engines.duckdb.executor import execute
    from pipeline.plan.compile import compile_plan

    spec = reduced_spec(loaded, plan)
    chosen = [m for m in metrics if m.label in plan.metrics]
    sizes = {spec.spec.runs[r].path: spec.spec.runs[r].path.stat().st_size for r in plan.runs}
    compiled = _reduced_qrels(compile_plan(spec, chosen, sizes), plan)
    con.execute(f"SET schema = '{schema}'")
    execute(compiled, con)
    con.execute("SET schema = 'main'")


def _reduced_qrels(compiled, plan: PoolPlan):
    """The plan with no qrels file to read: each group's reduced collection is a copy of the
    collection's qrels (from the spec's evaluation) without the documents only it contributed."""
    from dataclasses import replace

    names = [(g, variant(plan.collection, g)) for g in dict.fromkeys(plan.groups)]
    copy = Statement(
        """INSERT INTO qrels
SELECT v.variant, q.qid, q.docno, q.rel, q.ok
FROM main.qrels q CROSS JOIN variants v
WHERE q.collection = ? AND NOT EXISTS (SELECT 1 FROM removed_documents r
    WHERE r.grp = v.grp AND r.qid = q.qid AND r.docno = q.docno)""",
        [plan.collection],
    )
    setup = [*values_table("variants", "grp VARCHAR, variant VARCHAR", names), copy]
    qrels = replace(compiled.qrels, loads=[], statements=[*setup, *compiled.qrels.statements])
    return replace(compiled, qrels=qrels)


def _table(
    plan: PoolPlan, level: int | float, metrics: list[ResolvedMeasure], schema: str
) -> list[Statement]:
    """leave_one_out_<i> from the spec's `aggregate` and the reduced one in `schema`."""
    by_label = {m.label: m for m in metrics}
    rows = [(i, label, by_label[label].better != "lower") for i, label in enumerate(plan.metrics)]
    i, k = plan.index, int(plan.judged_at)
    sql = f"""CREATE TABLE leave_one_out_{i} AS
WITH scores AS (
    SELECT o.ordinal, o.run, o.grp, m.ordinal AS m_ordinal, m.label AS metric,
        f.value AS "full", r.value AS reduced,
        CASE WHEN m.higher THEN f.value ELSE -f.value END AS f,
        CASE WHEN m.higher THEN r.value ELSE -r.value END AS r
    FROM pool_runs o
    CROSS JOIN loo_metrics m
    JOIN aggregate f ON f.run = o.run AND f.collection = ? AND f.metric = m.label
    JOIN {schema}.aggregate r ON r.run = o.run AND r.metric = m.label
    WHERE o.pool = {i}
),
ranks AS (  -- a run's rank among the others at their full values (Zobel's test)
    SELECT a.run, a.metric, 1 + count(b.run) FILTER (WHERE b.f > a.f) AS full_rank,
        1 + count(b.run) FILTER (WHERE b.f > a.r) AS reduced_rank
    FROM scores a LEFT JOIN scores b ON b.metric = a.metric AND b.run <> a.run
    GROUP BY a.run, a.metric
),
taus AS (  -- Kendall's tau-b between the full and the reduced values of all runs
    SELECT a.metric, sum(sign(a.f - b.f) * sign(a.r - b.r)) / nullif(sqrt(
        (count(*) - count(*) FILTER (WHERE a.f = b.f))
        * (count(*) - count(*) FILTER (WHERE a.r = b.r))), 0) AS tau
    FROM scores a JOIN scores b ON b.metric = a.metric AND b.ordinal > a.ordinal
    GROUP BY a.metric
),
removed AS (
    SELECT x.grp, count(*) AS removed, count(*) FILTER (WHERE q.rel >= {grade_literal(level)}) AS relevant
    FROM removed_{i} x JOIN qrels q ON q.collection = ? AND q.qid = x.qid AND q.docno = x.docno
    GROUP BY x.grp
),
judged AS (  -- Judged@k: judged documents (grade >= 0) of the top k, per query of the qrels
    -- summed in query order, as every mean irpipe reports is: the same bytes on every evaluation
    SELECT run, sum(judged_full ORDER BY qid) / count(*) AS judged_full,
        sum(judged_reduced ORDER BY qid) / count(*) AS judged_reduced FROM (
        SELECT r.run, r.qid, count(q.docno) FILTER (WHERE q.rel >= 0) / count(*) AS judged_full,
            count(q.docno) FILTER (WHERE q.rel >= 0 AND x.docno IS NULL) / count(*)
                AS judged_reduced
        FROM pool_rows r
        JOIN pool_runs o ON o.pool = r.pool AND o.run = r.run
        LEFT JOIN qrels q ON q.collection = ? AND q.qid = r.qid AND q.docno = r.docno
        LEFT JOIN removed_{i} x ON x.grp = o.grp AND x.qid = r.qid AND x.docno = r.docno
        WHERE r.pool = {i} AND r.rank <= {k}
            AND r.qid IN (SELECT qid FROM qrels WHERE collection = ?)
        GROUP BY r.run, r.qid
    ) GROUP BY run
)
SELECT ? AS pool, ? AS collection, s.grp AS "group", s.run, s.metric, s."full", s.reduced,
    s.reduced - s."full" AS delta, k.full_rank, k.reduced_rank,
    k.reduced_rank - k.full_rank AS rank_change, t.tau AS kendall_tau,
    coalesce(d.removed, 0) AS removed_judgments, coalesce(d.relevant, 0) AS removed_relevant,
    j.judged_full, j.judged_reduced
FROM scores s
JOIN ranks k USING (run, metric)
LEFT JOIN taus t USING (metric)
LEFT JOIN removed d ON d.grp = s.grp
LEFT JOIN judged j ON j.run = s.run
ORDER BY s.m_ordinal, s.ordinal"""
    # the full values are the runs' under the pool's collection (a run may have others)
    names = [plan.collection] * 4 + [plan.name, plan.collection]
    return [
        *values_table("loo_metrics", "ordinal INTEGER, label VARCHAR, higher BOOLEAN", rows),
        Statement(sql, names),
        Statement("DROP TABLE loo_metrics"),
    ]
