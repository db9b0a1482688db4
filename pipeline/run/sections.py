"""The spec's optional sections, resolved for the preflight only where a spec has them.

Comparisons, checks, pools, judgment sets compared and tuned runs each have a package that
resolves them. A spec without a section imports none of its package (a plain evaluation starts
without them: `tests/test_startup.py` holds each command to it), and gets what that package would
give for nothing: no plan. What a package checks even when its section is absent (an output of
its level) is what brings it in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.spec.levels import Level, level_of

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
    "checks_plan",
    "compare_section",
    "discrimination_section",
    "agreement_section",
    "pool_jobs",
    "pools_of",
    "reproduction_section",
    "tunings",
]


def _levels(loaded: LoadedSpec) -> list[Level]:
    """The records of the levels of the spec's outputs."""
    return [level_of(output.level) for output in loaded.spec.outputs]


def compare_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> ComparePlan | None:
    """The compare section, checked and resolved; None without one (nor an output that needs
    one)."""
    if loaded.spec.compare is None and not any("compare" in r.needs for r in _levels(loaded)):
        return None
    from pipeline.compare.plan import check_compare

    return check_compare(loaded, metrics, data)


def discrimination_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> DiscriminationPlan | None:
    """The discrimination section, checked and resolved; None without one (nor an output that
    needs one). An output that needs suites in a spec without them is refused here too."""
    _check_suite_levels(loaded)
    wanted = any("discrimination" in r.needs for r in _levels(loaded))
    if loaded.spec.discrimination is None and not wanted:
        return None
    from pipeline.compare.discrimination_plan import check_discrimination

    return check_discrimination(loaded, metrics, data)


def _check_suite_levels(loaded: LoadedSpec) -> None:
    if loaded.spec.suites:
        return
    for i, output in enumerate(loaded.spec.outputs):
        if "suites" in level_of(output.level).needs:
            from pipeline.errors import SpecError

            raise SpecError(
                f"{loaded.where('outputs', i, 'level')}: level {output.level} needs suites in "
                "the spec (suites: {NAME: [COLLECTION, ...]})"
            )


def agreement_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> AgreementPlan | None:
    """The agreement and correlation entries, resolved; None without any (nor an output of
    their levels)."""
    spec = loaded.spec
    if not (spec.agreement or spec.correlation or any(r.is_judgment for r in _levels(loaded))):
        return None
    from pipeline.agreement import agreement_plan

    return agreement_plan(loaded, metrics, data)


def reproduction_section(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> ReproductionPlan | None:
    """The reproduction entries, resolved; None without any (nor an output of their level)."""
    if not loaded.spec.reproduction and not any("reproduction" in r.needs for r in _levels(loaded)):
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
