"""Comparing runs end to end: a spec with `compare:` through `irpipe run` on generated collections,
the comparison table checked against scipy on the per-query table, and reproducible across
processes, thread counts and the order of runs in the spec."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
import yaml
from conftest import irpipe_inprocess
from scipy import stats
from statsmodels.stats.multitest import multipletests

from pipeline.compare.table import COLUMNS
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import generate, write_qrels, write_run

ROOT = Path(__file__).resolve().parents[1]
# The issue's list, pasted as it is written there (and `correction`, which issue 44 added).
ISSUE_COLUMNS = (  # noqa: SIM905
    "collection, run, baseline, metric, test, n_queries, mean, baseline_mean, difference, ci_low, "
    "ci_high, p_value, p_adjusted, correction, significant, effect_size, wins, ties, losses, seed, "
    "samples"
).split(", ")


def collection_spec(directory: Path, runs: int = 4, queries: int = 30, seed: int = 7, **compare):
    """A spec over a generated collection whose runs get better with their number; returns it."""
    generated = generate(seed, queries=queries, runs=runs, float32_ties=False,
                         skill=tuple(1.5 * r for r in range(runs)))  # fmt: skip
    write_qrels(generated.qrels, directory / "qrels.txt")
    spec = {"collections": {"c": {"qrels": "qrels.txt"}}, "runs": {}, "compare": compare,
            "metrics": ["AP", "P@10", "nDCG@10", "gmAP"],
            "outputs": [{"path": "out/comparison.csv", "level": "comparison"}]}  # fmt: skip
    for name, run in generated.runs.items():
        write_run(run, directory / f"{name}.trec", tag=name)
        spec["runs"][name] = {"path": f"{name}.trec", "collection": "c"}
    return spec


def run_spec(directory: Path, spec: dict) -> list[dict]:
    (directory / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    evaluation = evaluate(directory / "spec.yaml")
    return rows_of(evaluation.con, "SELECT * FROM comparison"), evaluation


def rows_of(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def per_query(evaluation, metric: str) -> dict[str, np.ndarray]:
    """Each run's values of `metric`, in query-id order."""
    found: dict[str, list] = {}
    for run, _, _, m, value in sorted(evaluation.per_query(), key=lambda r: (r[0], r[2])):
        if m == metric:
            found.setdefault(run, []).append(value)
    return {run: np.array(values) for run, values in found.items()}


def test_the_table_has_the_issues_columns_and_scipys_numbers(tmp_path):
    spec = collection_spec(tmp_path, baseline="run0", tests=["t", "wilcoxon", "sign"])
    rows, evaluation = run_spec(tmp_path, spec)
    assert [name for name, _ in COLUMNS] == ISSUE_COLUMNS
    assert list(rows[0]) == ISSUE_COLUMNS
    assert len(rows) == 3 * 4 * 3  # runs other than the baseline x metrics x tests
    aggregate = {(r, m): v for r, _, m, v, _ in evaluation.aggregate()}
    reference = {"t": lambda a, b: stats.ttest_rel(a, b).pvalue,
                 "wilcoxon": lambda a, b: stats.wilcoxon(a, b).pvalue,
                 "sign": lambda a, b: stats.binomtest(int(np.sum(a > b)), int(np.sum(a != b))).pvalue}  # fmt: skip
    for row in (r for r in rows if r["metric"] != "gmAP"):
        a, b = (
            per_query(evaluation, row["metric"])[row["run"]],
            per_query(evaluation, row["metric"])["run0"],
        )
        assert row["n_queries"] == len(a) == 30 and row["baseline"] == "run0"
        assert row["mean"] == aggregate[row["run"], row["metric"]]  # summed as the aggregate sums
        assert row["baseline_mean"] == aggregate["run0", row["metric"]]
        assert row["difference"] == row["mean"] - row["baseline_mean"]
        assert abs(row["p_value"] - reference[row["test"]](a, b)) < 1e-12
        assert (row["wins"], row["ties"], row["losses"]) == (np.sum(a > b), np.sum(a == b), np.sum(a < b))  # fmt: skip
        d = a - b
        assert abs(row["effect_size"] - d.mean() / d.std(ddof=1)) < 1e-12
        interval = stats.ttest_rel(a, b).confidence_interval(0.95)
        assert abs(row["ci_low"] - interval.low) < 1e-12 and abs(row["ci_high"] - interval.high) < 1e-12  # fmt: skip
        assert row["seed"] == 0 and row["samples"] is None


def test_corrections_run_over_each_metric_and_test(tmp_path):
    spec = collection_spec(tmp_path, runs=5, tests=["t", "sign"], correction="holm")
    rows, _ = run_spec(tmp_path, spec)
    families = {(r["metric"], r["test"]) for r in rows}
    assert len(families) == 4 * 2
    for metric, test in families:
        family = [r for r in rows if (r["metric"], r["test"]) == (metric, test)]
        assert len(family) == 10  # every pair of 5 runs
        reject, adjusted, _, _ = multipletests([r["p_value"] for r in family], 0.05, "holm")
        assert np.allclose([r["p_adjusted"] for r in family], adjusted, rtol=0, atol=1e-15)
        assert [r["significant"] for r in family] == list(reject)
    assert any(r["significant"] for r in rows) and not all(r["significant"] for r in rows)


def test_every_pair_once_with_the_earlier_run_as_baseline(tmp_path):
    rows, _ = run_spec(tmp_path, collection_spec(tmp_path, runs=4, tests=["t"], metrics=["AP"]))
    pairs = [(r["run"], r["baseline"]) for r in rows]
    assert pairs == [("run1", "run0"), ("run2", "run0"), ("run3", "run0"), ("run2", "run1"),
                     ("run3", "run1"), ("run3", "run2")]  # fmt: skip


def test_a_geometric_mean_is_compared_on_the_log_scale(tmp_path):
    spec = collection_spec(tmp_path, baseline="run0", tests=["t", "bootstrap"], metrics=["gmAP"])
    rows, evaluation = run_spec(tmp_path, spec)
    aggregate = {(r, m): v for r, _, m, v, _ in evaluation.aggregate()}
    values = per_query(evaluation, "gmAP")
    for row in rows:
        assert abs(row["mean"] - aggregate[row["run"], "gmAP"]) < 1e-15
        logs = {run: np.log(np.maximum(v, 1e-5)) for run, v in values.items()}
        a, b = logs[row["run"]], logs["run0"]
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        if row["test"] == "t":
            assert abs(row["p_value"] - stats.ttest_rel(a, b).pvalue) < 1e-12
            d = a - b
            assert abs(row["effect_size"] - d.mean() / d.std(ddof=1)) < 1e-12


def test_runs_compare_on_the_queries_both_have(tmp_path):
    """With `queries: intersection` a pair is compared on the queries both runs answered."""
    spec = collection_spec(tmp_path, runs=3, baseline="run0", tests=["t", "randomization"],
                           metrics=["AP"], samples=2000)  # fmt: skip
    spec["settings"] = {"queries": "intersection"}
    rows, evaluation = run_spec(tmp_path, spec)
    answered = {}
    for run, _, qid, metric, value in evaluation.per_query():
        if metric == "AP":
            answered.setdefault(run, {})[qid] = value
    for row in rows:
        shared = sorted(set(answered[row["run"]]) & set(answered["run0"]))
        assert row["n_queries"] == len(shared) < 30
        a = np.array([answered[row["run"]][q] for q in shared])
        b = np.array([answered["run0"][q] for q in shared])
        assert abs(row["mean"] - a.mean()) < 1e-15
        if row["test"] == "t":
            assert abs(row["p_value"] - stats.ttest_rel(a, b).pvalue) < 1e-12


def test_exact_samples_enumerate_every_flip(tmp_path):
    spec = collection_spec(tmp_path, runs=3, queries=12, tests=["randomization"], samples="exact",
                           metrics=["P@10"])  # fmt: skip
    rows, evaluation = run_spec(tmp_path, spec)
    values = per_query(evaluation, "P@10")
    for row in rows:
        d = values[row["run"]] - values[row["baseline"]]
        assert row["samples"] == 2**12
        reference = stats.permutation_test((d,), lambda x, axis: x.mean(axis=axis),
                                           permutation_type="samples", n_resamples=np.inf)  # fmt: skip
        assert abs(row["p_value"] - reference.pvalue) < 1e-12


def test_the_manifest_records_the_compare_settings(tmp_path):
    spec = collection_spec(tmp_path, baseline="run0", min_difference=0.01)
    run_spec(tmp_path, spec)
    manifest = json.loads((tmp_path / "out/comparison.csv.manifest.json").read_text())
    assert manifest["compare"] == {
        "baseline": "run0", "tests": ["t", "randomization"], "correction": "holm",
        "family": "every comparison of one metric and one test in the spec", "alpha": 0.05,
        "samples": 100000, "seed": 0, "metrics": ["AP", "P@10", "nDCG@10", "gmAP"],
        "min_difference": 0.01,
    }  # fmt: skip


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".jsonl", ".duckdb", ".md"])
def test_every_writer_writes_the_comparisons(tmp_path, suffix):
    spec = collection_spec(tmp_path, runs=3, baseline="run0", tests=["t"], metrics=["AP"])
    spec["outputs"] = [{"path": f"out/c{suffix}", "level": "comparison"}]
    rows, _ = run_spec(tmp_path, spec)
    path = tmp_path / f"out/c{suffix}"
    if suffix == ".md":
        lines = [line for line in path.read_text().splitlines() if line.startswith("|")]
        assert lines[0] == "| " + " | ".join(ISSUE_COLUMNS) + " |" and len(lines) == 2 + len(rows)
        p_value = float(lines[2].split(" | ")[ISSUE_COLUMNS.index("p_value")])
        assert abs(p_value - rows[0]["p_value"]) <= 5e-4 * rows[0]["p_value"]  # 4 digits
        return
    con = duckdb.connect()
    if suffix == ".duckdb":
        con.execute(f"ATTACH '{path}' AS o (READ_ONLY)")
        found = rows_of(con, "SELECT * FROM o.comparison")
    else:
        reader = {".parquet": "read_parquet", ".jsonl": "read_json"}.get(suffix, "read_csv")
        found = rows_of(con, f"SELECT * FROM {reader}('{path}')")
    assert [list(r) for r in found] == [ISSUE_COLUMNS] * len(rows)
    assert [r["p_value"] for r in found] == [r["p_value"] for r in rows]


def cli(spec: Path, *flags: str, **env: str) -> subprocess.CompletedProcess:
    """`irpipe run` in a process of its own: the thread counts of numpy's libraries are read
    from the environment as they load."""
    command = [sys.executable, "-m", "pipeline.cli", "run", *flags, str(spec)]
    environment = {**os.environ, "IRPIPE_LOAD_PLUGINS": "", **env}
    return subprocess.run(command, capture_output=True, text=True, env=environment, cwd=ROOT)


def test_the_same_seed_gives_the_same_table_in_another_process_and_thread_count(tmp_path):
    spec = collection_spec(tmp_path, runs=5, tests=["randomization", "bootstrap"], samples=20_000)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    tables = []
    for threads in ("1", "2"):
        env = {name: threads for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}  # fmt: skip
        result = cli(tmp_path / "spec.yaml", "--quiet", **env)
        assert result.returncode == 0, result.stderr
        tables.append((tmp_path / "out/comparison.csv").read_bytes())
    assert tables[0] == tables[1]
    assert len(tables[0].splitlines()) == 1 + 10 * 4 * 2


def test_the_order_of_runs_in_the_spec_changes_no_p_value(tmp_path):
    spec = collection_spec(
        tmp_path, runs=4, tests=["t", "randomization", "bootstrap"], samples=5000
    )
    forward, _ = run_spec(tmp_path, spec)
    spec["runs"] = dict(reversed(spec["runs"].items()))
    backward, _ = run_spec(tmp_path, spec)

    def keyed(rows):  # all pairs: the earlier run of the spec is the baseline, so orientation flips
        return {(frozenset((r["run"], r["baseline"])), r["metric"], r["test"]): r for r in rows}

    before, after = keyed(forward), keyed(backward)
    assert before.keys() == after.keys()
    for key, row in before.items():
        other = after[key]
        assert (row["p_value"], row["p_adjusted"]) == (other["p_value"], other["p_adjusted"])
        assert row["difference"] == -other["difference"] and row["wins"] == other["losses"]
        if key[2] == "bootstrap":
            assert (row["ci_low"], row["ci_high"]) == (-other["ci_high"], -other["ci_low"])


def test_with_a_baseline_the_order_of_runs_changes_no_row(tmp_path):
    spec = collection_spec(tmp_path, runs=4, baseline="run2", samples=5000)
    forward, _ = run_spec(tmp_path, spec)
    spec["runs"] = dict(reversed(spec["runs"].items()))
    backward, _ = run_spec(tmp_path, spec)
    assert sorted(forward, key=repr) == sorted(backward, key=repr)


def test_the_example_spec_runs(tmp_path):
    shutil.copytree(ROOT / "configs", tmp_path / "configs", ignore=shutil.ignore_patterns("out"))
    result = irpipe_inprocess("run", tmp_path / "configs" / "compare.yaml", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "+ significantly better than bm25, - significantly worse" in result.stdout
    lines = (tmp_path / "configs/out/comparison.csv").read_text().splitlines()
    assert len(lines) == 1 + 5 * 2  # five metrics, two tests, one pair
    assert (tmp_path / "configs/out/report.tex").read_text().count("\\toprule") == 1
