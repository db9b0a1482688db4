"""The tables `agreement`, `confusion` and `correlation`, made from the evaluation's tables.

Every agreement entry's confusion cells come from one pass of SQL over the qrels (`sql`): left
by the engine (Spark counts them where the labels are), or counted here from the loaded qrels;
they become its rows of `confusion`, and its statistics are computed from them (`labels`). Per
ordering, the runs' values come from `aggregate` (and with a bootstrap, from `per_query`), and the
statistics from `orderings` and `bootstrap`. What only the data shows is a spec error naming the
entry: two sets without a shared pair, a threshold outside the grades seen, fewer than three
runs with values to order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pipeline.agreement import sql
from pipeline.agreement.bootstrap import Sides, intervals
from pipeline.agreement.labels import Labels, binary_statistics, label_statistics
from pipeline.agreement.names import threshold_name
from pipeline.agreement.orderings import ordering_statistics
from pipeline.agreement.plan import (
    MIN_RUNS,
    AgreementEntry,
    AgreementPlan,
    CorrelationEntry,
    Ordering,
)
from pipeline.errors import SpecError
from pipeline.plan.judgment_cells import CELLS_TABLE, cells_statement, judged_pairs

if TYPE_CHECKING:
    import duckdb

__all__ = ["compare_judgment_sets", "threshold_name"]

#: `where(*key)`: the spec's file, line and dotted key, for messages
Where = Callable[..., str]


def compare_judgment_sets(
    con: duckdb.DuckDBPyConnection, plan: AgreementPlan, where: Where, counted: bool = False
) -> None:
    """Create the tables `agreement`, `confusion` and `correlation` of `plan`'s entries;
    `counted`: the engine left the entries' cells in `judgment_cells` (else they are counted
    from `qrels`), which is dropped once read."""
    pairs = judged_pairs(plan.agreements)
    if pairs and not counted:
        cells = cells_statement(pairs)
        con.execute(f"CREATE TEMP TABLE {CELLS_TABLE} AS {cells.sql}", cells.params)
    try:
        for statement in (sql.AGREEMENT_TABLE, sql.AGREEMENT_TEXT_VIEW,
                          sql.confusion_table(bool(pairs)), sql.CORRELATION_TABLE):  # fmt: skip
            con.execute(statement)
        rows = [row for entry in plan.agreements for row in _agreement(con, entry, where)]
    finally:
        if pairs:
            con.execute(f"DROP TABLE {CELLS_TABLE}")
    _insert(con, "agreement", rows)
    rows = [row for entry in plan.correlations for row in _correlation(con, entry, where)]
    _insert(con, "correlation", rows)


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """A few hundred rows at most: one statement, bound values."""
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


# -- labels ----------------------------------------------------------------------------------


def _agreement(con, entry: AgreementEntry, where: Where) -> list[tuple]:
    """The entry's rows of `agreement`, once its cells are in `confusion`."""
    names = {"reference": entry.reference, "other": entry.other}
    con.execute(sql.confusion_rows(), names)
    cells = con.execute(sql.CELL_VALUES, names).fetchnumpy()
    found = _counts(cells, entry, where)
    labels = _shared(cells)
    found.update(label_statistics(labels))
    for i, threshold in enumerate(entry.thresholds):
        _check_threshold(labels, threshold, where(*entry.key, "thresholds", i))
        binary = labels.binarised(threshold)
        both = {**label_statistics(binary), **binary_statistics(binary)}
        found.update({name + threshold_name(threshold): value for name, value in both.items()})
    # The row's collection is the reference set's: the judgments the other's are compared with.
    return [(entry.reference, entry.other, entry.reference, name, _number(value))
            for name, value in found.items()]  # fmt: skip


def _counts(cells: dict, entry: AgreementEntry, where: Where) -> dict[str, int]:
    reference, other, pairs = cells["reference"][:-1], cells["other"][:-1], cells["pairs"][:-1]
    shared = pairs[~np.isnan(reference) & ~np.isnan(other)].sum()
    if not shared:
        raise SpecError(
            f"{where(*entry.key)}: '{entry.reference}' and '{entry.other}' share no judged "
            "(qid, docno) pair: there are no labels to compare (are they judgments of the same "
            "queries and documents?)"
        )
    return {  # counts of whole numbers, summed as doubles (the cells' type): exact below 2**53
        "pairs_shared": int(shared),
        "pairs_reference_only": int(pairs[np.isnan(other)].sum()),
        "pairs_other_only": int(pairs[np.isnan(reference)].sum()),
        "queries_shared": int(cells["queries"][-1]),
    }


def _shared(cells: dict) -> Labels:
    """The cells both sets judge (the last row is the total)."""
    reference, other, pairs = cells["reference"][:-1], cells["other"][:-1], cells["pairs"][:-1]
    both = ~np.isnan(reference) & ~np.isnan(other)
    return Labels(reference[both], other[both], pairs[both])


def _check_threshold(labels: Labels, threshold: float, where: str) -> None:
    """A threshold splits the grades seen: above the lowest, at most the highest."""
    grades = labels.grades()
    if not grades[0] < threshold <= grades[-1]:
        every = "relevant" if threshold <= grades[0] else "not relevant"
        raise SpecError(
            f"{where}: {threshold} is outside the grades seen on the shared pairs "
            f"({grades[0]:g} to {grades[-1]:g}): at it every label is {every}; give a threshold "
            f"above {grades[0]:g} and at most {grades[-1]:g}"
        )


def _number(value: float | int) -> float | None:
    """A value for the table: NULL where it is undefined (NaN)."""
    return None if np.isnan(value) else float(value)


# -- orderings -------------------------------------------------------------------------------


def _correlation(con, entry: CorrelationEntry, where: Where) -> list[tuple]:
    return [row for ordering in entry.orderings
            for row in _ordering_rows(con, entry, ordering, where)]  # fmt: skip


def _ordering_rows(con, entry: CorrelationEntry, ordering: Ordering, where: Where) -> list[tuple]:
    runs, x, y = _values(con, ordering)
    if len(runs) < MIN_RUNS:
        what = ordering.metric or f"{ordering.reference.metric} and {ordering.other.metric}"
        raise SpecError(
            f"{where(*entry.key)}: {len(runs)} run(s) have a value of {what} under both sides "
            f"({', '.join(runs)}): an ordering of fewer than {MIN_RUNS} runs has nothing to "
            "correlate"
        )
    found, fallen = ordering_statistics(x[:, None], y[:, None], entry.rbo_p)
    spans = _intervals(con, entry, ordering, runs) if entry.bootstrap else {}
    key = (entry.reference, entry.other, ordering.collection, ordering.metric)
    falls = runs[fallen[0]] if fallen[0] >= 0 else None  # the run of max_rank_drop
    return [
        (*key, name, _number(values[0]), *map(_number, spans.get(name, (np.nan, np.nan))),
         falls if name == "max_rank_drop" else None)
        for name, values in found.items()
    ]  # fmt: skip


def _values(con, ordering: Ordering) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The runs with a value on both sides, in name order, and their signed values."""
    sides = {"reference": ordering.reference, "other": ordering.other}
    bound = {f"{role}_{field}": getattr(side, field) for role, side in sides.items()
             for field in ("collection", "metric")}  # fmt: skip
    found = con.execute(sql.values_sql(), bound).fetchnumpy()
    signs = [-1.0 if side.lower else 1.0 for side in sides.values()]
    return list(found["run"]), found["reference"] * signs[0], found["other"] * signs[1]


def _intervals(con, entry: CorrelationEntry, ordering: Ordering, runs: list[str]) -> dict:
    """The bootstrap's intervals of the ordering's statistics."""
    sides = (ordering.reference, ordering.other)
    bound = [{"collection": s.collection, "metric": s.metric, "runs": runs} for s in sides]
    rows = [con.execute(sql.per_query_sql(), b).fetchnumpy() for b in bound]
    queries = np.unique(np.concatenate([r["qid"] for r in rows]))
    values = tuple(_matrix(r, runs, queries) for r in rows)
    signs = tuple(-1.0 if s.lower else 1.0 for s in sides)
    resampled = Sides(values, (sides[0].aggregator, sides[1].aggregator), signs)
    key = json.dumps([entry.reference, entry.other, ordering.collection])
    return intervals(resampled, entry.bootstrap, entry.seed, key, entry.rbo_p, entry.alpha)


def _matrix(rows: dict, runs: list[str], queries: np.ndarray) -> np.ndarray:
    """Per-query values as (runs, queries), NaN where a run has no value of a query."""
    values = np.full((len(runs), len(queries)), np.nan)
    names = np.array(runs, dtype=object)
    order = np.argsort(names)
    run_index = order[np.searchsorted(names, rows["run"], sorter=order)]
    values[run_index, np.searchsorted(queries, rows["qid"])] = rows["value"]
    return values
