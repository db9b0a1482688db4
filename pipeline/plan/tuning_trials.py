"""A tuned fused run's trials (`runs: {x: {fuse: [...], tune: {...}}}`), compiled when its spec is
validated: from the spec alone, no data read. Pure, no I/O.

Every weighting on the tuning grid (multiples of `grid` summing to 1: 66 for three inputs at 0.1)
is a fused run of its own, a trial. One plan (`TuningPlan.sql`) evaluates the inputs and every
trial with the tuning metric alone, as any spec is evaluated; `irpipe compile` prints it before
the evaluation's SQL. A trial's run has a plain name, generated apart from the inputs' names
(`generated_names`), and its place in `TuningPlan.trials` is its weighting's index in `grid`: the
evaluation (`pipeline.run.tuning`) reads the trials' values by that index, never by parsing a name.
"""

from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.plan.compile import compile_plan
from pipeline.plan.generated_names import apart_from
from pipeline.plan.overlays import needed_collections
from pipeline.plan.sql_plan import SqlPlan
from pipeline.spec.loader import spec_from_mapping

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec
    from pipeline.spec.fusion import Tune

__all__ = ["TuningPlan", "tuning_plan", "weightings"]


@dataclass(frozen=True)
class TuningPlan:
    """How the weights of the fused run `run` are chosen: its `inputs`; every weighting of them
    on the grid, in order (`grid`); the run that evaluates each weighting, by its index
    (`trials`); the metric the weights are chosen by, resolved; the spec's `tune` settings (folds,
    seed); and the SQL that evaluates the inputs and every trial with that metric alone."""

    run: str
    inputs: tuple[str, ...]
    grid: tuple[tuple[float, ...], ...]
    trials: tuple[str, ...]
    metric: ResolvedMeasure
    tune: Tune
    sql: SqlPlan

    def text(self) -> str:
        """Its SQL, introduced by what it is for (`irpipe compile`)."""
        about = (
            f"first, the weights of fused run '{self.run}' (runs.{self.run}.tune): each of the "
            f"{len(self.grid)} weightings of {', '.join(self.inputs)} on a grid of "
            f"{self.tune.grid} is a run of its own ('{self.trials[0]}' to '{self.trials[-1]}'), "
            f"evaluated by {self.metric.label} alone; each of {self.tune.folds} folds of the "
            f"queries (seed {self.tune.seed}) is fused by the weighting best on the other folds"
        )
        return textwrap.fill(f"{about}:", 98, initial_indent="-- ", subsequent_indent="-- ") + (
            f"\n{self.sql.sql_text()}\n"
        )


def tuning_plan(
    loaded: LoadedSpec, run: str, metric: ResolvedMeasure, sizes: dict[Path, int] | None = None
) -> TuningPlan:
    """The trials of the tuned fused run `run`, by `metric` (its `tune.metric`, resolved);
    `sizes` as `compile_plan` takes them."""
    tune = loaded.spec.runs[run].tune
    inputs = tuple(name for name, _ in loaded.spec.fused_inputs()[run])
    grid = tuple(weightings(len(inputs), tune.grid))
    trials = apart_from((f"{run} weighting {i}" for i in range(len(grid))), inputs)
    spec = _trial_spec(loaded, run, dict(zip(trials, grid, strict=True)))
    return TuningPlan(run, inputs, grid, trials, metric, tune, compile_plan(spec, [metric], sizes))


def weightings(inputs: int, grid: float) -> list[tuple[float, ...]]:
    """Every weighting of `inputs` inputs by multiples of `grid` that sums to 1, in order."""
    steps = round(1 / grid)
    found = []
    for bars in itertools.combinations(range(steps + inputs - 1), inputs - 1):
        edges = (-1, *bars, steps + inputs - 1)
        parts = [after - before - 1 for before, after in itertools.pairwise(edges)]  # stars
        found.append(tuple(round(part * grid, 12) for part in parts))
    return found


def _trial_spec(loaded: LoadedSpec, run: str, trials: dict[str, tuple[float, ...]]) -> LoadedSpec:
    """The spec the trials are evaluated by: the collection (and the sets it overlays), the
    inputs under it alone, one fused run per weighting (`trials`, by name) fused as `run` is,
    and the tuning metric alone."""
    spec, fused = loaded.spec, loaded.spec.runs[run]
    (collection,) = fused.collections  # a tuned run has one (`spec.fusion`)
    inputs = [name for name, _ in spec.fused_inputs()[run]]
    # Only the options the spec gives: a method refuses one it does not read (a default k).
    how = fused.model_dump(include={"method", "norm", "k", "depth"}, exclude_unset=True)
    runs = {name: {**spec.runs[name].model_dump(mode="json"), "collection": collection}
            for name in inputs}  # fmt: skip
    runs |= {name: {"fuse": dict(zip(inputs, weights, strict=True)), **how}
             for name, weights in trials.items()}  # fmt: skip
    data = {
        "collections": {
            name: spec.collections[name].model_dump(mode="json")
            for name in needed_collections(spec, [collection])
        },
        "runs": runs,
        "metrics": [fused.tune.metric],
        "settings": spec.settings.model_dump(mode="json"),
    }
    return spec_from_mapping(data, loaded.path, loaded.sha256, tables=loaded.tables)
