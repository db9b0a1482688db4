"""pipeline/compare/resampling.py and streams.py: the randomization test equals scipy's exact
permutation test where every flip is enumerated, the sampled test converges to it, the bootstrap
computes what its definition says and converges to the exact bootstrap, and no p-value depends
on other runs, on chunk sizes or on anything but its stream's key."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from pipeline.compare import resampling, streams
from pipeline.compare.resampling import bootstrap, randomization


def runs(n: int, count: int, grid: int | None, seed: int) -> np.ndarray:
    """Per-query values (queries x runs); on a dyadic grid, sums are exact in scipy too."""
    values = np.random.default_rng(seed).random((n, count))
    return np.round(values * grid) / grid if grid else values


def all_pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    second, first = np.triu_indices(count, 1)
    return first, second


def flips(n: int, samples: int, key: str = "k"):
    return streams.sign_flips(streams.stream(0, "c", key, "randomization", n), samples, n)


def draws(n: int, samples: int, key: str = "k"):
    return streams.resample_counts(streams.stream(0, "c", key, "bootstrap", n), samples, n)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 12])
@pytest.mark.parametrize("grid", [None, 8])
def test_exact_randomization_is_scipys_exact_permutation_test(n, grid):
    values = runs(n, 5, grid, seed=n)
    values[:, 4] = values[:, 3]  # a pair whose differences are all zero
    first, second = all_pairs(5)
    found = randomization(values, first, second, streams.all_flips(n), exact=True).p
    for i, j, p in zip(first, second, found, strict=True):
        d = values[:, i] - values[:, j]
        reference = stats.permutation_test(
            (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
            n_resamples=np.inf, alternative="two-sided",
        ).pvalue  # fmt: skip
        assert abs(p - reference) < 1e-12, (i, j)
    assert found[-1] == 1.0  # the pair (4, 3): nothing to tell them apart


@pytest.mark.parametrize(("n", "grid"), [(10, 8), (12, None), (16, 4), (16, None)])
def test_the_sampled_test_converges_to_the_exact_one(n, grid):
    values = runs(n, 6, grid, seed=n + 1)
    first, second = all_pairs(6)
    exact = randomization(values, first, second, streams.all_flips(n), exact=True).p
    samples = 200_000
    sampled = randomization(values, first, second, flips(n, samples)).p
    error = 4 * np.sqrt(exact * (1 - exact) / samples) + 2 / samples  # four standard errors
    assert np.all(np.abs(sampled - exact) <= error)
    assert len(set(np.round(exact, 3))) > 5  # the pairs cover a range of p-values


def test_every_difference_zero_gives_p_one_in_both_tests():
    values = np.tile(runs(20, 1, 10, seed=3), (1, 2))
    pair = np.array([1]), np.array([0])
    assert randomization(values, *pair, flips(20, 5000)).p[0] == 1.0
    found = bootstrap(values, *pair, draws(20, 5000), 0.05)
    assert found.p[0] == 1.0 and found.low[0] == found.high[0] == 0.0


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_a_pair_does_not_depend_on_the_other_runs(test):
    values = runs(30, 8, 10, seed=4)
    first, second = all_pairs(8)
    together = _resampled(test, values, first, second)
    for k in (0, 7, 20, 27):
        i, j = first[k], second[k]
        alone = _resampled(test, values[:, [j, i]], np.array([1]), np.array([0]))
        assert alone.p[0] == together.p[k]
        if test == "bootstrap":
            assert (alone.low[0], alone.high[0]) == (together.low[k], together.high[k])


def _resampled(test: str, values, first, second) -> resampling.Resampled:
    n = values.shape[0]
    if test == "randomization":
        return randomization(values, first, second, flips(n, 20_000))
    return bootstrap(values, first, second, draws(n, 20_000), 0.05)


def test_chunk_sizes_change_nothing(monkeypatch):
    values = runs(40, 5, None, seed=5)
    first, second = all_pairs(5)
    before = randomization(values, first, second, flips(40, 30_000)).p
    boot = bootstrap(values, first, second, draws(40, 30_000), 0.1)
    monkeypatch.setattr(streams, "CHUNK_VALUES", 40 * 777)
    monkeypatch.setattr(resampling, "COLUMNS", 100)
    assert np.array_equal(randomization(values, first, second, flips(40, 30_000)).p, before)
    again = bootstrap(values, first, second, draws(40, 30_000), 0.1)
    assert np.array_equal(again.p, boot.p) and np.array_equal(again.low, boot.low)


def test_the_bootstrap_is_its_definition_sample_by_sample():
    """p = (1 + #{|mean* - mean| >= |mean|}) / (1 + samples) and the percentile interval, from
    the same draws, computed one sample at a time."""
    values = runs(15, 2, None, seed=6)
    d = values[:, 1] - values[:, 0]
    samples = 4000
    found = bootstrap(values, np.array([1]), np.array([0]), draws(15, samples), 0.1)
    counts = np.vstack(list(draws(15, samples)))
    means = np.array([sum(c * x for c, x in zip(row, d, strict=True)) / 15 for row in counts])
    mean = d.mean()
    beyond = sum(abs(m - mean) >= abs(mean) for m in means)
    assert found.p[0] == (beyond + 1) / (samples + 1)
    low, high = np.quantile(means, [0.05, 0.95])
    assert abs(found.low[0] - low) < 1e-12 and abs(found.high[0] - high) < 1e-12


def test_the_bootstrap_converges_to_the_exact_bootstrap():
    """For 5 queries all 5^5 equally likely resamples can be listed: the exact bootstrap."""
    values = runs(5, 2, None, seed=8)
    d = values[:, 1] - values[:, 0]
    means = np.array([d[list(pick)].mean() for pick in itertools.product(range(5), repeat=5)])
    exact_p = np.mean(np.abs(means - d.mean()) >= abs(d.mean()))
    samples = 200_000
    found = bootstrap(values, np.array([1]), np.array([0]), draws(5, samples), 0.05)
    assert abs(found.p[0] - exact_p) <= 4 * np.sqrt(exact_p * (1 - exact_p) / samples) + 2e-5
    low, high = np.quantile(means, [0.025, 0.975])
    spread = means.std()
    assert abs(found.low[0] - low) < 0.02 * spread and abs(found.high[0] - high) < 0.02 * spread


def test_streams_are_fixed_by_their_key():
    """The first words of a key's stream are pinned: a change in hashing or seeding would change
    every published p-value. Each part of the key gives another stream."""
    assert list(streams.stream(0, "c", "AP", "randomization", 50).random_raw(2)) == [
        7334329837498492219,
        17677649656535996866,
    ]
    keys = [(0, "c", "AP", "randomization", 50), (1, "c", "AP", "randomization", 50),
            (0, "d", "AP", "randomization", 50), (0, "c", "P@10", "randomization", 50),
            (0, "c", "AP", "bootstrap", 50), (0, "c", "AP", "randomization", 49)]  # fmt: skip
    assert len({int(streams.stream(*key).random_raw()) for key in keys}) == len(keys)


def test_sign_flips_and_resamples_are_what_they_claim():
    signs = np.vstack(list(flips(70, 20_000)))
    assert signs.shape == (20_000, 70) and set(np.unique(signs)) == {-1.0, 1.0}
    assert abs(signs.mean()) < 0.01  # each query flipped half of the time
    counts = np.vstack(list(draws(7, 20_000)))
    assert np.all(counts.sum(axis=1) == 7)
    assert np.allclose(counts.mean(axis=0), 1.0, atol=0.03)  # every query as likely as any
    enumerated = np.vstack(list(streams.all_flips(4)))
    assert len({tuple(row) for row in enumerated}) == 16
