"""The evaluation plan: every part of one evaluation, built once when its spec is validated.

`pipeline.run.preflight.validate` checks a spec without reading data and returns this plan; each
step of `pipeline.run.evaluation.evaluate` then reads the parts it needs, in order: the tuning
step runs `tunings`, the engine `sql`, the pools step reads `pools`, the comparing step
`comparing`, the history `history`, the writers `outputs`; `pipeline.run.stages` lists the
steps, in order, which `irpipe compile` prints with the plan. A new feature adds a part here,
the check that builds it in the preflight, and a stage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.outputs import OutputJob
from pipeline.run.stages import stages

if TYPE_CHECKING:
    from pipeline.agreement.plan import AgreementPlan
    from pipeline.checks.plan import CheckPlan
    from pipeline.compare.discrimination_plan import DiscriminationPlan
    from pipeline.compare.plan import ComparePlan
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.plan.sql_plan import SqlPlan
    from pipeline.plan.tuning_trials import TuningPlan
    from pipeline.pools.plan import PoolPlan
    from pipeline.reproduction.plan import ReproductionPlan
    from pipeline.spec import LoadedSpec
    from pipeline.spec.history import History

__all__ = ["EvaluationPlan", "OutputJob"]


@dataclass(frozen=True)
class EvaluationPlan:
    """Every part of an evaluation of `loaded`: the measures' SQL (`sql`, which an engine
    executes), the resolved comparisons (None without a compare section), expected values and
    gates, pools, the files to write (the spec's outputs, then its pools'), the spec's
    history (None without one), and the trials that choose each tuned fused run's weights
    (`tunings`, executed before `sql`), the judgment sets and orderings of the runs to
    compare (`agreement`, None without agreement or correlation entries), the pairs of runs
    whose discriminative power is counted (`discriminating`), and the original runs and their
    reproductions to compare (`reproduction`, None without reproduction entries)."""

    loaded: LoadedSpec
    sql: SqlPlan
    comparing: ComparePlan | None
    checks: CheckPlan | None  # None without expected values or gates
    pools: tuple[PoolPlan, ...]
    outputs: tuple[OutputJob, ...]
    history: History | None
    tunings: tuple[TuningPlan, ...] = ()
    agreement: AgreementPlan | None = None  # the agreement and correlation entries, resolved
    #: discriminative power: every pair of runs of each collection (None without the section)
    discriminating: DiscriminationPlan | None = None
    reproduction: ReproductionPlan | None = None  # the reproduction entries, resolved

    @property
    def metrics(self) -> list[ResolvedMeasure]:
        """The spec's metrics, resolved, in spec order."""
        return self.sql.results.metrics

    @property
    def engine(self) -> str:
        """The engine that executes `sql` (`settings.engine`)."""
        return self.loaded.spec.settings.engine

    def text(self) -> str:
        """The whole plan (`irpipe compile`): the SQL in the order it runs (each tuning's, then
        the evaluation's), then every other part as SQL comments."""
        parts = [f"-- {line}" for part in self._parts() for line in part.splitlines()]
        return (
            self._tunings_text()
            + self.sql.sql_text()
            + "\n-- the evaluation's other parts:\n"
            + "\n".join(parts)
            + "\n"
        )

    def _tunings_text(self) -> str:
        if not self.tunings:
            return ""
        then = "-- then the evaluation, each tuned run fused by the weights chosen:\n"
        return "".join(tuning.text() for tuning in self.tunings) + then

    def _parts(self) -> list[str]:
        return [
            f"engine: {self.engine}",
            f"compare: {_shown(self.comparing.manifest() if self.comparing else None)}",
            *([f"discrimination: {_shown(self.discriminating.manifest())}"]
              if self.discriminating else []),
            *(self._checks_text() if self.checks else []),
            *(f"pool {_shown(pool.manifest())}" for pool in self.pools),
            *(self.agreement.text() if self.agreement else []),
            *(self.reproduction.text() if self.reproduction else []),
            *(f"output {job.path} ({job.level}) <- table {job.table}" for job in self.outputs),
            f"history: {self.history.path if self.history else None}",
            *([f"dashboard: {self.history.dashboard}"] if self.history and self.history.dashboard
              else []),
            *(f"stage {i}: {s.name}: {s.does}" for i, s in enumerate(stages(self), 1)),
        ]  # fmt: skip

    def _checks_text(self) -> list[str]:
        return [
            *(f"{e.key}: {e.run} {e.metric.label} = {e.value} ± {e.tolerance}"
              f"{' (either way)' if e.two_sided else ''}" for e in self.checks.expect),
            *(f"{g.key}: {g.metric.label} of {_pairs(g.runs)} drops at most {g.max_drop} "
              f"against {g.against or 'the previous evaluation'}"
              f"{' (significantly)' if g.significant else ''}" for g in self.checks.gates),
            *(bound.text() for bound in self.checks.bounds),
        ]  # fmt: skip


def _pairs(runs: tuple[tuple[str, str], ...]) -> str:
    """Gated runs as compile shows them: each run, with its collection when it is gated under
    several."""
    names = [run for run, _ in runs]
    if len(set(names)) == len(names):
        return ", ".join(names)
    return ", ".join(f"{run} ({collection})" for run, collection in runs)


def _shown(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)
