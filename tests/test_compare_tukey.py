"""Tukey's HSD and the randomised Tukey HSD: every pair of a collection's runs, against
statsmodels' `pairwise_tukeyhsd` and a plain loop over the same permutations, on generated
collections with ties and missing queries; the family-wise error is the test's, so the table's
`correction` says none; both doors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from statsmodels.stats.multicomp import pairwise_tukeyhsd
from test_compare import collection_spec, rows_of, run_spec

from pipeline import SpecError, evaluate
from pipeline.compare import streams, tukey


def shared_values(evaluation, metric: str) -> dict[str, np.ndarray]:
    """Each run's values of `metric` on the queries every run has a value for (query-id order)."""
    found: dict[str, dict[str, float]] = {}
    for run, _, qid, m, value in evaluation.per_query():
        if m == metric and value is not None:
            found.setdefault(run, {})[qid] = value
    queries = sorted(set.intersection(*(set(v) for v in found.values())))
    return {run: np.array([v[q] for q in queries]) for run, v in found.items()}


def by_pair(rows: list[dict], test: str, metric: str) -> dict[tuple[str, str], dict]:
    return {
        (r["run"], r["baseline"]): r for r in rows if (r["test"], r["metric"]) == (test, metric)
    }


@pytest.mark.parametrize("queries", ["qrels", "intersection"])
def test_tukey_hsd_is_statsmodels_pairwise_tukeyhsd(tmp_path, queries):
    spec = collection_spec(tmp_path, runs=4, baseline="run2", tests=["tukey_hsd", "t"],
                           metrics=["AP", "P@10"], alpha=0.1)  # fmt: skip
    spec["settings"] = {"queries": queries}
    rows, evaluation = run_spec(tmp_path, spec)
    for metric in ("AP", "P@10"):
        values = shared_values(evaluation, metric)
        names = sorted(values)
        n = len(values[names[0]])
        assert n < 30 if queries == "intersection" else n == 30
        found = pairwise_tukeyhsd(np.concatenate([values[r] for r in names]),
                                  np.repeat(names, n), alpha=0.1)  # fmt: skip
        rows_by_pair = by_pair(rows, "tukey_hsd", metric)
        assert len(rows_by_pair) == 6  # every pair of four runs, not only the baseline's
        for i, (a, b) in enumerate(itertools.combinations(names, 2)):
            row = rows_by_pair.get((b, a)) or rows_by_pair[a, b]
            sign = 1 if (row["run"], row["baseline"]) == (b, a) else -1  # statsmodels: b - a
            low, high = sorted(sign * found.confint[i])
            assert abs(row["p_value"] - found.pvalues[i]) < 1e-12
            assert abs(row["ci_low"] - low) < 1e-12 and abs(row["ci_high"] - high) < 1e-12
            assert abs(row["difference"] - sign * found.meandiffs[i]) < 1e-12
            assert row["significant"] == found.reject[i] and row["n_queries"] == n


def test_the_tukey_tests_correct_nothing_and_list_the_baselines_pairs_first(tmp_path):
    spec = collection_spec(tmp_path, runs=4, baseline="run2",
                           tests=["t", "tukey_hsd", "randomised_tukey_hsd"], metrics=["AP"],
                           samples=200)  # fmt: skip
    rows, _ = run_spec(tmp_path, spec)
    for row in rows:
        tukey_test = row["test"] != "t"
        assert row["correction"] == ("none" if tukey_test else "holm")
        assert (row["p_adjusted"] == row["p_value"]) or not tukey_test
        assert row["significant"] == (row["p_adjusted"] <= 0.05)
    pairs = [(r["run"], r["baseline"]) for r in rows if r["test"] == "tukey_hsd"]
    assert pairs == [("run0", "run2"), ("run1", "run2"), ("run3", "run2"), ("run1", "run0"),
                     ("run3", "run0"), ("run3", "run1")]  # fmt: skip
    assert [(r["run"], r["baseline"]) for r in rows if r["test"] == "t"] == pairs[:3]
    assert {r["samples"] for r in rows if r["test"] == "randomised_tukey_hsd"} == {200}


def hand_randomised(values: np.ndarray, chunks, pairs) -> list[float]:
    """Carterette's randomised Tukey HSD as a plain loop: per sample, each query's values
    permuted among the runs; the range of the run means against each pair's difference."""
    runs, n = values.shape
    means = [sum(values[r, q] for q in range(n)) / n for r in range(runs)]
    reaching, samples = [0] * len(pairs), 0
    for chunk in chunks:
        for permutation in chunk:
            permuted = [
                sum(values[permutation[q][r], q] for q in range(n)) / n for r in range(runs)
            ]
            spread = max(permuted) - min(permuted)
            for i, (a, b) in enumerate(pairs):
                reaching[i] += spread >= abs(means[a] - means[b]) - 1e-12
            samples += 1
    return [(count + 1) / (samples + 1) for count in reaching]


def test_randomised_tukey_hsd_is_the_plain_loop_over_the_same_permutations():
    rng = np.random.default_rng(5)
    values = rng.integers(0, 4, size=(4, 9)) / 4  # many ties, within and across runs
    values[2] += 0.25  # one run better, so that some pairs reach and some do not
    pairs = list(itertools.combinations(range(4), 2))
    first, second = (np.array(side) for side in zip(*pairs, strict=True))
    stream = lambda: streams.permutations(streams.stream(3, "c", "P@10", "x", 9), 700, 9, 4)  # noqa: E731
    p, samples = tukey.randomised_tukey_hsd(values, first, second, stream())
    assert samples == 700
    assert p.tolist() == hand_randomised(values, stream(), pairs)
    assert 0 < min(p) < 0.05 < max(p)


def test_randomised_tukey_hsd_in_the_table_is_the_plain_loop(tmp_path):
    spec = collection_spec(tmp_path, runs=3, queries=12, tests=["randomised_tukey_hsd"],
                           metrics=["P@10", "nDCG@10"], samples=300)  # fmt: skip
    spec["settings"] = {"queries": "intersection"}
    spec["compare"]["seed"] = 4  # (collection_spec's own seed is the generator's)
    rows, evaluation = run_spec(tmp_path, spec)
    for metric in ("P@10", "nDCG@10"):
        values = shared_values(evaluation, metric)
        names = sorted(values)
        matrix = np.array([values[r] for r in names])
        n = matrix.shape[1]
        found = by_pair(rows, "randomised_tukey_hsd", metric)
        pairs = [(names.index(run), names.index(base)) for run, base in found]
        chunks = streams.permutations(streams.stream(4, "c", metric, "randomised_tukey_hsd", n),
                                      300, n, 3)  # fmt: skip
        expected = hand_randomised(matrix, chunks, pairs)
        assert all(row["n_queries"] == n for row in found.values())
        assert [row["p_value"] for row in found.values()] == pytest.approx(expected, abs=1e-15)


def test_the_python_door_gives_the_spec_doors_tukey_table(tmp_path):
    spec = collection_spec(tmp_path, runs=3, tests=["tukey_hsd", "randomised_tukey_hsd"],
                           metrics=["AP", "gmAP"], samples=100)  # fmt: skip
    rows, _ = run_spec(tmp_path, spec)
    runs = {name: str(tmp_path / run["path"]) for name, run in spec["runs"].items()}
    results = evaluate(qrels={"c": str(tmp_path / "qrels.txt")}, runs=runs,
                       metrics=spec["metrics"], compare=spec["compare"])  # fmt: skip
    assert rows_of(results.evaluation.con, "SELECT * FROM comparison") == rows
    gmap = [r for r in rows if r["metric"] == "gmAP"]
    assert all(r["ci_low"] <= r["difference"] <= r["ci_high"] for r in gmap)


def test_exact_samples_are_refused_for_the_randomised_tukey_hsd(tmp_path):
    spec = collection_spec(tmp_path, runs=3, tests=["randomised_tukey_hsd"], samples="exact")
    with pytest.raises(SpecError, match=r"compare\.samples: exact .*; randomised_tukey_hsd needs a number of samples"):  # fmt: skip
        run_spec(tmp_path, spec)
