"""Result tables, metric listings and error lines. With `pipeline.console.progress_bar` (the progress bar
of `irpipe run`), the only module that imports rich."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "print_blocks",
    "print_checks",
    "print_error",
    "print_metrics",
    "print_plugin_warning",
    "print_plugins",
    "print_results",
    "print_warning",
]

# Where stdout is a file or a pipe, tables are plain ASCII: a dashed line under the header.
ASCII_HEAD = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
UNWRAPPED = 10_000  # the width of a log or a pipe, where lines are not wrapped
GAP = 3  # characters between two columns: a divider and a space of padding on each side


def _console(stderr: bool = False) -> Console:
    # Off a terminal the output is plain whatever the environment says: FORCE_COLOR or
    # TTY_COMPATIBLE, which make rich style a pipe, must not put escape codes in a nightly log.
    # On a terminal rich decides (NO_COLOR drops colours, TERM=dumb cursor movements).
    stream = sys.stderr if stderr else sys.stdout
    terminal = None if _isatty(stream) else False
    return Console(stderr=stderr, highlight=False, soft_wrap=not stderr, force_terminal=terminal)


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed
        return False


def print_results(
    rows: list[tuple],
    metrics: list[Any],
    outputs: list[Path] | None = (),
    console: Console | None = None,
    significance: Any = None,
    notes: list[str] = (),
    suites: dict[str, list[str]] | None = None,
) -> None:
    """The aggregate summary of `irpipe run`, laid out by `pipeline.console.layout` to fit the terminal,
    then which files were written. `metrics` are the plan's resolved metrics, in spec order;
    `significance` (a `pipeline.compare.marks.Significance`) adds its marks and legend; `notes` are
    printed last (what the history reused). With `outputs=None` nothing is said about files
    (`irpipe show`). `suites`: each suite's collections, whose rows (run, suite, metric, macro,
    n_collections) are among `rows`, each suite's table after its collections'."""
    from pipeline.console.layout import grids

    console = console or _console()
    marks = significance.marks if significance is not None else {}
    titles = {name: _suite_title(name, members) for name, members in (suites or {}).items()}
    tables = grids(rows, metrics, _plain(marks, console), titles)
    for grid in tables:
        console.print(Text(grid.title, style="bold"))
        for table in _tables(grid, console):
            console.print(table)
            console.print()
    if any(grid.best for grid in tables):
        console.print(Text(_legend(metrics)), soft_wrap=False)  # wrapped at spaces
    for line in significance.legend if significance is not None else ():
        console.print(Text(_plain_text(line, console)), soft_wrap=False)
    written = _written(outputs) if outputs is not None else []
    for i, line in enumerate(written):
        console.print(Text(line), soft_wrap=i > 0)  # a path is never folded
    for note in notes:
        console.print(Text(note), soft_wrap=False)


def _suite_title(name: str, members: list[str]) -> str:
    return f"suite {name}, the mean of {len(members)} collections ({', '.join(members)})"


def _tables(grid, console: Console) -> list[Table]:
    from pipeline.console.layout import split_columns

    names = max(cell_len(row[0]) for row in [[grid.key], *grid.rows])
    columns = [
        (cell_len(h), max(cell_len(row[j + 1]) for row in grid.rows))
        for j, h in enumerate(grid.headers)
    ]
    key, chunks = split_columns(names, columns, console.width, GAP)
    style = box.SIMPLE_HEAD if console.is_terminal else ASCII_HEAD
    tables = []
    for chunk in chunks:
        table = Table(box=style, show_edge=False, pad_edge=False, header_style="bold")
        table.add_column(Text(grid.key), width=key, overflow="fold")
        for j, width in chunk:
            table.add_column(Text(grid.headers[j]), justify="right", width=width, overflow="fold")
        for i, row in enumerate(grid.rows):
            cells = [_value(row[j + 1], width, (i, j) in grid.best) for j, width in chunk]
            table.add_row(Text(row[0]), *cells)
        tables.append(table)
    return tables


def _value(cell: str, width: int, best: bool) -> Text:
    # Padded here and set left: rich drops a right-justified cell's trailing space, and the space
    # after an unmarked value is what keeps the decimal points under each other.
    pad = " " * (width - cell_len(cell))
    return Text.assemble(pad, (cell, "bold" if best else ""), justify="left")


def _legend(metrics: list[Any]) -> str:
    from pipeline.console.layout import MARK

    lower = [m.label for m in metrics if m.better == "lower"]
    unmarked = [m.label for m in metrics if m.better is None]
    text = f"{MARK} best run of the collection for the metric: the highest value"
    text += f" (lowest for {', '.join(lower)})" if lower else ""
    return text + (f"; not compared: {', '.join(unmarked)}" if unmarked else "")


# Off a terminal the summary is plain ASCII: better and worse become + and -, and a significant
# but small difference ~+ and ~-.
_ASCII_MARKS = str.maketrans({"▲": "+", "▼": "-", "△": "~+", "▽": "~-"})


def _plain(marks: dict, console: Console) -> dict:
    return (
        marks if console.is_terminal else {k: v.translate(_ASCII_MARKS) for k, v in marks.items()}
    )


def _plain_text(text: str, console: Console) -> str:
    return text if console.is_terminal else text.translate(_ASCII_MARKS)


def _written(outputs: list[Path]) -> list[str]:
    if not outputs:
        return ["No outputs in the spec, so no file was written (list files under `outputs:`)."]
    files = "1 file (and its" if len(outputs) == 1 else f"{len(outputs)} files (each with its"
    head = f"Wrote {files} <file>.manifest.json):"
    return [head, *(f"  {_shown(path)}" for path in outputs)]


def _shown(path: Path) -> str:
    """A path relative to the working directory when it is below it, else as given."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def print_checks(results: list[Any], quiet: bool = False, console: Console | None = None) -> None:
    """The checks of `irpipe run` (`pipeline.checks.CheckResult`s): when any failed, a table of the
    failed ones and a count on stderr (whatever `quiet` says: they are why the exit code is 5);
    otherwise one line of counts on stdout, unless `quiet`."""
    from pipeline.checks.rows import tally

    failed = [r for r in results if r.status == "failed"]
    if not results or (quiet and not failed):
        return
    if not failed:
        (console or _console()).print(Text(f"Checks: {tally(results)}"), soft_wrap=False)
        return
    console = console or _console(stderr=True)
    if not console.is_terminal:
        console.width = UNWRAPPED  # a log keeps one line per check
    console.print(Text(f"Checks: {tally(results)}", style="bold"), soft_wrap=False)
    console.print(_checks_table(failed, console.is_terminal))


def _checks_table(failed: list[Any], terminal: bool) -> Table:
    """The table of failed checks; on a narrow terminal names fold, numbers never do."""
    from pipeline.checks.rows import COLUMNS, NUMBERS, table_rows

    table = Table(box=box.SIMPLE_HEAD if terminal else ASCII_HEAD, show_edge=False,
                  pad_edge=False, header_style="bold")  # fmt: skip
    for header in COLUMNS:
        number = header in NUMBERS
        table.add_column(Text(header), justify="right" if number else "left",
                         no_wrap=number, overflow="fold")  # fmt: skip
    for row in table_rows(failed):
        table.add_row(*map(Text, row))
    return table


def print_blocks(blocks: list[Any], console: Console | None = None) -> None:
    """Lines and tables (`pipeline.history.views.Listing`): `irpipe history`, `show`, `diff`.
    Where stdout is not a terminal, tables are plain ASCII and nothing is wrapped (a log keeps
    one line per line); a cell never loses characters."""
    console = console or _console()
    if not console.is_terminal:
        console.width = UNWRAPPED
    for block in blocks:
        if isinstance(block, str):
            console.print(Text(block), soft_wrap=False)
            continue
        if block.title:
            console.print(Text(block.title, style="bold"), soft_wrap=False)
        console.print(_listing(block, console))


def _listing(listing: Any, console: Console) -> Table:
    style = box.SIMPLE_HEAD if console.is_terminal else ASCII_HEAD
    table = Table(box=style, show_edge=False, pad_edge=False, header_style="bold",
                  show_header=bool(listing.headers))  # fmt: skip
    for j, header in enumerate(listing.headers or [""] * len(listing.rows[0])):
        justify = "right" if j in listing.numeric else "left"
        # Columns that may not wrap keep their widest line; the others fold where they must.
        widest = max(cell_len(line) for row in listing.rows for line in row[j].splitlines() or [""])
        least = None if j in listing.wraps else max(widest, cell_len(header))
        table.add_column(Text(header), justify=justify, overflow="fold", min_width=least)
    for row in listing.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def print_metrics(rows: list[tuple[str, ...]], definitions: list[Any] = ()) -> None:
    """`irpipe metrics`: name, aliases, parameters, provided by (distribution), description; then
    each of `definitions` (`pipeline.measures.listing.MetricListing`, for the metrics a user
    named): its parameters with their defaults and what each means."""
    console = _plain_console()
    table = Table(show_edge=False, pad_edge=False, box=_box(console))
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
        table.add_row(*map(Text, row))
    console.print(table)
    for listing in definitions:
        console.print()
        for line in _definition(listing):
            console.print(Text(line), soft_wrap=False)


def _definition(listing: Any) -> list[str]:
    """A metric's definition, line by line: what it is, how `@k` and aggregation work, and each
    parameter with its default."""
    cutoff = f"@k sets {listing.cutoff}" if listing.cutoff else "takes no cutoff"
    lines = [
        f"{listing.name}: {listing.description}",
        f"  also named: {', '.join(listing.aliases) or '-'}",
        f"  provided by: {listing.provider}; {cutoff}; aggregated: {listing.aggregator}; "
        f"better: {listing.better or '-'}",
        "  parameters:" if listing.parameters else "  parameters: none",
    ]
    shown = [p.shown() for p in listing.parameters]
    width = max(map(len, shown), default=0)
    for text, parameter in zip(shown, listing.parameters, strict=True):
        lines.append(f"    {text.ljust(width)}  {parameter.description}".rstrip())
    return lines


def _plain_console() -> Console:
    """A console for a listing: off a terminal nothing is wrapped (a pipe keeps one line per
    row)."""
    console = _console()
    if not console.is_terminal:
        console.width = UNWRAPPED
    return console


def _box(console: Console) -> box.Box:
    """rich's heavy header on a terminal; plain ASCII (a dashed line under the header) off one."""
    return box.HEAVY_HEAD if console.is_terminal else ASCII_HEAD


def print_plugins(rows: list[dict[str, Any]]) -> None:
    """`irpipe plugins`: each plugin, its distribution and version, metrics, writers and state."""
    table = Table(show_edge=False, pad_edge=False)
    for header in ("plugin", "distribution", "metrics", "writers", "state"):
        table.add_column(header, overflow="fold")
    for row in rows:
        distribution = " ".join(filter(None, (row["distribution"], row["version"])))
        state = row["state"] if row["error"] is None else f"{row['state']}: {row['error']}"
        if row["withheld"]:  # another plugin defines the same names
            state += f"; withheld: {', '.join(row['withheld'])}"
        metrics, writers = ", ".join(row["metrics"]), ", ".join(row["writers"])
        table.add_row(row["plugin"], distribution or "-", metrics, writers, state)
    _console().print(table)


def print_error(message: str) -> None:
    """One clear error on stderr (several lines only when several problems were found)."""
    sys.stderr.write(f"Error: {message}\n")


def print_warning(message: str) -> None:
    """A warning on stderr: the evaluation goes on."""
    sys.stderr.write(f"Warning: {message}\n")


def print_plugin_warning(message: str) -> None:
    """A plugin that was not loaded, one line on stderr: `irpipe: plugin 'x 1.0' ... was not
    loaded: ...`; the others and the built-ins work."""
    sys.stderr.write(f"irpipe: {message}\n")
