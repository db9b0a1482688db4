"""The console summary's layout, apart from its drawing (console.py draws it with rich).

One table per collection, because values are only comparable on the same queries: each run's best
is marked within its collection. A table puts the longer list down the page: runs as rows (a
leaderboard, one column per metric) when there are at least as many runs as metrics, otherwise
metrics as rows and one column per run. Rows are cheap (a terminal scrolls) while columns are bounded
by its width, and the key column holds the long names once. A table wider than the terminal is split
column-wise into several tables that repeat the key column, and long headers fold over several
lines; a number or a name is never cut.

The best value of each metric is marked `*` (and bold on a terminal): the highest, or the lowest
where the measure declares `better = "lower"`. It is not marked for measures that declare
`better = None` (counts, diagnostics, means over different queries per run), when runs were
averaged over different numbers of queries, when fewer than two runs have a value, or when every
run ties (values are compared as printed, to 4 decimals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.compare.marks import best_runs
from pipeline.formatting import format_value

__all__ = ["MARK", "Grid", "best_runs", "grids", "split_columns"]

MARK = "*"
HEADER_FOLD = 12  # a header longer than this may fold when the table does not fit


@dataclass
class Grid:
    """One collection's table: a key column, value columns, and which cells hold a best value."""

    title: str
    key: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    best: set[tuple[int, int]] = field(default_factory=set)  # (row, value column)
    notes: dict[tuple[int, int], str] = field(default_factory=dict)  # significance marks


@dataclass
class _Collection:
    name: str
    runs: list[str] = field(default_factory=list)
    values: dict[tuple[str, str], Any] = field(default_factory=dict)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)


def grids(
    rows: list[tuple],
    metrics: list[Any],
    marks: dict[tuple[str, str, str], str] | None = None,
    titles: dict[str, str] | None = None,
) -> list[Grid]:
    """One oriented Grid per collection from aggregate rows (run, collection, metric, value, n).

    `metrics` are the plan's resolved metrics (label, aggregator, better), in spec
    order; `marks` the significance marks by (collection, run, metric), set after the best mark;
    `titles` the title of a grid that is not a collection's (a suite's means), by its name.
    """
    return [_grid(c, metrics, marks or {}, (titles or {}).get(c.name)) for c in _collections(rows)]


def _collections(rows: list[tuple]) -> list[_Collection]:
    found: dict[str, _Collection] = {}
    for run, collection, metric, value, n in rows:
        c = found.setdefault(collection, _Collection(collection))
        if run not in c.runs:
            c.runs.append(run)
        c.values[run, metric] = value
        c.counts[run, metric] = n
    return list(found.values())


def _grid(c: _Collection, metrics: list[Any], marks: dict, title: str | None = None) -> Grid:
    labels = [m.label for m in metrics]
    cells = {(r, m.label): _cell(c, r, m) for r in c.runs for m in metrics}
    best = {(r, m.label) for m in metrics for r in _best_runs(c, m)}
    notes = {(r, m): mark for (name, r, m), mark in marks.items() if name == c.name}
    counts = _queries(c)
    if title is None:
        title = f"collection {c.name}" + ("" if counts else f", {_only(c.counts.values())} queries")
    else:
        counts = {}  # a suite's row counts its collections, which its title names
    if len(c.runs) >= len(metrics):
        grid = _table(title, "run", c.runs, labels, lambda r, m: (r, m), cells, (best, notes))
        if counts:
            _add_column(grid, "queries", [counts[r] for r in c.runs])
    else:
        grid = _table(title, "metric", labels, c.runs, lambda m, r: (r, m), cells, (best, notes))
        if counts:
            grid.rows.append(["queries", *(counts[r] for r in c.runs)])
    return _with_marks(grid)


def _queries(c: _Collection) -> dict[str, str]:
    """Each run's query counts ("50", or "43/50" when its metrics differ), or {} when every
    value of the collection averages the same number of queries (the title then says it)."""
    if len(set(c.counts.values())) <= 1:
        return {}
    found: dict[str, set[int]] = {r: set() for r in c.runs}
    for (run, _), n in c.counts.items():
        found[run].add(n)
    return {r: "/".join(str(n) for n in sorted(found[r])) for r in c.runs}


def _only(values: Any) -> Any:
    return next(iter(values), 0)


def _cell(c: _Collection, run: str, metric: Any) -> str:
    return format_value(c.values.get((run, metric.label)), metric.aggregator == "sum")


def _best_runs(c: _Collection, metric: Any) -> list[str]:
    """The runs holding the best printed value of `metric` (see the module's docstring)."""
    scored = {r: c.values.get((r, metric.label)) for r in c.runs}
    counts = {r: c.counts.get((r, metric.label)) for r in c.runs}
    return best_runs(scored, counts, metric.better)


def _table(title, key, row_keys, column_keys, cell_key, cells, marked) -> Grid:
    """One row per row key (a run or a metric), one column per column key; `cell_key` makes the
    (run, metric) key of a row key and a column key; `marked` is (best cells, notes by cell)."""
    best, notes = marked
    grid = Grid(title, key, list(column_keys))
    for i, a in enumerate(row_keys):
        grid.rows.append([a, *(cells[cell_key(a, b)] for b in column_keys)])
        grid.best |= {(i, j) for j, b in enumerate(column_keys) if cell_key(a, b) in best}
        grid.notes |= {(i, j): notes[cell_key(a, b)] for j, b in enumerate(column_keys)
                       if cell_key(a, b) in notes}  # fmt: skip
    return grid


def _add_column(grid: Grid, header: str, cells: list[str]) -> None:
    grid.headers.append(header)
    for row, cell in zip(grid.rows, cells, strict=True):
        row.append(cell)


def _with_marks(grid: Grid) -> Grid:
    """Values get the mark or a space after them, so that decimal points stay aligned; the same
    for significance marks, after the best mark."""
    if grid.best:
        for i, row in enumerate(grid.rows):
            row[1:] = [f"{v}{MARK if (i, j) in grid.best else ' '}" for j, v in enumerate(row[1:])]
    if grid.notes:
        for i, row in enumerate(grid.rows):
            row[1:] = [f"{v}{grid.notes.get((i, j), ' ')}" for j, v in enumerate(row[1:])]
    return grid


def split_columns(
    key: int, columns: list[tuple[int, int]], width: int, gap: int
) -> tuple[int, list[list[tuple[int, int]]]]:
    """Split value columns into tables that fit `width`, each repeating the key column.

    `key` is the key column's widest name, `columns` each value column's (header width, widest
    cell), `gap` the characters between two columns. Returns the key column's width and, per table,
    (column index, width) pairs: one table at full width if everything fits; else as many columns
    per table as fit with headers folded to HEADER_FOLD (and names longer than a third of the width
    folded, so that a long run name leaves room for numbers), widened again where room is left.
    A column is never narrower than its widest value.
    """
    natural = [max(h, c) for h, c in columns]
    if key + sum(natural) + gap * len(natural) <= width:
        return key, [list(enumerate(natural))]
    key = min(key, max(HEADER_FOLD, width // 3))
    narrow = [max(c, min(h, HEADER_FOLD)) for h, c in columns]
    tables: list[list[int]] = [[]]
    used = key
    for i, w in enumerate(narrow):
        if tables[-1] and used + gap + w > width:
            tables.append([])
            used = key
        tables[-1].append(i)
        used += gap + w
    return key, [_widen(t, narrow, natural, width - key - gap * len(t)) for t in tables]


def _widen(table: list[int], narrow: list[int], natural: list[int], room: int) -> list[tuple]:
    spare = room - sum(narrow[i] for i in table)
    widths = []
    for i in table:
        grow = max(0, min(natural[i] - narrow[i], spare))
        spare -= grow
        widths.append((i, narrow[i] + grow))
    return widths
