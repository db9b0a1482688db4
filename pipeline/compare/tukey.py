"""Tukey's honestly significant difference and its randomised form: every pair of a collection's
runs at once, the family-wise error controlled by the test itself (no correction applies).

Both take the runs' values on the queries every run of the collection has a value for (`values`,
runs × queries, on the comparison's scale) and pairs as row indices (`first` minus `second`).

- `tukey_hsd`: the one-way Tukey HSD, as statsmodels' `pairwise_tukeyhsd(values, runs)` computes it
  (and ranx calls it): the runs are groups of n queries each, the error variance is the pooled
  within-run variance MSE with k(n - 1) degrees of freedom, a pair's statistic is |mean_a - mean_b|
  / sqrt(MSE / n), its p-value the studentized range distribution's upper tail for k means, and
  its interval the difference ± q(1 - alpha; k, k(n - 1)) sqrt(MSE / n). One-way: the pairing of
  the queries is not used (ranx's choice, kept so that the numbers are comparable).
- `randomised_tukey_hsd` (Carterette 2012; Sakai's recommended practice): each sample permutes
  the runs' values within each query (every query independently); a pair's p-value is the share of
  samples whose largest difference of run means (the range) is at least the pair's observed
  difference, counting the observed assignment as one of them, as the randomization test counts
  (`resampling`): (1 + #{samples with range >= |difference|}) / (1 + samples). Sums are taken
  exactly, on the grid of `resampling.quantized`, and a range within 2n units of the difference
  ties with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np

from pipeline.compare.resampling import quantized

__all__ = ["randomised_tukey_hsd", "tukey_hsd"]


def tukey_hsd(
    values: np.ndarray, first: np.ndarray, second: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """p-values and interval half-widths of each pair (`first` - `second`) by Tukey's HSD."""
    from scipy.stats import studentized_range  # scipy.stats loads slowly: only when asked for

    k, n = values.shape
    means = values.mean(axis=1)
    df = k * (n - 1)
    mse = np.sum((values - means[:, None]) ** 2) / df
    std = np.sqrt(mse / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(means[first] - means[second]) / std
    # No variance within any run: every difference is exact, 0 (p = 1) or not (p = 0).
    p = studentized_range.sf(q, k, df) if std > 0 else np.where(q == 0, 1.0, 0.0)
    p = np.where(np.isnan(q), 1.0, p)
    half = _critical(alpha, k, df) * std
    return np.atleast_1d(p).astype(float), np.full(len(first), half)


@cache
def _critical(alpha: float, k: int, df: int) -> float:
    """The studentized range's 1 - alpha quantile: a numerical inversion taking a tenth of a
    second, the same for every metric compared on the same queries."""
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(1 - alpha, k, df))


def randomised_tukey_hsd(
    values: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    permutations: Iterable[np.ndarray],
) -> tuple[np.ndarray, int]:
    """p-values of each pair and the number of samples; `permutations` are chunks of (samples,
    queries, runs) indices: sample s gives run r query q's value of run permutations[s, q, r]."""
    units, _ = quantized(values.T)  # queries x runs, integers in float64
    sums = units.sum(axis=0)
    observed = np.abs(sums[first] - sums[second]) - 2 * units.shape[0]
    ranges = []
    for chunk in permutations:
        permuted = np.take_along_axis(units[None], chunk, axis=2).sum(axis=1)  # samples x runs
        ranges.append(permuted.max(axis=1) - permuted.min(axis=1))
    ordered = np.sort(np.concatenate(ranges))
    reaching = len(ordered) - np.searchsorted(ordered, observed, side="left")
    return (reaching + 1) / (len(ordered) + 1), len(ordered)
