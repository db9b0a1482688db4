"""The closed-form paired tests, the t interval and the effect size, for many pairs at once.

Each function takes one row per pair (all rows over the same number of queries) and returns one
value per row. p-values are two-sided and equal scipy.stats' for each row on its own:
`ttest_rel(a, b)`, `wilcoxon(a, b)` (its defaults: zero differences dropped, no continuity
correction, the exact distribution for n <= 50 without ties or zeros), and `binomtest(wins,
wins + losses)` for the sign test (ties dropped). Where every difference is zero these are 1,
where scipy gives NaN: nothing favours either run.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["effect_size", "sign_test", "t_interval", "t_test", "wilcoxon_test"]


def t_test(d: np.ndarray) -> np.ndarray:
    """Paired t-test on differences `d`: t = mean / (sd / sqrt(n)) with n - 1 degrees of freedom.
    Differences that are all equal but not zero give t = ±inf and p = 0, as scipy does."""
    n = d.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    p = 2 * special.stdtr(n - 1, -np.abs(t))
    return np.where(np.all(d == 0, axis=1), 1.0, p)


def t_interval(d: np.ndarray, center: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The 1 - alpha t interval of the mean difference, around `center` (the reported difference,
    so that it always lies inside)."""
    n = d.shape[1]
    half = special.stdtrit(n - 1, 1 - alpha / 2) * d.std(axis=1, ddof=1) / np.sqrt(n)
    return center - half, center + half


def effect_size(d: np.ndarray) -> np.ndarray:
    """The paired standardized mean difference (Cohen's d_z): mean(d) / sd(d), sd with ddof=1.

    With sd = 0 there is nothing to standardize by: 0 when every difference is zero (no effect),
    NaN (NULL in the tables) when the differences are all the same non-zero value."""
    mean, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = mean / sd
    return np.where(sd > 0, size, np.where(mean == 0, 0.0, np.nan))


def sign_test(d: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial test of wins among wins + losses at p = 1/2: by symmetry twice
    the lower tail (what binomtest sums), at most 1; 1 when every query ties."""
    wins, losses = np.count_nonzero(d > 0, axis=1), np.count_nonzero(d < 0, axis=1)
    tail = special.bdtr(np.minimum(wins, losses), wins + losses, 0.5)
    return np.where(wins + losses == 0, 1.0, np.minimum(1.0, 2 * tail))


def wilcoxon_test(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Wilcoxon signed-rank p-values, as scipy.stats.wilcoxon(a[i], b[i]) row by row.

    scipy chooses its method from the data, and for a whole batch at once; rows are therefore
    grouped by the method their own data calls for: the exact distribution for n <= 50 without
    ties or zeros, an exact permutation test for n <= 13 (enumerated here for all rows at once,
    where scipy evaluates its statistic 2^n times), else the normal approximation."""
    from scipy import stats  # only when Wilcoxon is asked for: scipy.stats takes a second to load

    d = a - b
    n = d.shape[1]
    p = np.ones(len(d))
    zeros, nonzero = np.any(d == 0, axis=1), ~np.all(d == 0, axis=1)
    exact = ~zeros & ~_ties(np.abs(d)) & (n <= 50)
    small = ~exact & nonzero & (n <= 13)
    rest = ~exact & ~small & nonzero
    if small.any():
        p[small] = _signed_rank_flips(d[small])
    for rows, method in ((exact, "exact"), (rest, "asymptotic")):
        if rows.any():
            p[rows] = stats.wilcoxon(a[rows], b[rows], axis=1, method=method).pvalue
    return p


def _ties(magnitudes: np.ndarray) -> np.ndarray:
    """Whether a row has two equal non-zero values."""
    ordered = np.sort(magnitudes, axis=1)
    return np.any((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] > 0), axis=1)


def _signed_rank_flips(d: np.ndarray) -> np.ndarray:
    """scipy's permutation test of the signed-rank statistic (the sum of the ranks of |d| among
    the non-zero differences where d > 0), over all 2^n sign flips: two-sided, twice the smaller
    tail, at most 1. Ranks are halves, so the sums and comparisons are exact."""
    from scipy import stats

    n = d.shape[1]
    ranks = stats.rankdata(np.where(d == 0, np.nan, np.abs(d)), axis=1, nan_policy="omit")
    ranks = np.nan_to_num(ranks)  # a zero difference never counts, whatever its sign
    flips = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
    null = np.einsum("rfi,ri->rf", (d > 0)[:, None, :] ^ flips[None], ranks)
    observed = np.sum(ranks * (d > 0), axis=1)[:, None]
    tails = np.minimum(np.mean(null <= observed, axis=1), np.mean(null >= observed, axis=1))
    return np.minimum(2 * tails, 1.0)
