"""What a dashboard shows, read from a history in a few SQL statements (`read_history`): every
evaluation with its provenance, checks and significance marks, every aggregate value and its
judgment sets' comparisons, what changed from each evaluation to the previous one of its spec,
and the per-query values that changed for the evaluations shown in detail (the latest `detail`
ones, and any pair asked for)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.history import queries
from pipeline.history.judgments import TABLES, judgment_rows
from pipeline.history.store import ALIAS

if TYPE_CHECKING:
    import duckdb

__all__ = ["HistoryData", "Pair", "read_history"]

H = ALIAS

_AGGREGATES = f"""
SELECT a.evaluation_id, a.run, a.collection, a.metric, a.value, a.n_queries
FROM {H}.aggregates a
LEFT JOIN {H}.evaluation_runs r USING (evaluation_id, run, collection)
LEFT JOIN {H}.evaluation_metrics m ON m.evaluation_id = a.evaluation_id AND m.metric = a.metric
ORDER BY a.evaluation_id, r.ordinal, m.ordinal, a.metric"""

_EVALUATIONS = f"""
SELECT e.id, e.provenance,
    (SELECT list(metric ORDER BY ordinal) FROM {H}.evaluation_metrics m
     WHERE m.evaluation_id = e.id) AS metrics,
    (SELECT list(canonical ORDER BY ordinal) FROM {H}.evaluation_metrics m
     WHERE m.evaluation_id = e.id) AS canonicals,
    (SELECT list(struct_pack(run, collection, cached) ORDER BY ordinal)
     FROM {H}.evaluation_runs r WHERE r.evaluation_id = e.id) AS runs
FROM {H}.evaluations e ORDER BY e.id"""

# Per-query values of the runs whose results differ between the two evaluations of each pair
# (equal result keys are the same rows): the new value, and the old one where the query had one.
_QUERY_CHANGES = f"""
WITH pairs AS (SELECT unnest(?::BIGINT[]) AS old_id, unnest(?::BIGINT[]) AS new_id),
runs AS (
    SELECT p.old_id, p.new_id, b.run, b.collection, a.result_key AS a_key, b.result_key AS b_key
    FROM pairs p
    JOIN {H}.evaluation_runs b ON b.evaluation_id = p.new_id
    JOIN {H}.evaluation_runs a
        ON a.evaluation_id = p.old_id AND a.run = b.run AND a.collection = b.collection
    WHERE a.result_key <> b.result_key)
SELECT r.old_id, r.new_id, r.collection, r.run, vb.metric, vb.qid, va.value AS old,
    vb.value AS new
FROM runs r
JOIN {H}.results vb ON vb.result_key = r.b_key AND vb.tbl = 'per_query'
LEFT JOIN {H}.results va ON va.result_key = r.a_key AND va.tbl = 'per_query'
    AND va.qid = vb.qid AND va.metric = vb.metric
WHERE va.value IS DISTINCT FROM vb.value AND vb.value IS NOT NULL
ORDER BY r.new_id, r.old_id, r.collection, r.run, vb.metric, vb.qid"""

# The mean per-query value of each precision-recall level (the curve measures' per-query rows).
_CURVES = f"""
SELECT r.evaluation_id, r.run, r.collection, v.metric, avg(v.value) AS value
FROM {H}.evaluation_runs r JOIN {H}.results v ON v.result_key = r.result_key
WHERE v.tbl = 'curve_per_query' AND list_contains(?, r.evaluation_id)
GROUP BY ALL ORDER BY ALL"""


@dataclass
class Pair:
    """Two evaluations compared: what can change numbers that differs (`reasons`), the
    aggregate values that changed, and the per-query values that changed."""

    old: int
    new: int
    reasons: list[dict[str, Any]] = field(default_factory=list)
    values: list[dict[str, Any]] = field(default_factory=list)
    queries: list[tuple] = field(default_factory=list)  # (collection, run, metric, qid, old, new)


@dataclass
class HistoryData:
    """Everything the pages show, oldest evaluation first."""

    path: str
    evaluations: list[dict[str, Any]]
    aggregates: dict[int, list[tuple]]  # id -> (run, collection, metric, value, n_queries)
    pairs: dict[tuple[int, int], Pair]  # (old, new) -> what changed
    curves: dict[int, list[tuple]]  # id -> (run, collection, level, mean value)
    #: id -> the judgment tables' rows (agreement, confusion, correlation), as the evaluation
    #: made them
    judgments: dict[int, dict[str, list[tuple]]] = field(default_factory=dict)
    #: id -> each run's effectiveness against latency (`tradeoff.read_tradeoffs`): (collection,
    #: metric, latency, run, value, latency value, on the Pareto front)
    tradeoffs: dict[int, list[tuple]] = field(default_factory=dict)

    def evaluation(self, evaluation_id: int) -> dict[str, Any]:
        """One evaluation's record."""
        return self._by_id[evaluation_id]

    def __post_init__(self) -> None:
        self._by_id = {e["id"]: e for e in self.evaluations}


def read_history(
    con: duckdb.DuckDBPyConnection, path: str, detail: int, extra: tuple[int, int] | None
) -> HistoryData:
    """The history attached to `con` as the pages need it: per-query changes for the latest
    `detail` evaluations (against the previous one of their spec) and for the pair `extra`."""
    evaluations = _evaluations(con)
    aggregates: dict[int, list[tuple]] = {}
    for evaluation_id, *row in con.execute(_AGGREGATES).fetchall():
        aggregates.setdefault(evaluation_id, []).append(tuple(row))
    previous = [(e["previous"], e["id"]) for e in evaluations if e["previous"] is not None]
    pairs = {pair: Pair(*pair) for pair in previous}
    old_of = {new: old for old, new in previous}
    for change in queries.changes(con, previous):
        new = change.pop("evaluation")
        pairs[old_of[new], new].reasons.append(change)
    detailed = [pair for pair in previous if pair[1] in {e["id"] for e in evaluations[-detail:]}]
    if extra is not None:
        pairs.setdefault(extra, Pair(*extra)).reasons = _reasons(con, extra)
        detailed.append(extra)
    _detail(con, pairs, detailed)
    ids = [e["id"] for e in evaluations[-detail:]] + ([*extra] if extra else [])
    curves: dict[int, list[tuple]] = {}
    for evaluation_id, *row in con.execute(_CURVES, [ids]).fetchall():
        curves.setdefault(evaluation_id, []).append(tuple(row))
    return HistoryData(path, evaluations, aggregates, pairs, curves, _judgments(con))


def _judgments(con: duckdb.DuckDBPyConnection) -> dict[int, dict[str, list[tuple]]]:
    """Each evaluation's judgment tables, for those that compared judgment sets or orderings
    (a few rows each: every evaluation's are read)."""
    found: dict[int, dict[str, list[tuple]]] = {}
    ids = [row[0] for row in con.execute(f"SELECT id FROM {H}.evaluations").fetchall()]
    for table, rows in judgment_rows(con, ids).items():
        for evaluation_id, *row in rows:
            found.setdefault(evaluation_id, {t: [] for t in TABLES})[table].append(tuple(row))
    return found


def _reasons(con: duckdb.DuckDBPyConnection, pair: tuple[int, int]) -> list[dict]:
    """What can change numbers that differs from `pair`'s old evaluation to its new one."""
    found = queries.changes(con, [pair])
    for change in found:
        del change["evaluation"]
    return found


def _evaluations(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every evaluation: the listing's columns, its provenance, metrics (labels, and each
    label's canonical form) and runs."""
    listed = queries.listing(con, None, None)
    details = {row[0]: row[1:] for row in con.execute(_EVALUATIONS).fetchall()}
    for e in listed:
        provenance, metrics, canonicals, runs = details[e["id"]]
        e.update(provenance=json.loads(provenance), metrics=metrics or [], run_list=runs or [],
                 canonical=dict(zip(metrics or [], canonicals or [], strict=True)))  # fmt: skip
    return listed


def _detail(
    con: duckdb.DuckDBPyConnection, pairs: dict[tuple[int, int], Pair], detailed: list
) -> None:
    """The changed aggregate values and per-query values of the `detailed` pairs."""
    for old, new in detailed:
        explained = any(c["kind"] not in ("run", "qrels") for c in pairs[old, new].reasons)
        pairs[old, new].values = queries.value_changes(con, old, new, explained)[0]
    if not detailed:
        return
    olds, news = [old for old, _ in detailed], [new for _, new in detailed]
    for old, new, *row in con.execute(_QUERY_CHANGES, [olds, news]).fetchall():
        pairs[old, new].queries.append(tuple(row))
