"""Multiple-comparison corrections of one family's p-values: none, Bonferroni, Holm, BH.

The same arithmetic as statsmodels' `multipletests` (methods `bonferroni`, `holm`, `fdr_bh`), so
the adjusted p-values agree to the last bits; written with numpy because importing statsmodels
costs more than a whole evaluation. A comparison is significant when its adjusted p-value is at
most alpha, which is `multipletests`' `reject`. Holm controls the family-wise error rate
(uniformly better than Bonferroni); BH controls the false discovery rate.
"""

from __future__ import annotations

import numpy as np

__all__ = ["adjust"]


def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """The adjusted p-values of one family, in the order given. A NaN p-value (no test was
    made: a pair sharing a single query) stays NaN and is left out of the family: the others
    are adjusted as the family of the tests that were made. statsmodels' `multipletests` counts
    it, and its BH then makes every value of the family NaN (PyTerrier's issue 440, where the
    baseline's own NaN was in the family)."""
    p = np.asarray(p, dtype=np.float64)
    tested = ~np.isnan(p)
    adjusted = np.full_like(p, np.nan)
    adjusted[tested] = _METHODS[method](p[tested])
    return adjusted


def _none(p: np.ndarray) -> np.ndarray:
    return p.copy()


def _bonferroni(p: np.ndarray) -> np.ndarray:
    return np.minimum(p * float(len(p)), 1.0)


def _holm(p: np.ndarray) -> np.ndarray:
    """Step-down: the i-th smallest (from 0) times m - i, made non-decreasing."""
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    return _unsorted(np.minimum(steps, 1.0), order)


def _bh(p: np.ndarray) -> np.ndarray:
    """Step-up: the i-th smallest (from 1) times m / i, made non-decreasing from the top."""
    order = np.argsort(p, kind="stable")
    ecdf = np.arange(1, len(p) + 1) / float(len(p))
    steps = np.minimum.accumulate((p[order] / ecdf)[::-1])[::-1]
    return _unsorted(np.minimum(steps, 1.0), order)


def _unsorted(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    out = np.empty_like(values)
    out[order] = values
    return out


_METHODS = {"none": _none, "bonferroni": _bonferroni, "holm": _holm, "bh": _bh}
