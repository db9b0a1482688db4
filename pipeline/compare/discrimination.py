"""Discriminative power (Sakai 2006): the share of a collection's pairs of runs a test finds
significant, per collection, metric and test.

Every pair of runs of a collection is compared (the run earlier in the spec is the pair's
baseline), by the comparison tests' own code (`block.compare_block`, with the spec's `samples`
and `seed`); a family is one collection's pairs of one metric and one test, corrected by the
section's correction (the Tukey tests correct nothing: they control the family-wise error over
all pairs themselves). Two tables:

discrimination        collection metric test correction alpha runs pairs significant share
discrimination_pairs  each pair's p-value, its adjusted p-value and whether it is significant,
                      sorted by adjusted p-value: the achieved significance level (ASL) curve
                      the `asl_plot` draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.compare.block import ALL_PAIRS, compare_block
from pipeline.compare.corrections import adjust
from pipeline.compare.table import fetch_blocks

if TYPE_CHECKING:
    import duckdb

    from pipeline.compare.discrimination_plan import DiscriminationPlan

__all__ = ["discrimination_tables"]


def discrimination_tables(
    con: duckdb.DuckDBPyConnection, plan: DiscriminationPlan, where: str
) -> None:
    """Create `discrimination_pairs` and `discrimination`; `where` names the spec's section."""
    parts = [compare_block(block, plan.pairs, where) for block in fetch_blocks(con, plan.pairs)]
    rows = {name: _joined([part[name] for part in parts]) for name in
            ("collection", "metric", "test", "run", "baseline", "p_value")}  # fmt: skip
    rows["correction"] = ["none" if t in ALL_PAIRS else plan.correction for t in rows["test"]]
    rows["p_adjusted"] = _adjusted(rows)
    rows["significant"] = rows["p_adjusted"] <= plan.alpha
    _write_pairs(con, rows)
    con.execute(_SUMMARY, [plan.alpha])


def _joined(parts: list) -> np.ndarray | list:
    if isinstance(parts[0], list):
        return [value for part in parts for value in part]
    return np.concatenate(parts)


def _adjusted(rows: dict) -> np.ndarray:
    """p-values adjusted within each family: a collection's pairs of one metric and one test."""
    families: dict[tuple, list[int]] = {}
    keys = zip(rows["collection"], rows["metric"], rows["test"], rows["correction"], strict=True)
    for i, key in enumerate(keys):
        families.setdefault(key, []).append(i)
    adjusted = np.empty(len(rows["p_value"]))
    for key, members in families.items():
        adjusted[members] = adjust(rows["p_value"][members], key[3])
    return adjusted


_PAIR_COLUMNS = (
    ("collection", "VARCHAR"), ("metric", "VARCHAR"), ("test", "VARCHAR"), ("run", "VARCHAR"),
    ("baseline", "VARCHAR"), ("p_value", "DOUBLE"), ("p_adjusted", "DOUBLE"),
    ("correction", "VARCHAR"), ("significant", "BOOLEAN"),
)  # fmt: skip


def _write_pairs(con: duckdb.DuckDBPyConnection, rows: dict) -> None:
    """The pairs, family by family in the plan's order, each sorted by adjusted p-value (the
    ASL curve), as the table `discrimination_pairs`."""
    arrays = {name: np.asarray(rows[name]) for name, _ in _PAIR_COLUMNS}
    arrays["row_order"] = np.arange(len(arrays["run"]))
    con.register("irpipe_discrimination_rows", arrays)
    try:
        cells = ", ".join(f"CAST({n} AS {t}) AS {n}" for n, t in _PAIR_COLUMNS)
        con.execute(f"CREATE TABLE discrimination_pairs AS {_PAIRS_SQL.format(cells=cells)}")
    finally:
        con.unregister("irpipe_discrimination_rows")


_PAIRS_SQL = """
SELECT * EXCLUDE (family_order) FROM (
    SELECT {cells},
        row_number() OVER (PARTITION BY collection, metric, test
            ORDER BY p_adjusted, p_value, row_order) AS position,
        min(row_order) OVER (PARTITION BY collection, metric, test) AS family_order
    FROM irpipe_discrimination_rows)
ORDER BY family_order, position"""

# Runs are counted from the pairs: n runs make n (n - 1) / 2 pairs.
_SUMMARY = """
CREATE TABLE discrimination AS
SELECT collection, metric, test, any_value(correction) AS correction, ?::DOUBLE AS alpha,
    count(DISTINCT run) + 1 AS runs, count(*) AS pairs,
    count(*) FILTER (WHERE significant) AS significant,
    count(*) FILTER (WHERE significant) / count(*) AS share
FROM discrimination_pairs
GROUP BY collection, metric, test
ORDER BY min(rowid)"""
