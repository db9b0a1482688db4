"""pipeline/compare/paired.py and corrections.py against scipy.stats and statsmodels, row by row,
on many generated per-query arrays: continuous values, values on a grid (ties), pairs with some
and with only zero differences, constant differences, and sizes around scipy's method switches
(13 and 50 queries)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from pipeline.compare.corrections import adjust
from pipeline.compare.paired import effect_size, sign_test, t_interval, t_test, wilcoxon_test

SIZES = (2, 3, 5, 8, 12, 13, 14, 20, 49, 50, 51, 80)


def generated(
    n: int, grid: int | None, seed: int, pairs: int = 30
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of `pairs` pairs of runs: rows 0-3 identical (all differences zero), rows
    4-7 with half the queries tied, row 8 a constant difference; on a grid of 1/grid if given."""
    rng = np.random.default_rng(seed)
    a, b = rng.random((pairs, n)), rng.random((pairs, n))
    if grid:
        a, b = np.round(a * grid) / grid, np.round(b * grid) / grid
    b[:4] = a[:4]
    b[4:8, : n // 2] = a[4:8, : n // 2]
    b[8] = a[8] - 0.125
    return a, b


CASES = [(n, grid, seed) for n in SIZES for grid in (None, 4, 10) for seed in (1, 2)]


def each_row(a, b, reference) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on zero variance and all-zero rows
        return np.array([reference(x, y) for x, y in zip(a, b, strict=True)])


@pytest.mark.parametrize(("n", "grid", "seed"), CASES)
def test_t_test_is_scipys_ttest_rel(n, grid, seed):
    a, b = generated(n, grid, seed)
    expected = each_row(a, b, lambda x, y: stats.ttest_rel(x, y).pvalue)
    found, zero = t_test(a - b), np.all(a == b, axis=1)
    assert zero[:4].all() and np.all(found[zero] == 1.0)  # scipy: NaN; nothing favours a run
    np.testing.assert_allclose(found[~zero], expected[~zero], rtol=0, atol=1e-12)


# scipy's own permutation test (n <= 13 with ties or zeros) takes seconds a row near n = 13.
WILCOXON = [c for c in CASES if c[0] not in (12, 13)] + [(10, 4, 1), (13, 10, 2)]
#: generated's rows: the four all-zero ones, one with half the queries tied, the constant difference
EACH_KIND = [0, 1, 2, 3, 4, 8]


@pytest.mark.parametrize(("n", "grid", "seed"), WILCOXON)
def test_wilcoxon_is_scipys_wilcoxon_on_each_row(n, grid, seed):
    # rows 0-8 (generated's every kind of row) where scipy's permutations take seconds a row,
    # and at n = 13, where they take several, one row of each kind
    a, b = generated(n, grid, seed, pairs=9 if 8 <= n <= 13 else 30)
    if n == 13:
        a, b = a[EACH_KIND], b[EACH_KIND]
    found, zero = wilcoxon_test(a, b), np.all(a == b, axis=1)
    assert zero[:4].all() and np.all(found[zero] == 1.0)
    # scipy's reference only where a difference is not all zero (it gives NaN there)
    expected = each_row(a[~zero], b[~zero], lambda x, y: stats.wilcoxon(x, y).pvalue)
    np.testing.assert_allclose(found[~zero], expected, rtol=0, atol=1e-12)


def test_wilcoxon_decides_its_method_row_by_row():
    """One row with ties must not switch another row (without ties) off the exact method."""
    a, b = generated(20, None, 3)
    alone = wilcoxon_test(a[9:10], b[9:10])
    with_ties = wilcoxon_test(np.vstack([a[9:10], a[4:5]]), np.vstack([b[9:10], b[4:5]]))
    assert alone[0] == with_ties[0] == stats.wilcoxon(a[9], b[9]).pvalue


@pytest.mark.parametrize(("n", "grid", "seed"), CASES)
def test_sign_test_is_scipys_binomtest(n, grid, seed):
    a, b = generated(n, grid, seed)

    def binomtest(x, y):
        wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
        return stats.binomtest(wins, wins + losses).pvalue if wins + losses else 1.0

    np.testing.assert_allclose(sign_test(a - b), each_row(a, b, binomtest), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("n", "grid", "seed"), [c for c in CASES if c[0] > 2])
def test_t_interval_is_scipys_confidence_interval(n, grid, seed):
    a, b = generated(n, grid, seed)
    d = a - b
    low, high = t_interval(d, d.mean(axis=1), 0.05)
    for i in np.flatnonzero(~np.all(a == b, axis=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy: precision loss where d is constant
            interval = stats.ttest_rel(a[i], b[i]).confidence_interval(0.95)
        assert abs(low[i] - interval.low) < 1e-12 and abs(high[i] - interval.high) < 1e-12


def test_the_interval_is_centred_on_the_reported_difference():
    a, b = generated(10, 10, 4)
    center = a.mean(axis=1) - b.mean(axis=1)
    low, high = t_interval(a - b, center, 0.1)
    np.testing.assert_allclose((low + high) / 2, center, rtol=0, atol=1e-15)


def test_effect_size_is_mean_over_sd_and_defined_where_sd_is_zero():
    a, b = generated(12, 4, 5)
    d = a - b
    found = effect_size(d)
    assert np.all(found[:4] == 0.0)  # no difference at all: no effect
    assert np.isnan(found[8])  # the same difference on every query: nothing to standardize by
    expected = d[9:].mean(axis=1) / d[9:].std(axis=1, ddof=1)
    np.testing.assert_allclose(found[9:], expected, rtol=1e-15)


METHODS = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("size", [1, 2, 3, 10, 57, 400])
def test_corrections_are_statsmodels_multipletests(method, size):
    rng = np.random.default_rng(size)
    for _ in range(6):  # statsmodels' Holm takes 0.1 s a call
        p = rng.random(size) ** rng.uniform(0.5, 4)
        p[rng.random(size) < 0.2] = p[0]  # ties
        p[rng.random(size) < 0.05] = 1.0
        reject, expected, _, _ = multipletests(p, alpha=0.05, method=METHODS[method])
        found = adjust(p, method)
        np.testing.assert_allclose(found, expected, rtol=0, atol=1e-15)
        assert np.array_equal(found <= 0.05, reject)


@pytest.mark.parametrize("method", METHODS)
def test_a_nan_p_value_is_left_out_of_its_family(method):
    """PyTerrier's issue 440: a NaN in the family (there, the baseline's) must not make the
    others NaN nor count as a test; they are adjusted as the family of the tests made."""
    rng = np.random.default_rng(440)
    p = rng.random(12) ** 2
    with_nan = np.insert(p, [0, 5, 12], np.nan)
    found = adjust(with_nan, method)
    assert np.isnan(found[[0, 6, 14]]).all()
    expected = multipletests(p, alpha=0.05, method=METHODS[method])[1]
    np.testing.assert_allclose(found[~np.isnan(with_nan)], expected, rtol=0, atol=1e-15)


def test_no_correction_keeps_the_p_values():
    p = np.array([0.01, 0.5, 0.02])
    assert np.array_equal(adjust(p, "none"), p)
