"""The `discrimination:` section resolved against the spec and checked before any data is read
(no numpy: `irpipe validate` stays fast). Its computation is `discrimination.py`'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.compare.plan import ComparePlan, check_extra, compared_metrics
from pipeline.errors import SpecError
from pipeline.spec.compare import Compare

if TYPE_CHECKING:
    from pipeline.measures.resolved import ResolvedMeasure
    from pipeline.spec import LoadedSpec

__all__ = ["DiscriminationPlan", "check_discrimination"]

#: the correction without one in the section, nor a compare section (Compare's default)
DEFAULT_CORRECTION = Compare.model_fields["correction"].default


@dataclass(frozen=True)
class DiscriminationPlan:
    """The resolved `discrimination:` section: its correction and alpha, and the comparisons of
    all pairs of every collection with two runs or more (`pairs`, a plan without a baseline)."""

    correction: str
    alpha: float
    pairs: ComparePlan

    def manifest(self) -> dict:
        """The settings as every output records them."""
        return {
            "tests": list(self.pairs.tests),
            "alpha": self.alpha,
            "correction": self.correction,
            "family": "the pairs of runs of one collection, one metric and one test",
            "samples": self.pairs.samples,
            "seed": self.pairs.seed,
            "metrics": [label for label, _ in self.pairs.metrics],
        }


def check_discrimination(
    loaded: LoadedSpec, metrics: list[ResolvedMeasure], data: bool
) -> DiscriminationPlan:
    """The section resolved: every pair of runs of each collection with two runs or more, the
    compare section's metrics, samples and seed (its defaults without one)."""
    spec, where = loaded.spec, loaded.where("discrimination")
    section = spec.discrimination
    compare = spec.compare or Compare()
    correction = section.correction or (spec.compare.correction if spec.compare
                                        else DEFAULT_CORRECTION)  # fmt: skip
    if compare.samples == "exact" and any(t in section.tests for t in _DRAWN):
        raise SpecError(f"{where}.tests: the bootstrap and randomised_tukey_hsd draw samples; "
                        "compare.samples is exact: give it a number of samples")  # fmt: skip
    collections = _collections(loaded, data)
    if data:
        check_extra(where, "discriminative power needs")
    pairs = ComparePlan(None, tuple(section.tests), correction, section.alpha, compare.samples,
                        compare.seed, None, _chosen(loaded, metrics), collections)  # fmt: skip
    return DiscriminationPlan(correction, section.alpha, pairs)


_DRAWN = ("bootstrap", "randomised_tukey_hsd")


def _chosen(loaded: LoadedSpec, metrics: list[ResolvedMeasure]) -> tuple[tuple[str, str], ...]:
    """The compare section's metrics (every metric with per-query numbers without one)."""
    if loaded.spec.compare is not None:
        return compared_metrics(loaded, metrics)
    return tuple((m.label, m.measure.aggregator) for m in metrics if m.averaged)


def _collections(loaded: LoadedSpec, data: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each collection with two runs or more, and its runs in spec order; an error without one."""
    runs: dict[str, list[str]] = {}
    for name, run in loaded.spec.runs.items():
        for collection in run.collections:
            runs.setdefault(collection, []).append(name)
    found = tuple((c, tuple(names)) for c, names in runs.items() if len(names) > 1 or not data)
    if not found:
        raise SpecError(f"{loaded.where('discrimination')}: no collection has two runs; "
                        "discriminative power counts the pairs of runs a test tells apart")  # fmt: skip
    return found
