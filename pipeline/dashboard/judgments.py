"""An evaluation page's judgment sets, as the history recorded them: per agreement entry its
statistics (by grades, and at each threshold) and its confusion matrix as a heat map of pairs;
per pair of orderings of the runs (an agreement entry's, per metric; a correlation entry's), the
runs ranked under each side by their aggregates, side by side in a table and a chart, with the
statistics of the two orderings.

A rank is 1 + the runs strictly better (tied runs share one), better in the metric's direction,
over the runs with a value on both sides: the ranks `max_rank_drop` counts places by.
"""

from __future__ import annotations

import math
from html import escape

from pipeline.agreement.names import COUNT_STATISTICS, by_threshold, grade_name, grades_in_order
from pipeline.dashboard import charts
from pipeline.dashboard.data import HistoryData
from pipeline.dashboard.page import Page, rows
from pipeline.dashboard.tables import Cell, number, table, text
from pipeline.formatting import format_value

__all__ = ["agreement_section"]

#: the heat map's colour, the Okabe-Ito blue, at an opacity growing with the pairs
_HEAT = "0, 114, 178"


def agreement_section(page: Page, data: HistoryData, evaluation: dict, better: dict) -> None:
    """The evaluation's judgment sets and orderings, if it compared any."""
    found = data.judgments.get(evaluation["id"])
    if not found:
        return
    page.add("<h2 id='judgments'>Judgment sets and orderings</h2>")
    for reference, other in dict.fromkeys((r[0], r[1]) for r in found["agreement"]):
        _agreement(page, reference, other, found)
    values = {(r[0], r[1], r[2]): r[3] for r in data.aggregates.get(evaluation["id"], [])}
    for ordering in dict.fromkeys(r[:4] for r in found["correlation"]):
        statistics = [r[4:] for r in found["correlation"] if r[:4] == ordering]
        _ordering(page, ordering, statistics, values, better)


# -- two label sets -------------------------------------------------------------------------------


def _agreement(page: Page, reference: str, other: str, found: dict) -> None:
    values = {r[3]: r[4] for r in found["agreement"] if r[:2] == (reference, other)}
    counts = [int(values[name]) for name in COUNT_STATISTICS]
    page.add(f"<section class='agreement'><h3>Agreement of {escape(other)} with "
             f"{escape(reference)}</h3><p class='muted'>{counts[0]:,} pairs judged by both "
             f"({counts[1]:,} by {escape(reference)} only, {counts[2]:,} by {escape(other)} "
             f"only), on {counts[3]:,} queries.</p>")  # fmt: skip
    page.add(_statistics_table(values))
    cells = {(r[2], r[3]): r[4] for r in found["confusion"] if r[:2] == (reference, other)}
    page.add(_heat_map(reference, other, cells) + "</section>")


def _statistics_table(values: dict) -> str:
    """Statistics by rows; on the grades, and at each threshold, by columns."""
    bases, suffixes = by_threshold(n for n in values if n not in COUNT_STATISTICS)
    body = [
        ([text(base), *(number(values.get(f"{base}@{s}" if s else base)) for s in ["", *suffixes])],
         {})
        for base in bases
    ]  # fmt: skip
    return table(
        ["statistic", "grades", *(f"grade ≥ {s}" for s in suffixes)], body, kind="agreement"
    )


def _heat_map(reference: str, other: str, cells: dict[tuple, int]) -> str:
    """The confusion matrix: the reference's grades by rows, the other's by columns (`none`: a
    pair that set does not judge); each cell's pairs shown, and shaded by them."""
    down, across = grades_in_order(g for g, _ in cells), grades_in_order(g for _, g in cells)
    most = max(cells.values(), default=0) or 1
    head = "".join(f"<th scope='col'>{grade_name(g)}</th>" for g in across)
    body = "".join(
        f"<tr><th scope='row'>{grade_name(r)}</th>"
        + "".join(_heat_cell(cells.get((r, o), 0), most, r == o and r is not None) for o in across)
        + "</tr>"
        for r in down
    )
    legend = (f"Pairs by grade: {reference}'s (rows) and {other}'s (columns); darker: more "
              "pairs; outlined: the same grade")  # fmt: skip
    return (
        f"<table class='confusion'><thead><tr><th>{escape(reference)} \\ {escape(other)}</th>"
        f"{head}</tr></thead><tbody>{body}</tbody></table><p class='legend'>{escape(legend)}</p>"
    )


def _heat_cell(pairs: int, most: int, same: bool) -> str:
    shade = round(pairs / most, 3)
    ink = " color: #fff;" if shade > 0.55 else ""
    outline = " class='same'" if same else ""
    style = f"background: rgba({_HEAT}, {shade});{ink}"
    return f"<td{outline} style='{style}' data-sort='{pairs}'>{pairs:,}</td>"


# -- two orderings of the runs --------------------------------------------------------------------


def _ordering(page: Page, ordering: tuple, statistics: list, values: dict, better: dict) -> None:
    """One pair of orderings: the runs' ranks side by side, and the statistics."""
    reference, other, collection, metric = ordering
    sides = ([(reference, metric), (other, metric)] if collection is None
             else [(collection, reference), (collection, other)])  # fmt: skip
    names = [reference, other]
    title = (f"{metric}: the runs under {reference} and under {other}" if collection is None
             else f"{collection}: the runs by {reference} and by {other}")  # fmt: skip
    ranked = _ranks(sides, values, better)
    tags = {"metric": metric} if collection is None else {"collection": collection}
    attributes = "".join(f" data-{k}='{escape(v)}'" for k, v in tags.items())
    page.add(f"<section class='ordering'{attributes}><h3>{escape(title)}</h3>")
    page.add(_correlation_table(statistics) + _ranks_table(names, ranked))
    records = [(run, names[side], ranks[side], run_values[side])
               for run, (run_values, ranks) in ranked.items() for side in (0, 1)]  # fmt: skip
    records.sort(key=lambda record: record[1] != names[0])  # the reference's side first
    page.chart(charts.orderings(title),
               {"ranks": rows(["run", "side", "rank", "value"], records, coded=("run", "side"))},
               **tags)  # fmt: skip
    page.add("</section>")


def _ranks(sides: list, values: dict, better: dict) -> dict[str, tuple[tuple, tuple]]:
    """Each run with a value on both sides: (its two values, its two ranks), in the
    reference's order (then by name)."""
    found = {}
    for run in sorted({run for run, *_ in values}):
        pair = tuple(values.get((run, *side)) for side in sides)
        if all(v is not None and math.isfinite(v) for v in pair):
            found[run] = pair
    signs = [-1.0 if better.get(metric) == "lower" else 1.0 for _, metric in sides]
    ranks = {run: tuple(1 + sum(signs[i] * them[i] > signs[i] * pair[i]
                                for them in found.values()) for i in (0, 1))
             for run, pair in found.items()}  # fmt: skip
    order = sorted(found, key=lambda run: (ranks[run][0], run))
    return {run: (found[run], ranks[run]) for run in order}


def _ranks_table(names: list[str], ranked: dict) -> str:
    headers = ["run", f"rank under {names[0]}", names[0], f"rank under {names[1]}", names[1],
               "places"]  # fmt: skip
    body = [
        ([text(run), Cell(str(ranks[0])), number(values[0]), Cell(str(ranks[1])),
          number(values[1]), _places(ranks[1] - ranks[0])], {"run": run})
        for run, (values, ranks) in ranked.items()
    ]  # fmt: skip
    return table(headers, body, kind="ranks")


def _places(fallen: int) -> Cell:
    """Places a run falls (▼, the style's mark) or rises (▲) from the reference's ranking to
    the other's; it sorts by the rise."""
    if fallen == 0:
        return Cell("0")
    kind = "down worse" if fallen > 0 else "up better"
    return Cell(f"<span class='{kind}'>{abs(fallen)}</span>", -fallen)


def _correlation_table(statistics: list[tuple]) -> str:
    """(statistic, value, ci_low, ci_high, run) as one row: each statistic, its interval under
    it, and the run that falls most."""
    cells = [_statistic_cell(*row) for row in statistics]
    return table([row[0] for row in statistics], [(cells, {})], kind="correlation")


def _statistic_cell(statistic: str, value, low, high, run) -> Cell:
    shown = "–" if value is None else format_value(value, integral=statistic == "max_rank_drop")
    shown = escape(shown) + (f" ({escape(run)})" if run else "")
    if low is not None and high is not None:
        shown += f"<br><small>[{low:.4f}, {high:.4f}]</small>"
    return Cell(shown)
