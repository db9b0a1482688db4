"""The spec's `expect:` and `gates:` resolved against its runs, metrics and compare section.

Everything here is checked before any data is read (`irpipe validate` runs it), each error naming
its key: an unknown run or metric (with "did you mean"), a text metric, a gate on a metric with no
direction (a count or a diagnostic cannot drop), a reference run alone in its collection, and a
significance test the compare section does not make. Nothing here imports DuckDB or numpy.
Which runs, under which collections, each check reads is resolved by `pipeline.checks.runs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.checks.bounds import BoundRule, bound_rule
from pipeline.checks.runs import check_run, expected_collection, gated_runs
from pipeline.compare.plan import ComparePlan, check_extra
from pipeline.errors import SpecError
from pipeline.measures.resolved import metric_labelled
from pipeline.spec.checks import Gate
from pipeline.spec.compare import Compare

if TYPE_CHECKING:
    from pipeline.agreement.plan import AgreementPlan
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec

__all__ = ["CheckPlan", "Expectation", "GateRule", "Target", "check_checks", "resolve_checks"]


@dataclass(frozen=True)
class Target:
    """A metric as a check reads it: its label in the tables, aggregator and direction."""

    label: str
    aggregator: str
    better: str | None


@dataclass(frozen=True)
class Expectation:
    """One `expect:` entry, resolved; `where` names it in messages (file:line: expect.i)."""

    key: str
    where: str
    run: str
    collection: str
    metric: Target
    value: float
    tolerance: float
    two_sided: bool


@dataclass(frozen=True)
class GateRule:
    """One `gates:` entry, resolved: the (run, collection) pairs it gates, in the tables' order,
    and its reference (`against` is a run's name, whose value under the same collection is
    the reference, or None for the previous evaluation in the history)."""

    key: str
    where: str
    metric: Target
    max_drop: float
    against: str | None
    runs: tuple[tuple[str, str], ...]
    significant: bool


@dataclass(frozen=True)
class CheckPlan:
    """Every check of a spec, and the settings of its significance tests: the compare section's
    (its first test decides), or that section's defaults when the spec has none. `gates` are
    the metrics' drops, `bounds` the gates on the judgment sets' statistics (`checks.bounds`)."""

    expect: tuple[Expectation, ...]
    gates: tuple[GateRule, ...]
    tests: ComparePlan
    bounds: tuple[BoundRule, ...] = ()


def check_checks(
    loaded: LoadedSpec,
    metrics: list[ResolvedMeasure],
    comparing: ComparePlan | None,
    data: bool = True,
    agreement: AgreementPlan | None = None,
) -> CheckPlan:
    """The checks of the spec, resolved (`resolve_checks`); SpecError, naming the key, for
    anything in `expect:` or `gates:` that cannot be checked; with `data`, also when a
    significant gate needs irpipe[compare] and it is missing."""
    checks = resolve_checks(loaded, metrics, comparing, data, agreement)
    gates = loaded.spec.gates
    first = next((i for i, gate in enumerate(gates) if getattr(gate, "significant", 0)), None)
    if data and first is not None:
        check_extra(loaded.where("gates", first, "significant"), "a significance test needs")
    return checks


def resolve_checks(
    loaded: LoadedSpec,
    metrics: list[ResolvedMeasure],
    comparing: ComparePlan | None,
    data: bool = True,
    agreement: AgreementPlan | None = None,
) -> CheckPlan:
    """The checks of the spec, resolved against its metrics and its comparisons (`comparing`,
    the resolved compare section), and its gates on statistics against its agreement and
    correlation entries (`agreement`); `data=False`: run patterns were not expanded, so a run
    `<key>/<name>` of a pattern is taken on trust."""
    spec = loaded.spec
    targets = {m.label: m for m in metrics}
    expect = tuple(_expectation(loaded, i, targets, data) for i in range(len(spec.expect)))
    drops = [i for i, gate in enumerate(spec.gates) if isinstance(gate, Gate)]
    gates = tuple(_gate(loaded, i, targets, comparing, data) for i in drops)
    bounds = tuple(bound_rule(loaded, i, agreement) for i in range(len(spec.gates))
                   if i not in drops)  # fmt: skip
    return CheckPlan(expect, gates, comparing or _default_tests(), bounds)


def _default_tests() -> ComparePlan:
    """A compare section's defaults, for significant gates of a spec without one."""
    d = Compare()
    return ComparePlan(
        None, tuple(d.tests), d.correction, d.alpha, d.samples, d.seed, d.min_difference, (), ()
    )


def _expectation(loaded: LoadedSpec, i: int, targets: dict, data: bool) -> Expectation:
    entry = loaded.spec.expect[i]
    check_run(loaded, ("expect", i, "run"), entry.run, data)
    metric = _target(loaded, ("expect", i, "metric"), entry.metric, targets)
    return Expectation(
        f"expect.{i}",
        loaded.where("expect", i),
        entry.run,
        expected_collection(loaded, i),
        metric,
        entry.value,
        entry.tolerance,
        entry.two_sided,
    )


def _gate(loaded: LoadedSpec, i: int, targets: dict, comparing, data: bool) -> GateRule:
    gate = loaded.spec.gates[i]
    metric = _target(loaded, ("gates", i, "metric"), gate.metric, targets)
    if metric.better is None:
        raise SpecError(
            f"{loaded.where('gates', i, 'metric')}: {metric.label} is a count or a diagnostic: "
            "neither a higher nor a lower value is better, so it cannot drop; pin it with "
            "expect instead (a value with no direction is checked both ways)"
        )
    against = None if gate.against == "previous" else gate.against.run
    runs = gated_runs(loaded, i, against, data)
    if gate.significant and against is not None:
        _check_compared(loaded, i, gate, runs, comparing)
    return GateRule(
        f"gates.{i}",
        loaded.where("gates", i),
        metric,
        gate.max_drop,
        against,
        runs,
        gate.significant,
    )


def _target(loaded: LoadedSpec, key: tuple, name: str, targets: dict) -> Target:
    """The spec's metric labelled `name`, which must have numbers."""
    metric = metric_labelled(loaded.where(*key), name, targets.values())
    if metric.measure.kind != "number":
        raise SpecError(
            f"{loaded.where(*key)}: '{name}' is a text metric: it has no value to check"
        )
    return Target(name, metric.aggregator, metric.better)


def _check_compared(
    loaded: LoadedSpec, i: int, gate: Gate, runs: tuple[str, ...], comparing
) -> None:
    """A significant gate against a run reads the comparison table: the compare section must
    compare the metric and every gated run with the reference."""
    where, against = loaded.where("gates", i, "significant"), gate.against.run
    if comparing is None:
        raise SpecError(
            f"{where}: a significant gate against run '{against}' reads the "
            "comparisons, and the spec has no compare section (compare: {} for the "
            "defaults)"
        )
    if gate.metric not in dict(comparing.metrics):
        raise SpecError(
            f"{where}: the compare section does not compare {gate.metric} (its "
            f"metrics: {', '.join(dict(comparing.metrics))})"
        )
    compared = {
        (c, frozenset(pair))
        for c, names in comparing.collections
        for pair in comparing.pairs(names)
    }
    for run, collection in runs:
        if run in loaded.spec.runs and (collection, frozenset((run, against))) not in compared:
            raise SpecError(
                f"{where}: the compare section does not compare run '{run}' with '{against}' "
                f"({_shown(comparing.baseline, against)}, or leave it out to compare every pair"
            )


def _shown(baseline: str | tuple[str, ...], against: str) -> str:
    """The compare section's baselines, and how to add `against` to them."""
    if isinstance(baseline, str):
        return f"its baseline is '{baseline}'); set compare.baseline: {against}"
    listed = ", ".join(baseline)
    return f"its baselines are {listed}); add it: compare.baseline: [{listed}, {against}]"
