"""Questions asked of a history attached read-only (`store.attached`), answered in SQL: which
evaluations it holds, what one of them was, and what differs between two.

What can change an evaluation's numbers is compared as *facts*: (kind, name, value) text rows,
one per thing recorded. Kinds, in the order they are reported: `run` and `qrels` (name: the run,
or the collection whose qrels; value: the file's digest), `setting` (value: a string setting as
is, any other as JSON text), `metric` (name: its label; value: its canonical form), `version`
(irpipe, duckdb, python), `plugin` (name: the distribution; value: its version) and `spec`
(`path`; `content`: the digest of the spec's canonical form, which covers what the other facts
do not, such as a collection's `num_docs`). Two evaluations differ where their facts do.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pipeline.history.store import ALIAS

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "KINDS",
    "aggregates",
    "changes",
    "evaluation",
    "id_range",
    "known",
    "listing",
    "metrics",
    "runs",
    "same_results",
    "value_changes",
]

H = ALIAS
KINDS = ("run", "qrels", "setting", "metric", "version", "plugin", "spec")
_UTC = "'%Y-%m-%dT%H:%M:%S.%fZ'"  # ISO 8601, UTC (the columns hold naive UTC times)

_FACTS = f"""
SELECT evaluation_id AS id, role AS kind, name, digest AS value FROM {H}.inputs
UNION ALL
SELECT id, 'setting', s.key, CASE json_type(s.value) WHEN 'VARCHAR' THEN s.value->>'$'
    ELSE coalesce(s.value::VARCHAR, 'null') END
FROM {H}.evaluations,
    unnest(map_entries(CAST(provenance->'settings' AS MAP(VARCHAR, JSON)))) AS t(s)
UNION ALL
SELECT evaluation_id, 'metric', metric, canonical FROM {H}.evaluation_metrics
UNION ALL
SELECT id, 'version', name, value FROM (UNPIVOT (
    SELECT id, irpipe_version AS irpipe, duckdb_version AS duckdb, python_version AS python
    FROM {H}.evaluations) ON irpipe, duckdb, python INTO NAME name VALUE value)
UNION ALL
SELECT id, 'plugin', p.key, coalesce(p.value->>'$', 'unknown')
FROM {H}.evaluations,
    unnest(map_entries(CAST(provenance->'versions'->'plugins' AS MAP(VARCHAR, JSON)))) AS t(p)
UNION ALL
SELECT id, 'spec', 'path', spec FROM {H}.evaluations
UNION ALL
SELECT id, 'spec', 'content', spec_canonical FROM {H}.evaluations"""

# Each pair's facts side by side, kept where they differ; a fact's value is never NULL, so NULL
# on one side means the fact is absent there. `pairs` zips two lists of ids: (old, new).
_CHANGES = f"""
WITH pairs AS (SELECT unnest(?::BIGINT[]) AS old_id, unnest(?::BIGINT[]) AS new_id),
facts AS ({_FACTS}),
sided AS (
    SELECT p.*, f.kind, f.name, f.value, true AS is_old FROM pairs p JOIN facts f ON f.id = p.old_id
    UNION ALL
    SELECT p.*, f.kind, f.name, f.value, false FROM pairs p JOIN facts f ON f.id = p.new_id),
paired AS (
    SELECT old_id, new_id, kind, name,
        any_value(value) FILTER (WHERE is_old) AS old,
        any_value(value) FILTER (WHERE NOT is_old) AS new
    FROM sided GROUP BY old_id, new_id, kind, name)
SELECT new_id AS evaluation, kind, name,
    CASE WHEN old IS NULL THEN 'added' WHEN new IS NULL THEN 'removed' ELSE 'changed' END AS change,
    old, new
FROM paired
WHERE old IS DISTINCT FROM new
ORDER BY new_id, list_position(?, kind), name"""


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def id_range(con: duckdb.DuckDBPyConnection) -> tuple[int, int | None, int | None]:
    """How many evaluations the history holds, the lowest id and the highest."""
    return con.execute(f"SELECT count(*), min(id), max(id) FROM {H}.evaluations").fetchone()


def listing(
    con: duckdb.DuckDBPyConnection, spec: str | None, last: int | None
) -> list[dict[str, Any]]:
    """Every evaluation (of `spec` only, when given; the `last` ones only, when given), oldest
    first: id, started, finished, seconds, host, spec, previous (the id of the previous evaluation
    of the same spec, or None), runs (how many) and reused (how many from the cache)."""
    return _records(
        con.execute(
            f"""WITH counted AS (
    SELECT evaluation_id AS id, count(*) AS runs, count(*) FILTER (WHERE cached) AS reused
    FROM {H}.evaluation_runs GROUP BY ALL),
listed AS (
    SELECT e.id, strftime(e.started, {_UTC}) AS started, strftime(e.finished, {_UTC}) AS finished,
        date_diff('microsecond', e.started, e.finished) / 1e6 AS seconds, e.host, e.spec,
        lag(e.id) OVER (PARTITION BY e.spec ORDER BY e.id) AS previous,
        coalesce(c.runs, 0) AS runs, coalesce(c.reused, 0) AS reused
    FROM {H}.evaluations e LEFT JOIN counted c USING (id)
    WHERE ?::VARCHAR IS NULL OR e.spec = ?)
SELECT * FROM (SELECT * FROM listed ORDER BY id DESC LIMIT ?) ORDER BY id""",
            [spec, spec, last],
        )
    )


def changes(con: duckdb.DuckDBPyConnection, pairs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """What differs in each (old, new) pair of evaluations: rows of evaluation (the new id),
    kind, name, change (added, removed or changed: `added` is in the new one only), old, new;
    by new id, then kind (in `KINDS` order), then name."""
    if not pairs:
        return []
    olds, news = [old for old, _ in pairs], [new for _, new in pairs]
    return _records(con.execute(_CHANGES, [olds, news, list(KINDS)]))


def evaluation(con: duckdb.DuckDBPyConnection, evaluation_id: int) -> dict[str, Any]:
    """One evaluation's row: id, started, finished, seconds, host, spec, spec_canonical, and its
    provenance record (parsed)."""
    (found,) = _records(
        con.execute(
            f"""SELECT id, strftime(started, {_UTC}) AS started,
    strftime(finished, {_UTC}) AS finished,
    date_diff('microsecond', started, finished) / 1e6 AS seconds, host, spec, spec_canonical,
    provenance
FROM {H}.evaluations WHERE id = ?""",
            [evaluation_id],
        )
    )
    return {**found, "provenance": json.loads(found["provenance"])}


def runs(con: duckdb.DuckDBPyConnection, evaluation_id: int) -> list[dict[str, Any]]:
    """The evaluation's runs in spec order: run, collection, cached (reused from the history)."""
    return _records(
        con.execute(
            f"SELECT run, collection, cached FROM {H}.evaluation_runs "
            "WHERE evaluation_id = ? ORDER BY ordinal",
            [evaluation_id],
        )
    )


def metrics(con: duckdb.DuckDBPyConnection, evaluation_id: int) -> list[dict[str, Any]]:
    """The evaluation's metrics in spec order: label, metric (canonical), aggregator, kind."""
    return _records(
        con.execute(
            f"SELECT metric AS label, canonical AS metric, aggregator, kind "
            f"FROM {H}.evaluation_metrics WHERE evaluation_id = ? ORDER BY ordinal",
            [evaluation_id],
        )
    )


def aggregates(con: duckdb.DuckDBPyConnection, evaluation_id: int) -> list[dict[str, Any]]:
    """The evaluation's aggregate table: run, collection, metric, value, n_queries; by run then
    metric, in spec order."""
    return _records(
        con.execute(
            f"""SELECT a.run, a.collection, a.metric, a.value, a.n_queries
FROM {H}.aggregates a
LEFT JOIN {H}.evaluation_runs r USING (evaluation_id, run, collection)
LEFT JOIN {H}.evaluation_metrics m ON m.evaluation_id = a.evaluation_id AND m.metric = a.metric
WHERE a.evaluation_id = ?
ORDER BY r.ordinal, m.ordinal, a.metric""",
            [evaluation_id],
        )
    )


# Runs and metrics of evaluations $a and $b side by side, in B's order, then A's for the rest.
_ORDERS = f"""
run_pairs AS (
    SELECT run, collection, a.result_key AS a_key, b.result_key AS b_key,
        b.ordinal IS NULL AS a_only, coalesce(b.ordinal, a.ordinal) AS ordinal
    FROM (SELECT * FROM {H}.evaluation_runs WHERE evaluation_id = $a) a
    FULL JOIN (SELECT * FROM {H}.evaluation_runs WHERE evaluation_id = $b) b
        USING (run, collection)),
metric_order AS (
    SELECT metric, b.ordinal IS NULL AS a_only, coalesce(b.ordinal, a.ordinal) AS ordinal
    FROM (SELECT * FROM {H}.evaluation_metrics WHERE evaluation_id = $a) a
    FULL JOIN (SELECT * FROM {H}.evaluation_metrics WHERE evaluation_id = $b) b USING (metric))"""

# Per-query values are compared only for runs whose result keys differ: equal keys are the same
# rows. A value is changed when the aggregate differs (bit for bit; NaN equals NaN), when it
# averages another number of queries, or when any query's value or text differs (a query on one
# side only counts). It is explained when any recorded fact that can change numbers differs
# ($explained), or the run's file or its collection's qrels do (or are on one side only).
_VALUE_DIFF = f"""
CREATE OR REPLACE TEMP TABLE value_diff AS
WITH {_ORDERS},
pa AS (
    SELECT p.run, p.collection, v.qid, v.metric, v.value, v.text, true AS here
    FROM run_pairs p JOIN {H}.results v ON v.result_key = p.a_key
    WHERE v.tbl = 'per_query' AND p.a_key IS DISTINCT FROM p.b_key),
pb AS (
    SELECT p.run, p.collection, v.qid, v.metric, v.value, v.text, true AS here
    FROM run_pairs p JOIN {H}.results v ON v.result_key = p.b_key
    WHERE v.tbl = 'per_query' AND p.a_key IS DISTINCT FROM p.b_key),
counts AS (
    SELECT run, collection, metric, count(*) FILTER (
        WHERE pa.here IS NULL OR pb.here IS NULL OR pa.value IS DISTINCT FROM pb.value
            OR pa.text IS DISTINCT FROM pb.text) AS queries_changed
    FROM pa FULL JOIN pb USING (run, collection, metric, qid) GROUP BY ALL),
agg AS (
    SELECT run, collection, metric, a.value AS a, b.value AS b,
        a.n_queries AS a_queries, b.n_queries AS b_queries
    FROM (SELECT * FROM {H}.aggregates WHERE evaluation_id = $a) a
    FULL JOIN (SELECT * FROM {H}.aggregates WHERE evaluation_id = $b) b
        USING (run, collection, metric)),
files AS (
    SELECT role, name, a.digest IS DISTINCT FROM b.digest AS changed
    FROM (SELECT * FROM {H}.inputs WHERE evaluation_id = $a) a
    FULL JOIN (SELECT * FROM {H}.inputs WHERE evaluation_id = $b) b USING (role, name))
SELECT collection, run, metric, a, b, b - a AS difference, a_queries, b_queries,
    coalesce(queries_changed, 0) AS queries_changed,
    a IS DISTINCT FROM b OR a_queries IS DISTINCT FROM b_queries
        OR coalesce(queries_changed, 0) > 0 AS changed,
    $explained OR coalesce(rf.changed, true) OR coalesce(qf.changed, true) AS explained,
    row_number() OVER (ORDER BY collection, r.a_only, r.ordinal, m.a_only, m.ordinal, metric)
        AS position
FROM agg FULL JOIN counts USING (run, collection, metric)
LEFT JOIN run_pairs r USING (run, collection)
LEFT JOIN metric_order m USING (metric)
LEFT JOIN files rf ON rf.role = 'run' AND rf.name = run
LEFT JOIN files qf ON qf.role = 'qrels' AND qf.name = collection"""


def value_changes(
    con: duckdb.DuckDBPyConnection, a: int, b: int, explained: bool
) -> tuple[list[dict[str, Any]], int]:
    """The values that differ from evaluation `a` to `b`: collection, run, metric, a, b,
    difference (b - a), a_queries, b_queries (the queries each averaged), queries_changed (how
    many per-query values differ), explained (see `_VALUE_DIFF`; `explained`: whether a fact other
    than an input file differs); and how many values are the same in both."""
    con.execute(_VALUE_DIFF, {"a": a, "b": b, "explained": explained})
    changed = _records(
        con.execute(
            "SELECT * EXCLUDE (changed, position) FROM value_diff WHERE changed ORDER BY position"
        )
    )
    (same,) = con.execute("SELECT count(*) FROM value_diff WHERE NOT changed").fetchone()
    return changed, same


def same_results(con: duckdb.DuckDBPyConnection, a: int, b: int) -> list[dict[str, Any]]:
    """The runs (run, collection) with the same result key in `a` and `b`: their per-query
    values are the same rows of the history, equal by construction. In B's spec order."""
    return _records(
        con.execute(
            f"WITH {_ORDERS} SELECT run, collection FROM run_pairs WHERE a_key = b_key "
            "ORDER BY ordinal",
            {"a": a, "b": b},
        )
    )


def known(con: duckdb.DuckDBPyConnection, ids: list[int]) -> set[int]:
    """Which of `ids` the history holds."""
    (found,) = con.execute(
        f"SELECT list(id) FROM {H}.evaluations WHERE list_contains(?, id)", [ids]
    ).fetchone()
    return set(found or ())
