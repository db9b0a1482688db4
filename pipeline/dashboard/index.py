"""The index page: what to look at first. Per collection, its latest evaluation's results (and
effectiveness against latency) and checks, what changed against the evaluation before it, and
each metric's trend; then every evaluation of the history."""

from __future__ import annotations

from html import escape

from pipeline.dashboard import charts
from pipeline.dashboard.data import HistoryData, Pair
from pipeline.dashboard.metrics import Metrics
from pipeline.dashboard.page import Page, collections_of, href, rows, series, status
from pipeline.dashboard.tables import Cell, link, table, text
from pipeline.dashboard.tradeoff import tradeoff_section
from pipeline.dashboard.views import (
    checks_section,
    legend,
    query_changes_table,
    reasons_list,
    results_table,
)

__all__ = ["index_page"]


def index_page(data: HistoryData, metrics: Metrics, detail: int) -> str:
    """The overview: per collection, its latest evaluation's results (with effectiveness
    against latency) and checks, what changed against the evaluation before it, and each
    metric's trend; then every evaluation."""
    page = Page(depth=0)
    latest = data.evaluations[-1]
    page.add(f"<p class='lead'>Latest evaluation {link(href(latest['id']), '#' + str(latest['id']))}"
             f", started {escape(latest['started'])} on {escape(latest['host'])}, "
             f"<code>{escape(latest['spec'])}</code>: {status(latest)}</p>")  # fmt: skip
    for collection in _allcollections_of(data):
        _collection_overview(page, data, collection, metrics)
    page.add("<h2 id='evaluations'>Evaluations</h2>")
    page.add(_evaluations_table(data))
    return page.render("irpipe dashboard", data, "irpipe dashboard")


def _allcollections_of(data: HistoryData) -> list[str]:
    found: dict[str, None] = {}
    for e in reversed(data.evaluations):
        found.update(dict.fromkeys(collections_of(data.aggregates.get(e["id"], []))))
    return list(found)


def _collection_overview(page: Page, data: HistoryData, collection: str, metrics: Metrics) -> None:
    latest = next(e for e in reversed(data.evaluations)
                  if collection in collections_of(data.aggregates.get(e["id"], [])))  # fmt: skip
    rows_ = data.aggregates[latest["id"]]
    page.offer(collection=collection, run=(r[0] for r in rows_ if r[1] == collection),
               metric=(r[2] for r in rows_ if r[1] == collection))  # fmt: skip
    page.add(f"<section data-collection='{escape(collection)}'><h2>{escape(collection)}</h2>")
    page.add(f"<h3>Latest: evaluation {link(href(latest['id']), '#' + str(latest['id']))}</h3>")
    page.add(results_table(latest, rows_, collection, metrics.better) + legend(latest))
    tradeoff_section(page, data.tradeoffs.get(latest["id"], []), collection, metrics)
    page.add("<h3>Checks</h3>" + checks_section(latest))
    pair = data.pairs.get((latest["previous"], latest["id"])) if latest["previous"] else None
    if pair is not None:
        _changed_overview(page, pair, collection, metrics.per_query)
    page.add("<h3>Trends</h3><div class='charts'>")
    for metric in dict.fromkeys(r[2] for r in rows_ if r[1] == collection):
        _trend(page, data, latest, collection, metric, metrics.better.get(metric))
    page.add("</div></section>")


def _changed_overview(page: Page, pair: Pair, collection: str, better: dict) -> None:
    page.add(f"<h3>What changed since {link(href(pair.old), '#' + str(pair.old))}</h3>")
    page.add(reasons_list(pair.reasons))
    mine = [q for q in pair.queries if q[0] == collection]
    if mine:
        page.add("<p>The queries that changed most (all on the "
                 f"{link(href(pair.new) + '#changes', 'evaluation page')}):</p>")  # fmt: skip
        page.add(query_changes_table(mine, better, limit=10))


def _trend(page: Page, data: HistoryData, latest: dict, collection: str, metric: str,
           better: str | None) -> None:  # fmt: skip
    values = {
        (e["id"], run): value
        for e in data.evaluations
        for run, c, m, value, _ in data.aggregates.get(e["id"], [])
        if c == collection and m == metric
    }
    evaluations = list(dict.fromkeys(e for e, _ in values))
    runs = list(dict.fromkeys(run for _, run in values))
    page.times = {str(e["id"]): e["started"] for e in data.evaluations}
    limits = _limits(latest, collection, metric, better)
    datasets = {
        "evaluations": rows(["evaluation"], [(e,) for e in evaluations]),
        "points": series(evaluations, runs, values),
    }
    if limits:
        datasets["limits"] = rows(["check", "run", "low", "high"], limits)
    shown = charts.trend(collection, metric, bool(limits), len(data.evaluations) <= 60, better)
    page.chart(shown, datasets,
               collection=collection, metric=metric)  # fmt: skip


def _limits(latest: dict, collection: str, metric: str, better: str | None) -> list[tuple]:
    """The latest evaluation's checks of a metric as (check, run, low, high): an expected value's
    band of passing values, a gate's threshold (low = high)."""
    found = []
    sign = -1.0 if better == "lower" else 1.0
    for c in latest["provenance"].get("checks") or []:
        if c["collection"] != collection or c["metric"] != metric or c["reference"] is None:
            continue
        worst = c["reference"] - sign * c["limit"]
        if c["kind"] == "expect":
            low, high = sorted((worst, c["reference"] + (c["limit"] if c["two_sided"] else 0.0)))
            found.append((c["name"], c["run"], low, high))
        else:
            found.append((c["name"], c["run"], worst, worst))
    return found


def _evaluations_table(data: HistoryData) -> str:
    body = []
    for e in reversed(data.evaluations):
        checks = e["provenance"].get("checks") or []
        failed = sum(c["status"] == "failed" for c in checks)
        pair = data.pairs.get((e["previous"], e["id"]))
        reasons = (
            ", ".join(sorted({f"{r['kind']} {r['name']}" for r in pair.reasons})) if pair else ""
        )
        cells = [Cell(link(href(e["id"]), f"#{e['id']}"), e["id"]), text(e["started"]),
                 text(e["spec"]), text(e["host"]), Cell(str(e["runs"]), e["runs"]),
                 Cell(str(e["reused"]), e["reused"]),
                 Cell(f"{failed} / {len(checks)}" if checks else "–", failed), text(reasons)]  # fmt: skip
        body.append((cells, {}))
    headers = ["evaluation", "started (UTC)", "spec", "host", "runs", "reused", "checks failed",
               "changed since the previous"]  # fmt: skip
    return table(headers, body, kind="evaluations")
