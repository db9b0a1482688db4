"""Suites of collections (`suites:`) and a run's file per collection (`path: {COLLECTION: PATH}`):
the suite's means against a plain loop over the per-query values, each file evaluated as it is
alone, the console's and the report's tables, comparisons over a suite against scipy, and what
is refused. On the project's generated suite (`pipeline.synthetic.write_suite`: query ids repeat
across collections, runs lack queries, scores tie)."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from conftest import irpipe_inprocess, yaml_file
from scipy import stats

from pipeline.errors import SpecError
from pipeline.notebook import evaluate as evaluate_python
from pipeline.run.evaluation import evaluate
from pipeline.synthetic import SUITE_COLLECTIONS, SUITE_RUNS, write_suite

METRICS = ["AP", "nDCG@10", "gm_map", "num_rel_ret"]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("suite")
    write_suite(directory, queries=12)
    return directory


def _collections() -> dict:
    return {c: {"qrels": f"{c}/qrels.txt"} for c in SUITE_COLLECTIONS}


def _runs(form: str = "pattern") -> dict:
    if form == "pattern":
        every = list(SUITE_COLLECTIONS)
        return {r: {"path": f"{{collection}}/{r}.trec", "collection": every} for r in SUITE_RUNS}
    return {r: {"path": {c: f"{c}/{r}.trec" for c in SUITE_COLLECTIONS}} for r in SUITE_RUNS}


def _spec(form: str = "pattern", **more) -> dict:
    return {"collections": _collections(), "runs": _runs(form), "metrics": METRICS,
            "suites": {"mini": list(SUITE_COLLECTIONS)}, **more}  # fmt: skip


def _hand_means(per_query: list[tuple]) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(macro, micro, n_collections) by (run, metric), from rows (run, collection, qid, metric,
    value), by plain loops: each collection's mean (the geometric mean for gmAP, the sum for
    NumRelRet), their mean; and the same over every query of every collection."""
    values: dict = {}
    for run, collection, _, metric, value in per_query:
        values.setdefault((run, metric), {}).setdefault(collection, []).append(value)
    found = {}
    for (run, metric), by_collection in values.items():
        means = [_aggregate(metric, v) for v in by_collection.values()]
        pooled = [v for vs in by_collection.values() for v in vs]
        found[run, metric] = (sum(means) / len(means), _aggregate(metric, pooled), len(means))
    return found


def _aggregate(metric: str, values: list[float]) -> float:
    if metric == "gmAP":
        return math.exp(sum(math.log(max(v, 1e-5)) for v in values) / len(values))
    if metric == "NumRelRet":
        return sum(values)
    return sum(values) / len(values)


def test_suite_means_equal_plain_loops_over_the_per_query_values_through_both_doors(
    suite_dir,
):
    spec = _spec(outputs=[{"path": "out/suite.csv", "level": "suite"}])
    outcome = irpipe_inprocess("run", yaml_file(suite_dir / "spec.yaml", spec), cwd=suite_dir)
    assert outcome.returncode == 0, outcome.stderr
    with open(suite_dir / "out" / "suite.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    evaluation = evaluate(suite_dir / "spec.yaml", write=False)
    expected = _hand_means(evaluation.per_query())
    assert len(rows) == len(SUITE_RUNS) * len(METRICS)
    for row in rows:
        macro, micro, n = expected[row["run"], row["metric"]]
        assert row["suite"] == "mini"
        assert float(row["macro"]) == pytest.approx(macro, rel=1e-12)
        assert float(row["micro"]) == pytest.approx(micro, rel=1e-12)
        assert int(row["n_collections"]) == n == 3
    python = evaluate_python(qrels={c: suite_dir / c / "qrels.txt" for c in SUITE_COLLECTIONS},
                             runs={r: {"path": {c: suite_dir / c / f"{r}.trec"
                                                for c in SUITE_COLLECTIONS}} for r in SUITE_RUNS},
                             metrics=METRICS, suites={"mini": list(SUITE_COLLECTIONS)})  # fmt: skip
    table = python.suites(to="rows")
    assert [(s, r, m, *map(str, v)) for s, r, m, *v in table] == [
        (row["suite"], row["run"], row["metric"], row["macro"], row["micro"],
         row["n_collections"], row["n_queries"]) for row in rows
    ]  # fmt: skip


def test_a_file_per_collection_gives_each_file_s_values_evaluated_alone(suite_dir):
    """Query ids repeat across the collections: each file is ranked under its collection only."""
    together = evaluate(yaml_file(suite_dir / "mapping.yaml", _spec("mapping")), write=False)
    alone = {
        "collections": _collections(),
        "runs": {
            f"{r}_{c}": {"path": f"{c}/{r}.trec", "collection": c}
            for r in SUITE_RUNS
            for c in SUITE_COLLECTIONS
        },  # fmt: skip
        "metrics": METRICS,
    }
    apart = evaluate(yaml_file(suite_dir / "alone.yaml", alone), write=False)
    found = {(r, c, q, m): v for r, c, q, m, v in together.per_query()}
    expected = {(r.rsplit("_", 1)[0], c, q, m): v for r, c, q, m, v in apart.per_query()}
    assert found == expected
    pattern = evaluate(yaml_file(suite_dir / "pattern.yaml", _spec("pattern")), write=False)
    assert pattern.aggregate() == together.aggregate()
    assert [row[:2] for row in together.aggregate()[:: len(METRICS)]] == [
        (r, c) for r in SUITE_RUNS for c in SUITE_COLLECTIONS
    ]


def test_the_console_prints_a_suite_s_table_after_its_collections(suite_dir):
    spec = _spec(metrics=["AP"])
    outcome = irpipe_inprocess("run", yaml_file(suite_dir / "console.yaml", spec), cwd=suite_dir)
    assert outcome.returncode == 0, outcome.stderr
    title = "suite mini, the mean of 3 collections (news, finance, science)"
    assert outcome.stdout.index("collection science") < outcome.stdout.index(title)
    evaluation = evaluate(suite_dir / "console.yaml", write=False)
    means = {run: f"{macro:.4f}" for run, _, _, macro, _ in evaluation.suite_means()}
    table = outcome.stdout[outcome.stdout.index(title) :].splitlines()
    for run in SUITE_RUNS:
        line = next(line for line in table if line.startswith(run))
        assert means[run] in line


def test_the_report_has_beir_s_table_per_suite_and_metric_in_markdown_and_latex(suite_dir):
    outputs = [{"path": "out/report.md", "level": "report"},
               {"path": "out/report.tex", "level": "report"}]  # fmt: skip
    spec = _spec(outputs=outputs, metrics=["nDCG@10"])
    evaluation = evaluate(yaml_file(suite_dir / "report.yaml", spec))
    values = {(r, c): v for r, c, _, v, _ in evaluation.aggregate()}
    means = {run: macro for run, _, _, macro, _ in evaluation.suite_means()}
    markdown = (suite_dir / "out" / "report.md").read_text(encoding="utf-8")
    table = markdown[markdown.index("### suite mini, nDCG@10") :].split("\n\n")[1].splitlines()
    assert table[0] == "| collection | bm25 | dense | hybrid |"
    rows = [line.strip("|").split("|") for line in table[2:]]
    assert [row[0].strip() for row in rows] == [*SUITE_COLLECTIONS, "mean"]
    for row in rows:
        name = row[0].strip()
        for run, cell in zip(SUITE_RUNS, row[1:], strict=True):
            value = means[run] if name == "mean" else values[run, name]
            assert cell.strip().strip("*") == f"{value:.4f}"
    latex = (suite_dir / "out" / "report.tex").read_text(encoding="utf-8")
    assert "Collection & bm25 & dense & hybrid \\\\" in latex
    line = next(line for line in latex.splitlines() if line.strip().startswith("mean &"))
    assert all(f"{means[run]:.4f}" in line for run in SUITE_RUNS)


def test_comparisons_over_a_suite_pair_the_runs_by_collection_as_scipy_does(suite_dir):
    spec = _spec(metrics=["AP"], compare={"baseline": "bm25", "tests": ["t"]})
    evaluation = evaluate(yaml_file(suite_dir / "compare.yaml", spec), write=False)
    values = {(r, c): v for r, c, _, v, _ in evaluation.aggregate()}
    rows = evaluation.con.execute(
        "SELECT run, n_queries, difference, p_value, p_adjusted FROM comparison "
        "WHERE collection = 'mini'"
    ).fetchall()
    assert [row[0] for row in rows] == ["dense", "hybrid"]
    p_values = []
    for run, n, difference, p, _ in rows:
        ours = np.array([values[run, c] for c in SUITE_COLLECTIONS])
        base = np.array([values["bm25", c] for c in SUITE_COLLECTIONS])
        assert n == 3
        assert difference == pytest.approx(ours.mean() - base.mean(), rel=1e-12)
        assert p == pytest.approx(stats.ttest_rel(ours, base).pvalue, rel=1e-12)
        p_values.append(p)
    # Holm over the suite's own family: the smaller p-value times two, the larger as it is
    holm = [min(1.0, max(2 * min(p_values), p)) if p != min(p_values) else min(1, 2 * p)
            for p in p_values]  # fmt: skip
    assert [row[4] for row in rows] == pytest.approx(holm, rel=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"runs": {**_runs(), "extra": {"path": {"finance": "finance/bm25.trec"}}}},
         "run 'extra' is evaluated under collections of suite 'mini' but not under 'news'"),
        ({"suites": {"finance": ["news"]}}, "'finance' names a collection too"),
        ({"suites": {"mini": ["news", "nfcorpus"]}}, "suites.mini.1: unknown collection"),
        ({"runs": {"bm25": {"path": {"finance": "finance/bm25.trec"}, "collection": "news"}}},
         r"path names the file of each collection \(finance\) and collection names others"),
        ({"runs": {"bm25": {"path": "{collection}/bm25.trec"}}},
         r"a path holding \{collection\} is filled with each of the run's collections"),
        ({"history": {"path": "h.duckdb"}},
         "run 'bm25' has one file per collection, which a history does not keep yet"),
        ({"settings": {"engine": "spark"}}, "which the duckdb engine evaluates"),
        ({"runs": {**_runs(), "rrf": {"fuse": ["bm25", "dense"]}}},
         "run 'bm25' has one file per collection, which a fused run does not read yet"),
        ({"pools": {"p": {"collection": "news", "method": {"depth": 5}}}},
         "run 'bm25' has one file per collection, which pools do not read yet"),
        ({"runs": {**_runs(), "bm25@news": {"path": "news/bm25.trec",
                                            "collection": list(SUITE_COLLECTIONS)}}},
         "run 'bm25@news' has the name that run 'bm25''s file for collection 'news' is"),
    ],
)  # fmt: skip
def test_what_a_suite_and_a_file_per_collection_refuse_is_a_spec_error_at_its_key(
    suite_dir, change, message
):
    spec = {**_spec(), **change}
    with pytest.raises(SpecError, match=message):
        evaluate(yaml_file(suite_dir / "refused.yaml", spec), write=False)


def test_a_suite_level_without_suites_is_refused(suite_dir):
    spec = {**_spec(outputs=[{"path": "out/s.csv", "level": "suite"}]), "suites": {}}
    with pytest.raises(SpecError, match=r"outputs\.0\.level: level suite needs suites"):
        evaluate(yaml_file(suite_dir / "nosuite.yaml", spec), write=False)
