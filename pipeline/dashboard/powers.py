"""An evaluation's suites and discriminative power on its dashboard page: per suite and metric,
BEIR's table (the suite's collections as rows, its runs as columns, the suite's mean last), and
per collection, metric and test the pairs of runs a test tells apart. Read from what the
history kept beside the provenance (`pipeline.run.keeping.notes`), never computed again."""

from __future__ import annotations

from html import escape
from typing import Any

from pipeline.dashboard.page import Page
from pipeline.dashboard.tables import Cell, number, table, text

__all__ = ["powers_section"]

#: the row of a suite's table holding its mean over its collections
MEAN_ROW = "mean"


def powers_section(page: Page, evaluation: dict[str, Any], rows: list[tuple]) -> None:
    """The suites' tables, then the discriminative power, where the evaluation has them; `rows`
    its aggregate values (run, collection, metric, value, n_queries)."""
    provenance = evaluation["provenance"]
    means = provenance.get("suite_means") or []
    for suite, members in (provenance.get("suites") or {}).items():
        mine = [m for m in means if m["suite"] == suite]
        page.add(f"<section data-suite='{escape(suite)}'><h2>Suite {escape(suite)}</h2>")
        for metric in dict.fromkeys(m["metric"] for m in mine):
            page.add(_suite_table(suite, members, metric, mine, rows))
        page.add("</section>")
    power = provenance.get("discriminative_power")
    if power:
        page.add("<h2>Discriminative power</h2>" + _power_table(power))


def _suite_table(suite: str, members: list[str], metric: str, means: list[dict], rows) -> str:
    runs = list(dict.fromkeys(m["run"] for m in means if m["metric"] == metric))
    values = {(c, r): v for r, c, m, v, _ in rows if m == metric}
    values |= {(MEAN_ROW, m["run"]): m["macro"] for m in means if m["metric"] == metric}
    body = [
        ([text(row), *(number(values.get((row, run))) for run in runs)], {"collection": row})
        for row in [*members, MEAN_ROW]
    ]
    caption = f"{metric}: {len(members)} collections and their mean"
    return table(["collection", *runs], body, caption=caption, kind="suite")


def _power_table(power: list[dict]) -> str:
    body = [
        ([text(p["collection"]), text(p["metric"]), text(p["test"]), text(p["correction"]),
          Cell(str(p["pairs"])), Cell(str(p["significant"])), number(p["share"])],
         {"collection": p["collection"], "metric": p["metric"]})
        for p in power
    ]  # fmt: skip
    headers = ["collection", "metric", "test", "correction", "pairs", "significant", "share"]
    return table(headers, body, kind="power")
