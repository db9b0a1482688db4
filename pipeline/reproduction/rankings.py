"""The rankings a reproduction compares, kept in the evaluation's own pass over the runs: each
batch's rows of the compared runs are ranked into `reproduction_rows` (down to the entries'
depth) before the batch is ranked for the metrics and dropped.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pipeline.plan.ranking import ordering
from pipeline.reproduction.sql import KEPT_ROWS, kept_rows

if TYPE_CHECKING:
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.reproduction.plan import ReproductionPlan
    from pipeline.spec import LoadedSpec

__all__ = ["with_rankings"]


def with_rankings(plan: SqlPlan, loaded: LoadedSpec, reproduction: ReproductionPlan) -> SqlPlan:
    """The evaluation's plan, also keeping the compared runs' rankings: the table is made with
    the qrels' tables, and each batch's rows are kept first (before trec_eval -c's rankings of
    missing queries join them)."""
    keep = kept_rows(reproduction.ranked_runs, ordering(loaded.spec.settings))
    qrels = replace(plan.qrels, statements=[*plan.qrels.statements, KEPT_ROWS])
    runs = replace(plan.runs, per_batch=[keep, *plan.runs.per_batch])
    return replace(plan, qrels=qrels, runs=runs)
