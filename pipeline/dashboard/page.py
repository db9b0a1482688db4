"""What every dashboard page is made of: `Page` (its sections, charts and filters, rendered
into the HTML skeleton with its data as a JSON block that `assets/dashboard.js` reads), the
compact chart rows, and the small pieces the index and the evaluation pages share."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pipeline.dashboard.data import HistoryData

__all__ = ["Page", "collections_of", "href", "rows", "series", "shown", "status"]


class Page:
    """A page being built: its sections, its charts and the filters' choices."""

    def __init__(self, depth: int) -> None:
        self.prefix = "../" * depth
        self.sections: list[str] = []
        self.charts: list[dict[str, Any]] = []
        self.specs: list[dict[str, Any]] = []  # the charts' specifications, each once
        self.times: dict[str, str] = {}  # each evaluation's start, for the trends' time axis
        self.choices: dict[str, set[str]] = {"collection": set(), "run": set(), "metric": set(),
                                             "latency": set()}  # fmt: skip
        #: a filter's choice when the page opens, where it is not "all" (the latency statistic
        #: of the trade-off charts)
        self.defaults: dict[str, str] = {}

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
        """Values the filters offer (a collection, runs, metrics, latency statistics)."""
        for key, found in values.items():
            self.choices[key] |= {found} if isinstance(found, str) else set(found)

    def render(self, title: str, data: HistoryData, heading: str) -> str:
        payload = {
            "filters": {k: sorted(v) for k, v in self.choices.items()},
            "charts": self.charts,
            "defaults": self.defaults,
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
                value = shown(value)
            row.append(value)
        out.append(row)
    return {"fields": fields, "dicts": {k: list(v) for k, v in codes.items()}, "rows": out}


def shown(value: float) -> float | None:
    """A chart's value as its tooltip shows it: 4 decimals, as the tables (trec_eval's format;
    rounding the binary value first gives the same 4 decimals)."""
    return None if value != value else round(value, 4)


def series(evaluations: list[int], runs: list[str], values: dict[tuple[int, str], float]) -> dict:
    """A trend's rows in the most compact form: each run's values in evaluation order (null
    where the run was not evaluated), which the page's script turns into (evaluation, run,
    value) rows."""
    by_run = {run: [shown(values[e, run]) if (e, run) in values else None for e in evaluations]
              for run in runs}  # fmt: skip
    return {"evaluations": evaluations, "series": by_run}


def status(evaluation: dict[str, Any]) -> str:
    checks = evaluation["provenance"].get("checks")
    if checks is None:
        return "<span class='status none'>no checks recorded</span>"
    failed = sum(c["status"] == "failed" for c in checks)
    if failed:
        return f"<span class='status failed'>{failed} of {len(checks)} checks failed</span>"
    return f"<span class='status passed'>all {len(checks)} checks passed</span>"


def collections_of(rows_: list[tuple]) -> list[str]:
    return list(dict.fromkeys(r[1] for r in rows_))


def href(evaluation_id: int, prefix: str = "") -> str:
    return f"{prefix}evaluations/{evaluation_id}.html"
