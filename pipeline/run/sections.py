"""The spec's optional sections, resolved for the preflight only where a spec has them.

Comparisons, checks, pools, judgment sets compared and tuned runs each have a package that
resolves them. A spec without a section imports none of its package (a plain evaluation starts
without them: `tests/test_startup.py` holds each command to it), and gets what that package would
give for nothing: no plan. An output whose level needs a section the spec lacks is refused here,
for every section alike (`check_needed_sections`), before any package is brought in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.errors import SpecError
from pipeline.spec.levels import level_of

if TYPE_CHECKING:
    from pipeline.agreement.plan import AgreementPlan
    from pipeline.checks.plan import CheckPlan
    from pipeline.compare.discrimination_plan import DiscriminationPlan
    from pipeline.compare.plan import ComparePlan
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.plan.output_jobs import OutputJob
    from pipeline.plan.tuning_trials import TuningPlan
    from pipeline.pools.plan import PoolPlan
    from pipeline.reproduction.plan import ReproductionPlan
    from pipeline.spec import LoadedSpec

__all__ = [
    "check_needed_sections",
    "checks_plan",
    "compare_section",
    "discrimination_section",
    "agreement_section",
    "pool_jobs",
    "pools_of",
    "reproduction_section",
    "tunings",
]


#: what an output says when the spec lacks every section its level needs, by those sections
_NEEDED = {
    ("compare",): "level {level} needs a compare section in the spec (compare: {{}} for the "
    "defaults)",
    ("suites",): "level {level} needs suites in the spec (suites: {{NAME: [COLLECTION, ...]}})",
    ("discrimination",): "needs a discrimination section in the spec (discrimination: {{}} for "
    "the defaults)",
    ("agreement",): "level {level} needs an agreement entry in the spec (agreement: "
    "[{{reference: SET, other: SET}}])",
    ("agreement", "correlation"): "level {level} needs a correlation or an agreement entry in "
    "the spec (agreement: [{{reference: SET, other: SET}}])",
    ("reproduction",): "level {level} needs a reproduction entry in the spec (reproduction: "
    "[{{original: [BASELINE, ADVANCED], reproduced: [BASELINE_REP, ADVANCED_REP]}}])",
}


def check_needed_sections(loaded: LoadedSpec) -> None:
    """Each output's level has a section it needs (`Level.needs`: a comparison table needs
    `compare:`, a suite table `suites:`, ...): else a SpecError at the output's level naming
    the section to add."""
    spec = loaded.spec
    for i, output in enumerate(spec.outputs):
        needs = level_of(output.level).needs
        if needs and not any(getattr(spec, section) for section in needs):
            said = _NEEDED[needs].format(level=output.level)
            raise SpecError(f"{loaded.where('outputs', i, 'level')}: {said}")


def compare_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> ComparePlan | None:
    """The compare section, checked and resolved; None without one."""
    if loaded.spec.compare is None:
        return None
    from pipeline.compare.plan import check_compare

    return check_compare(loaded, metrics, data)


def discrimination_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> DiscriminationPlan | None:
    """The discrimination section, checked and resolved; None without one."""
    if loaded.spec.discrimination is None:
        return None
    from pipeline.compare.discrimination_plan import check_discrimination

    return check_discrimination(loaded, metrics, data)


def agreement_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> AgreementPlan | None:
    """The agreement and correlation entries, resolved; None without any."""
    spec = loaded.spec
    if not (spec.agreement or spec.correlation):
        return None
    from pipeline.agreement import agreement_plan

    return agreement_plan(loaded, metrics, data)


def reproduction_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> ReproductionPlan | None:
    """The reproduction entries, resolved; None without any."""
    if not loaded.spec.reproduction:
        return None
    from pipeline.reproduction import reproduction_plan

    return reproduction_plan(loaded, metrics, data)


def checks_plan(
    loaded: LoadedSpec,
    metrics: list[ResolvedMeasure],
    comparing: ComparePlan | None,
    data: bool,
    agreement: AgreementPlan | None,
) -> CheckPlan | None:
    """The expected values and gates, resolved; None without any."""
    if not (loaded.spec.expect or loaded.spec.gates):
        return None
    from pipeline.checks.plan import check_checks

    return check_checks(loaded, metrics, comparing, data, agreement)


def pools_of(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> tuple[PoolPlan, ...]:
    """The pools, resolved; none without a pools section."""
    if not loaded.spec.pools:
        return ()
    from pipeline.pools import pool_plans

    return tuple(pool_plans(loaded, metrics))


def pool_jobs(pools: tuple[PoolPlan, ...]) -> list[OutputJob]:
    """The pools' outputs to write."""
    if not pools:
        return []
    from pipeline.pools import pool_outputs

    return pool_outputs(list(pools))


def tunings(
    loaded: LoadedSpec, tuned: dict[str, ResolvedMeasure], sizes: dict
) -> tuple[TuningPlan, ...]:
    """Each tuned fused run's trials; none without a tuned run."""
    if not tuned:
        return ()
    from pipeline.plan.tuning_trials import tuning_plan

    return tuple(tuning_plan(loaded, run, metric, sizes) for run, metric in tuned.items())
