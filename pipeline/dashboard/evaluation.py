"""An evaluation's page (`evaluations/N.html`): its results per collection (and effectiveness
against latency, `tradeoff`), its judgment sets and orderings compared (`judgments`), its
checks, what changed against the previous evaluation of its spec (per query too, for the latest
ones), its precision-recall curves and its provenance; and a page of any two
(`compare-A-B.html`)."""

from __future__ import annotations

from html import escape

from pipeline.dashboard import charts
from pipeline.dashboard.data import HistoryData, Pair
from pipeline.dashboard.judgments import agreement_section
from pipeline.dashboard.metrics import Metrics
from pipeline.dashboard.page import Page, collections_of, href, rows, status
from pipeline.dashboard.powers import powers_section
from pipeline.dashboard.tables import link
from pipeline.dashboard.tradeoff import tradeoff_section
from pipeline.dashboard.views import (
    aggregate_changes,
    aggregate_changes_table,
    checks_section,
    legend,
    provenance_section,
    query_changes_table,
    reasons_list,
    results_table,
)

__all__ = ["comparison_page", "evaluation_page"]


def evaluation_page(data: HistoryData, evaluation: dict, metrics: Metrics, detail: int) -> str:
    """One evaluation: results per collection (with effectiveness against latency where it
    has both), judgment sets and orderings, checks, what changed against the previous
    evaluation of its spec, its precision-recall curves and its provenance."""
    page = Page(depth=1)
    rows_ = data.aggregates.get(evaluation["id"], [])
    page.offer(collection=collections_of(rows_), run=(r[0] for r in rows_),
               metric=(r[2] for r in rows_))  # fmt: skip
    page.add(_neighbours(data, evaluation) + f"<p class='lead'>{status(evaluation)}</p>")
    for collection in collections_of(rows_):
        page.add(f"<section data-collection='{escape(collection)}'><h2>{escape(collection)}</h2>")
        page.add(results_table(evaluation, rows_, collection, metrics.better))
        tradeoff_section(page, data.tradeoffs.get(evaluation["id"], []), collection, metrics)
        page.add("</section>")
    powers_section(page, evaluation, rows_)
    agreement_section(page, data, evaluation, metrics.better)
    page.add(legend(evaluation) + "<h2>Checks</h2>" + checks_section(evaluation))
    if evaluation["previous"] is not None:
        page.add(f"<h2 id='changes'>Against the previous evaluation, "
                 f"{link(href(evaluation['previous'], '../'), '#' + str(evaluation['previous']))}</h2>")  # fmt: skip
        pair = data.pairs[evaluation["previous"], evaluation["id"]]
        _against(page, data, pair, metrics, detail)
    _curves(page, data, evaluation)
    page.add("<h2>Provenance</h2>" + provenance_section(evaluation))
    title = f"Evaluation #{evaluation['id']}"
    return page.render(
        title, data, f"{escape(title)} <small>{escape(evaluation['started'])}</small>"
    )


def _neighbours(data: HistoryData, evaluation: dict) -> str:
    ids = [e["id"] for e in data.evaluations]
    i = ids.index(evaluation["id"])
    parts = []
    if i > 0:
        parts.append(link(f"{ids[i - 1]}.html", f"← #{ids[i - 1]}"))
    if i + 1 < len(ids):
        parts.append(link(f"{ids[i + 1]}.html", f"#{ids[i + 1]} →"))
    return (
        f"<p class='neighbours'>{' · '.join(parts)} · <code>{escape(evaluation['spec'])}</code></p>"
    )


def _against(page: Page, data: HistoryData, pair: Pair, metrics: Metrics, detail: int) -> None:
    """What changed from `pair.old` to `pair.new`: the reasons, the aggregate values, and per
    query (win/loss bars for the run and metric the filters choose, the largest changes), each
    change better or worse in its metric's direction."""
    page.add("<h3>What differs that can change numbers</h3>" + reasons_list(pair.reasons))
    changes = aggregate_changes(
        data.aggregates.get(pair.old, []), data.aggregates.get(pair.new, [])
    )
    page.add("<h3>Values that changed</h3>")
    if not changes:
        page.add("<p>No value changed.</p>")
        return
    page.add(aggregate_changes_table(changes, metrics.better))
    if not pair.queries and pair.new not in {e["id"] for e in data.evaluations[-detail:]}:
        page.add(f"<p class='muted'>Per-query differences are kept for the latest {detail} "
                 "evaluations; <code>irpipe dashboard --detail N</code> keeps more.</p>")  # fmt: skip
        return
    _win_loss(page, pair, metrics.per_query)


def _win_loss(page: Page, pair: Pair, better: dict[str, str | None]) -> None:
    if not pair.queries:
        return
    page.add("<h3>Per query</h3><p class='muted'>Each bar is one query's change, of the runs "
             "the filter above chooses (blue: better, orange: worse), sorted.</p>")  # fmt: skip
    page.add("<div class='charts'>")
    for collection, metric in dict.fromkeys((q[0], q[2]) for q in pair.queries):
        records = [(r, qid, a, b) for c, r, m, qid, a, b in pair.queries
                   if c == collection and m == metric]  # fmt: skip
        fields = ["run", "qid", "old", "new"]
        page.chart(charts.win_loss(collection, metric, better.get(metric)),
                   {"queries": rows(fields, records, coded=("run", "qid"))},
                   collection=collection, metric=metric)  # fmt: skip
    page.add("</div><h3>The queries that changed most</h3>")
    page.add(query_changes_table(pair.queries, better, 50))


def _curves(page: Page, data: HistoryData, evaluation: dict) -> None:
    found = data.curves.get(evaluation["id"])
    if not found:
        return
    recall = {m["label"]: m["params"]["recall"]
              for m in evaluation["provenance"].get("pr_curve_metrics", [])}  # fmt: skip
    page.add("<h2>Precision–recall curves</h2><div class='charts'>")
    for collection in dict.fromkeys(c for _, c, _, _ in found):
        points = [(run, recall[level], value) for run, c, level, value in found
                  if c == collection and level in recall]  # fmt: skip
        page.chart(charts.pr_curve(collection),
                   {"curve": rows(["run", "recall", "precision"], points, coded=("run",))},
                   collection=collection)  # fmt: skip
    page.add("</div>")


def comparison_page(data: HistoryData, pair: Pair, metrics: Metrics) -> str:
    """Any two evaluations (`irpipe dashboard --compare A B`): B against A, as an evaluation's
    page shows it against the previous one."""
    page = Page(depth=0)
    page.prefix = ""
    rows_ = data.aggregates.get(pair.new, [])
    page.offer(
        collection=collections_of(rows_), run=(r[0] for r in rows_), metric=(r[2] for r in rows_)
    )
    page.add(f"<p class='lead'>{link(href(pair.new), '#' + str(pair.new))} against "
             f"{link(href(pair.old), '#' + str(pair.old))}</p>")  # fmt: skip
    _against(page, data, pair, metrics, detail=len(data.evaluations))
    title = f"Evaluation #{pair.new} against #{pair.old}"
    return page.render(title, data, escape(title))
