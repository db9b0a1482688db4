"""The dashboard's charts as Vega-Lite specifications, without their data: the page's script
(`assets/dashboard.js`) adds each chart's rows, filtered by the page's run, metric and collection,
and Vega-Lite draws them in the browser from the bundle written beside the pages.

Colours are the Okabe-Ito palette, readable with every common colour-vision deficiency; runs
beyond its eight colours are told apart by dashes too, and wins and losses by direction as well
as colour.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OKABE_ITO", "orderings", "pr_curve", "trend", "win_loss"]

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"  # read, never fetched
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000",
             "#F0E442"]  # fmt: skip
WIN, LOSS = "#0072B2", "#D55E00"
_RUNS = {"field": "run", "type": "nominal", "title": "run", "scale": {"range": OKABE_ITO}}


def _chart(title: str, layers: list[dict], height: int = 220) -> dict[str, Any]:
    return {
        "$schema": SCHEMA,
        "title": title,
        "width": "container",
        "height": height,
        "layer": layers,
        "config": {"font": "system-ui, sans-serif", "legend": {"orient": "bottom"}},
    }


def trend(collection: str, metric: str, limits: bool, points: bool) -> dict[str, Any]:
    """One metric over the history, a line per run. Every evaluation is a column of the chart
    that links to its page (and says which it is on hover); with `points` (a short history) each
    value is a point too, which links to its evaluation. Data: `evaluations` (evaluation, time), `points` (evaluation, time,
    run, value) and, with `limits`,
    `limits` (a check's lower and upper bound: an expected value's band, or a gate's threshold
    as a line)."""
    x = {"field": "time", "type": "temporal", "title": "evaluation started (UTC)"}
    y = {"field": "value", "type": "quantitative", "title": metric, "scale": {"zero": False}}
    link = [{"calculate": "'evaluations/' + datum.evaluation + '.html'", "as": "href"}]
    columns = {
        "data": {"name": "evaluations"},
        "transform": link,
        "mark": {"type": "rule", "strokeWidth": 5, "opacity": 0.001},  # found by the pointer
        "encoding": {
            "x": x,
            "href": {"field": "href", "type": "nominal"},
            "tooltip": [
                {"field": "evaluation", "title": "evaluation"},
                {
                    "field": "time",
                    "type": "temporal",
                    "format": "%Y-%m-%d %H:%M",
                    "title": "started",
                },
            ],
        },
    }
    lines = {  # a line is one mark per run: its points' pages are the columns' links
        "data": {"name": "points"},
        "mark": {
            "type": "line",
            "strokeWidth": 1.5,
            **({"point": {"filled": True, "size": 30}} if points else {}),
        },  # fmt: skip
        "encoding": {
            "x": x,
            "y": y,
            "color": _RUNS,
            "strokeDash": {"field": "run", "type": "nominal", "title": "run"},
            "tooltip": [
                {"field": "evaluation", "title": "evaluation"},
                {"field": "run"},
                {"field": "value", "format": ".4f", "title": metric},
                {"field": "time", "type": "temporal", "format": "%Y-%m-%d %H:%M"},
            ],
        },
    }
    band = {
        "data": {"name": "limits"},
        "mark": {"type": "rect", "opacity": 0.15, "color": "#009E73"},
        "encoding": {"y": {"field": "low", "type": "quantitative"}, "y2": {"field": "high"}},
    }
    rule = {
        "data": {"name": "limits"},
        "mark": {"type": "rule", "strokeDash": [6, 3], "color": "#555555"},
        "encoding": {
            "y": {"field": "low", "type": "quantitative"},
            "tooltip": [{"field": "check"}, {"field": "low", "format": ".4f", "title": "lowest"}],
        },
    }
    if points:  # a short history: each point links to its evaluation, above the columns
        lines.update(transform=link)
        lines["encoding"]["href"] = {"field": "href", "type": "nominal"}
    # A long history's lines are many: the columns go above them, so that a click anywhere
    # opens an evaluation (a link on the lines' thousands of points costs the page seconds).
    drawn = [columns, lines] if points else [lines, columns]
    return _chart(f"{metric} ({collection})", [*([band, rule] if limits else []), *drawn])


def win_loss(collection: str, metric: str) -> dict[str, Any]:
    """One evaluation against another: each query's difference (new minus old; a query new to
    the run counts from 0) as a bar, sorted, wins and losses in two colours. Data: `queries`
    (run, qid, old, new)."""
    outcome = {
        "field": "outcome",
        "type": "nominal",
        "title": "",
        "scale": {"domain": ["better", "worse"], "range": [WIN, LOSS]},
    }
    bars = {
        "data": {"name": "queries"},
        "transform": [
            {"calculate": "datum.run + ' · ' + datum.qid", "as": "query"},
            {"calculate": "datum.new - (datum.old || 0)", "as": "difference"},
            {"calculate": "datum.difference > 0 ? 'better' : 'worse'", "as": "outcome"},
        ],
        "mark": {"type": "bar"},
        "encoding": {
            "x": {
                "field": "query",
                "type": "nominal",
                "sort": "-y",
                "title": "query (sorted)",
                "axis": {"labels": False, "ticks": False},
            },  # fmt: skip
            "y": {"field": "difference", "type": "quantitative", "title": f"Δ {metric}"},
            "color": outcome,
            "tooltip": [
                {"field": "run"},
                {"field": "qid", "title": "query"},
                {"field": "old", "format": ".4f"},
                {"field": "new", "format": ".4f"},
                {"field": "difference", "format": "+.4f"},
            ],
        },
    }
    return _chart(f"Δ {metric} per query ({collection})", [bars], height=180)


def pr_curve(collection: str) -> dict[str, Any]:
    """Interpolated precision at each recall level, a line per run. Data: `curve` (run, recall,
    precision)."""
    line = {
        "data": {"name": "curve"},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {
                "field": "recall",
                "type": "quantitative",
                "title": "recall",
                "scale": {"domain": [0, 1]},
            },  # fmt: skip
            "y": {
                "field": "precision",
                "type": "quantitative",
                "title": "precision",
                "scale": {"domain": [0, 1]},
            },  # fmt: skip
            "color": _RUNS,
            "strokeDash": {"field": "run", "type": "nominal", "title": "run"},
            "tooltip": [
                {"field": "run"},
                {"field": "recall"},
                {"field": "precision", "format": ".4f"},
            ],
        },
    }
    return _chart(f"Precision–recall ({collection})", [line])


def orderings(title: str) -> dict[str, Any]:
    """Two orderings of the same runs side by side: each run's rank under the reference (left)
    and under the other (right), joined by a line, the best (rank 1) at the top; a line that
    crosses others is a run the two order differently. Data: `ranks` (run, side, rank, value),
    the reference's rows first (the sides are in the order of the rows)."""
    line = {
        "data": {"name": "ranks"},
        "mark": {"type": "line", "point": {"filled": True, "size": 50}},
        "encoding": {
            "x": {"field": "side", "type": "nominal", "sort": None, "title": None,
                  "axis": {"labelAngle": 0, "orient": "top"}},
            "y": {"field": "rank", "type": "quantitative", "title": "rank",
                  "scale": {"reverse": True, "zero": False, "nice": False},
                  "axis": {"tickMinStep": 1}},
            "color": _RUNS,
            "strokeDash": {"field": "run", "type": "nominal", "title": "run"},
            "tooltip": [{"field": "run"}, {"field": "side"}, {"field": "rank"},
                        {"field": "value", "format": ".4f"}],
        },
    }  # fmt: skip
    return _chart(title, [line], height=240)
