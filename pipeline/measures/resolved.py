"""A measure resolved from a spec's metric entry: what every layer below the registry reads.

The registry (`pipeline.measures.registry`) makes these; the plan, the comparisons, the checks,
the pools and the engines only read them, so they import this module and never the registry:
what validation resolved, the plan keeps (import-linter holds them to it, pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.contract.columns import Columns, flatten
from pipeline.contract.measure import Measure, MeasureParams
from pipeline.errors import SpecError
from pipeline.spec.base import did_you_mean

__all__ = ["ResolvedMeasure", "metric_labelled"]


@dataclass(frozen=True)
class ResolvedMeasure:
    """A measure with validated parameters, ready to compile."""

    measure: Measure
    params: MeasureParams
    canonical: str
    label: str
    provider: str = "irpipe"  # who provides the measure, as messages name it
    #: computed over the ranking without its unjudged documents, re-ranked (`judged_only=true`:
    #: trec_eval -J for this metric alone)
    judged_only: bool = False

    @property
    def better(self) -> str | None:
        """Which value is best, "higher", "lower" or None: the measure's, but None for a residual
        (`residual=true`: how much the value could still change, not a quality)."""
        return None if getattr(self.params, "residual", False) is True else self.measure.better

    @property
    def averaged(self) -> bool:
        """Whether its per-query numbers are averaged (or summed) into its value: what a
        comparison tests and a pool's leave-one-out analysis measures."""
        # QPS's per-query numbers are latencies, lower better where its value is higher better:
        # Latency compares them
        return self.measure.kind == "number" and self.aggregator not in ("none", "qps")

    @property
    def needs_kinds(self) -> frozenset[str]:
        """The kinds of the derived columns it reads (`Need.kind`: "latency" for runs' times),
        under the default settings' columns."""
        return frozenset(n.kind for n in flatten(self.measure.needs(self.params, Columns())))

    @property
    def aggregator(self) -> str:
        """How its per-query values combine, under its parameters (`Measure.aggregated_by`)."""
        return self.measure.aggregated_by(self.params)


def metric_labelled(
    where: str, name: str | None, metrics: Iterable[ResolvedMeasure], naming: str = "name metrics"
) -> ResolvedMeasure:
    """The metric of `metrics` labelled `name`; else a SpecError at `where` (a spec key) saying
    so, with the closest label and every label (`naming` them as the tables do)."""
    metrics = list(metrics)
    found = next((m for m in metrics if m.label == name), None)
    if found is None:
        labels = [m.label for m in metrics]
        raise SpecError(
            f"{where}: '{name}' is not a metric of this spec; "
            f"{did_you_mean(name or '', labels)}{naming} as the tables do: {', '.join(labels)}"
        )
    return found
