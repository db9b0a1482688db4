"""Several baselines (`compare.baseline` as a list): each against every other run of its
collection, a pair of two baselines once, one family per metric and test; through both doors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import irpipe_inprocess
from scipy import stats
from statsmodels.stats.multitest import multipletests
from test_compare import collection_spec, per_query, rows_of, run_spec

from pipeline import SpecError, evaluate
from pipeline.compare.plan import ComparePlan


def plan_of(baseline) -> ComparePlan:
    return ComparePlan(baseline, ("t",), "holm", 0.05, 1000, 0, None, (), ())


def test_each_baseline_meets_every_other_run_and_two_baselines_meet_once():
    runs = ("a", "b", "c", "d")
    assert plan_of(("c", "a")).pairs(runs) == [
        ("a", "c"), ("b", "c"), ("d", "c"), ("b", "a"), ("d", "a"),
    ]  # fmt: skip
    assert plan_of("c").pairs(runs) == plan_of(("c",)).pairs(runs) == [("a", "c"), ("b", "c"), ("d", "c")]  # fmt: skip
    assert plan_of(("c", "z")).pairs(runs) == plan_of("c").pairs(runs)  # z: another collection's
    assert plan_of(("c", "a")).references(runs) == ("c", "a")
    assert plan_of(None).references(runs) == ("a",)


def test_two_baselines_give_scipys_numbers_and_one_family_per_metric_and_test(tmp_path):
    spec = collection_spec(tmp_path, runs=4, baseline=["run2", "run0"], tests=["t", "wilcoxon"],
                           metrics=["AP", "nDCG@10"])  # fmt: skip
    rows, evaluation = run_spec(tmp_path, spec)
    pairs = [(r["run"], r["baseline"]) for r in rows if (r["metric"], r["test"]) == ("AP", "t")]
    assert pairs == [("run0", "run2"), ("run1", "run2"), ("run3", "run2"), ("run1", "run0"),
                     ("run3", "run0")]  # fmt: skip
    reference = {"t": stats.ttest_rel, "wilcoxon": stats.wilcoxon}
    for (metric, test), family in _families(rows).items():
        values = per_query(evaluation, metric)
        for row in family:
            p = reference[test](values[row["run"]], values[row["baseline"]]).pvalue
            assert abs(row["p_value"] - p) < 1e-12
        reject, adjusted, _, _ = multipletests([r["p_value"] for r in family], 0.05, "holm")
        assert np.allclose([r["p_adjusted"] for r in family], adjusted, rtol=0, atol=1e-15)
        assert [r["significant"] for r in family] == list(reject)


def _families(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    families: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        families.setdefault((row["metric"], row["test"]), []).append(row)
    assert all(len(family) == 5 for family in families.values())
    return families


def test_the_python_door_gives_the_spec_doors_table(tmp_path):
    spec = collection_spec(tmp_path, runs=3, baseline=["run1", "run2"], tests=["t"],
                           metrics=["AP"])  # fmt: skip
    rows, _ = run_spec(tmp_path, spec)
    runs = {name: str(tmp_path / run["path"]) for name, run in spec["runs"].items()}
    results = evaluate(qrels={"c": str(tmp_path / "qrels.txt")}, runs=runs,
                       metrics=spec["metrics"], compare=spec["compare"])  # fmt: skip
    assert rows_of(results.evaluation.con, "SELECT * FROM comparison") == rows
    assert [(r["run"], r["baseline"]) for r in rows] == [("run0", "run1"), ("run2", "run1"),
                                                         ("run0", "run2")]  # fmt: skip


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        (["run0", "rn1"], r"compare\.baseline\.1: unknown run 'rn1'; did you mean 'run1'\?"),
        ([], r"compare\.baseline: an empty list of baselines"),
        (["run0", "run0"], r"compare\.baseline: a baseline is listed twice"),
    ],
)
def test_a_bad_list_of_baselines_is_a_spec_error_naming_its_key(tmp_path, baseline, message):
    spec = collection_spec(tmp_path, runs=2, baseline=baseline, tests=["t"], metrics=["AP"])
    with pytest.raises(SpecError, match=message):
        run_spec(tmp_path, spec)


def test_a_significant_gate_names_the_baselines_to_add(tmp_path):
    spec = collection_spec(tmp_path, runs=3, baseline=["run0"], tests=["t"], metrics=["AP"])
    spec["gates"] = [{"metric": "AP", "against": {"run": "run1"}, "run": "run2", "max_drop": 0.1,
                      "significant": True}]  # fmt: skip
    with pytest.raises(SpecError, match=r"its baselines are run0\); add it: compare\.baseline: \[run0, run1\]"):  # fmt: skip
        run_spec(tmp_path, spec)


def test_the_command_line_runs_a_spec_with_two_baselines(tmp_path):
    spec = collection_spec(tmp_path, runs=3, baseline=["run0", "run1"], tests=["t"],
                           metrics=["AP"])  # fmt: skip
    run_spec(tmp_path, spec)
    result = irpipe_inprocess("run", "--quiet", tmp_path / "spec.yaml")
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "out/comparison.csv").read_text().splitlines()
    assert [line.split(",")[1:3] for line in lines[1:]] == [["run1", "run0"], ["run2", "run0"],
                                                            ["run2", "run1"]]  # fmt: skip


def test_a_mark_says_better_by_the_metrics_direction(tmp_path):
    """Fallout is better lower: a run significantly below the baseline's fallout is ▲, as a run
    significantly above its AP is."""
    spec = collection_spec(
        tmp_path, runs=4, baseline="run0", tests=["t"], correction="none", alpha=0.5
    )  # fmt: skip (at 0.05 no fallout differs on 30 queries)
    spec["metrics"] = ["AP", "Fallout@5"]
    spec["collections"]["c"]["num_docs"] = 1000
    rows, evaluation = run_spec(tmp_path, spec)
    marks = evaluation.significance().marks
    better = {"AP": 1, "Fallout@5": -1}
    significant = [r for r in rows if r["significant"]]
    assert {r["metric"] for r in significant} == set(better)
    assert {r["difference"] < 0 for r in significant if r["metric"] == "Fallout@5"} == {True}
    for row in rows:
        up = better[row["metric"]] * row["difference"] > 0
        expected = ("▲" if up else "▼") if row["significant"] else None
        assert marks.get(("c", row["run"], row["metric"])) == expected
