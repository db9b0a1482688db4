"""The judgment sets' comparisons as `irpipe run` and `irpipe agree` print them, compactly: per
agreement entry, its statistics by rows and the labels' grades and each threshold by columns;
per correlation entry, the orderings compared by rows and the statistics by columns (an interval
under its value). Pure: rows in, tables (drawn by `draw.print_blocks`) out."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.agreement.names import COUNT_STATISTICS as COUNTS
from pipeline.agreement.names import by_threshold, grade_name, grades_in_order
from pipeline.formatting import format_value

__all__ = ["JudgmentTable", "agreement_tables", "confusion_tables", "correlation_tables"]

THRESHOLD_ONLY = ("precision", "recall", "f1")


@dataclass
class JudgmentTable:
    """A table as `draw.print_blocks` draws it: a title, headers, rows of cells, the columns
    aligned right."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)
    wraps: set[int] = field(default_factory=set)


def agreement_tables(rows: list[tuple]) -> list[JudgmentTable]:
    """One table per entry, from the `agreement` table's rows (reference, other, collection,
    statistic, value), in order."""
    entries: dict[tuple[str, str], dict[str, float | None]] = {}
    for reference, other, _, statistic, value in rows:
        entries.setdefault((reference, other), {})[statistic] = value
    return [_agreement_table(*names, values) for names, values in entries.items()]


def _agreement_table(reference: str, other: str, values: dict) -> JudgmentTable:
    counts = [int(values[name]) for name in COUNTS]
    title = (f"Agreement of {other} with {reference}: {counts[0]} pairs judged by both "
             f"({counts[1]} by {reference} only, {counts[2]} by {other} only), "
             f"{counts[3]} queries")  # fmt: skip
    bases, suffixes = by_threshold(name for name in values if name not in COUNTS)
    columns = ["", *suffixes]
    table = [[base, *(_cell(values, base, suffix) for suffix in columns)] for base in bases]
    headers = ["statistic", "grades", *(f">= {suffix}" for suffix in suffixes)]
    return JudgmentTable(title, headers, table, set(range(1, len(headers))))


def _cell(values: dict, base: str, suffix: str) -> str:
    name = f"{base}@{suffix}" if suffix else base
    return format_value(values[name]) if name in values and values[name] is not None else "-"


def confusion_tables(rows: list[tuple]) -> list[JudgmentTable]:
    """One table per entry, from the `confusion` table's rows (reference, other,
    reference_grade, other_grade, pairs): the reference's grades by rows, the other's by
    columns, `none` where a set does not judge the pair."""
    entries: dict[tuple[str, str], dict[tuple, int]] = {}
    for reference, other, reference_grade, other_grade, pairs in rows:
        entries.setdefault((reference, other), {})[reference_grade, other_grade] = pairs
    return [_confusion_table(*names, cells) for names, cells in entries.items()]


def _confusion_table(reference: str, other: str, cells: dict[tuple, int]) -> JudgmentTable:
    down = grades_in_order(g for g, _ in cells)
    across = grades_in_order(g for _, g in cells)
    table = [[grade_name(r), *(str(cells.get((r, o), 0)) for o in across)] for r in down]
    headers = [f"{reference} \\ {other}", *map(grade_name, across)]
    title = f"Pairs by grade: {reference}'s (rows) and {other}'s (columns)"
    return JudgmentTable(title, headers, table, set(range(1, len(headers))))


def correlation_tables(rows: list[tuple]) -> list[JudgmentTable]:
    """One table per entry, from the `correlation` table's rows (reference, other, collection,
    metric, statistic, value, ci_low, ci_high, run), in order."""
    entries: dict[tuple, dict[str, dict[str, str]]] = {}
    for reference, other, collection, metric, statistic, value, low, high, run in rows:
        ordering = metric or f"{reference} ~ {other}"
        cells = entries.setdefault((reference, other, collection), {}).setdefault(ordering, {})
        cells[statistic] = _correlation_cell(statistic, value, low, high, run)
    return [_correlation_table(*key, orderings) for key, orderings in entries.items()]


def _correlation_cell(statistic: str, value, low, high, run) -> str:
    places = statistic == "max_rank_drop"  # a number of places, and the run that falls
    shown = "-" if value is None else format_value(value, integral=places)
    shown += f" ({run})" if run else ""
    if low is not None and high is not None:
        shown += f"\n[{low:.2f}, {high:.2f}]"
    return shown


def _correlation_table(reference: str, other: str, collection: str | None,
                       orderings: dict[str, dict[str, str]]) -> JudgmentTable:  # fmt: skip
    if collection is None:
        title = f"Orderings of the runs by each metric: under {other} against {reference}"
        key = "metric"
    else:
        title = f"Orderings of the runs of {collection}: by {other} against {reference}"
        key = "orderings"
    statistics = list(dict.fromkeys(s for cells in orderings.values() for s in cells))
    table = [[name, *(cells.get(s, "-") for s in statistics)] for name, cells in orderings.items()]
    return JudgmentTable(title, [key, *statistics], table, set(range(1, len(statistics) + 1)))
