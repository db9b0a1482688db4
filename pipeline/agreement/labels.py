"""Agreement of two label sets on the pairs both judge, from their table of counts. numpy only.

`Labels` is the sparse confusion table: each cell (reference grade, other grade) and its pairs,
the same cell possibly listed more than once. Every statistic is a sum over its cells and its
marginals, so the work grows with the number of distinct cells and grades, never with pairs:

- Cohen's kappa, as scikit-learn's `cohen_kappa_score` defines it: 1 - sum(w * observed) /
  sum(w * expected), expected = outer(marginals) / n, with the weight w of two grades 1 when
  they differ (unweighted), |i - j| (linear) or (i - j)^2 (quadratic), i and j being the grades'
  positions among the grades either set gives on the shared pairs.
- Krippendorff's alpha for two coders, every unit coded by both, as the `krippendorff` package
  computes it: the coincidence matrix is the confusion table plus its transpose, n_c the
  coincidences of value c (n = 2 x pairs), and alpha = 1 - (n - 1) sum(o * d) / sum(n_c n_k d):
  d(c, k) = [c != k] (nominal), (v_c - v_k)^2 (interval), and ordinal's (sum of n_g from c to k
  - (n_c + n_k) / 2)^2, which is the interval distance of the values m_c = (n_g summed below c)
  + n_c / 2. With integer grades every sum is an exact integer in float64.

A statistic with a zero denominator (one grade only) is NaN: undefined, as scikit-learn says
(and as the `krippendorff` package refuses to compute).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.agreement.names import LABEL_STATISTICS

__all__ = ["LABEL_STATISTICS", "Labels", "binary_statistics", "label_statistics"]


@dataclass(frozen=True)
class Labels:
    """Pairs judged by both sets, by their grades: `reference[i]`, `other[i]` with `pairs[i]`."""

    reference: np.ndarray
    other: np.ndarray
    pairs: np.ndarray

    def binarised(self, threshold: float) -> Labels:
        """The labels relevant (1) at grade >= threshold, else not (0)."""
        return Labels(
            (self.reference >= threshold).astype(float),
            (self.other >= threshold).astype(float),
            self.pairs,
        )

    def grades(self) -> np.ndarray:
        """The grades either set gives, sorted."""
        return np.unique(np.concatenate([self.reference, self.other]))


def label_statistics(labels: Labels) -> dict[str, float]:
    """Every statistic of `LABEL_STATISTICS`, by name."""
    values = labels.grades()
    i, j = np.searchsorted(values, labels.reference), np.searchsorted(values, labels.other)
    n, pairs = labels.pairs.sum(), labels.pairs
    rows = np.bincount(i, pairs, len(values))
    columns = np.bincount(j, pairs, len(values))
    found = {"agreement": pairs[i == j].sum() / n}
    for name, weights in (("", _unweighted), ("_linear", _linear), ("_quadratic", _quadratic)):
        found["cohen_kappa" + name] = _kappa(i, j, pairs, rows, columns, weights)
    coded = rows + columns
    found["krippendorff_alpha_nominal"] = _alpha_nominal(i, j, pairs, coded)
    found["krippendorff_alpha_ordinal"] = _alpha_interval(i, j, pairs, coded, _ordinal(coded))
    found["krippendorff_alpha_interval"] = _alpha_interval(i, j, pairs, coded, values)
    return found


def binary_statistics(labels: Labels) -> dict[str, float]:
    """Precision, recall and F1 of the other set's binary labels against the reference's (1 is
    relevant): NaN where a denominator is 0 (no relevant label to count)."""
    reference, other, pairs = labels.reference == 1, labels.other == 1, labels.pairs
    hits = pairs[reference & other].sum()
    claimed, relevant = pairs[other].sum(), pairs[reference].sum()
    return {
        "precision": _ratio(hits, claimed),
        "recall": _ratio(hits, relevant),
        "f1": _ratio(2 * hits, claimed + relevant),
    }


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else float("nan")


def _kappa(i, j, pairs, rows, columns, weights) -> float:
    """Cohen's kappa with `weights`: (observed disagreement of the cells, expected one n times)."""
    observed, expected = weights(i, j, pairs, rows, columns)
    return 1 - _ratio(observed * pairs.sum(), expected)


def _unweighted(i, j, pairs, rows, columns) -> tuple[float, float]:
    n = pairs.sum()
    return pairs[i != j].sum(), n * n - rows @ columns


def _linear(i, j, pairs, rows, columns) -> tuple[float, float]:
    # sum over grades a, b of rows[a] columns[b] |a - b|: per a, the columns below and above it
    positions = np.arange(len(rows), dtype=float)
    below, below_sum = np.cumsum(columns), np.cumsum(columns * positions)
    total, total_sum = columns.sum(), (columns * positions).sum()
    per_row = positions * below - below_sum + (total_sum - below_sum) - positions * (total - below)
    return (pairs * np.abs(i - j)).sum(), rows @ per_row


def _quadratic(i, j, pairs, rows, columns) -> tuple[float, float]:
    positions = np.arange(len(rows), dtype=float)
    n = pairs.sum()
    spread = n * (rows @ positions**2) + n * (columns @ positions**2)
    return (pairs * (i - j) ** 2.0).sum(), spread - 2 * (rows @ positions) * (columns @ positions)


def _alpha_nominal(i, j, pairs, coded) -> float:
    # each disagreeing pair is two coincidences (c, k) and (k, c), each at distance 1
    n = coded.sum()
    return 1 - _ratio((n - 1) * 2 * pairs[i != j].sum(), n * n - coded @ coded)


def _alpha_interval(i, j, pairs, coded, values) -> float:
    """Alpha with the distance (v_c - v_k)^2; sum(n_c n_k d) = 2 n sum(n_c (v_c - mean)^2)."""
    n = coded.sum()
    centred = values - (coded @ values) / n
    observed = 2 * (pairs * (values[i] - values[j]) ** 2).sum()
    return 1 - _ratio((n - 1) * observed, 2 * n * (coded @ centred**2))


def _ordinal(coded: np.ndarray) -> np.ndarray:
    """The values whose interval distance is the ordinal one: coincidences below, plus half."""
    return np.cumsum(coded) - coded / 2
