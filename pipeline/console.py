"""The only module that imports rich: result tables, metric listings and error lines."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

__all__ = ["print_error", "print_metrics", "print_results", "print_warning"]


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=not stderr)


def print_results(rows: list[tuple], metrics: list[dict]) -> None:
    """The aggregate table: one row per metric, one column per run, and the queries averaged."""
    from .outputs import format_value

    values: dict[str, dict[str, object]] = {}
    counts: dict[str, set] = {}
    for run, collection, metric, value, n in rows:
        column = f"{run} ({collection})"
        values.setdefault(column, {})[metric] = value
        counts.setdefault(column, set()).add(n)
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("metric")
    for column in values:
        table.add_column(column, justify="right")
    for m in metrics:
        cells = [format_value(v.get(m["label"]), m["aggregator"] == "sum") for v in values.values()]
        table.add_row(m["label"], *cells)
    table.add_row("queries", *("/".join(map(str, sorted(counts[c]))) for c in values), style="dim")
    _console().print(table)


def print_metrics(rows: list[tuple[str, ...]]) -> None:
    """`irpipe metrics`: name, aliases, parameters, provided by (distribution), description."""
    table = Table(show_edge=False, pad_edge=False)
    headers = (
        "metric",
        "aliases (and trec_eval names)",
        "parameters",
        "provided by",
        "description",
    )
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    _console().print(table)


def print_error(message: str) -> None:
    """One clear error on stderr (several lines only when several problems were found)."""
    sys.stderr.write(f"Error: {message}\n")


def print_warning(message: str) -> None:
    """A warning on stderr: the evaluation goes on."""
    sys.stderr.write(f"Warning: {message}\n")
