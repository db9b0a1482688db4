"""The bootstrap over queries of two orderings of the runs: percentile intervals of each statistic.

A sample draws as many queries as the two sides have together, with replacement, from the union
of their queries; each side aggregates each run's values of the queries drawn that it has (with
repeats), by its metric's aggregator: the mean, the sum, or the geometric mean of values floored
at 1e-5, as the aggregate table does. Two metrics under one set are thus resampled on the same
queries (paired), and two sets each over their own queries. The draws come from
`pipeline.compare.streams` (the same on every platform), keyed by the seed, the entry and the
number of queries: the same seed gives the same intervals, whatever else the spec holds. The
interval is [alpha/2, 1 - alpha/2] of the samples' statistics (numpy's linear rule), over the
samples where the statistic is defined.
"""

from __future__ import annotations

import numpy as np

from pipeline.agreement.orderings import ordering_statistics
from pipeline.compare.streams import resample_counts, stream

__all__ = ["Sides", "intervals"]

FLOOR = 1e-5  # the geometric mean's floor (the aggregate table's)


class Sides:
    """Both sides' per-query values, (runs, queries) with NaN where a side lacks the value, the
    queries being the union of the sides'; each side's aggregator and sign (-1: lower is
    better)."""

    def __init__(self, values: tuple[np.ndarray, np.ndarray], aggregators: tuple[str, str],
                 signs: tuple[float, float]) -> None:  # fmt: skip
        self.values, self.aggregators, self.signs = values, aggregators, signs

    @property
    def queries(self) -> int:
        return self.values[0].shape[1]

    def resampled(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each side's signed aggregates (runs, samples) for the samples' `counts`."""
        found = (_aggregated(v, a, counts) * s for v, a, s in
                 zip(self.values, self.aggregators, self.signs, strict=True))  # fmt: skip
        return tuple(found)


def _aggregated(values: np.ndarray, aggregator: str, counts: np.ndarray) -> np.ndarray:
    present = ~np.isnan(values)
    if aggregator == "gmean":
        values = np.log(np.maximum(values, FLOOR))
    summed = np.where(present, values, 0.0) @ counts.T
    if aggregator == "sum":
        return summed
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = summed / (present @ counts.T)
    return np.exp(mean) if aggregator == "gmean" else mean


def intervals(
    sides: Sides, samples: int, seed: int, key: str, p: float, alpha: float
) -> dict[str, tuple[float, float]]:
    """Each statistic's percentile interval over `samples` bootstrap samples of the queries."""
    bits = stream(seed, key, "", "correlation", sides.queries)
    parts = [ordering_statistics(*sides.resampled(counts), p)[0]
             for counts in resample_counts(bits, samples, sides.queries)]  # fmt: skip
    found = {}
    for name in parts[0]:
        values = np.concatenate([part[name] for part in parts])
        values = values[np.isfinite(values)]
        low, high = (
            np.quantile(values, [alpha / 2, 1 - alpha / 2]) if len(values) else (np.nan,) * 2
        )
        found[name] = (float(low), float(high))
    return found
