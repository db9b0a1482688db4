"""A significant gate against the previous evaluation: each run's per-query values now and in the
history's previous evaluation, compared as the compare package compares two runs.

The test is the compare section's first (or its defaults' first: the t test), with its samples,
seed and alpha; a run's values are paired on the queries both evaluations have a value for, in
query-id order (`Block` with the previous evaluation as the baseline). The p-values of one gate's
runs are one family, corrected by the compare section's correction: a gate over twenty runs makes
twenty tests, and the chance of one false alarm should not grow with them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from pipeline.checks.outcome import Significance
from pipeline.compare.block import Block, compare_block
from pipeline.compare.corrections import adjust
from pipeline.errors import InputDataError, IrpipeError

if TYPE_CHECKING:
    import duckdb

    from pipeline.checks.plan import GateRule
    from pipeline.compare.plan import ComparePlan

__all__ = ["previous_tests"]

# Per query of the run, now (from per_query) and before (previous_per_query), in query-id order;
# a query only one of them has, or a missing value, is NaN and left out of the pairs.
_PAIRED = """
SELECT coalesce(b.value, 'NaN'::DOUBLE) AS before, coalesce(n.value, 'NaN'::DOUBLE) AS now
FROM (SELECT qid, value FROM per_query
      WHERE run = $run AND collection = $collection AND metric = $metric) n
FULL JOIN (SELECT qid, value FROM previous_per_query
           WHERE run = $run AND collection = $collection AND metric = $metric) b USING (qid)
ORDER BY qid"""


def previous_tests(
    con: duckdb.DuckDBPyConnection,
    rule: GateRule,
    runs: list[tuple[str, str]],
    tests: ComparePlan,
    where: str,
) -> dict[tuple[str, str], Significance | str]:
    """For each (run, collection): its test against the previous evaluation, or why it cannot be
    tested (fewer than two shared queries). `where` names the compare section in messages."""
    plan = replace(tests, tests=tests.tests[:1])
    p_values: dict[tuple[str, str], float] = {}
    reasons: dict[tuple[str, str], Significance | str] = {}
    for run in runs:
        try:
            p_values[run] = _p_value(con, rule, run, plan, where)
        except IrpipeError as exc:  # after the outputs: a gate that cannot test is skipped
            reasons[run] = str(exc)
    adjusted = adjust(np.array(list(p_values.values())), plan.correction) if p_values else []
    for run, p in zip(p_values, adjusted, strict=True):
        reasons[run] = Significance(plan.tests[0], float(p), bool(p <= plan.alpha))
    return reasons


def _p_value(con, rule: GateRule, run: tuple[str, str], plan: ComparePlan, where: str) -> float:
    """The p-value of one run's test against its previous values."""
    name, collection = run
    rows = con.execute(
        _PAIRED, {"run": name, "collection": collection, "metric": rule.metric.label}
    ).fetchall()
    values = np.array(rows, dtype=np.float64).T.reshape(2, len(rows))
    shared = int(np.isfinite(values).all(axis=0).sum())
    if shared < 2:
        raise InputDataError(
            f"{rule.metric.label} has a value in both this and the previous evaluation for "
            f"{shared} {'query' if shared == 1 else 'queries'}; a paired test needs at least 2"
        )
    before = f"{name} (previous evaluation)"  # any name but the run's own
    block = Block(collection, rule.metric.label, rule.metric.aggregator, (before, name), values)
    columns = compare_block(block, replace(plan, baseline=before), where)
    return float(columns["p_value"][0])
