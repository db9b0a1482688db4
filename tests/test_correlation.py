"""Correlation of two orderings of the runs (`correlation:`, and the orderings of each agreement
entry), checked against scipy's kendalltau, spearmanr and pearsonr, the `rbo` package's
RankingSimilarity(...).rbo_ext(p), and tau_ap computed by hand: Yilmaz et al.'s formula on strict
orders, averaged over every order of the tied runs. On generated values with ties, on generated
runs (some identical, so the systems' ordering ties), and with the bootstrap's intervals checked
against a plain loop over the same draws."""

from __future__ import annotations

import itertools
import json
import re

import duckdb
import numpy as np
import pytest
from conftest import irpipe_inprocess
from rbo import RankingSimilarity
from scipy import stats

import pipeline
from pipeline.agreement.orderings import ORDERING_STATISTICS, ordering_statistics
from pipeline.agreement.plan import AgreementPlan, CorrelationEntry, Ordering, Side
from pipeline.agreement.tables import compare_judgment_sets
from pipeline.compare.streams import resample_counts, stream
from pipeline.run.evaluation import evaluate
from pipeline.run.preflight import compile_spec
from pipeline.synthetic import generate, llm_judgments, write_qrels, write_run

TOLERANCE = 1e-12


# -- tau_ap by hand ----------------------------------------------------------------------------


def yilmaz(truth: list[int], judged: list[int]) -> float:
    """tau_ap of two strict orders (best first): 2/(N-1) sum_{i>=2} C(i)/(i-1) - 1."""
    place = {run: k for k, run in enumerate(truth)}
    total = sum(
        sum(place[judged[j]] < place[judged[i]] for j in range(i)) / i
        for i in range(1, len(judged))
    )
    return 2 * total / (len(judged) - 1) - 1


def strict_orders(values: np.ndarray):
    """Every order of the runs, best first, that breaks the ties of `values`."""
    groups = [np.flatnonzero(values == v) for v in sorted(set(values), reverse=True)]
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [run for order in orders for run in order]


def tau_ap_by_hand(reference: np.ndarray, other: np.ndarray) -> float:
    found = [yilmaz(t, j) for t in strict_orders(reference) for j in strict_orders(other)]
    return float(np.mean(found))


def test_tau_ap_of_a_worked_example_and_it_is_not_symmetric():
    # truth A > B > C; judged B > C > A: C's one run above (B) is above in the truth: 1/1; A's
    # two (B, C) are not: 0/2; tau_ap = 2/2 (1 + 0) - 1 = 0. The other way round: -0.5.
    a, b = np.array([3.0, 2.0, 1.0]), np.array([1.0, 3.0, 2.0])
    assert ordering_statistics(a[:, None], b[:, None], 0.9)[0]["tau_ap"][0] == 0.0
    assert ordering_statistics(b[:, None], a[:, None], 0.9)[0]["tau_ap"][0] == -0.5
    # truth A > B > C > D, judged B > A > C > D: (0/1 + 2/2 + 3/3) 2/3 - 1 = 1/3; tau_b = 2/3
    x, y = np.array([4.0, 3.0, 2.0, 1.0]), np.array([3.0, 4.0, 2.0, 1.0])
    found = ordering_statistics(x[:, None], y[:, None], 0.9)[0]
    assert found["tau_ap"][0] == pytest.approx(1 / 3, abs=TOLERANCE)
    assert found["kendall_tau_b"][0] == pytest.approx(2 / 3, abs=TOLERANCE)


def test_tau_ap_with_ties_is_the_mean_over_the_orders_of_the_tied_runs():
    rng = np.random.default_rng(0)
    for _ in range(300):
        runs = int(rng.integers(3, 7))
        x, y = (rng.integers(0, 4, runs).astype(float) for _ in range(2))
        found = ordering_statistics(x[:, None], y[:, None], 0.9)[0]["tau_ap"][0]
        assert found == pytest.approx(tau_ap_by_hand(x, y), abs=TOLERANCE), (x, y)


# -- the other statistics against scipy and rbo -------------------------------------------------


def expected(x: np.ndarray, y: np.ndarray, p: float) -> dict[str, float]:
    """scipy's and rbo's values; rbo on the orders with ties broken by position (run name)."""
    constant = np.ptp(x) == 0 or np.ptp(y) == 0
    by_name = np.arange(len(x))
    return {
        "kendall_tau_b": stats.kendalltau(x, y).statistic,
        "spearman": np.nan if constant else stats.spearmanr(x, y).statistic,
        "pearson": np.nan if constant else stats.pearsonr(x, y).statistic,
        "rbo": RankingSimilarity(list(np.lexsort((by_name, -x))),
                                 list(np.lexsort((by_name, -y)))).rbo_ext(p),
    }  # fmt: skip


def assert_close(found: float, value: float, name: str = "") -> None:
    if np.isnan(value):
        assert found is None or np.isnan(found), name
    else:
        assert found == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), name


@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_every_statistic_is_scipy_s_and_rbo_s_on_values_with_ties(p):
    rng = np.random.default_rng(int(p * 100))
    for trial in range(200):
        runs = int(rng.integers(3, 30))
        x = rng.integers(0, 6, runs).astype(float) if trial % 2 else rng.random(runs)
        y = x + rng.normal(0, 0.3, runs) if trial % 3 else rng.integers(0, 3, runs).astype(float)
        found = ordering_statistics(x[:, None], y[:, None], p)[0]
        for name, value in expected(x, y, p).items():
            assert_close(found[name][0], value, name)


def test_the_largest_rank_drop_and_the_run_that_falls():
    # ranks (1 + runs strictly better): reference 1, 2, 2, 4, 5; other 4, 1, 2, 2, 5
    x = np.array([5.0, 4.0, 4.0, 3.0, 1.0])
    y = np.array([2.0, 9.0, 3.0, 3.0, 1.0])
    found, fallen = ordering_statistics(x[:, None], y[:, None], 0.9)
    assert found["max_rank_drop"][0] == 3.0 and fallen[0] == 0
    found, fallen = ordering_statistics(x[:, None], x[:, None], 0.9)
    assert found["max_rank_drop"][0] == 0.0 and fallen[0] == -1  # none falls
    # two runs fall two places: the reference's better one is named
    found, fallen = ordering_statistics(np.array([[4.0], [3.0], [2.0], [1.0]]),
                                        np.array([[2.0], [1.0], [4.0], [3.0]]), 0.9)  # fmt: skip
    assert found["max_rank_drop"][0] == 2.0 and fallen[0] == 0


def test_many_samples_at_once_are_each_sample_alone():
    """Statistics are vectorized over samples, in chunks: each column as if alone."""
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 8, (40, 1500)).astype(float), rng.random((40, 1500))
    together, fallen = ordering_statistics(x, y, 0.8)
    for s in (0, 654, 655, 1499):  # across the chunks' edges
        alone, one = ordering_statistics(x[:, s : s + 1], y[:, s : s + 1], 0.8)
        assert fallen[s] == one[0]
        for name in ORDERING_STATISTICS:
            assert_close(together[name][s], alone[name][0], name)


# -- through a spec --------------------------------------------------------------------------


def collection_dir(tmp_path, seed: int = 4) -> list[str]:
    """A qrels and six runs of differing skill, two of them the same file (tied runs)."""
    made = generate(seed, queries=25, runs=5, skill=(0.0, 1.0, 2.0, 3.0, 1.0))
    write_qrels(made.qrels, tmp_path / "qrels.txt")
    names = []
    for i, run in enumerate(made.runs.values()):
        write_run(run, tmp_path / f"r{i}.trec")
        names.append(f"r{i}")
    write_run(made.runs["run1"], tmp_path / "copy.trec")  # ties r1 under every metric
    return [*names, "copy"]


def correlation_spec(names: list[str], **entry) -> dict:
    return {
        "collections": {"c": {"qrels": "qrels.txt"}},
        "runs": {name: {"path": f"{name}.trec", "collection": "c"} for name in names},
        "metrics": ["AP", "P@10", "nDCG@10", "RR"],
        "correlation": [{"reference": "AP", "other": "P@10", **entry},
                        {"reference": "nDCG@10", "other": "RR", "rbo_p": 0.5}],
    }  # fmt: skip


def test_a_spec_s_correlations_are_scipy_s_and_rbo_s_on_its_aggregates(tmp_path, write_spec):
    names = collection_dir(tmp_path)
    evaluation = evaluate(write_spec(correlation_spec(names)), write=False)
    values = {(run, metric): value for run, _, metric, value, _ in evaluation.aggregate()}
    ordered = sorted(names)
    rows = evaluation.rows("correlation")
    assert len(rows) == 2 * len(ORDERING_STATISTICS)
    for reference, other, p in (("AP", "P@10", 0.9), ("nDCG@10", "RR", 0.5)):
        x = np.array([values[run, reference] for run in ordered])
        y = np.array([values[run, other] for run in ordered])
        found = {row[4]: row[5] for row in rows if row[:4] == (reference, other, "c", None)}
        wanted = {**expected(x, y, p), "tau_ap": tau_ap_by_hand(x, y)}
        for name, value in wanted.items():
            assert_close(found[name], value, name)
    assert values["r1", "AP"] == values["copy", "AP"]  # the systems' ordering ties


def test_compile_shows_the_entries_and_the_stage_and_outputs_write_the_table(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=9)
    spec = correlation_spec(names, bootstrap=20)
    spec["outputs"] = [
        {"path": f"out/c.{suffix}", "level": "correlation"} for suffix in ("csv", "md")
    ]
    text = compile_spec(write_spec(spec)).text()
    assert "-- correlation {" in text and '"orderings": ["AP ~ P@10 in c"]' in text
    assert re.search(r"-- stage \d+: agree: compare the judgment sets' labels", text)
    evaluate(write_spec(spec))
    markdown = (tmp_path / "out" / "c.md").read_text().splitlines()
    assert markdown[0] == ("| reference | other | collection | metric | statistic | value | "
                           "ci_low | ci_high | run |")  # fmt: skip
    assert markdown[2].startswith("| AP | P@10 | c |  | kendall_tau_b | ")
    csv = (tmp_path / "out" / "c.csv").read_text().splitlines()
    assert len(csv) == 1 + 2 * len(ORDERING_STATISTICS)


def test_the_bootstrap_s_intervals_are_a_plain_loop_s_over_the_same_draws(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=11)
    spec = correlation_spec(names, bootstrap=300, seed=7, alpha=0.1)
    evaluation = evaluate(write_spec(spec), write=False)
    rows = {row[4]: row for row in evaluation.rows("correlation") if row[0] == "AP"}
    per_query = {}
    for run, _, qid, metric, value in evaluation.per_query():
        per_query[run, metric, qid] = value
    ordered, queries = sorted(names), sorted({q for _, _, q in per_query})
    values = {m: np.array([[per_query[r, m, q] for q in queries] for r in ordered])
              for m in ("AP", "P@10")}  # fmt: skip
    bits = stream(7, json.dumps(["AP", "P@10", "c"]), "", "correlation", len(queries))
    samples = {name: [] for name in ORDERING_STATISTICS}
    for counts in resample_counts(bits, 300, len(queries)):
        for weights in counts:
            x, y = (values[m] @ weights / weights.sum() for m in ("AP", "P@10"))
            for name, value in ordering_statistics(x[:, None], y[:, None], 0.9)[0].items():
                samples[name].append(value[0])
    for name, found in samples.items():
        kept = np.array(found)[np.isfinite(found)]
        low, high = np.quantile(kept, [0.05, 0.95])
        assert rows[name][6] == pytest.approx(low, abs=TOLERANCE), name
        assert rows[name][7] == pytest.approx(high, abs=TOLERANCE), name
    assert rows["rbo"][6] <= rows["rbo"][5] <= rows["rbo"][7]


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=12)
    intervals = []
    for seed in (1, 1, 2):
        spec = correlation_spec(names, bootstrap=200, seed=seed)
        rows = evaluate(write_spec(spec), write=False).rows("correlation")
        intervals.append([row[6:8] for row in rows if row[0] == "AP"])
    assert intervals[0] == intervals[1] != intervals[2]


def test_the_python_door_gives_the_spec_s_correlations(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=13)
    spec = correlation_spec(names, bootstrap=100)
    expected_rows = evaluate(write_spec(spec), write=False).rows("correlation")
    results = pipeline.evaluate(
        qrels={"c": str(tmp_path / "qrels.txt")},
        runs={name: str(tmp_path / f"{name}.trec") for name in names},
        metrics=spec["metrics"],
        correlation=spec["correlation"],
    )
    assert [tuple(row) for row in results.correlation(to="rows")] == expected_rows


# -- orderings of two judgment sets, matched by run name -----------------------------------------


def two_sets_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The tables of an evaluation of four runs under two sets, by hand: `aggregate`, `per_query`
    (set b lacks query q3), and an empty `qrels`."""
    con.execute("CREATE TABLE qrels (collection VARCHAR, qid VARCHAR, docno VARCHAR, rel INTEGER)")
    con.execute("CREATE TABLE per_query (run VARCHAR, collection VARCHAR, qid VARCHAR, "
                "metric VARCHAR, value DOUBLE)")  # fmt: skip
    rng = np.random.default_rng(5)
    rows = [(run, c, q, "AP", float(rng.random()))
            for run in ("w", "x", "y", "z") for c in ("a", "b") for q in ("q1", "q2", "q3", "q4")
            if (c, q) != ("b", "q3")]  # fmt: skip
    con.executemany("INSERT INTO per_query VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE aggregate AS SELECT run, collection, metric, avg(value) AS value "
                "FROM per_query GROUP BY ALL")  # fmt: skip


def test_two_judgment_sets_orderings_match_runs_by_name(tmp_path):
    """What an agreement entry's correlations read: each run's aggregate under both sets (the
    runs a list of collections evaluates under both, `collection: [a, b]`)."""
    con = duckdb.connect()
    two_sets_tables(con)
    side = lambda c: Side(c, "AP", "mean", False)  # noqa: E731
    entry = CorrelationEntry(("agreement", 0), "a", "b", (Ordering(side("a"), side("b"), None, "AP"),),
                            0.9, 50, 0, 0.05)  # fmt: skip
    compare_judgment_sets(con, AgreementPlan((), (entry,)), lambda *key: ".".join(map(str, key)))
    rows = con.execute("SELECT * FROM correlation").fetchall()
    means = dict(con.execute("SELECT run || collection, value FROM aggregate").fetchall())
    x, y = (np.array([means[r + c] for r in "wxyz"]) for c in "ab")
    found = {row[4]: row for row in rows}
    assert found["kendall_tau_b"][:4] == ("a", "b", None, "AP")
    for name, value in {**expected(x, y, 0.9), "tau_ap": tau_ap_by_hand(x, y)}.items():
        assert_close(found[name][5], value, name)
    assert all(row[6] is not None and row[6] <= row[7] for row in rows)


def test_an_agreement_entry_correlates_the_runs_evaluated_under_both_sets(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=14)
    human = generate(14, queries=25, runs=0).qrels
    write_qrels(llm_judgments(human, 14), tmp_path / "llm.txt")
    spec = correlation_spec(names)
    del spec["correlation"]
    spec["collections"]["llm"] = {"qrels": "llm.txt"}
    for run in spec["runs"].values():
        run["collection"] = ["c", "llm"]
    spec["agreement"] = [{"reference": "c", "other": "llm", "bootstrap": 100}]
    evaluation = evaluate(write_spec(spec), write=False)
    values = {(r, c, m): v for r, c, m, v, _ in evaluation.aggregate()}
    rows = evaluation.rows("correlation")
    assert {row[3] for row in rows} == set(spec["metrics"])
    ordered = sorted(names)
    for metric in spec["metrics"]:
        x, y = (np.array([values[r, c, metric] for r in ordered]) for c in ("c", "llm"))
        found = {row[4]: row[5] for row in rows if row[3] == metric}
        for name, value in {**expected(x, y, 0.9), "tau_ap": tau_ap_by_hand(x, y)}.items():
            assert_close(found[name], value, name)


def test_irpipe_run_prints_each_ordering_with_its_interval(tmp_path, write_spec):
    names = collection_dir(tmp_path, seed=15)
    spec = write_spec(correlation_spec(names, bootstrap=50))
    done = irpipe_inprocess("run", spec, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = lines.index("Orderings of the runs of c: by P@10 against AP")
    assert lines[first + 1].split() == ["orderings", *ORDERING_STATISTICS]
    assert lines[first + 3].split()[:3] == ["AP", "~", "P@10"]
    assert lines[first + 4].strip().startswith("[")  # the interval under each value
    second = lines.index("Orderings of the runs of c: by RR against nDCG@10")
    assert not lines[second + 4].strip().startswith("[")  # no bootstrap: no interval
