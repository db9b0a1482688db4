"""repro_eval's measures of per-query values, for every metric at once (Breuer et al., "How to
Measure the Reproducibility of System-oriented IR Experiments", SIGIR 2020), as repro_eval 0.5.0
computes them.

Values are arrays shaped (metrics, topics), NaN where a run has no value for a topic; paired
measures read the topics both arrays have a value for, and each side of an effect the topics
both its baseline and its advanced run have.

- `rmse`: sqrt(mean((original - reproduced)^2)); `nrmse`: that over the largest it could be,
  sqrt(mean(max(original, 1 - original)^2)) (a metric in [0, 1]).
- `er`, the effect ratio: the reproduction's mean improvement of the advanced run over the
  baseline, mean(advanced - baseline), over the original's.
- `delta_ri`: the original's relative improvement (mean(advanced) - mean(baseline)) /
  mean(baseline), less the reproduction's.
- `paired_p` (reproducibility) and `unpaired_p` (replicability): two-sided t-tests, as scipy's
  ttest_rel and ttest_ind (equal variances) compute them; 1 where scipy gives NaN because the
  two samples do not differ at all (repro_eval sets 1 when every metric's are equal), as
  irpipe's comparisons do.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["delta_ri", "effect_ratio", "nrmse", "paired_p", "rmse", "unpaired_p"]


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a and b where both have a value (0 elsewhere), and how many topics that is per metric."""
    both = np.isfinite(a) & np.isfinite(b)
    return np.where(both, a, 0.0), np.where(both, b, 0.0), both


def _mean(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mask, x, 0.0).sum(axis=1) / mask.sum(axis=1)


def rmse(original: np.ndarray, reproduced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The root mean square error of each metric's values, and the topics it is over."""
    a, b, both = _paired(original, reproduced)
    return np.sqrt(_mean((a - b) ** 2, both)), both.sum(axis=1)


def nrmse(original: np.ndarray, reproduced: np.ndarray) -> np.ndarray:
    """The RMSE over the RMSE of the reproduction farthest from the original."""
    a, _, both = _paired(original, reproduced)
    with np.errstate(divide="ignore", invalid="ignore"):
        return rmse(original, reproduced)[0] / np.sqrt(_mean(np.maximum(a, 1 - a) ** 2, both))


def effect_ratio(
    baseline: tuple[np.ndarray, np.ndarray], advanced: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """ER: (original, reproduced) values of the baseline and of the advanced run."""
    original, reproduced = (_improvement(b, a) for b, a in zip(baseline, advanced, strict=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        return reproduced[0] / original[0]


def delta_ri(
    baseline: tuple[np.ndarray, np.ndarray], advanced: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """ΔRI: the original's relative improvement less the reproduction's."""
    original, reproduced = (_relative(b, a) for b, a in zip(baseline, advanced, strict=True))
    return original - reproduced


def _improvement(baseline: np.ndarray, advanced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean improvement per metric over the topics both runs have, and their number."""
    a, b, both = _paired(advanced, baseline)
    return _mean(a - b, both), both.sum(axis=1)


def _relative(baseline: np.ndarray, advanced: np.ndarray) -> np.ndarray:
    a, b, both = _paired(advanced, baseline)
    mean_b = _mean(b, both)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (_mean(a, both) - mean_b) / mean_b


def improved_topics(baseline: np.ndarray, advanced: np.ndarray) -> np.ndarray:
    """The topics an effect is measured over, per metric: those both runs have."""
    return _improvement(baseline, advanced)[1]


def paired_p(original: np.ndarray, reproduced: np.ndarray) -> np.ndarray:
    """The paired t-test's p-value per metric, over the topics both have."""
    a, b, both = _paired(original, reproduced)
    n = both.sum(axis=1)
    d = a - b
    mean = _mean(d, both)
    var = _mean((d - mean[:, None]) ** 2, both) * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    p = 2 * special.stdtr(n - 1, -np.abs(t))
    return np.where((n > 1) & np.all(~both | (d == 0), axis=1), 1.0, p)


def unpaired_p(original: np.ndarray, reproduced: np.ndarray) -> np.ndarray:
    """Student's t-test's p-value per metric (pooled variance), each sample its own topics."""
    samples = [(x, np.isfinite(x)) for x in (original, reproduced)]
    (m1, v1, n1), (m2, v2, n2) = (_moments(x, mask) for x, mask in samples)
    df = n1 + n2 - 2
    pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (m1 - m2) / np.sqrt(pooled * (1 / n1 + 1 / n2))
    p = 2 * special.stdtr(df, -np.abs(t))
    return np.where((df > 0) & (m1 == m2) & (pooled == 0), 1.0, p)


def _moments(x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = mask.sum(axis=1)
    mean = _mean(x, mask)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean, _mean((x - mean[:, None]) ** 2, mask) * n / (n - 1), n
