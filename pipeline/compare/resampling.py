"""The paired randomization (sign-flip) test and the paired bootstrap, for many pairs at once.

Both work on a group of runs measured on the same n queries (`values`, queries × runs) and a list
of pairs (`first` minus `second`, as column indices). A sample's statistic for a pair is the sum
of the pair's per-query differences, relabelled: for the randomization test each difference's
sign is flipped or kept; for the bootstrap, queries are drawn with replacement. Both are linear
in the values, so one matrix product gives every run's resampled sum, and a pair's statistic is
the difference of two of them: the work grows with runs, not with pairs.

Exact arithmetic: values are first rounded to integer multiples of 2^-k, with k as large as keeps
every sum below 2^53, so each sum is an exact integer in float64 whatever the order BLAS adds in:
counts are the same on every machine and thread count. Statistics within 2n units of the
observed one (about 1e-13 of a mean of values in [0, 1]) count as ties with it, since values
that are equal in exact arithmetic can differ in their last bits.

p-values, two-sided:
- randomization: (1 + #{samples with |sum*| >= |sum|}) / (1 + samples); with every one of the 2^n
  flips enumerated (`samples: exact`), #{flips with |sum*| >= |sum|} / 2^n.
- bootstrap (the shift method; Efron & Tibshirani 1993, section 16.4): the bootstrap means,
  centred on the observed mean, stand for the mean's distribution under no difference:
  (1 + #{samples with |mean* - mean| >= |mean|}) / (1 + samples). Its interval is the percentile
  interval: the alpha/2 and 1 - alpha/2 quantiles of the bootstrap means (numpy's linear rule).
When every difference is zero every sample ties with the observed statistic, so p = 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["Resampled", "bootstrap", "quantized", "randomization"]

COLUMNS = 8192  # samples compared at once, into buffers allocated once (allocating is costly)


@dataclass(frozen=True)
class Resampled:
    """p-values of a group's pairs, and for the bootstrap its interval of the mean difference."""

    p: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def quantized(values: np.ndarray) -> tuple[np.ndarray, int]:
    """`values` as integers (held in float64) in units of 2^-k, and k.

    The largest sum formed (a difference of two sums of n values, minus another) is at most
    4 n max|value|, kept below 2^53. k depends only on n and the power of two above max|value|,
    so values within [0, 1] are always rounded to the same grid."""
    n = values.shape[0]
    top = float(np.max(np.abs(values))) if values.size else 0.0
    power = max(0, math.ceil(math.log2(top))) if top > 0 else 0
    k = 52 - math.ceil(math.log2(4 * n)) - power
    return np.rint(np.ldexp(values, k)), k


def randomization(
    values: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    flips: Iterable[np.ndarray],
    exact: bool = False,
) -> Resampled:
    """Two-sided sign-flip p-values of each pair; `flips` are chunks of (samples, n) signs."""
    units, _ = quantized(values)
    sums = units.sum(axis=0)
    observed = sums[first] - sums[second]
    limit = (np.abs(observed) - 2 * values.shape[0])[:, None]
    blocks = _by_baseline(first, second)
    beyond = np.zeros(len(first), dtype=np.int64)
    buffers = np.empty((units.shape[1], COLUMNS)), np.empty((units.shape[1], COLUMNS), bool)
    samples = 0
    for chunk in flips:
        resampled = units.T @ chunk.T  # runs x samples, each row contiguous
        for start in range(0, resampled.shape[1], COLUMNS):
            part = resampled[:, start : start + COLUMNS]
            for rows, runs, base in blocks:
                beyond[rows] += _reaching(part[runs], part[base], limit[rows], buffers)
        samples += len(chunk)
    p = beyond / samples if exact else (beyond + 1) / (samples + 1)
    return Resampled(p)


def _reaching(runs: np.ndarray, base: np.ndarray, limit: np.ndarray, buffers) -> np.ndarray:
    """Per row of `runs`, the samples where |run - base| >= its limit; in place, in `buffers`."""
    diff, reached = (b[: runs.shape[0], : runs.shape[1]] for b in buffers)
    np.subtract(runs, base, out=diff)
    np.abs(diff, out=diff)
    np.greater_equal(diff, limit, out=reached)
    return np.count_nonzero(reached, axis=1)


def bootstrap(
    values: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    counts: Iterable[np.ndarray],
    alpha: float,
) -> Resampled:
    """Shift-method p-values and percentile intervals of the mean difference of each pair;
    `counts` are chunks of (samples, n) draws per query."""
    units, k = quantized(values)
    n = values.shape[0]
    sums = units.sum(axis=0)
    observed = sums[first] - sums[second]
    resampled = np.hstack([units.T @ chunk.T for chunk in counts])  # runs x samples
    samples = resampled.shape[1]
    p, low, high = np.empty(len(first)), np.empty(len(first)), np.empty(len(first))
    for rows, runs, base in _by_baseline(first, second):
        diff = resampled[runs] - resampled[base]
        # The upper bound as the lower one of the negated means: the same number (the linear rule
        # is symmetric), and exactly the negated lower bound when the pair is seen the other way.
        low[rows] = np.ldexp(np.quantile(diff, alpha / 2, axis=1), -k) / n
        high[rows] = -np.ldexp(np.quantile(-diff, alpha / 2, axis=1), -k) / n
        diff -= observed[rows, None]
        np.abs(diff, out=diff)
        limit = np.abs(observed[rows]) - 2 * n
        p[rows] = (np.count_nonzero(diff >= limit[:, None], axis=1) + 1) / (samples + 1)
    return Resampled(p, low, high)


def _by_baseline(first: np.ndarray, second: np.ndarray) -> list[tuple]:
    """(pair indices, their runs, the baseline) per baseline: one broadcast subtraction per
    baseline; the runs are a slice (no copy) where they are adjacent, as in all pairs."""
    blocks = []
    for base in np.unique(second):
        rows = np.flatnonzero(second == base)
        runs = first[rows]
        adjacent = bool(np.all(np.diff(runs) == 1))
        blocks.append((rows, slice(runs[0], runs[-1] + 1) if adjacent else runs, base))
    return blocks
