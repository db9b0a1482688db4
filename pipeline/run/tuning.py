"""A fused run's weights chosen by cross-validation over the queries (`tune:` of a fused run).

The trials were compiled when the spec was validated (`pipeline.plan.tuning_trials`): one plan
evaluates every weighting on the grid as a run of its own, with the tuning metric alone. Here that
plan is executed, before the evaluation's, by the evaluation's engine on its own connection, in a
schema of its own (`_apart`), and each trial's per-query values are read by its weighting's index.
The evaluated queries, in qid order, are shuffled by `seed` and dealt into `folds`. For each fold,
the weighting with the best mean over the *other* folds' queries is chosen (the first in grid
order among equals), and the fold's queries are fused with it. The fused run's values are thus
held out: no query is ranked with weights chosen on it, and the run's mean is the
cross-validated one. A query outside the evaluated ones (which no value depends on) is fused with
the weighting best on all of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from pipeline.errors import SpecError
from pipeline.plan.fusion import QueryWeights

if TYPE_CHECKING:
    import duckdb

    from pipeline.engines import Engine
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.plan.tuning_trials import TuningPlan
    from pipeline.run.evaluation_plan import EvaluationPlan
    from pipeline.spec import LoadedSpec

__all__ = ["FoldRecord", "TuningRecord", "tuned"]


class FoldRecord(TypedDict):
    """One fold of a tuned run: its number (from 1), its queries, the weights chosen on the other
    folds, and their mean on its own queries (None where the metric has no value)."""

    fold: int
    queries: int
    weights: dict[str, float]
    held_out: float | None


class TuningRecord(TypedDict):
    """What was chosen for a tuned fused run, as the provenance holds it (`tuning`): the tuning
    metric and grid, each fold's weights and held-out mean, and the cross-validated mean."""

    metric: str
    grid: float  # the weights' step (`tune.grid`)
    weightings: int
    folds: list[FoldRecord]
    cross_validated: float | None


def tuned(
    plan: EvaluationPlan, sql: SqlPlan, runner: Engine, con: duckdb.DuckDBPyConnection
) -> tuple[SqlPlan, dict[str, TuningRecord]]:
    """The SQL plan with each tuned fused run it evaluates fused by its chosen weights, and
    what was chosen (by run: each fold's weights and held-out mean, and the cross-validated
    mean), for the provenance. Each run's trials (`plan.tunings`) are evaluated by `runner`,
    the evaluation's engine, on `con`, its connection."""
    tunings = {tuning.run: tuning for tuning in plan.tunings}
    chosen, fusions = {}, []
    for fusion in sql.runs.fusions:
        if fusion.retuned is not None:
            tuning = tunings[fusion.name]
            trials = _values(tuning, plan.loaded, runner, con)
            weights, chosen[fusion.name] = _tune(plan.loaded, tuning, *trials)
            fusion = fusion.tuned(weights)
        fusions.append(fusion)
    if not chosen:
        return sql, {}
    return replace(sql, runs=replace(sql.runs, fusions=tuple(fusions))), chosen


def _tune(
    loaded: LoadedSpec, tuning: TuningPlan, values: np.ndarray, qids: list, everything: list
) -> tuple[QueryWeights, TuningRecord]:
    """Each query's weights, chosen on the other folds' values (`values`: the trials' per-query
    values, by weighting and by query in `qids`), and what was chosen."""
    grid, folds = tuning.grid, _folds(loaded, tuning, len(qids))
    where = loaded.where("runs", tuning.run, "tune", "metric")
    best = partial(_best, lower=tuning.metric.better == "lower", where=where)
    chosen = [best(values[:, folds != fold]) for fold in range(tuning.tune.folds)]
    per_query = {qid: grid[chosen[fold]] for qid, fold in zip(qids, folds, strict=True)}
    overall = grid[best(values)]  # for a query outside the evaluated ones
    per_query.update({q: overall for q in everything if q not in per_query})
    return _query_weights(per_query), _record(tuning, values, folds, chosen)


def _record(
    tuning: TuningPlan, values: np.ndarray, folds: np.ndarray, chosen: list
) -> TuningRecord:
    """What was chosen, for the provenance: each fold's weights and held-out mean, and the
    cross-validated mean (None where the metric has no value: JSON has no NaN)."""
    held = values[np.array(chosen)[folds], np.arange(len(folds))]
    record = [
        FoldRecord(fold=fold + 1, queries=int((folds == fold).sum()),
                   weights=dict(zip(tuning.inputs, tuning.grid[b], strict=True)),
                   held_out=_mean(values[b, folds == fold]))
        for fold, b in enumerate(chosen)
    ]  # fmt: skip
    return TuningRecord(metric=tuning.tune.metric, grid=tuning.tune.grid,
                        weightings=len(tuning.grid), folds=record,
                        cross_validated=_mean(held))  # fmt: skip


def _folds(loaded: LoadedSpec, tuning: TuningPlan, queries: int) -> np.ndarray:
    """Each evaluated query's fold (the queries in qid order, shuffled by the seed, dealt into
    the folds); a SpecError when there are fewer queries than folds, since each fold needs a
    query of its own and other folds' queries to choose its weights on."""
    tune = tuning.tune
    if tune.folds > queries:
        fix = f"give at most {queries} folds" if queries > 1 else "tune on more queries"
        raise SpecError(
            f"{loaded.where('runs', tuning.run, 'tune', 'folds')}: {tune.folds} folds, but "
            f"{queries} quer{'y is' if queries == 1 else 'ies are'} evaluated: each fold needs a "
            f"query, and the other folds' queries to choose its weights on; {fix}"
        )
    return np.random.default_rng(tune.seed).permutation(queries) % tune.folds


def _best(values: np.ndarray, lower: bool, where: str) -> int:
    """The weighting (row) whose mean over the queries (columns) is best, the first among
    equals; a SpecError naming the metric (`where`) when no query has a value to choose by."""
    means = _means(values)
    if np.isnan(means).all():
        raise SpecError(
            f"{where}: the metric has no value on the queries the weights are chosen on; tune "
            "by a metric defined on every query"
        )
    return int(np.nanargmin(means) if lower else np.nanargmax(means))


def _means(values: np.ndarray) -> np.ndarray:
    """Means over the last axis of the values that are defined (a metric may leave a query
    without value, NaN here: like the aggregate, the mean leaves it out); NaN where none is.
    Computed so that numpy never warns (nanmean warns of an empty slice)."""
    defined = ~np.isnan(values)
    sums, counts = np.where(defined, values, 0.0).sum(axis=-1), defined.sum(axis=-1)
    return np.divide(sums, counts, out=np.full(np.shape(sums), np.nan), where=counts > 0)


def _mean(values: np.ndarray) -> float | None:
    """The mean of the defined values, for the record: None (JSON null) when none is."""
    mean = float(_means(values))
    return mean if math.isfinite(mean) else None


def _values(
    tuning: TuningPlan, loaded: LoadedSpec, runner: Engine, con: duckdb.DuckDBPyConnection
) -> tuple[np.ndarray, list, list]:
    """The tuning metric's per-query values of every weighting (rows, by index) on each
    evaluated query (columns, in qid order), those queries, and every query the inputs answer."""
    with _apart(con) as trials:
        runner.execute(tuning.sql, loaded, trials)
        names = list(tuning.trials)
        found = trials.execute(_TRIAL_VALUES, [names, names]).fetchnumpy()
        everything = [
            qid for (qid,) in trials.execute("SELECT DISTINCT qid FROM present").fetchall()
        ]
    qids = sorted(set(found["qid"].tolist()))
    values = np.zeros((len(tuning.grid), len(qids)))
    values[found["weighting"], found["query"]] = found["value"]
    return values, qids, everything


#: each trial's per-query values, placed by its weighting's index (its run's place among the
#: plan's trials) and the query's (in qid order)
_TRIAL_VALUES = """
SELECT list_position(?::VARCHAR[], run) - 1 AS weighting,
    dense_rank() OVER (ORDER BY qid) - 1 AS query, qid, coalesce(value, 'NaN'::DOUBLE) AS value
FROM per_query WHERE list_contains(?::VARCHAR[], run)"""


@contextmanager
def _apart(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of the evaluation's connection whose tables are made in a schema of their own,
    dropped once read: the trials' tables (qrels, runs, per_query...) are named as the
    evaluation's are, and must never meet them."""
    trials = con.cursor()
    try:
        trials.execute("CREATE SCHEMA tuning")
        trials.execute("SET schema = 'tuning'")
        yield trials
        # On failure nothing is dropped: the evaluation, and its connection, end with it.
        trials.execute("DROP SCHEMA tuning CASCADE")
    finally:
        trials.close()


def _query_weights(per_query: dict[str, tuple[float, ...]]) -> QueryWeights:
    cells = [(qid, i, w) for qid, ws in sorted(per_query.items()) for i, w in enumerate(ws)]
    return QueryWeights(*(tuple(column) for column in zip(*cells, strict=True)))
