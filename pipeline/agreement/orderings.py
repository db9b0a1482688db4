"""How alike two orderings of the same runs are: every statistic for many samples at once.

The orderings are given as values, `reference` and `other`, shaped (runs, samples): one column per
sample (the observed values, or a bootstrap's resampled ones), the best run having the highest
value, the runs in name order. Per sample:

- `kendall_tau_b`, `spearman` (Pearson's r of the average ranks) and `pearson` (of the values):
  as scipy's kendalltau, spearmanr and pearsonr compute them; NaN when one ordering ties all.
- `tau_ap` (Yilmaz, Aslam and Robertson, 2008): the reference's order is the truth, the other's
  the one judged; with the runs in the other's order, 2/(N-1) sum_{i>=2} C(i)/(i-1) - 1, C(i) the
  runs above run i that the reference puts above it too. Not symmetric. With ties, the mean of
  that value over every order of the tied runs (of both orderings): a pair tied in the reference
  counts half, and a run tied with others in the other ordering takes each of the group's places
  equally often. In closed form (Urbano and Marrero, 2017, tau_AP,a, which assumes a reference
  without ties): for a run at the other's rank p (the best of its group) in a group of t,
  C_above x mean_{s=1..t} 1/(p+s-2), plus, for the group, half of sum_{k=1..t-1} k/(p+k-1).
- `rbo`: extrapolated rank-biased overlap (Webber, Moffat and Zobel, 2010, eq. 32 for lists of
  equal length): (1-p) sum_{d=1..N} p^(d-1) X_d/d + p^N, X_d the runs in both top-d lists; as the
  `rbo` package's RankingSimilarity(S, T).rbo_ext(p). Tied runs are ordered by run name.
- `max_rank_drop`: the most places a run falls from the reference's ranking to the other's, a
  run's rank being 1 + the runs strictly better (tied runs share a rank); `fallen` is that run
  (the reference's better one among equal drops, then the first by name), -1 when none falls.
"""

from __future__ import annotations

import numpy as np

from pipeline.agreement.names import ORDERING_STATISTICS

__all__ = ["ORDERING_STATISTICS", "ordering_statistics"]

PAIRS_AT_ONCE = 1 << 20  # runs x runs x samples held at once


def ordering_statistics(
    reference: np.ndarray, other: np.ndarray, p: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every statistic of `ORDERING_STATISTICS` per sample (column), and the run that falls most
    in each (its row, -1 when none falls)."""
    step = max(1, PAIRS_AT_ONCE // reference.shape[0] ** 2)
    parts = [
        _chunk(reference[:, s : s + step], other[:, s : s + step], p)
        for s in range(0, reference.shape[1], step)
    ]
    found = {name: np.concatenate([part[0][name] for part in parts]) for name in parts[0][0]}
    return found, np.concatenate([part[1] for part in parts])


def _chunk(x: np.ndarray, y: np.ndarray, p: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    above_x, above_y = _above(x), _above(y)  # [i, j, s]: run j strictly better than run i
    drops, fallen = _max_drop(above_x, above_y)
    return {
        "kendall_tau_b": _tau_b(x, y),
        "tau_ap": _tau_ap(above_x, above_y),
        "spearman": _pearson(_average_ranks(above_x), _average_ranks(above_y)),
        "pearson": _pearson(x, y),
        "rbo": _rbo(x, y, p),
        "max_rank_drop": drops,
    }, fallen


def _above(values: np.ndarray) -> np.ndarray:
    return values[None, :, :] > values[:, None, :]


def _tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(concordant - discordant) / sqrt((pairs - tied in x) (pairs - tied in y)), over ordered
    pairs (each pair twice, which cancels)."""
    sx = np.sign(x[:, None, :] - x[None, :, :])
    sy = np.sign(y[:, None, :] - y[None, :, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum((0, 1)) / np.sqrt(_untied(sx) * _untied(sy))


def _untied(signs: np.ndarray) -> np.ndarray:
    """The ordered pairs of two runs (i != j) whose values differ."""
    runs = signs.shape[0]
    return runs * (runs - 1) - ((signs == 0).sum((0, 1)) - runs)  # the diagonal ties itself


def _tau_ap(above_x: np.ndarray, above_y: np.ndarray) -> np.ndarray:
    """The mean of tau_ap over every order of the tied runs (see the module)."""
    runs = above_x.shape[0]
    first = above_y.sum(1) + 1  # p: the other's rank of the run's group (1 is the best)
    size = (~above_y & ~above_y.transpose(1, 0, 2)).sum(1)  # t: the runs tied with it, itself too
    agree = above_x + 0.5 * (~above_x & ~above_x.transpose(1, 0, 2))  # reference: above, or tied
    concordant = (above_y * agree).sum(1)  # C_above: runs above the group the reference agrees on
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, runs + 1))])
    spread = (harmonic[first + size - 2] - harmonic[np.maximum(first - 2, 0)]) / size
    within = (size - 1) - (first - 1) * (harmonic[first + size - 2] - harmonic[first - 1])
    total = np.where(first > 1, concordant * spread, 0.0) + within / (2 * size)
    return 2 * total.sum(0) / (runs - 1) - 1


def _average_ranks(above: np.ndarray) -> np.ndarray:
    """Each run's average rank (1 is the best) among the runs tied with it."""
    tied = (~above & ~above.transpose(1, 0, 2)).sum(1)
    return above.sum(1) + (tied + 1) / 2


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx, dy = x - x.mean(0), y - y.mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum(0) / np.sqrt((dx * dx).sum(0) * (dy * dy).sum(0))


def _rbo(x: np.ndarray, y: np.ndarray, p: float) -> np.ndarray:
    """Extrapolated RBO of the two rankings, ties ordered by run name (the rows' order)."""
    runs, samples = x.shape
    ranks_x, ranks_y = _positions(x), _positions(y)
    depth = np.maximum(ranks_x, ranks_y)  # the depth from which a run is in both prefixes
    offsets = np.arange(samples) * runs
    counts = np.bincount((depth + offsets).ravel(), minlength=runs * samples)
    overlap = np.cumsum(counts.reshape(samples, runs), axis=1)  # X_d, d = 1..N
    d = np.arange(1, runs + 1)
    return (1 - p) * (overlap / d) @ p ** (d - 1.0) + p**runs


def _positions(values: np.ndarray) -> np.ndarray:
    """Each run's place (0 is the best) with ties in row order: a stable sort of -values."""
    order = np.argsort(-values, axis=0, kind="stable")
    positions = np.empty_like(order)
    np.put_along_axis(positions, order, np.arange(values.shape[0])[:, None], axis=0)
    return positions


def _max_drop(above_x: np.ndarray, above_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rank_x, rank_y = above_x.sum(1), above_y.sum(1)
    drops = rank_y - rank_x
    largest = drops.max(0)
    # among the runs that fall most, the reference's best one (then the first by name)
    candidates = np.where(drops == largest, rank_x, np.iinfo(rank_x.dtype).max)
    fallen = np.where(largest > 0, np.argmin(candidates, axis=0), -1)
    return largest.astype(float), fallen
