"""The dashboard's charts as Vega-Lite specifications, without their data: the page's script
(`assets/dashboard.js`) adds each chart's rows, filtered by the page's run, metric and collection,
and Vega-Lite draws them in the browser from the bundle written beside the pages.

Colours are the Okabe-Ito palette, readable with every common colour-vision deficiency; runs
beyond its eight colours are told apart by dashes too, and wins and losses by direction as well
as colour.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OKABE_ITO", "orderings", "pr_curve", "tradeoff", "trend", "win_loss"]

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


def trend(
    collection: str, metric: str, limits: bool, points: bool, better: str | None = None
) -> dict[str, Any]:
    """One metric over the history, a line per run; its title says so where a lower value is
    better (`better`: "lower", a latency). Every evaluation is a column of the chart
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
    title = f"{metric} ({collection})" + (", lower is better" if better == "lower" else "")
    return _chart(title, [*([band, rule] if limits else []), *drawn])


#: per direction of a metric's per-query values: what a rise and a fall are called, and the
#: outcomes' colours (a metric without a direction rises and falls, neither better nor worse)
_OUTCOMES = {
    "higher": ("better", "worse", ["better", "worse"], [WIN, LOSS]),
    "lower": ("worse", "better", ["better", "worse"], [WIN, LOSS]),
    None: ("rose", "fell", ["rose", "fell"], ["#555555", "#AAAAAA"]),
}


def win_loss(collection: str, metric: str, better: str | None = "higher") -> dict[str, Any]:
    """One evaluation against another: each query's difference (new minus old; a query new to
    the run counts from 0) as a bar, sorted, wins and losses in two colours; `better` is which
    per-query value is better (a latency's rise is a loss). Data: `queries` (run, qid, old,
    new)."""
    rise, fall, domain, colours = _OUTCOMES[better]
    outcome = {
        "field": "outcome",
        "type": "nominal",
        "title": "",
        "scale": {"domain": domain, "range": colours},
    }
    bars = {
        "data": {"name": "queries"},
        "transform": [
            {"calculate": "datum.run + ' · ' + datum.qid", "as": "query"},
            {"calculate": "datum.new - (datum.old || 0)", "as": "difference"},
            {"calculate": f"datum.difference > 0 ? '{rise}' : '{fall}'", "as": "outcome"},
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


def tradeoff(
    collection: str, metric: str, latency: str, better: str, faster: str, log: bool = False
) -> dict[str, Any]:
    """One evaluation's runs, `metric` (up) against the latency statistic `latency` (across,
    on a log scale with `log`), each axis saying which way is better (`better`, `faster`:
    "higher" or "lower"): a point per run, named, filled where the run is on the Pareto front
    and hollow where another run beats it (as the `tradeoff` output draws it), the front joined
    by a step line, the edge of what its runs dominate. Data: `points` (run, value, statistic,
    front)."""
    scale = {"type": "log"} if log else {"zero": False}
    x = {"field": "statistic", "type": "quantitative", "scale": scale,
         "title": f"{latency} ({_better_word(faster)})"}  # fmt: skip
    y = {"field": "value", "type": "quantitative", "scale": {"zero": False},
         "title": f"{metric} ({_better_word(better)})"}  # fmt: skip
    tooltip = [{"field": "run"}, {"field": "value", "format": ".4f", "title": metric},
               {"field": "statistic", "format": ".4f", "title": latency},
               {"field": "standing", "title": ""}]  # fmt: skip
    # Across the front (by the statistic, ascending), the edge goes across then up where
    # better values lie up and left (latency), down then across where up and right (QPS).
    step = "step-after" if (better == "higher") == (faster == "lower") else "step-before"
    front = {"name": "pareto_front", "data": {"name": "points"},
             "transform": [{"filter": "datum.front"}],
             "mark": {"type": "line", "interpolate": step, "color": "#555555", "opacity": 0.6},
             "encoding": {"x": x, "y": y}}  # fmt: skip
    names = {"name": "names", "data": {"name": "points"},
             "mark": {"type": "text", "align": "left", "dx": 7, "dy": -7, "fontSize": 11},
             "encoding": {"x": x, "y": y, "text": {"field": "run"}}}  # fmt: skip
    runs = [_runs_of_tradeoff(on_front, x, y, tooltip) for on_front in (True, False)]
    return _chart(f"{metric} against {latency} ({collection})", [front, *runs, names])


def _runs_of_tradeoff(on_front: bool, x: dict, y: dict, tooltip: list) -> dict[str, Any]:
    """The runs on the front (filled, layer `front`) or the others (hollow, `dominated`)."""
    mark = {"type": "point", "filled": on_front, "size": 90, "strokeWidth": 2,
            **({} if on_front else {"fill": "white"})}  # fmt: skip
    standing = {"calculate": "datum.front ? 'Pareto front' : 'dominated'", "as": "standing"}
    return {"name": "front" if on_front else "dominated", "data": {"name": "points"},
            "transform": [{"filter": "datum.front" if on_front else "!datum.front"}, standing],
            "mark": mark, "encoding": {"x": x, "y": y, "color": _RUNS, "tooltip": tooltip}}  # fmt: skip


def _better_word(direction: str | None) -> str:
    """How an axis says which way is better."""
    return f"{direction} is better" if direction else "neither is better"
