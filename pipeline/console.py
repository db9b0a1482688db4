"""The only module that imports rich: result tables, metric listings and error lines."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

__all__ = ["print_error", "print_metrics", "print_results"]


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=not stderr)


def print_results(rows: list[tuple], metrics: list[dict]) -> None:
    """The aggregate table: one row per run, one column per metric."""
    from .outputs import format_value

    labels = [m["label"] for m in metrics]
    integral = {m["label"] for m in metrics if m["aggregator"] == "sum"}
    table = Table(show_edge=False, pad_edge=False)
    for header in ["run", "collection", *labels, "queries"]:
        table.add_column(header, justify="left" if header in ("run", "collection") else "right")
    cells: dict[tuple, dict[str, object]] = {}
    counts: dict[tuple, set] = {}
    for run, collection, metric, value, n in rows:
        cells.setdefault((run, collection), {})[metric] = value
        counts.setdefault((run, collection), set()).add(n)
    for key, values in cells.items():
        shown = [format_value(values.get(l), l in integral) for l in labels]
        table.add_row(*key, *shown, "/".join(str(n) for n in sorted(counts[key])))
    _console().print(table)


def print_metrics(rows: list[tuple[str, str, str, str]]) -> None:
    """`irpipe metrics`: name, aliases, parameters, description."""
    table = Table(show_edge=False, pad_edge=False)
    for header in ("metric", "aliases", "parameters", "description"):
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    _console().print(table)


def print_error(message: str) -> None:
    """One clear error on stderr (several lines only when several problems were found)."""
    sys.stderr.write(f"Error: {message}\n")
