"""A fused run's weights chosen by cross-validation over the queries (`tune:` of a fused run).

Every weighting on the grid (multiples of `grid` summing to 1: 66 for three inputs at 0.1) is
evaluated in one pass: a spec of the inputs and one fused run per weighting, with the tuning
metric alone, evaluated like any spec. The evaluated queries, in qid order, are shuffled by
`seed` and dealt into `folds`. For each fold, the weighting with the best mean over the *other*
folds' queries is chosen (the first in grid order among equals), and the fold's queries are
fused with it. The fused run's values are thus held out: no query is ranked with weights chosen
on it, and the run's mean is the cross-validated one. A query outside the evaluated ones (which
no value depends on) is fused with the weighting best on all of them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.engines import execute
from pipeline.errors import SpecError
from pipeline.plan.fusion import Fusion, QueryWeights
from pipeline.run.preflight import validate
from pipeline.spec.loader import spec_from_mapping

if TYPE_CHECKING:
    from pipeline.plan.compile import SqlPlan
    from pipeline.run.plan import EvaluationPlan
    from pipeline.spec import LoadedSpec

__all__ = ["tuned", "weightings"]


def tuned(plan: EvaluationPlan, sql: SqlPlan) -> tuple[SqlPlan, dict[str, Any]]:
    """The SQL plan with each tuned fused run it evaluates fused by its chosen weights, and
    what was chosen (by run: each fold's weights and held-out mean, and the cross-validated
    mean), for the provenance."""
    chosen, fusions = {}, []
    for fusion in sql.fusions:
        if fusion.retuned is not None:
            weights, chosen[fusion.name] = _tune(plan.loaded, fusion)
            fusion = fusion.tuned(weights)
        fusions.append(fusion)
    return (replace(sql, fusions=tuple(fusions)), chosen) if chosen else (sql, {})


def weightings(inputs: int, grid: float) -> list[tuple[float, ...]]:
    """Every weighting of `inputs` inputs by multiples of `grid` that sums to 1, in order."""
    steps = round(1 / grid)
    found = []
    for bars in itertools.combinations(range(steps + inputs - 1), inputs - 1):
        parts = np.diff([-1, *bars, steps + inputs - 1]) - 1  # stars between the bars
        found.append(tuple(round(int(p) * grid, 12) for p in parts))
    return found


def _tune(loaded: LoadedSpec, fusion: Fusion) -> tuple[QueryWeights, dict[str, Any]]:
    run = loaded.spec.runs[fusion.name]
    grid = weightings(len(fusion.inputs), run.tune.grid)
    values, qids, everything = _values(loaded, fusion, grid)
    folds = _folds(loaded, fusion.name, len(qids))
    where = loaded.where("runs", fusion.name, "tune", "metric")
    best = partial(_best, lower=_lower_is_better(loaded, run.tune.metric), where=where)
    chosen = [best(values[:, folds != fold]) for fold in range(run.tune.folds)]
    per_query = {qid: grid[chosen[fold]] for qid, fold in zip(qids, folds, strict=True)}
    overall = grid[best(values)]  # for a query outside the evaluated ones
    per_query.update({q: overall for q in everything if q not in per_query})
    return _query_weights(per_query), _record(run.tune, fusion.inputs, grid, values, folds, chosen)


def _record(tune, inputs, grid: list, values: np.ndarray, folds: np.ndarray, chosen: list) -> dict:
    """What was chosen, for the provenance: each fold's weights and held-out mean, and the
    cross-validated mean (None where the metric has no value: JSON has no NaN)."""
    held = values[np.array(chosen)[folds], np.arange(len(folds))]
    record = [
        {"fold": fold + 1, "queries": int((folds == fold).sum()),
         "weights": dict(zip(inputs, grid[b], strict=True)),
         "held_out": _mean(values[b, folds == fold])}
        for fold, b in enumerate(chosen)
    ]  # fmt: skip
    return {"metric": tune.metric, "grid": tune.grid, "weightings": len(grid), "folds": record,
            "cross_validated": _mean(held)}  # fmt: skip


def _folds(loaded: LoadedSpec, name: str, queries: int) -> np.ndarray:
    """Each evaluated query's fold (the queries in qid order, shuffled by the seed, dealt into
    the folds); a SpecError when there are fewer queries than folds, since each fold needs a
    query of its own and other folds' queries to choose its weights on."""
    tune = loaded.spec.runs[name].tune
    if tune.folds > queries:
        fix = f"give at most {queries} folds" if queries > 1 else "tune on more queries"
        raise SpecError(
            f"{loaded.where('runs', name, 'tune', 'folds')}: {tune.folds} folds, but "
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


def _values(loaded: LoadedSpec, fusion: Fusion, grid: list) -> tuple[np.ndarray, list, list]:
    """The tuning metric's per-query values of every weighting (rows) on each evaluated query
    (columns, in qid order), those queries, and every query the inputs answer."""
    trial = _trial_spec(loaded, fusion, grid)
    plan = validate(trial)
    con = execute(plan.sql, plan.loaded)
    # Each value's place in the matrix: the weighting's index (its run's name) and the query's.
    found = con.execute(
        "SELECT CAST(run[2:] AS INTEGER) AS row, dense_rank() OVER (ORDER BY qid) - 1 AS col, "
        "qid, coalesce(value, 'NaN'::DOUBLE) AS value "
        "FROM per_query WHERE starts_with(run, '\x1f')"
    ).fetchnumpy()
    qids = sorted(set(found["qid"].tolist()))
    values = np.zeros((len(grid), len(qids)))
    values[found["row"], found["col"]] = found["value"]
    everything = [qid for (qid,) in con.execute("SELECT DISTINCT qid FROM present").fetchall()]
    con.close()
    return values, qids, everything


def _trial_spec(loaded: LoadedSpec, fusion: Fusion, grid: list) -> LoadedSpec:
    """The inputs, and one fused run per weighting (named by a control character and its
    index, which no spec's run has), with the tuning metric alone."""
    spec, run = loaded.spec, loaded.spec.runs[fusion.name]
    # Only the options the spec gives: a method refuses one it does not read (a default k).
    how = run.model_dump(include={"method", "norm", "k", "depth"}, exclude_unset=True)
    runs = {name: spec.runs[name].model_dump(mode="json") for name in fusion.inputs}
    runs |= {f"\x1f{i}": {"fuse": dict(zip(fusion.inputs, w, strict=True)), **how}
             for i, w in enumerate(grid)}  # fmt: skip
    data = {
        "collections": {run.collection: spec.collections[run.collection].model_dump(mode="json")},
        "runs": runs,
        "metrics": [run.tune.metric],
        "settings": spec.settings.model_dump(mode="json"),
    }
    return spec_from_mapping(data, loaded.path, loaded.sha256, tables=loaded.tables)


def _lower_is_better(loaded: LoadedSpec, metric: str) -> bool:
    from pipeline.measures.registry import get_registry

    return get_registry().resolve(metric)[0].measure.better == "lower"


def _query_weights(per_query: dict[str, tuple[float, ...]]) -> QueryWeights:
    cells = [(qid, i, w) for qid, ws in sorted(per_query.items()) for i, w in enumerate(ws)]
    return QueryWeights(*(tuple(column) for column in zip(*cells, strict=True)))
