"""The dashboard's pages: `index.html` (what to look at first: the latest results and checks of
each collection, what changed last, every metric's trend, every evaluation), one page per
evaluation (`evaluations/N.html`: its results, checks, what changed against the previous one,
per query, its precision-recall curves and its provenance), and `compare-A-B.html` for a pair
asked for. Each page is HTML with its charts' data in a JSON block, read by `assets/dashboard.js`.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pipeline.dashboard import charts
from pipeline.dashboard.data import HistoryData, Pair
from pipeline.dashboard.tables import link
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

__all__ = ["comparison_page", "evaluation_page", "index_page"]


class Page:
    """A page being built: its sections, its charts and the filters' choices."""

    def __init__(self, depth: int) -> None:
        self.prefix = "../" * depth
        self.sections: list[str] = []
        self.charts: list[dict[str, Any]] = []
        self.specs: list[dict[str, Any]] = []  # the charts' specifications, each once
        self.times: dict[str, str] = {}  # each evaluation's start, for the trends' time axis
        self.choices: dict[str, set[str]] = {"collection": set(), "run": set(), "metric": set()}

    def add(self, html: str) -> None:
        self.sections.append(html)

    def chart(self, spec: dict, datasets: dict[str, dict], **tags: str) -> None:
        """A chart drawn by the page's script from `datasets` (compact, see `rows` and
        `series`). Charts that differ only by their title share one specification."""
        chart_id = f"chart-{len(self.charts) + 1}"
        shared = {**spec, "title": None}
        if shared not in self.specs:
            self.specs.append(shared)
        self.charts.append({"id": chart_id, "spec": self.specs.index(shared),
                            "title": spec["title"], "data": datasets})  # fmt: skip
        tagged = "".join(f' data-{k}="{escape(v)}"' for k, v in tags.items())
        self.add(f'<div class="chart" id="{chart_id}"{tagged}></div>')

    def offer(self, **values: Any) -> None:
        """Values the filters offer (a collection, runs, metrics)."""
        for key, found in values.items():
            self.choices[key] |= {found} if isinstance(found, str) else set(found)

    def render(self, title: str, data: HistoryData, heading: str) -> str:
        payload = {
            "filters": {k: sorted(v) for k, v in self.choices.items()},
            "charts": self.charts,
            "specs": self.specs,
            "times": self.times,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return _SKELETON.format(
            title=escape(title),
            heading=heading,
            prefix=self.prefix,
            body="\n".join(self.sections),
            data=text.replace("</", "<\\/"),  # never ends the script element early
            history=escape(data.path),
        )


_SKELETON = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{prefix}assets/dashboard.css">
</head>
<body>
<header>
<nav><a href="{prefix}index.html">Overview</a> <a href="{prefix}index.html#evaluations">Evaluations</a></nav>
<h1>{heading}</h1>
<p class="muted">History: <code>{history}</code></p>
</header>
<form id="filters" class="filters" aria-label="filters"></form>
<main>
{body}
</main>
<script type="application/json" id="irpipe-data">{data}</script>
<script src="{prefix}assets/vega.js"></script>
<script src="{prefix}assets/dashboard.js"></script>
</body>
</html>
"""


def rows(fields: list[str], records: list[tuple], coded: tuple[str, ...] = ()) -> dict:
    """Chart rows in a compact form the page's script expands: the fields named in `coded`
    (repeated text: runs, metrics) are given as indices into a list of their values."""
    codes: dict[str, dict[str, int]] = {name: {} for name in coded}
    out = []
    for record in records:
        row = []
        for name, value in zip(fields, record, strict=True):
            if name in codes:
                value = codes[name].setdefault(value, len(codes[name]))
            elif isinstance(value, float):
                value = _shown(value)
            row.append(value)
        out.append(row)
    return {"fields": fields, "dicts": {k: list(v) for k, v in codes.items()}, "rows": out}


def _shown(value: float) -> float | None:
    """A chart's value as its tooltip shows it: 4 decimals, as the tables (trec_eval's format;
    rounding the binary value first gives the same 4 decimals)."""
    return None if value != value else round(value, 4)


def series(evaluations: list[int], runs: list[str], values: dict[tuple[int, str], float]) -> dict:
    """A trend's rows in the most compact form: each run's values in evaluation order (null
    where the run was not evaluated), which the page's script turns into (evaluation, run,
    value) rows."""
    by_run = {run: [_shown(values[e, run]) if (e, run) in values else None for e in evaluations]
              for run in runs}  # fmt: skip
    return {"evaluations": evaluations, "series": by_run}


def _status(evaluation: dict[str, Any]) -> str:
    checks = evaluation["provenance"].get("checks")
    if checks is None:
        return "<span class='status none'>no checks recorded</span>"
    failed = sum(c["status"] == "failed" for c in checks)
    if failed:
        return f"<span class='status failed'>{failed} of {len(checks)} checks failed</span>"
    return f"<span class='status passed'>all {len(checks)} checks passed</span>"


def _collections(rows_: list[tuple]) -> list[str]:
    return list(dict.fromkeys(r[1] for r in rows_))


def index_page(data: HistoryData, better: dict, detail: int) -> str:
    """The overview: per collection, its latest evaluation's results and checks, what changed
    against the evaluation before it, and each metric's trend; then every evaluation."""
    page = Page(depth=0)
    latest = data.evaluations[-1]
    page.add(f"<p class='lead'>Latest evaluation {link(_href(latest['id']), '#' + str(latest['id']))}"
             f", started {escape(latest['started'])} on {escape(latest['host'])}, "
             f"<code>{escape(latest['spec'])}</code>: {_status(latest)}</p>")  # fmt: skip
    for collection in _all_collections(data):
        _collection_overview(page, data, collection, better)
    page.add("<h2 id='evaluations'>Evaluations</h2>")
    page.add(_evaluations_table(data))
    return page.render("irpipe dashboard", data, "irpipe dashboard")


def _all_collections(data: HistoryData) -> list[str]:
    found: dict[str, None] = {}
    for e in reversed(data.evaluations):
        found.update(dict.fromkeys(_collections(data.aggregates.get(e["id"], []))))
    return list(found)


def _collection_overview(page: Page, data: HistoryData, collection: str, better: dict) -> None:
    latest = next(e for e in reversed(data.evaluations)
                  if collection in _collections(data.aggregates.get(e["id"], [])))  # fmt: skip
    rows_ = data.aggregates[latest["id"]]
    page.offer(collection=collection, run=(r[0] for r in rows_ if r[1] == collection),
               metric=(r[2] for r in rows_ if r[1] == collection))  # fmt: skip
    page.add(f"<section data-collection='{escape(collection)}'><h2>{escape(collection)}</h2>")
    page.add(f"<h3>Latest: evaluation {link(_href(latest['id']), '#' + str(latest['id']))}</h3>")
    page.add(results_table(latest, rows_, collection, better) + legend(latest))
    page.add("<h3>Checks</h3>" + checks_section(latest))
    pair = data.pairs.get((latest["previous"], latest["id"])) if latest["previous"] else None
    if pair is not None:
        _changed_overview(page, data, pair, collection)
    page.add("<h3>Trends</h3><div class='charts'>")
    for metric in dict.fromkeys(r[2] for r in rows_ if r[1] == collection):
        _trend(page, data, latest, collection, metric, better.get(metric))
    page.add("</div></section>")


def _changed_overview(page: Page, data: HistoryData, pair: Pair, collection: str) -> None:
    page.add(f"<h3>What changed since {link(_href(pair.old), '#' + str(pair.old))}</h3>")
    page.add(reasons_list(pair.reasons))
    mine = [q for q in pair.queries if q[0] == collection]
    if mine:
        page.add("<p>The queries that changed most (all on the "
                 f"{link(_href(pair.new) + '#changes', 'evaluation page')}):</p>")  # fmt: skip
        page.add(query_changes_table(mine, limit=10))


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
    shown = charts.trend(collection, metric, bool(limits), points=len(data.evaluations) <= 60)
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
    from pipeline.dashboard.tables import Cell, table, text

    body = []
    for e in reversed(data.evaluations):
        checks = e["provenance"].get("checks") or []
        failed = sum(c["status"] == "failed" for c in checks)
        pair = data.pairs.get((e["previous"], e["id"]))
        reasons = (
            ", ".join(sorted({f"{r['kind']} {r['name']}" for r in pair.reasons})) if pair else ""
        )
        cells = [Cell(link(_href(e["id"]), f"#{e['id']}"), e["id"]), text(e["started"]),
                 text(e["spec"]), text(e["host"]), Cell(str(e["runs"]), e["runs"]),
                 Cell(str(e["reused"]), e["reused"]),
                 Cell(f"{failed} / {len(checks)}" if checks else "–", failed), text(reasons)]  # fmt: skip
        body.append((cells, {}))
    headers = ["evaluation", "started (UTC)", "spec", "host", "runs", "reused", "checks failed",
               "changed since the previous"]  # fmt: skip
    return table(headers, body, kind="evaluations")


def _href(evaluation_id: int, prefix: str = "") -> str:
    return f"{prefix}evaluations/{evaluation_id}.html"


def evaluation_page(data: HistoryData, evaluation: dict, better: dict, detail: int) -> str:
    """One evaluation: results and checks per collection, what changed against the previous
    evaluation of its spec, its precision-recall curves and its provenance."""
    page = Page(depth=1)
    rows_ = data.aggregates.get(evaluation["id"], [])
    page.offer(collection=_collections(rows_), run=(r[0] for r in rows_),
               metric=(r[2] for r in rows_))  # fmt: skip
    page.add(_neighbours(data, evaluation) + f"<p class='lead'>{_status(evaluation)}</p>")
    for collection in _collections(rows_):
        page.add(f"<section data-collection='{escape(collection)}'><h2>{escape(collection)}</h2>")
        page.add(results_table(evaluation, rows_, collection, better))
        page.add("</section>")
    page.add(legend(evaluation) + "<h2>Checks</h2>" + checks_section(evaluation))
    if evaluation["previous"] is not None:
        page.add(f"<h2 id='changes'>Against the previous evaluation, "
                 f"{link(_href(evaluation['previous'], '../'), '#' + str(evaluation['previous']))}</h2>")  # fmt: skip
        _against(page, data, data.pairs[evaluation["previous"], evaluation["id"]], detail)
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


def _against(page: Page, data: HistoryData, pair: Pair, detail: int) -> None:
    """What changed from `pair.old` to `pair.new`: the reasons, the aggregate values, and per
    query (win/loss bars for the run and metric the filters choose, the largest changes)."""
    page.add("<h3>What differs that can change numbers</h3>" + reasons_list(pair.reasons))
    changes = aggregate_changes(
        data.aggregates.get(pair.old, []), data.aggregates.get(pair.new, [])
    )
    page.add("<h3>Values that changed</h3>")
    page.add(aggregate_changes_table(changes) if changes else "<p>No value changed.</p>")
    if not changes:
        return
    if not pair.queries and pair.new not in {e["id"] for e in data.evaluations[-detail:]}:
        page.add(f"<p class='muted'>Per-query differences are kept for the latest {detail} "
                 "evaluations; <code>irpipe dashboard --detail N</code> keeps more.</p>")  # fmt: skip
        return
    _win_loss(page, pair)


def _win_loss(page: Page, pair: Pair) -> None:
    if not pair.queries:
        return
    page.add("<h3>Per query</h3><p class='muted'>Each bar is one query's change, of the runs "
             "the filter above chooses (blue: better, orange: worse), sorted.</p>")  # fmt: skip
    page.add("<div class='charts'>")
    for collection, metric in dict.fromkeys((q[0], q[2]) for q in pair.queries):
        records = [(r, qid, a, b) for c, r, m, qid, a, b in pair.queries
                   if c == collection and m == metric]  # fmt: skip
        fields = ["run", "qid", "old", "new"]
        page.chart(charts.win_loss(collection, metric),
                   {"queries": rows(fields, records, coded=("run", "qid"))},
                   collection=collection, metric=metric)  # fmt: skip
    page.add("</div><h3>The queries that changed most</h3>" + query_changes_table(pair.queries, 50))


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


def comparison_page(data: HistoryData, pair: Pair, better: dict) -> str:
    """Any two evaluations (`irpipe dashboard --compare A B`): B against A, as an evaluation's
    page shows it against the previous one."""
    page = Page(depth=0)
    page.prefix = ""
    rows_ = data.aggregates.get(pair.new, [])
    page.offer(
        collection=_collections(rows_), run=(r[0] for r in rows_), metric=(r[2] for r in rows_)
    )
    page.add(f"<p class='lead'>{link(_href(pair.new), '#' + str(pair.new))} against "
             f"{link(_href(pair.old), '#' + str(pair.old))}</p>")  # fmt: skip
    _against(page, data, pair, detail=len(data.evaluations))
    title = f"Evaluation #{pair.new} against #{pair.old}"
    return page.render(title, data, escape(title))
