"""Effectiveness against latency on the dashboard: for an evaluation with a latency statistic
(Latency, QPS) and an effectiveness metric, per collection, each run's value of one against the
other, the Pareto front marked, as the `tradeoff` output draws it. The front is the plan's
(`pipeline.plan.tradeoff.pareto_front`), run over the history's aggregates for every pair of
an effectiveness metric and a latency statistic of every evaluation (`read_tradeoffs`); the
page's metric filter chooses the effectiveness metric (up), its latency filter the statistic
(across: the first Latency one by default; on a log scale where the runs' are an order of
magnitude apart, as in the output)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.dashboard import charts
from pipeline.dashboard.metrics import Metrics
from pipeline.dashboard.page import Page, rows
from pipeline.history.store import ALIAS as H
from pipeline.plan.tradeoff import pareto_front, sign, wide_apart

if TYPE_CHECKING:
    import duckdb

__all__ = ["read_tradeoffs", "tradeoff_section"]

# Each pair's points (a run with both values, finite), and whether each is on the front of its
# evaluation, collection and pair; in each evaluation's order of metrics and of runs.
_TRADEOFFS = f"""
WITH pairs AS (
    SELECT unnest(?::BIGINT[]) AS evaluation_id, unnest(?::VARCHAR[]) AS metric,
        unnest(?::VARCHAR[]) AS latency, unnest(?::INTEGER[]) AS better,
        unnest(?::INTEGER[]) AS faster, unnest(range(len(?::BIGINT[]))) AS pair),
points AS (
    SELECT p.evaluation_id, p.pair, r.ordinal, e.collection, p.metric, p.latency, e.run,
        e.value, l.value AS latency_value, p.better, p.faster
    FROM pairs p
    JOIN {H}.aggregates e ON e.evaluation_id = p.evaluation_id AND e.metric = p.metric
    JOIN {H}.aggregates l ON l.evaluation_id = p.evaluation_id AND l.metric = p.latency
        AND l.run = e.run AND l.collection = e.collection
    JOIN {H}.evaluation_runs r ON r.evaluation_id = p.evaluation_id AND r.run = e.run
        AND r.collection = e.collection
    WHERE isfinite(e.value) AND isfinite(l.value))
SELECT evaluation_id, collection, metric, latency, run, value, latency_value,
    {pareto_front("points", ("evaluation_id", "collection", "pair"))} AS pareto
FROM points p ORDER BY pair, ordinal"""


def read_tradeoffs(
    con: duckdb.DuckDBPyConnection, evaluations: list[dict[str, Any]], metrics: Metrics
) -> dict[int, list[tuple]]:
    """Each evaluation's points (`HistoryData.tradeoffs`), for every pair of its effectiveness
    metrics and latency statistics; nothing is read for a history without latency."""
    pairs = [(e["id"], m, t) for e in evaluations for m in e["metrics"] if m in metrics.effectiveness
             for t in e["metrics"] if t in metrics.latency]  # fmt: skip
    if not pairs:
        return {}
    ids, effective, latency = (list(column) for column in zip(*pairs, strict=True))
    signs = [[sign(metrics.better[m]) for m in labels] for labels in (effective, latency)]
    found: dict[int, list[tuple]] = {}
    points = con.execute(_TRADEOFFS, [ids, effective, latency, *signs, ids]).fetchall()
    for evaluation_id, *row in points:
        found.setdefault(evaluation_id, []).append(tuple(row))
    return found


def tradeoff_section(page: Page, points: list[tuple], collection: str, metrics: Metrics) -> None:
    """The trade-off charts of one collection (`points`: an evaluation's, from
    `read_tradeoffs`), one per pair of an effectiveness metric and a latency statistic; the
    page's latency filter is offered their statistics, the first Latency one chosen."""
    mine = [p for p in points if p[0] == collection]
    if not mine:
        return
    statistics = list(dict.fromkeys(p[2] for p in mine))
    page.offer(latency=statistics)
    _choose_first(page, statistics, metrics)
    page.add("<h3>Effectiveness against latency</h3><p class='muted'>Each point is a run: filled "
             "where it is on the Pareto front (no other run is at least as good by both and "
             "better by one, joined by a step line), hollow where another run beats it. The "
             "metric filter chooses the metric, the latency filter the statistic.</p>"
             "<div class='charts'>")  # fmt: skip
    for metric, latency in dict.fromkeys((p[1], p[2]) for p in mine):
        records = [(run, value, speed, front) for _, m, t, run, value, speed, front in mine
                   if (m, t) == (metric, latency)]  # fmt: skip
        spec = charts.tradeoff(collection, metric, latency, metrics.better[metric],
                               metrics.better[latency], wide_apart([r[2] for r in records]))  # fmt: skip
        page.chart(spec, {"points": rows(["run", "value", "statistic", "front"], records,
                                         coded=("run",))},
                   collection=collection, metric=metric, latency=latency)  # fmt: skip
    page.add("</div>")


def _choose_first(page: Page, statistics: list[str], metrics: Metrics) -> None:
    """The latency statistic the page opens with: the first Latency one of the first
    collection's, kept while every collection has it, else all of them (a collection of the
    index page whose latest evaluation timed its runs otherwise still shows its charts)."""
    if "latency" not in page.defaults:
        page.defaults["latency"] = metrics.default_latency(statistics) or ""
    elif page.defaults["latency"] not in statistics:
        page.defaults["latency"] = ""
