"""The `comparison` table: per-query values out of DuckDB in one query, every comparison computed
with numpy, the corrections applied per family, and the rows written back as a DuckDB table, so
that every writer (and the report) reads it like any other table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.compare.block import ALL_PAIRS, Block, compare_block
from pipeline.compare.corrections import adjust
from pipeline.compare.plan import ComparePlan

if TYPE_CHECKING:
    import duckdb

__all__ = ["COLUMNS", "compare_runs"]

#: the table's columns, in order, with their DuckDB types
COLUMNS = (
    ("collection", "VARCHAR"), ("run", "VARCHAR"), ("baseline", "VARCHAR"), ("metric", "VARCHAR"),
    ("test", "VARCHAR"), ("n_queries", "BIGINT"), ("mean", "DOUBLE"), ("baseline_mean", "DOUBLE"),
    ("difference", "DOUBLE"), ("ci_low", "DOUBLE"), ("ci_high", "DOUBLE"), ("p_value", "DOUBLE"),
    ("p_adjusted", "DOUBLE"), ("correction", "VARCHAR"), ("significant", "BOOLEAN"), ("effect_size", "DOUBLE"),
    ("wins", "BIGINT"), ("ties", "BIGINT"), ("losses", "BIGINT"), ("seed", "BIGINT"),
    ("samples", "BIGINT"),
)  # fmt: skip

# Queries are numbered per collection in query-id order (the order the aggregate sums in); a
# missing value (NULL) becomes NaN, which a comparison leaves out like a query the run lacks.
_VALUES = """
SELECT list_position($labels, p.metric) - 1 AS metric, r.ordinal AS run,
    dense_rank() OVER (PARTITION BY p.collection ORDER BY p.qid) - 1 AS query,
    coalesce(p.value, 'NaN'::DOUBLE) AS value
FROM per_query p JOIN runs r USING (run, collection)
WHERE list_contains($labels, p.metric)"""


def compare_runs(con: duckdb.DuckDBPyConnection, plan: ComparePlan, where: str) -> None:
    """Create the `comparison` table; `where` names the spec's compare section in messages."""
    parts = [compare_block(block, plan, where) for block in fetch_blocks(con, plan)]
    columns = {name: _joined([part[name] for part in parts]) for name in parts[0]}
    columns["correction"] = [
        "none" if test in ALL_PAIRS else plan.correction for test in columns["test"]
    ]
    columns["p_adjusted"] = _corrected(columns, {suite for suite, _ in plan.suites})
    columns["significant"] = columns["p_adjusted"] <= plan.alpha
    columns["seed"] = np.full(len(columns["p_value"]), plan.seed)
    _write(con, columns)


def _joined(parts: list) -> np.ndarray | list:
    if isinstance(parts[0], list):
        return [value for part in parts for value in part]
    return np.concatenate(parts)


def fetch_blocks(con: duckdb.DuckDBPyConnection, plan: ComparePlan) -> list[Block]:
    """One block per (collection, metric) of the plan, in the plan's order (`run` in the rows is
    the ordinal of the run's row in `runs`: one per run and collection)."""
    labels = [label for label, _ in plan.metrics]
    data = con.execute(_VALUES, {"labels": labels}).fetchnumpy()
    rows = con.execute("SELECT run, collection, ordinal FROM runs").fetchall()
    ordinals = {(run, collection): ordinal for run, collection, ordinal in rows}
    blocks = []
    for collection, runs in plan.collections:
        local = np.full(max(ordinals.values()) + 1, -1)
        local[[ordinals[run, collection] for run in runs]] = np.arange(len(runs))
        rows = local[data["run"]] >= 0
        width = int(data["query"][rows].max()) + 1 if rows.any() else 0
        for m, (label, aggregator) in enumerate(plan.metrics):
            values = np.full((len(runs), width), np.nan)
            mine = rows & (data["metric"] == m)
            values[local[data["run"][mine]], data["query"][mine]] = data["value"][mine]
            blocks.append(Block(collection, label, aggregator, runs, values))
    return blocks + suite_blocks(con, plan)


# A suite's values: each run's aggregate under each of the suite's collections, in its order.
_SUITE_VALUES = """
SELECT s.suite, a.run, a.metric, s.position, coalesce(a.value, 'NaN'::DOUBLE) AS value
FROM aggregate a JOIN suite_collections s USING (collection)
WHERE list_contains($labels, a.metric)"""


def suite_blocks(con: duckdb.DuckDBPyConnection, plan: ComparePlan) -> list[Block]:
    """One block per (suite, metric): runs by the suite's collections, each cell the run's
    aggregate value there, compared as a mean over collections (BEIR's mean)."""
    if not plan.suites:
        return []
    labels = [label for label, _ in plan.metrics]
    found = {}
    for suite, run, metric, position, value in con.execute(
        _SUITE_VALUES, {"labels": labels}
    ).fetchall():
        found[suite, run, metric, position] = value
    blocks = []
    for suite, runs in plan.suites:
        width = 1 + max(p for s, _, _, p in found if s == suite)
        for label, _ in plan.metrics:
            values = np.array([[found.get((suite, run, label, p), np.nan) for p in range(width)]
                               for run in runs])  # fmt: skip
            blocks.append(Block(suite, label, "mean", runs, values))
    return blocks


def _corrected(columns: dict, suites: set[str]) -> np.ndarray:
    """p-values adjusted within each family: every comparison of one metric and one test on
    the collections, and on each suite apart (its means over collections), by the row's
    correction (none for the Tukey tests, which control the family-wise error)."""
    families: dict[tuple, list[int]] = {}
    suite = [c if c in suites else None for c in columns["collection"]]
    keys = zip(columns["metric"], columns["test"], columns["correction"], suite, strict=True)
    for i, key in enumerate(keys):
        families.setdefault(key, []).append(i)
    adjusted = np.empty(len(columns["p_value"]))
    for (_, _, method, _), rows in families.items():
        adjusted[rows] = adjust(columns["p_value"][rows], method)
    return adjusted


def _write(con: duckdb.DuckDBPyConnection, columns: dict) -> None:
    """The columns as the table `comparison`, through DuckDB's scan of numpy arrays (binding
    lists as parameters converts value by value); NaN (no value: an undefined effect size, no
    samples) becomes NULL, which every format can hold."""
    arrays = {name: np.asarray(columns[name]) for name, _ in COLUMNS}
    arrays["row_order"] = np.arange(len(arrays["run"]))
    con.register("irpipe_comparison_rows", arrays)
    try:
        values = ", ".join(_cell(name, kind) for name, kind in COLUMNS)
        con.execute(
            f"CREATE TABLE comparison AS SELECT {values} FROM irpipe_comparison_rows "
            "ORDER BY row_order"
        )
    finally:
        con.unregister("irpipe_comparison_rows")


def _cell(name: str, kind: str) -> str:
    if kind in ("DOUBLE", "BIGINT"):  # DuckDB holds NaN equal to NaN, so nullif finds it
        return f"CAST(nullif(CAST({name} AS DOUBLE), 'NaN'::DOUBLE) AS {kind}) AS {name}"
    return f"CAST({name} AS {kind}) AS {name}"
