"""Every comparison of one metric on one collection: each pair of runs, each test.

A pair is compared on the queries both runs have a value for (the spec's `queries` setting
decides which those are; NULL and NaN values are left out), in query-id order, and `n_queries`
says how many. Pairs sharing the same queries form a group computed at once; under the default
`queries: qrels` all pairs of a collection share every query.

The scale: a metric averaged arithmetically (mean, or a count summed over queries) is compared
on its per-query values, and `mean` is their mean. A geometric mean (gmAP, gmBpref) averages
ln(max(value, 1e-5)): its tests, effect size and intervals are on that scale, `mean` and
`baseline_mean` are the geometric means (the aggregate's values). Their difference is
2 G sinh(m / 2), for m the mean log-difference and G = sqrt(mean * baseline_mean); an interval
[L, H] of m becomes [2 G sinh(L / 2), 2 G sinh(H / 2)]: it holds the difference, and it is the
same (negated) whichever of the two runs is the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.compare import paired, resampling, streams, tukey
from pipeline.compare.plan import EXACT_MAX_QUERIES, ComparePlan, all_pairs
from pipeline.errors import InputDataError, SpecError

__all__ = ["ALL_PAIRS", "Block", "compare_block"]

FLOOR = 1e-5  # the floor of a geometric mean's values (trec_eval's, and the aggregate's)
DESCRIBED = ("n_queries", "mean", "baseline_mean", "difference", "effect_size", "wins", "ties",
             "losses", "t_low", "t_high")  # fmt: skip
#: the tests of all pairs of a collection's runs at once, which correct nothing
ALL_PAIRS = ("tukey_hsd", "randomised_tukey_hsd")
#: the tests whose interval is their own, not the t interval
OWN_INTERVAL = ("bootstrap", "tukey_hsd")


@dataclass(frozen=True)
class Block:
    """One metric's per-query values on one collection: runs (spec order) by queries (query-id
    order); NaN where a run has no value."""

    collection: str
    metric: str
    aggregator: str
    runs: tuple[str, ...]
    values: np.ndarray


def compare_block(block: Block, plan: ComparePlan, where: str) -> dict:
    """The block's rows as columns: for each test (spec order), each pair (plan order; for the
    tests of all pairs, the plan's pairs first, then the others). `where` names the compare
    section in messages."""
    pairwise = [test for test in plan.tests if test not in ALL_PAIRS]
    parts = _pairwise(block, plan, pairwise, where) if pairwise else {}
    for test in (test for test in plan.tests if test in ALL_PAIRS):
        parts[test] = _all_pairs(block, plan, test, where)
    return _columns(block, [(test, *parts[test]) for test in plan.tests])


def _pairwise(block: Block, plan: ComparePlan, tests: list[str], where: str) -> dict[str, tuple]:
    """(pairs, described, found) of each paired test: each pair on the queries it shares."""
    pairs = plan.pairs(block.runs)
    first, second = _indices(block, pairs)
    shared = np.isfinite(block.values[first]) & np.isfinite(block.values[second])
    _check_shared(block, pairs, shared.sum(axis=1), where)
    described = {name: np.empty(len(pairs)) for name in DESCRIBED}
    tested = {test: _empty(len(pairs)) for test in tests}
    for rows, queries in _groups(shared):
        a, b = block.values[first[rows]][:, queries], block.values[second[rows]][:, queries]
        for name, value in _describe(a, b, block.aggregator, plan.alpha).items():
            described[name][rows] = value
        means = described["mean"][rows], described["baseline_mean"][rows]
        group = _Group(block, first[rows], second[rows], queries, *means)
        for test in tests:
            for name, value in _test(test, group, plan, where).items():
                tested[test][name][rows] = value
    return {test: (pairs, described, tested[test]) for test in tests}


def _indices(block: Block, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    first = np.array([block.runs.index(run) for run, _ in pairs], dtype=np.int64)
    second = np.array([block.runs.index(base) for _, base in pairs], dtype=np.int64)
    return first, second


def _all_pairs(block: Block, plan: ComparePlan, test: str, where: str) -> tuple:
    """(pairs, described, found) of a test of all pairs at once (`tukey`), on the queries every
    run of the collection has a value for."""
    planned = plan.pairs(block.runs)
    seen = {frozenset(pair) for pair in planned}
    pairs = planned + [pair for pair in all_pairs(block.runs) if frozenset(pair) not in seen]
    first, second = _indices(block, pairs)
    queries = np.flatnonzero(np.isfinite(block.values).all(axis=0))
    _check_every_run(block, len(queries), where)
    a, b = block.values[first][:, queries], block.values[second][:, queries]
    described = _describe(a, b, block.aggregator, plan.alpha)
    group = _Group(block, first, second, queries, described["mean"], described["baseline_mean"])
    found = _empty(len(pairs))
    found.update(_tukey(test, group, plan, described))
    return pairs, described, found


def _check_every_run(block: Block, n: int, where: str) -> None:
    if n < 2:
        raise InputDataError(
            f"{where}: the {len(block.runs)} runs of collection '{block.collection}' share {n} "
            f"{'query' if n == 1 else 'queries'} with a value of {block.metric}; Tukey's HSD "
            "compares all runs on the queries they share, and needs at least 2 (see "
            "settings.queries)"
        )


def _tukey(test: str, g: _Group, plan: ComparePlan, described: dict) -> dict[str, np.ndarray]:
    """p-values, interval and samples of a Tukey test over the group's pairs."""
    values = g.scaled(np.arange(len(g.block.runs)))
    if test == "tukey_hsd":
        p, half = tukey.tukey_hsd(values, g.first, g.second, plan.alpha)
        means = values.mean(axis=1)
        center = means[g.first] - means[g.second] if _gmean(g) else described["difference"]
        low, high = center - half, center + half
        if _gmean(g):
            low, high = _on_difference(low, high, g.mean, g.baseline_mean)
        return {"p_value": p, "ci_low": low, "ci_high": high, "samples": np.nan}
    n, runs = values.shape[1], values.shape[0]
    bits = streams.stream(plan.seed, g.block.collection, g.block.metric, test, n)
    chunks = streams.permutations(bits, plan.samples, n, runs)
    p, samples = tukey.randomised_tukey_hsd(values, g.first, g.second, chunks)
    return {"p_value": p, "ci_low": described["t_low"], "ci_high": described["t_high"],
            "samples": samples}  # fmt: skip


def _gmean(g: _Group) -> bool:
    return g.block.aggregator == "gmean"


def _empty(size: int) -> dict[str, np.ndarray]:
    return {"p_value": np.empty(size), "ci_low": np.empty(size), "ci_high": np.empty(size),
            "samples": np.empty(size)}  # fmt: skip


def _check_shared(block: Block, pairs: list, counts: np.ndarray, where: str) -> None:
    for (run, base), n in zip(pairs, counts, strict=True):
        if n < 2:
            raise InputDataError(
                f"{where}: run '{run}' and baseline '{base}' share {n} "
                f"{'query' if n == 1 else 'queries'} with a value of {block.metric} in collection "
                f"'{block.collection}'; a paired test needs at least 2 (see settings.queries)"
            )


def _groups(shared: np.ndarray):
    """(pair rows, query columns) of the pairs compared on the same queries."""
    if shared.all():  # the usual case (queries: qrels): one group, without sorting the masks
        yield np.arange(len(shared)), np.arange(shared.shape[1])
        return
    masks, inverse = np.unique(shared, axis=0, return_inverse=True)
    for g, mask in enumerate(masks):
        yield np.flatnonzero(inverse.ravel() == g), np.flatnonzero(mask)


def _scale(values: np.ndarray, aggregator: str) -> np.ndarray:
    return np.log(np.maximum(values, FLOOR)) if aggregator == "gmean" else values


def _mean(values: np.ndarray) -> np.ndarray:
    # Summed left to right in query-id order, as the aggregate sums: the means print the same.
    return np.cumsum(values, axis=1)[:, -1] / values.shape[1]


def _describe(a: np.ndarray, b: np.ndarray, aggregator: str, alpha: float) -> dict:
    """Means, difference, effect size, wins/ties/losses and the t interval of each pair."""
    sa, sb = _scale(a, aggregator), _scale(b, aggregator)
    ma, mb = _mean(sa), _mean(sb)
    d = sa - sb
    gmean = aggregator == "gmean"
    mean, baseline_mean = (np.exp(ma), np.exp(mb)) if gmean else (ma, mb)
    difference = mean - baseline_mean
    low, high = paired.t_interval(d, ma - mb if gmean else difference, alpha)
    if gmean:
        low, high = _on_difference(low, high, mean, baseline_mean)
    return {"n_queries": a.shape[1], "mean": mean, "baseline_mean": baseline_mean,
            "difference": difference, "effect_size": paired.effect_size(d),
            "wins": np.count_nonzero(a > b, axis=1), "ties": np.count_nonzero(a == b, axis=1),
            "losses": np.count_nonzero(a < b, axis=1), "t_low": low, "t_high": high}  # fmt: skip


def _on_difference(low, high, mean, baseline_mean):
    """An interval of the mean log-difference as one of the difference of geometric means."""
    scale = 2 * np.sqrt(mean * baseline_mean)
    return scale * np.sinh(low / 2), scale * np.sinh(high / 2)


@dataclass(frozen=True)
class _Group:
    """Pairs of a block compared on the same queries."""

    block: Block
    first: np.ndarray
    second: np.ndarray
    queries: np.ndarray
    mean: np.ndarray
    baseline_mean: np.ndarray

    def scaled(self, rows: np.ndarray) -> np.ndarray:
        values = self.block.values[rows][:, self.queries]
        return _scale(values, self.block.aggregator)


def _test(test: str, g: _Group, plan: ComparePlan, where: str) -> dict[str, np.ndarray]:
    """p-values, interval and samples of one test for a group's pairs."""
    if test in ("randomization", "bootstrap"):
        return _resampled(test, g, plan, where)
    a, b = g.scaled(g.first), g.scaled(g.second)
    p = {"t": paired.t_test, "sign": paired.sign_test}.get(test)
    return {"p_value": paired.wilcoxon_test(a, b) if p is None else p(a - b),
            "samples": np.nan}  # fmt: skip


def _resampled(test: str, g: _Group, plan: ComparePlan, where: str) -> dict[str, np.ndarray]:
    """The randomization or bootstrap test of a group: each run's values once, pairs as indices."""
    runs = np.union1d(g.first, g.second)  # sorted: pairs of adjacent runs stay adjacent
    values = g.scaled(runs).T
    first, second = np.searchsorted(runs, g.first), np.searchsorted(runs, g.second)
    n = len(g.queries)
    bits = streams.stream(plan.seed, g.block.collection, g.block.metric, test, n)
    if test == "bootstrap":
        counts = streams.resample_counts(bits, plan.samples, n)
        found = resampling.bootstrap(values, first, second, counts, plan.alpha)
        low, high = _bootstrap_interval(found, g)
        return {"p_value": found.p, "ci_low": low, "ci_high": high, "samples": plan.samples}
    exact = plan.samples == "exact"
    if exact and n > EXACT_MAX_QUERIES:
        raise SpecError(
            f"{where}.samples: exact enumerates all 2^n sign flips, for at most "
            f"{EXACT_MAX_QUERIES} queries; {g.block.metric} in collection "
            f"'{g.block.collection}' has {n}: give a number of samples (e.g. 100000)"
        )
    flips = streams.all_flips(n) if exact else streams.sign_flips(bits, plan.samples, n)
    found = resampling.randomization(values, first, second, flips, exact)
    return {"p_value": found.p, "samples": 2**n if exact else plan.samples}


def _bootstrap_interval(found: resampling.Resampled, g: _Group):
    if g.block.aggregator == "gmean":
        return _on_difference(found.low, found.high, g.mean, g.baseline_mean)
    return found.low, found.high


def _columns(block: Block, parts: list[tuple]) -> dict[str, np.ndarray]:
    """The block's rows, test by test, from each test's (test, pairs, described, found); the
    interval is the t interval unless the test has its own (the bootstrap's percentile interval,
    Tukey's simultaneous one)."""
    out: dict[str, np.ndarray | list] = {
        "collection": [block.collection for _, pairs, _, _ in parts for _ in pairs],
        "run": [run for _, pairs, _, _ in parts for run, _ in pairs],
        "baseline": [base for _, pairs, _, _ in parts for _, base in pairs],
        "metric": [block.metric for _, pairs, _, _ in parts for _ in pairs],
        "test": [test for test, pairs, _, _ in parts for _ in pairs],
    }
    for test, _, described, found in parts:
        if test not in OWN_INTERVAL:
            found["ci_low"], found["ci_high"] = described["t_low"], described["t_high"]
    for name in DESCRIBED[:8]:
        out[name] = np.concatenate(
            [np.broadcast_to(d[name], len(pairs)) for _, pairs, d, _ in parts]
        )
    for name in ("p_value", "ci_low", "ci_high", "samples"):
        out[name] = np.concatenate(
            [np.broadcast_to(f[name], len(pairs)) for _, pairs, _, f in parts]
        )
    return out
